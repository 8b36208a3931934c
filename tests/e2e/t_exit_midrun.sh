#!/usr/bin/env bash
# t_exit_midrun.sh - the target exits while pmutop is sampling it.
#
# Attach mode: `pmutop -p PID --duration 10 --dump F` on an exiter that ends
# after 1 s must stop early (not wait out the 10 s), exit 0 and write a
# profile go tool pprof reads, with exiter_spin in it.
# Launch mode: `pmutop -- exiter 0.5 3` must report the target's exit
# status 3 on stderr (and still exit 0 itself, printing the table).
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl exiter

errs=0

info "== attach, target exits after 1 s"
start_bg "$W/exiter" 1 0
pid=$BG_PID
wait_started "$pid"
t0=$(now)
run_pmutop attach -e task-clock --period 1000000 --duration 10 --dump exit.pb.gz -p "$pid"
took=$(elapsed "$t0")
show attach.err
info "pmutop took ${took} s (target exited at ~1 s)"
if (( RC != 0 )); then
	info "FAILED: exit status $RC, want 0"
	errs=$((errs + 1))
fi
if awk -v e="$took" 'BEGIN { exit !(e > 5) }'; then
	info "FAILED: pmutop did not stop when the target exited"
	errs=$((errs + 1))
fi
if [[ ! -s exit.pb.gz ]]; then
	info "FAILED: no profile written"
	errs=$((errs + 1))
elif ! top_flat exit.pb.gz >flat.txt; then
	info "FAILED: go tool pprof cannot read the profile"
	errs=$((errs + 1))
else
	show "$T/top.txt" 8
	if ! awk -F'\t' '$1 == "exiter_spin" && $2 > 0 { found = 1 } END { exit !found }' flat.txt; then
		info "FAILED: exiter_spin not in the profile"
		errs=$((errs + 1))
	fi
fi

info "== launch, target exits with status 3"
run_pmutop launch -e task-clock --period 1000000 --duration 10 --table-file launch.table -- "$W/exiter" 0.5 3
mv launch.table launch.out # launched: the table goes to -o, never into the command's stdout
show launch.err 10
show launch.out 8
if (( RC != 3 )); then
	info "FAILED: exit status $RC, want 3 (pmutop exits with the command's status, like time)"
	errs=$((errs + 1))
fi
if ! grep -qiE '(status|code)[^0-9]{0,12}3([^0-9]|$)|exited[^0-9]{0,12}3([^0-9]|$)' launch.err; then
	info "FAILED: stderr does not report exit status 3"
	errs=$((errs + 1))
fi
if ! grep -q 'exiter_spin' launch.out; then
	info "FAILED: the table (-o) does not show exiter_spin"
	errs=$((errs + 1))
fi

(( errs == 0 )) || fail "$errs problem(s) with a target that exits mid-run"
pass "stops when the target exits, profile readable, exit status 3 reported and returned"
