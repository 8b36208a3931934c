#!/usr/bin/env bash
# t_dlopen_pie.sh - symbols in a PIE and in a library dlopen()ed after attach.
#
# dl_main (a position-independent executable) spins in pie_hot_function()
# until SIGUSR1, then dlopen()s libhot.so and spins in libhot_spin().
# pmutop attaches (-p) during the first phase, so the library's mapping
# appears only after attach; it stops when dl_main exits. The profile must name both functions, each with
# a fair part of the samples.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl dl_main libhot.so

# The first phase ends (SIGUSR1) once pmutop has sampled it for PHASE1
# seconds, however long pmutop took to start: with a timed first phase an
# ASan pmutop on a loaded machine began sampling so late that
# pie_hot_function had 7.9% (< 10%). The second lasts PHASE2 seconds.
PHASE1=1
PHASE2=$(quick_or 2 1.5)

start_bg "$W/dl_main" "$PHASE2" usr1 "$W/libhot.so"
pid=$BG_PID
wait_started "$pid"
kill -0 "$pid" 2>/dev/null || fail "dl_main did not start"

info "\$ pmutop -e task-clock --period 1000000 --dump dl.pb.gz -p $pid   (SIGUSR1 to dl_main after ${PHASE1} s of sampling)"
"$PMUTOP" -e task-clock --period 1000000 --dump dl.pb.gz -p "$pid" >dl.out 2>dl.err &
pm=$!
E2E_BG_PIDS+=("$pm")
for _ in $(seq 300); do
	ls -l "/proc/$pm/fd" 2>/dev/null | grep -q 'perf_event' && break
	kill -0 "$pm" 2>/dev/null || break
	sleep 0.1
done
sleep "$PHASE1"
grep -q libhot /proc/"$pid"/maps 2>/dev/null && fail "libhot.so mapped before the signal"
kill -USR1 "$pid" || fail "dl_main is gone before the signal"
wait "$pm"
RC=$?
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
