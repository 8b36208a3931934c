#!/usr/bin/env python3
"""longrun.py - pmutop's memory and CPU over a long run (issue 23).

Two churning targets side by side, each profiled by its own pmutop:
  - longrun (tests/workloads/longrun.c): deep random recursion, a thread
    pool renewed every 1-3 s, dlopen/dlclose, mmap churn;
  - bench/targets/churn_service.py (Debian python3): random-depth
    recursion, four threads renewed every 1-5 s, dicts built and freed.
Every 30 s: pmutop's RSS (anonymous and file-backed) and CPU; at the end
its peak RSS over the whole run, the final profile's writing included
(the kernel's ru_maxrss from wait4, which no 30-s reading can miss), the
samples/s, pmutop CPU per 1,000 samples/s (wait4's user + sys), and how long
`go tool pprof -top` (its default flags, and -symbolize=none) and `pmutop
--load` take to open the profile (bench/pprof_open.py's open_times, issue 31).
Writes its section of bench/RESULTS.md between its own markers.

Environment: PMUTOP, WORKLOAD_DIR (run.sh sets them), BENCH_LONG_MINUTES
(default 10; 60 for the optional long run; 0 skips), BENCH_RESULTS,
BENCH_LONG_PERIOD (task-clock period, default 250000 ns).
"""
import datetime
import os
import re
import subprocess
import sys
import tempfile
import time

import pprof_open

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PMUTOP = os.environ.get("PMUTOP") or os.path.join(REPO, "pmutop")
WL = os.environ.get("WORKLOAD_DIR") or os.path.join(REPO, "build", "workloads")
RESULTS = os.environ.get("BENCH_RESULTS") or os.path.join(REPO, "bench", "RESULTS.md")
MINUTES = float(os.environ.get("BENCH_LONG_MINUTES", "10"))
PERIOD = os.environ.get("BENCH_LONG_PERIOD", "250000")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"
# The default 10-minute run and the optional long one keep a section each.
_TAG = "" if MINUTES == 10 else f" {MINUTES:g} min"
BEGIN = f"<!-- BEGIN bench/longrun.py{_TAG} output -->"
END = f"<!-- END bench/longrun.py{_TAG} output -->"


def status(pid):
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "RssAnon", "RssFile"):
                    out[k] = int(v.split()[0])
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out["cpu"] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None
    return out


def main():
    if MINUTES <= 0:
        print("longrun: BENCH_LONG_MINUTES=0, skipped")
        return 0
    secs = int(MINUTES * 60)
    work = tempfile.mkdtemp(prefix="pmutop-longrun.")
    targets = {
        "longrun (C)": [os.path.join(WL, "longrun"), str(secs + 60)],
        # Debian's python3 (a program nobody here wrote), not a pyenv one on PATH.
        "churn_service.py": [PYTHON, os.path.join(REPO, "bench", "targets",
                                                     "churn_service.py"), str(secs + 60)],
    }
    runs = {}
    for name, cmd in targets.items():
        t = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)
        prof = os.path.join(work, re.sub(r"\W+", "_", name) + ".pb.gz")
        err = open(prof + ".err", "w")
        p = subprocess.Popen([PMUTOP, "-e", "task-clock", "--period", PERIOD, "-p",
                              str(t.pid), "--duration", str(secs), "--dump", prof],
                             stdout=subprocess.DEVNULL, stderr=err)
        runs[name] = {"target": t, "pm": p, "prof": prof, "err": prof + ".err", "curve": []}
    t0 = time.monotonic()

    def running(r):
        # Reaped here, not by Popen: wait4 gives the peak RSS and the CPU of the whole run.
        if "rusage" not in r:
            pid, st, ru = os.wait4(r["pm"].pid, os.WNOHANG)
            if pid:
                r["rusage"] = ru
                r["pm"].returncode = os.waitstatus_to_exitcode(st)
        return "rusage" not in r

    while any([running(r) for r in runs.values()]):
        el = time.monotonic() - t0
        for r in runs.values():
            if running(r):
                s = status(r["pm"].pid)
                if s:
                    s["load"] = os.getloadavg()[0]
                    r["curve"].append((el, s))
        # Wake each second to reap an ending pmutop; read every 30 s.
        nxt = (el // 30 + 1) * 30
        while any([running(r) for r in runs.values()]) and time.monotonic() - t0 < nxt:
            time.sleep(1)
    for r in runs.values():
        r["target"].kill()
        r["target"].wait()
    loads = [s["load"] for r in runs.values() for _, s in r["curve"]]
    lines = [BEGIN, "",
             f"_Written by `bench/longrun.py` ({MINUTES:g} min), "
             f"{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; 1-minute load average "
             f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs at the end, "
             f"{min(loads, default=0):.1f}-{max(loads, default=0):.1f} during the run "
             "(column load)._", "",
             f"## Long runs{_TAG and ' (' + _TAG.strip() + ')'}: pmutop's memory and CPU "
             "over time (issue 23)", "",
             f"Both targets profiled at once, each by its own `pmutop -e task-clock "
             f"--period {PERIOD} -p PID --duration {secs} --dump F` (default budget). RSS in MiB "
             "(anonymous + file-backed: the file part is mostly libdw's mapped debug files, "
             "e.g. libc6-dbg). CPU: pmutop's, % of one core over each 30 s.", ""]
    for name, r in runs.items():
        with open(r["err"]) as f:
            err = f.read()
        m = re.search(r"(\d+) samples of .* in ([\d.]+) s", err)
        lost = re.search(r"; lost (\d+)", err)
        cap = re.search(r"(memory budget .*)", err)
        samples, dur = (int(m.group(1)), float(m.group(2))) if m else (0, 1)
        ru = r["rusage"]
        cpu_total = ru.ru_utime + ru.ru_stime
        warm = [s["VmRSS"] / 1024 for el, s in r["curve"] if el >= 60 and "VmRSS" in s]
        rate = samples / dur if dur else 0
        lines += [f"### {name}", "", "| t (s) | RSS | anon | file | CPU % | load |",
                  "|---|---|---|---|---|---|"]
        prev = (0, 0)
        for el, s in r["curve"]:
            # The first reading (t ~ 0) has no interval to divide by.
            cpu = (f"{100 * (s['cpu'] - prev[1]) / (el - prev[0]):.1f}"
                   if el - prev[0] >= 1 else "-")
            prev = (el, s["cpu"])
            lines.append(f"| {el:.0f} | {s.get('VmRSS', 0) / 1024:.1f} | "
                         f"{s.get('RssAnon', 0) / 1024:.1f} | {s.get('RssFile', 0) / 1024:.1f} | "
                         f"{cpu} | {s['load']:.1f} |")
        size = os.path.getsize(r["prof"]) if os.path.exists(r["prof"]) else 0
        opened = pprof_open.open_times(r["prof"]) if os.path.exists(r["prof"]) else None
        per1k = 100 * cpu_total / dur / (rate / 1000) if rate else 0
        lines += ["",
                  f"- pmutop exit status {r['pm'].returncode}; "
                  f"{samples:,} samples in {dur:.0f} s ({rate:.0f}/s), lost "
                  f"{lost.group(1) if lost else '?'}; pmutop CPU {100 * cpu_total / dur:.2f}% "
                  f"of a core = {per1k:.2f}% per 1,000 samples/s",
                  f"- RSS after the first minute {min(warm, default=0):.1f}-"
                  f"{max(warm, default=0):.1f} MiB; peak over the whole run, the final "
                  f"profile's writing included: {ru.ru_maxrss / 1024:.1f} MiB",
                  f"- {cap.group(1) if cap else 'nothing merged'}",
                  "- " + (pprof_open.fmt_open(opened) if opened else f"no profile ({size} B)"),
                  ""]
    lines.append(END)
    pprof_open.bl.write_section(RESULTS, BEGIN, END, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
