"""benchlib.py - helpers for bench/bench.py (python3 stdlib only).

 - run():        run a command to completion with a timeout, its own resource
                 usage (wait4: wall, user+sys CPU, peak RSS) and an optional
                 poll callback (fd counts, RSS while it runs);
 - Background:   a workload started in the background and killed afterwards;
 - read_pprof(): a minimal decoder of gzip-compressed pprof profiles
                 (proto/profile.proto), enough for flat-by-function and
                 by-label totals, start time and comments;
 - perf output parsers (report --stdio, report --stats);
 - small statistics (median, mean, CV).
"""

import gzip
import math
import os
import re
import signal
import subprocess
import time


class BenchError(Exception):
    """A real error: the harness or pmutop did something wrong."""


class NotAvailable(Exception):
    """A tool cannot do this here; the cell becomes "n/a: reason"."""


# --------------------------------------------------------------------------
# processes

class Result:
    def __init__(self):
        self.rc = None          # exit status, or -signal
        self.timed_out = False
        self.wall = 0.0         # seconds
        self.utime = 0.0        # seconds, the process and its reaped children
        self.stime = 0.0
        self.maxrss_kb = 0
        self.start_ns = 0       # time.time_ns() just before the fork
        self.stdout = ""
        self.stderr = ""

    @property
    def cpu(self):
        return self.utime + self.stime

    def tail(self, n=5):
        lines = (self.stderr or "").strip().splitlines()
        return " | ".join(lines[-n:]) if lines else "(no stderr)"


TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
RUNNING = set()     # process groups of commands running now (for cleanup)


def kill_running():
    for pg in list(RUNNING):
        try:
            os.killpg(pg, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def wrapped_pid(pid):
    """The command's pid when run() wrapped it in /usr/bin/time: time's
    child. None until it exists."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = f.read().split()
    except OSError:
        return None
    return int(kids[0]) if kids else None


def run(argv, timeout, out_path=None, err_path=None, poll=None, poll_interval=0.01,
        env=None, cwd=None, peak_rss=False):
    """Run argv to completion in its own process group. stdout/stderr go to
    files (read back into the Result). poll(pid, t_since_start) is called
    every poll_interval seconds while it runs, with the command's own pid.
    After `timeout` seconds the group gets SIGTERM, then SIGKILL 5 s later;
    timed_out is set.

    CPU time comes from wait4() (microseconds; includes reaped children).
    Peak RSS (peak_rss=True) comes from GNU time's %M: ru_maxrss of a child
    forked by this (python) process would include python's own RSS, which
    the kernel carries across exec."""
    r = Result()
    out_path = out_path or os.devnull
    err_path = err_path or os.devnull
    rss_path = None
    wrapped = False
    if peak_rss and TIME:
        rss_path = (err_path if err_path != os.devnull else "/tmp/bench-rss.%d" % os.getpid()) + ".rss"
        argv = [TIME, "-f", "%M", "-o", rss_path] + list(argv)
        wrapped = True
    with open(out_path, "wb") as fo, open(err_path, "wb") as fe:
        r.start_ns = time.time_ns()
        t0 = time.monotonic()
        try:
            p = subprocess.Popen(argv, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL,
                                 env=env, cwd=cwd, start_new_session=True)
        except OSError as e:
            raise NotAvailable("cannot run %s: %s" % (argv[0], e.strerror))
        RUNNING.add(p.pid)
        termed = killed = False
        try:
            while True:
                pid, status, ru = os.wait4(p.pid, os.WNOHANG)
                now = time.monotonic()
                if pid == p.pid:
                    break
                if now - t0 > timeout and not termed:
                    r.timed_out = termed = True
                    os.killpg(p.pid, signal.SIGTERM)
                elif termed and not killed and now - t0 > timeout + 5:
                    killed = True
                    os.killpg(p.pid, signal.SIGKILL)
                if poll:
                    target = wrapped_pid(p.pid) if wrapped else p.pid
                    if target:
                        try:
                            poll(target, now - t0)
                        except (FileNotFoundError, ProcessLookupError, PermissionError):
                            pass
                time.sleep(poll_interval)
        except BaseException:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            raise
        finally:
            RUNNING.discard(p.pid)
        r.wall = time.monotonic() - t0
        p.returncode = 0  # reaped here; keep Popen from waiting again
    # anything the command left behind in its group (e.g. a launched target)
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    r.rc = os.waitstatus_to_exitcode(status)
    r.utime, r.stime = ru.ru_utime, ru.ru_stime
    r.maxrss_kb = None
    if rss_path:
        try:
            with open(rss_path) as f:
                lines = f.read().strip().splitlines()
            if wrapped and lines and lines[0].startswith("Command "):
                # GNU time notes a non-zero exit on the first line; the
                # status itself is passed through
                lines = lines[1:]
            r.maxrss_kb = int(lines[-1])
        except (OSError, ValueError, IndexError):
            r.maxrss_kb = None
        finally:
            try:
                os.unlink(rss_path)
            except OSError:
                pass
    for attr, path in (("stdout", out_path), ("stderr", err_path)):
        if path != os.devnull:
            with open(path, "r", errors="replace") as f:
                setattr(r, attr, f.read())
    return r


class Background:
    """A workload running in the background; kill() ends it (SIGKILL)."""

    def __init__(self, argv, log_path, env=None):
        self.argv = argv
        self.log = open(log_path, "wb")
        self.p = subprocess.Popen(argv, stdout=self.log, stderr=self.log,
                                  stdin=subprocess.DEVNULL, env=env)
        self.pid = self.p.pid

    def wait_exec(self, timeout=5.0):
        """Wait until the child runs the workload's binary (not python)."""
        want = os.path.realpath(self.argv[0])
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if self.p.poll() is not None:
                raise BenchError("workload %s exited early with status %s"
                                 % (self.argv[0], self.p.returncode))
            try:
                if os.readlink("/proc/%d/exe" % self.pid) == want:
                    return
            except OSError:
                pass
            time.sleep(0.005)
        raise BenchError("workload %s did not start within %.0f s" % (self.argv[0], timeout))

    def wait_threads(self, n, timeout=60.0):
        """Wait until /proc/PID/task has n entries."""
        t0 = time.monotonic()
        have = 0
        while time.monotonic() - t0 < timeout:
            if self.p.poll() is not None:
                raise BenchError("workload %s exited early with status %s"
                                 % (self.argv[0], self.p.returncode))
            try:
                have = len(os.listdir("/proc/%d/task" % self.pid))
            except OSError:
                have = 0
            if have >= n:
                return time.monotonic() - t0
            time.sleep(0.01)
        raise BenchError("workload %s has %d of %d threads after %.0f s"
                         % (self.argv[0], have, n, timeout))

    def alive(self):
        return self.p.poll() is None

    def kill(self):
        if self.p.poll() is None:
            try:
                self.p.send_signal(signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.p.wait()
        self.log.close()


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def perf_mmap_kb(pid):
    """Total size of the perf_event ring-buffer mappings of a process."""
    tot = 0
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            if "perf_event" in line:
                a, b = line.split()[0].split("-")
                tot += int(b, 16) - int(a, 16)
    return tot // 1024


def proc_status_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return None


class Monitor:
    """poll callback for run(): fd count and RSS of the running process."""

    def __init__(self, every=0.02):
        self.every = every
        self.last = -1.0
        self.series = []     # (t, fds, rss_kb)
        self.ring_kb = 0     # largest total size of perf_event mappings seen

    def __call__(self, pid, t):
        if t - self.last < self.every:
            return
        self.last = t
        fds = fd_count(pid)
        rss = proc_status_kb(pid, "VmRSS")
        grew = not self.series or fds > self.series[-1][1]
        self.series.append((t, fds, rss))
        if grew or len(self.series) % 10 == 1:
            self.ring_kb = max(self.ring_kb, perf_mmap_kb(pid))

    def covers(self, t0, t1):
        """True if some reading was taken between t0 and t1 seconds (the
        readings of a starved poller say nothing about the middle of a run)."""
        return any(t0 <= t <= t1 for t, _, _ in self.series)

    def max_fds(self):
        return max((s[1] for s in self.series), default=None)

    def max_rss_kb(self):
        return max((s[2] or 0 for s in self.series), default=None)

    def time_to_fds(self, frac=0.9):
        """When the fd count first reached frac of its maximum: roughly when
        the counters were open (attach done); not the maximum itself, as a
        profiler may open a few files later. Returns (lo, hi): the readings
        just before and at that point (lo = 0 if the first reading already
        had them), so a starved poller shows as a wide interval."""
        m = self.max_fds()
        if m is None:
            return None
        lo = 0.0
        for t, fds, _ in self.series:
            if fds >= frac * m:
                return (lo, t)
            lo = t
        return None


# --------------------------------------------------------------------------
# pprof (protobuf wire format, the fields proto/profile.proto defines)

def _varint(buf, i):
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7
        if shift > 70:
            raise BenchError("bad varint in profile")


def _fields(buf):
    """Yield (field number, wire type, value) of one message; value is an int
    for varints/fixed, bytes for length-delimited fields."""
    i, n = 0, len(buf)
    while i < n:
        key, i = _varint(buf, i)
        fn, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(buf, i)
        elif wt == 1:
            v = int.from_bytes(buf[i:i + 8], "little")
            i += 8
        elif wt == 2:
            ln, i = _varint(buf, i)
            v = buf[i:i + ln]
            i += ln
        elif wt == 5:
            v = int.from_bytes(buf[i:i + 4], "little")
            i += 4
        else:
            raise BenchError("unsupported wire type %d in profile" % wt)
        if i > n:
            raise BenchError("truncated profile")
        yield fn, wt, v


def _ints(wt, v):
    """A repeated integer field: packed (bytes) or one varint."""
    if wt == 2:
        out, i = [], 0
        while i < len(v):
            x, i = _varint(v, i)
            out.append(x)
        return out
    return [v]


def _signed(x):
    return x - (1 << 64) if x >= 1 << 63 else x


class Profile:
    def __init__(self):
        self.strings = []
        self.sample_types = []   # (type, unit)
        self.samples = []        # (location ids, values, {label: str/num})
        self.locations = {}      # id -> [function ids], innermost first
        self.functions = {}      # id -> name
        self.time_nanos = 0
        self.duration_nanos = 0
        self.period = 0
        self.comments = []

    def leaf_function(self, sample):
        locs = sample[0]
        if not locs:
            return "(no location)"
        fids = self.locations.get(locs[0], [])
        if not fids:
            return "loc%d" % locs[0]
        return self.functions.get(fids[0], "?")

    def flat_by_function(self, index=0):
        out = {}
        for s in self.samples:
            name = self.leaf_function(s)
            out[name] = out.get(name, 0) + s[1][index]
        return out

    def by_label(self, key, index=0):
        out = {}
        for s in self.samples:
            name = s[2].get(key, "-")
            out[name] = out.get(name, 0) + s[1][index]
        return out

    def total(self, index=0):
        return sum(s[1][index] for s in self.samples)

    def comment_ints(self):
        """key=value integers from the comments (pmutop writes its summary
        there: samples=, lost=, throttled=, unwind outcomes)."""
        out = {}
        for c in self.comments:
            for k, v in re.findall(r"([A-Za-z_][\w ]*?)[=:]\s*(\d+)\b", c):
                out[k.strip()] = int(v)
        return out


def read_pprof(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    p = Profile()
    raw_samples, raw_types, raw_comments = [], [], []
    for fn, wt, v in _fields(data):
        if fn == 1:
            raw_types.append(v)
        elif fn == 2:
            raw_samples.append(v)
        elif fn == 4:
            lid, fids = 0, []
            for f2, w2, v2 in _fields(v):
                if f2 == 1:
                    lid = v2
                elif f2 == 4:
                    for f3, w3, v3 in _fields(v2):
                        if f3 == 1:
                            fids.append(v3)
            p.locations[lid] = fids
        elif fn == 5:
            fid, name = 0, 0
            for f2, w2, v2 in _fields(v):
                if f2 == 1:
                    fid = v2
                elif f2 == 2:
                    name = v2
            p.functions[fid] = name
        elif fn == 6:
            p.strings.append(v.decode("utf-8", "replace"))
        elif fn == 9:
            p.time_nanos = _signed(v)
        elif fn == 10:
            p.duration_nanos = _signed(v)
        elif fn == 12:
            p.period = _signed(v)
        elif fn == 13:
            raw_comments.extend(_ints(wt, v))
    S = p.strings

    def s(i):
        return S[i] if 0 <= i < len(S) else "?"

    p.functions = {k: s(v) for k, v in p.functions.items()}
    for t in raw_types:
        ty = un = 0
        for f2, w2, v2 in _fields(t):
            if f2 == 1:
                ty = v2
            elif f2 == 2:
                un = v2
        p.sample_types.append((s(ty), s(un)))
    for b in raw_samples:
        locs, vals, labels = [], [], {}
        for f2, w2, v2 in _fields(b):
            if f2 == 1:
                locs.extend(_ints(w2, v2))
            elif f2 == 2:
                vals.extend(_signed(x) for x in _ints(w2, v2))
            elif f2 == 3:
                k = st = num = 0
                for f3, w3, v3 in _fields(v2):
                    if f3 == 1:
                        k = v3
                    elif f3 == 2:
                        st = v3
                    elif f3 == 3:
                        num = _signed(v3)
                labels[s(k)] = s(st) if st else num
        p.samples.append((locs, vals, labels))
    p.comments = [s(i) for i in raw_comments]
    return p


# --------------------------------------------------------------------------
# pmutop and perf output

PMUTOP_SUMMARY = re.compile(
    r"(\d+) samples of (\S+) .*?in ([\d.]+) s from (\d+) threads? on (\d+) CPUs?; "
    r"lost (\d+), throttled (\d+)")


def pmutop_summary(stderr, profile=None):
    """samples, lost, throttled, elapsed, threads from pmutop's stderr
    summary, else from the profile's comments. Missing values are None."""
    out = dict(samples=None, lost=None, throttled=None, elapsed=None, threads=None,
               root_pct=None)
    m = PMUTOP_SUMMARY.search(stderr or "")
    if m:
        out.update(samples=int(m.group(1)), elapsed=float(m.group(3)),
                   threads=int(m.group(4)), lost=int(m.group(6)), throttled=int(m.group(7)))
    m = re.search(r"reached root ([\d.]+)%", stderr or "")
    if m:
        out["root_pct"] = float(m.group(1))
    if profile is not None:
        ci = profile.comment_ints()
        for k in ("samples", "lost", "throttled"):
            if out[k] is None and k in ci:
                out[k] = ci[k]
        if out["samples"] is None:
            out["samples"] = profile.total(0)
        if out["elapsed"] is None and profile.duration_nanos:
            out["elapsed"] = profile.duration_nanos / 1e9
    return out


def perf_report_counts(text, kind):
    """{symbol or comm: samples} from `perf report --stdio -F sample,KIND`.
    kind is "sym" (lines "  123  [.] name") or "comm" ("  123  name")."""
    out = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if kind == "sym":
            m = re.match(r"^\s*(\d+)\s+\[(.)\]\s+(.*?)\s*$", line)
            if m:
                out[m.group(3)] = out.get(m.group(3), 0) + int(m.group(1))
        else:
            m = re.match(r"^\s*(\d+)\s+(\S.*?)\s*$", line)
            if m:
                out[m.group(2)] = out.get(m.group(2), 0) + int(m.group(1))
    return out


def perf_stats(text):
    """(samples, lost samples) from `perf report --stats`: the per-event
    sections ("EVENT stats:") when present, else the aggregated counts."""
    samples = lost = 0
    in_ev = found = False
    agg_samples = agg_lost = None
    for line in text.splitlines():
        if re.match(r"^\S.* stats:\s*$", line) and not line.startswith("Aggregated"):
            in_ev = found = True
            continue
        m = re.match(r"^\s*(SAMPLE|LOST_SAMPLES|LOST) events:\s+(\d+)", line)
        if not m:
            continue
        n = int(m.group(2))
        if in_ev:
            if m.group(1) == "SAMPLE":
                samples += n
            elif m.group(1) == "LOST_SAMPLES":
                lost += n
        else:
            if m.group(1) == "SAMPLE":
                agg_samples = n
            elif m.group(1) == "LOST":
                agg_lost = n
    if found:
        return samples, lost
    if agg_samples is None:
        return None, None
    return agg_samples, agg_lost or 0


# --------------------------------------------------------------------------
# statistics

def median(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def stdev(xs):
    xs = [x for x in xs if x is not None]
    if len(xs) < 2:
        return None
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def cv_pct(xs):
    m, s = mean(xs), stdev(xs)
    if m is None or s is None or m == 0:
        return None
    return 100.0 * s / m


def write_section(results, begin, end, lines):
    """Put lines (begin and end markers included) into the report file
    results in place of the section between the same markers, or at its end;
    print them too."""
    text = open(results).read() if os.path.exists(results) else "# pmutop benchmarks\n"
    if begin in text and end in text:
        text = text[:text.index(begin)] + "\n".join(lines) + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"
    with open(results, "w") as f:
        f.write(text)
    print("\n".join(lines))
