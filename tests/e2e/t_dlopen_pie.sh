#!/usr/bin/env bash
# t_dlopen_pie.sh - symbols in a PIE and in a library dlopen()ed after attach.
#
# dl_main (a position-independent executable) spins in pie_hot_function()
# for PHASE1 seconds, then dlopen()s libhot.so and spins in libhot_spin().
# pmutop attaches (-p) during the first phase, so the library's mapping
# appears only after attach. The profile must name both functions, each with
# a fair part of the samples.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl dl_main libhot.so

PHASE1=$(quick_or 1.5 1)
TOTAL=$(quick_or 4 3)
PDUR=$(quick_or 3.5 2.7)

start_bg "$W/dl_main" "$TOTAL" "$PHASE1" "$W/libhot.so"
pid=$BG_PID
wait_started "$pid"
kill -0 "$pid" 2>/dev/null || fail "dl_main did not start"
grep -q libhot /proc/"$pid"/maps 2>/dev/null && fail "libhot.so already mapped before attach (machine too slow?)"

run_pmutop dl -e task-clock --period 1000000 --duration "$PDUR" --dump dl.pb.gz -p "$pid"
show dl.err
(( RC == 0 )) || fail "pmutop exited with status $RC"
[[ -s dl.pb.gz ]] || fail "no profile written"

top_flat dl.pb.gz >flat.txt || fail "go tool pprof -top cannot read the profile"
show "$T/top.txt" 12
awk -F'\t' '
{ total += $2; flat[$1] += $2 }
END {
	bad = 0
	if (total <= 0) { print "  no samples"; exit 1 }
	n = split("pie_hot_function libhot_spin", want, " ")
	for (k = 1; k <= n; k++) {
		share = 100 * flat[want[k]] / total
		printf "  %-18s %6.2f%% of flat\n", want[k], share
		# Both phases are >= ~1 s of the run; allow for a late attach.
		if (share < 10) { printf "  %s missing or under 10%%\n", want[k]; bad = 1 }
	}
	exit bad
}' flat.txt || fail "pie_hot_function and libhot_spin not both named in the profile"
pass "PIE function and post-attach dlopen()ed library function both named"
