#!/usr/bin/env bash
# t_sigint.sh - Ctrl-C ends a run cleanly and keeps the profile.
#
# SIGINT to `pmutop -p PID --duration 30 --dump F` after ~2 s: pmutop must
# exit 0 within a few seconds, having written a profile go tool pprof reads
# (with the workload's functions), and the attached target must still be
# running afterwards (pmutop detaches, it does not kill or stop it).
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares

SAMPLE_FOR=$(quick_or 2 1.5)

start_bg "$W/shares" 60
target=$BG_PID
wait_started "$target"

# Job control on: a background job of a script would otherwise start with
# SIGINT ignored, unlike pmutop run from a terminal.
set -m
info "\$ pmutop -e task-clock --period 1000000 --duration 30 --dump int.pb.gz -p $target  (SIGINT after ${SAMPLE_FOR} s)"
"$PMUTOP" -e task-clock --period 1000000 --duration 30 --dump int.pb.gz -p "$target" >int.out 2>int.err &
pm=$!
E2E_BG_PIDS+=("$pm")
set +m
sleep "$SAMPLE_FOR"
kill -0 "$pm" 2>/dev/null || { show int.err; fail "pmutop ended before SIGINT"; }
t0=$(now)
kill -INT "$pm"
if ! wait_gone "$pm" 5; then
	show int.err
	fail "pmutop still running 5 s after SIGINT"
fi
wait "$pm"
rc=$?
took=$(elapsed "$t0")
show int.err
info "pmutop exited with status $rc ${took} s after SIGINT"

errs=0
if (( rc != 0 )); then
	info "FAILED: exit status $rc, want 0"
	errs=$((errs + 1))
fi
if [[ ! -s int.pb.gz ]]; then
	info "FAILED: no profile written"
	errs=$((errs + 1))
elif ! top_flat int.pb.gz >flat.txt; then
	info "FAILED: go tool pprof cannot read the profile"
	errs=$((errs + 1))
else
	show "$T/top.txt" 8
	if ! grep -q '_expect_' flat.txt; then
		info "FAILED: the workload's functions are not in the profile"
		errs=$((errs + 1))
	fi
fi
sleep 0.2
state=$(awk '{ print $3 }' /proc/"$target"/stat 2>/dev/null)
if ! kill -0 "$target" 2>/dev/null || [[ $state == Z ]]; then
	info "FAILED: the target died with pmutop"
	errs=$((errs + 1))
elif [[ $state == T || $state == t ]]; then
	info "FAILED: the target was left stopped (state $state)"
	errs=$((errs + 1))
fi

(( errs == 0 )) || fail "$errs problem(s) after SIGINT"
pass "SIGINT: exit 0 in ${took} s, profile written and readable, target still running"
