#!/usr/bin/env python3
"""pprof_open.py - how long the profiles pmutop writes take to open (issue 31).

`go tool pprof -top FILE` with its DEFAULT flags - what pmutop's summary tells
users to run - symbolizes locally every mapping whose has_functions /
has_filenames / has_line_numbers flags are all unset, location by location
through Go's DWARF reader; that once took minutes. Measured per profile:
its size (gzip, and unpacked), how many samples, locations and mappings it
holds, the wall time and peak RSS of `go tool pprof -top` with the default
flags and with -symbolize=none (pprof's own reading, for comparison), how
many mappings lack every has_* flag (pprof symbolizes those again), and
`pmutop --load`. Medians of BENCH_OPEN_RUNS runs (default 3).

Profiles, each recorded with `pmutop -e task-clock --period 250000 -p PID
--subprocesses --duration D`:
  - gofmt: Debian's gofmt -l over the Go distribution's source, in a loop
    for BENCH_OPEN_GOFMT_SECONDS (default 60; 0 skips);
  - bigdwarf (tests/workloads): 4,000 functions in one compile unit with
    DWARF and hot code without a name, 3 s at -F 300 - the profile
    t_pprof_open.sh checks;
  - the 10-minute churn_service.py profile is measured by bench/longrun.py
    with open_times() from here.
Writes its section of bench/RESULTS.md between its own markers.

Environment: PMUTOP, WORKLOAD_DIR (run.sh sets them), BENCH_RESULTS,
BENCH_OPEN_GOFMT_SECONDS, BENCH_OPEN_RUNS (BENCH_QUICK=1: 20 s and 1 run).
"""
import datetime
import gzip
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import benchlib as bl

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PMUTOP = os.environ.get("PMUTOP") or os.path.join(REPO, "pmutop")
WL = os.environ.get("WORKLOAD_DIR") or os.path.join(REPO, "build", "workloads")
RESULTS = os.environ.get("BENCH_RESULTS") or os.path.join(REPO, "bench", "RESULTS.md")
QUICK = os.environ.get("BENCH_QUICK") == "1"
GOFMT_SECONDS = float(os.environ.get("BENCH_OPEN_GOFMT_SECONDS", "20" if QUICK else "60"))
RUNS = max(1, int(os.environ.get("BENCH_OPEN_RUNS", "1" if QUICK else "3")))
# pprof gets this long per open; a profile that needs longer reads "> N s".
OPEN_LIMIT = 900
BEGIN = "<!-- BEGIN bench/pprof_open.py output -->"
END = "<!-- END bench/pprof_open.py output -->"


def timed(cmd, limit=OPEN_LIMIT):
    """Wall seconds, peak RSS (KiB, GNU time's %M), status and CPU seconds (user +
    sys, children included: `go tool` waits for pprof) of cmd; None s on timeout.
    The CPU time is what a loaded machine changes least."""
    env = dict(os.environ, HOME=os.environ.get("HOME", "/tmp"),
               GOCACHE=os.environ.get("GOCACHE", "/tmp/gocache"))
    t = time.monotonic()
    try:
        r = subprocess.run(["/usr/bin/time", "-f", "%M %U %S"] + cmd, capture_output=True,
                           text=True, timeout=limit, env=env)
    except subprocess.TimeoutExpired:
        return None, 0, 124, None
    last = r.stderr.strip().splitlines()[-1].split() if r.stderr.strip() else []
    try:
        kb, cpu = int(last[0]), float(last[1]) + float(last[2])
    except (IndexError, ValueError):
        kb, cpu = 0, None
    return time.monotonic() - t, kb, r.returncode, cpu


def shape(path):
    """Sizes and top-level counts of a pprof file (fields 2, 3, 4 of Profile)."""
    with open(path, "rb") as f:
        gz = f.read()
    raw = gzip.decompress(gz) if gz[:2] == b"\x1f\x8b" else gz
    n = {2: 0, 3: 0, 4: 0}
    unflagged = 0
    for fn, _, v in bl._fields(raw):
        if fn in n:
            n[fn] += 1
        if fn == 3:
            # Mapping fields 7-10: has_functions, has_filenames, has_line_numbers,
            # has_inline_frames; pprof symbolizes when 7, 8 and 9 are all unset.
            flags = {f2: v2 for f2, _, v2 in bl._fields(v) if f2 in (7, 8, 9)}
            if not any(flags.values()):
                unflagged += 1
    return {"gz": len(gz), "raw": len(raw), "samples": n[2], "mappings": n[3],
            "locations": n[4], "unflagged": unflagged}


def open_times(path, runs=RUNS):
    """shape(path) plus the medians of `go tool pprof -top` (default flags and
    -symbolize=none) and `pmutop --load`: (wall s, peak KiB, status, CPU s) each."""
    out = shape(path)
    for key, cmd in (("pprof", ["go", "tool", "pprof", "-top", path]),
                     ("pprof_none", ["go", "tool", "pprof", "-symbolize=none", "-top", path]),
                     ("load", [PMUTOP, "--load", path])):
        rs = []
        for _ in range(runs):
            rs.append(timed(cmd))
            if rs[-1][0] is None:
                break  # one timeout says enough
        secs = [r[0] for r in rs if r[0] is not None]
        cpus = [r[3] for r in rs if r[3] is not None]
        out[key] = (bl.median(secs) if len(secs) == len(rs) else None,
                    max(r[1] for r in rs), max(r[2] for r in rs),
                    bl.median(cpus) if len(cpus) == len(rs) else None)
    return out


def fmt_open(o):
    """The figures of open_times() as one markdown line."""
    def t(x):
        s, kb, rc, cpu = x
        when = f"> {OPEN_LIMIT} s" if s is None else f"{s:.1f} s"
        if cpu is not None:
            when += f" (CPU {cpu:.1f} s)"
        return f"{when}, {kb / 1024:.0f} MiB" + (f" (status {rc})" if rc else "")
    return (f"profile {o['gz'] / 1024:.0f} KiB gzip ({o['raw'] / 1024:.0f} KiB unpacked; "
            f"{o['samples']:,} samples, {o['locations']:,} locations, {o['mappings']} mappings, "
            f"{o['unflagged']} without a has_* flag); `go tool pprof -top` {t(o['pprof'])}; "
            f"with -symbolize=none {t(o['pprof_none'])}; `pmutop --load` {t(o['load'])}")


def gofmt_inputs():
    root = "/usr/share/go-1.19/src"
    try:
        root = subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True,
                              timeout=30).stdout.strip() + "/src"
    except (OSError, subprocess.SubprocessError):
        pass
    return os.path.realpath(root)


def record(name, target_cmd, secs, work, rate=("--period", "250000"), shell=False):
    """Start target_cmd, attach pmutop (and to its running children) for secs
    at rate; return (profile, stderr text)."""
    prof = os.path.join(work, name + ".pb.gz")
    t = subprocess.Popen(target_cmd, shell=shell, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        time.sleep(0.5)
        r = subprocess.run([PMUTOP, "-e", "task-clock", *rate, "-p", str(t.pid),
                            "--subprocesses", "--duration", f"{secs:g}s", "--dump", prof],
                           capture_output=True, text=True, timeout=secs + 120)
    finally:
        try:
            os.killpg(t.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        t.wait()
    return prof, r.stderr


def main():
    if not shutil.which("go"):
        print("pprof_open: go (golang-go) not installed, skipped")
        return 0
    work = tempfile.mkdtemp(prefix="pmutop-pprof-open.")
    rows = []
    gofmt = shutil.which("gofmt") or "/usr/lib/go-1.19/bin/gofmt"
    if GOFMT_SECONDS > 0 and os.access(gofmt, os.X_OK):
        src = gofmt_inputs()
        rows.append((f"gofmt -l {src} in a loop, {GOFMT_SECONDS:g} s",
                     record("gofmt", f"while :; do {gofmt} -l {src} >/dev/null 2>&1; done",
                            GOFMT_SECONDS, work, shell=True)))
    bd = os.path.join(WL, "bigdwarf")
    if os.access(bd, os.X_OK):
        # As t_pprof_open.sh: ~300 samples/s, each a new 100-frame path.
        rows.append(("bigdwarf (4,000 functions with DWARF, unnamed hot code), 3 s at -F 300",
                     record("bigdwarf", [bd, "3600"], 3, work, rate=("-F", "300"))))
    lines = [BEGIN, "",
             f"_Written by `bench/pprof_open.py`, {datetime.datetime.utcnow():%Y-%m-%d %H:%M} "
             f"UTC; 1-minute load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
             f"medians of {RUNS} opens._", "",
             "## Opening the profiles (issue 31)", "",
             "`go tool pprof -top FILE` with its default flags (what pmutop's summary "
             "suggests) against `-symbolize=none`: pprof symbolizes again, in its own DWARF "
             "reader, every mapping that carries none of has_functions / has_filenames / "
             "has_line_numbers; pmutop marks every mapping it wrote as symbolized. The "
             "10-minute churn_service profile is in the long-run section.", ""]
    for title, (prof, err) in rows:
        m = bl.PMUTOP_SUMMARY.search(err)
        if not os.path.exists(prof):
            lines.append(f"- {title}: no profile (pmutop: {err.strip()[-300:]})")
            continue
        lines.append(f"- {title}: {m.group(1) if m else '?'} samples; " +
                     fmt_open(open_times(prof)))
    lines += ["", END]
    bl.write_section(RESULTS, BEGIN, END, lines)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
