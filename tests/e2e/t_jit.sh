#!/usr/bin/env bash
# t_jit.sh - JIT code is named from the target's perf map (/tmp/perf-PID.map).
#
# The jit workload generates a hot loop into anonymous memory and names it
# in its perf map: jit_hot_first at start, jit_hot_second appended half-way
# through. pmutop attaches after the first line exists, so the second name
# only shows if the map is re-read when it grows. Both must appear as flat
# functions and together hold most of the profile.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl jit
[[ $(uname -m) == x86_64 ]] || skip "the jit workload generates x86-64 code"

RUN=$(quick_or 6 4)
start_bg "$W/jit" "$RUN"
JIT=$BG_PID
wait_started "$JIT"
[[ -s /tmp/perf-$JIT.map ]] || fail "the workload wrote no /tmp/perf-$JIT.map"
info "perf map: $(cat /tmp/perf-$JIT.map)"

run_pmutop jit -e task-clock --duration $((RUN - 1)) --dump jit.pb.gz -p "$JIT"
show jit.err 5
(( RC == 0 )) || fail "pmutop exited with status $RC"
top_flat jit.pb.gz >flat.txt || fail "go tool pprof cannot read the profile"
show "$T/top.txt" 14

awk -F'\t' '
{ total += $2; flat[$1] += $2 }
END {
	f = flat["jit_hot_first"]; s = flat["jit_hot_second"]
	printf "  jit_hot_first %.1f%%, jit_hot_second %.1f%% of %d\n",
		total ? 100 * f / total : 0, total ? 100 * s / total : 0, total
	if (f <= 0) { print "  jit_hot_first missing"; exit 1 }
	if (s <= 0) { print "  jit_hot_second missing (perf map not re-read?)"; exit 1 }
	if (f + s < 0.6 * total) { print "  JIT names cover under 60% of the samples"; exit 1 }
}' flat.txt || fail "JIT functions not named from the perf map"
wait "$JIT" 2>/dev/null
pass "perf-map names for generated code, including a line appended mid-run"
