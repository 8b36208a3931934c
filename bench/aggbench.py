#!/usr/bin/env python3
"""aggbench.py - the profile's fidelity against its memory (issue 31).

pmutop with the options a user runs (only --duration and --dump), on:
  - gofmt: the Go distribution's gofmt over 3,000 of its source files, again
    and again for 60 s (Debian's golang-go; a program nobody here wrote);
  - the worst case: longrun (tests/workloads/longrun.c), deep random
    recursion under a renewed thread pool - a new call path almost every
    sample - at 10,000 samples/s per thread, once with the default budget
    and once with --max-memory 16M, where the budget must hold and the
    summary must say what was pruned.
For each: samples, lost, pmutop's CPU per sample and peak RSS (wait4), the
aggregate's size when written (tree nodes, (thread, stack) records, bytes;
the profile's comments), what the budget merged, the share of samples whose
stack reaches a thread entry (folded output), the file's size, and the time
`go tool pprof -top` (its default flags: it symbolizes what the file leaves
unsymbolized) and `pmutop --load` take to open it.
Writes its section of bench/RESULTS.md between its own markers.

Environment: PMUTOP, WORKLOAD_DIR (run.sh sets them), BENCH_RESULTS,
BENCH_AGG_SECS (default 60; 0 skips).
"""
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pprof_open as po  # noqa: E402
from bench import go_inputs as go_files  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PMUTOP = os.environ.get("PMUTOP") or os.path.join(REPO, "pmutop")
WL = os.environ.get("WORKLOAD_DIR") or os.path.join(REPO, "build", "workloads")
RESULTS = os.environ.get("BENCH_RESULTS") or os.path.join(REPO, "bench", "RESULTS.md")
SECS = int(os.environ.get("BENCH_AGG_SECS", "60"))
BEGIN = "<!-- BEGIN bench/aggbench.py output -->"
END = "<!-- END bench/aggbench.py output -->"
ROOTS = {"__clone3", "__clone", "clone3", "clone", "start_thread", "_start",
         "__libc_start_main", "runtime.goexit", "runtime.mstart", "runtime.rt0_go"}


def run(work, name, argv, extra):
    """pmutop -- argv (or -p of a started target); returns a result dict."""
    prof = os.path.join(work, name + ".pb.gz")
    errf = os.path.join(work, name + ".err")
    target = None
    if argv[0] == "-p":
        target = subprocess.Popen(argv[1:], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        time.sleep(1)
        cmd = [PMUTOP] + extra + ["--duration", str(SECS), "--dump", prof, "-p",
                                  str(target.pid)]
    else:
        cmd = [PMUTOP] + extra + ["--duration", str(SECS), "--dump", prof, "--"] + argv
    with open(errf, "w") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, st, ru = os.wait4(p.pid, 0)
    if target:
        target.kill()
        target.wait()
    text = open(errf).read()
    r = {"name": name, "cmd": cmd, "status": os.waitstatus_to_exitcode(st),
         "cpu": ru.ru_utime + ru.ru_stime, "rss": ru.ru_maxrss / 1024, "err": text}
    m = re.search(r"(\d+) samples of .* in ([\d.]+) s", text)
    r["samples"] = int(m.group(1)) if m else 0
    m = re.search(r"; lost (\d+)", text)
    r["lost"] = int(m.group(1)) if m else -1
    m = re.search(r"pmutop: (memory budget .*)", text)
    r["merged"] = m.group(1) if m else "nothing merged"
    r["size"] = os.path.getsize(prof) if os.path.exists(prof) else 0
    env = dict(os.environ, HOME=os.environ.get("HOME", "/tmp"), GOCACHE="/tmp/gocache")
    tp, kp, rcp, _ = po.timed(["go", "tool", "pprof", "-top", prof])
    r["pprof"] = (tp if tp is not None else float("inf"), kp / 1024, rcp)
    tl, kl, rcl, _ = po.timed([PMUTOP, "--load", prof])
    r["load"] = (tl if tl is not None else float("inf"), kl / 1024, rcl)
    raw = subprocess.run(["go", "tool", "pprof", "-symbolize=none", "-comments", prof],
                         capture_output=True, text=True, env=env).stdout
    m = re.search(r"bytes=(\d+) nodes=(\d+) stacks=(\d+) pruned_frames=(\d+) "
                  r"pruned_samples=(\d+)", raw)
    r["agg"] = tuple(int(x) for x in m.groups()) if m else None
    folded = prof.replace(".pb.gz", ".folded")
    subprocess.run([PMUTOP, "-q", "--load", prof, "--format", "folded", "--dump", folded],
                   capture_output=True)
    rooted = total = 0
    try:
        with open(folded) as f:
            for line in f:
                stack, _, n = line.rstrip("\n").rpartition(" ")
                n = int(n)
                total += n
                rooted += n if stack.split(";", 1)[0] in ROOTS else 0
    except (OSError, ValueError):
        pass
    r["rooted"] = 100 * rooted / total if total else 0
    return r


def main():
    if SECS <= 0:
        print("aggbench: BENCH_AGG_SECS=0, skipped")
        return 0
    work = tempfile.mkdtemp(prefix="pmutop-aggbench.")
    gofmt = shutil.which("gofmt") or "/usr/lib/go-1.19/bin/gofmt"
    lst = os.path.join(work, "gofiles.txt")
    with open(lst, "w") as f:
        f.write("\n".join(go_files()) + "\n")
    loop = ["/bin/sh", "-c", 'while :; do GOMAXPROCS=2 xargs "$1" -l <"$2" >/dev/null; done',
            "sh", gofmt, lst]
    runs = [run(work, "gofmt", loop, []),
            run(work, "worst_default", ["-p", os.path.join(WL, "longrun"), str(SECS + 60)],
                ["-e", "task-clock", "--period", "100000"]),
            run(work, "worst_16M", ["-p", os.path.join(WL, "longrun"), str(SECS + 60)],
                ["-e", "task-clock", "--period", "100000", "--max-memory", "16M"])]
    lines = [BEGIN, "",
             f"_Written by `bench/aggbench.py` ({SECS} s runs), "
             f"{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; 1-minute load average "
             f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs at the end._", "",
             "## The profile's fidelity against its memory (issue 31)", "",
             "`pmutop --duration S --dump F` with default options otherwise (gofmt: launched, "
             "3,000 Go files per round, in a loop; worst case: longrun attached at 10,000 "
             "samples/s per thread, every sample a new path). Aggregate = the profile being "
             "built when it was written (tree nodes, (thread, stack) records, bytes). Rooted = "
             "samples whose outermost frame is a thread entry (folded output). Open = wall "
             "time and peak RSS of `go tool pprof -top F` (its default flags) and "
             "`pmutop --load F`.", "",
             "| run | samples | lost | pmutop CPU/sample | peak RSS | aggregate | pruned | "
             "rooted | file | go tool pprof -top | pmutop --load |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        agg = r["agg"]
        aggs = (f"{agg[1]:,} nodes, {agg[2]:,} records, {agg[0] / 2**20:.1f} MiB"
                if agg else "?")
        pr = f"{agg[3]:,} frames ({agg[4]:,} samples)" if agg else "?"
        per = 1e6 * r["cpu"] / r["samples"] if r["samples"] else 0
        lines.append(f"| {r['name']} | {r['samples']:,} | {r['lost']:,} | {per:.1f} us | "
                     f"{r['rss']:.1f} MiB | {aggs} | {pr} | {r['rooted']:.1f}% | "
                     f"{r['size'] / 1024:.0f} KiB | {r['pprof'][0]:.1f} s, "
                     f"{r['pprof'][1]:.0f} MiB | {r['load'][0]:.1f} s, {r['load'][1]:.0f} MiB |")
    lines.append("")
    for r in runs:
        lines.append(f"- {r['name']}: exit status {r['status']}; {r['merged']}")
    lines += ["", END]
    po.bl.write_section(RESULTS, BEGIN, END, lines)
    return 1 if any(r["status"] != 0 for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
