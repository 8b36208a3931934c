#!/usr/bin/env bash
# bench/run.sh - pmutop side by side with perf; writes bench/RESULTS.md.
#
#   make bench                      build, then the full run (<= ~15 min)
#                                   + bench/pprof_open.py (profiles' open times, ~3 min)
#                                   + bench/longrun.py (BENCH_LONG_MINUTES, default 10)
#                                   + bench/aggbench.py (BENCH_AGG_SECS, default 60)
#   BENCH_QUICK=1 bash bench/run.sh ~2 minute version (preliminary figures)
#
# The measurements are in bench/bench.py (python3, stdlib only; helpers in
# bench/benchlib.py); see its header for the environment knobs
# (BENCH_SECTIONS, BENCH_EVENT, BENCH_PERIOD, BENCH_RESULTS, BENCH_WORK, ...).
# PMUTOP (default ./pmutop) and WORKLOAD_DIR (default: workloads/ next to
# PMUTOP's build dir, else build/workloads) are resolved as tests/e2e does.
# Needs the workloads (make workloads), perf (linux-perf) for the perf
# columns - without it they read "n/a" - and permission to profile (root, or
# kernel.perf_event_paranoid <= 2). Exit status 1 if any measurement hit a
# real error; the report is written anyway.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"

command -v python3 >/dev/null 2>&1 || { echo "bench: python3 is needed" >&2; exit 2; }

p=${PMUTOP:-./pmutop}
if [[ $p != */* ]] && command -v "$p" >/dev/null 2>&1; then
	p=$(command -v "$p")
fi
[[ $p == /* ]] || p=$PWD/$p
[[ -x $p ]] || { echo "bench: pmutop binary $p not found (make; or set PMUTOP)" >&2; exit 2; }

wd=${WORKLOAD_DIR:-}
if [[ -z $wd ]]; then
	if [[ -d $(dirname "$p")/workloads ]]; then
		wd=$(dirname "$p")/workloads
	else
		wd=$REPO/build/workloads
	fi
fi
[[ $wd == /* ]] || wd=$PWD/$wd
[[ -d $wd ]] || { echo "bench: workloads not built in $wd (make workloads)" >&2; exit 2; }

if ! command -v perf >/dev/null 2>&1; then
	echo "bench: perf not found - the perf columns will be n/a (apt-get install linux-perf)" >&2
fi

export PMUTOP=$p WORKLOAD_DIR=$wd
rc=0
python3 "$REPO/bench/bench.py" "$@" || rc=$?
# Opening the profiles (issue 31): go tool pprof -top with its default flags
# and pmutop --load on 60 s of gofmt and on bigdwarf (BENCH_OPEN_GOFMT_SECONDS).
python3 "$REPO/bench/pprof_open.py" || rc=$?
# Long runs (issue 23): RSS and CPU curves, BENCH_LONG_MINUTES (default 10,
# 60 for the optional long run, 0 skips).
python3 "$REPO/bench/longrun.py" || rc=$?
# The profile's fidelity against its memory (issue 31): gofmt and the worst
# case, BENCH_AGG_SECS (default 60, 0 skips).
python3 "$REPO/bench/aggbench.py" || rc=$?
exit $rc
