#!/usr/bin/env bash
# t_exit_midrun.sh - the target exits while pmutop is sampling it.
#
# Attach mode: `pmutop -p PID --duration 30 --dump F` on an exiter that ends
# after 1 s must stop early (not wait out the 30 s), exit 0 and write a
# profile go tool pprof reads, with exiter_spin in it.
# Launch mode: `pmutop -- exiter 0.5 3` must report the target's exit
# status 3 on stderr (and still exit 0 itself, printing the table).
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl exiter

errs=0

# The target must still run when pmutop attaches: a starved pmutop (ASan
# build at load 12+) took 0.86 s to get there. A run that finds it gone
# ("no such process") says nothing about exits mid-run; it is run again
# with a target living three times as long, up to twice.
for life in 1 3 9; do
	info "== attach, target exits after $life s"
	start_bg "$W/exiter" "$life" 0
	pid=$BG_PID
	wait_started "$pid"
	t0=$(now)
	run_pmutop attach -e task-clock --period 1000000 --duration 30 --dump exit.pb.gz -p "$pid"
	took=$(elapsed "$t0")
	show attach.err
	info "pmutop took ${took} s (target exited at ~$life s)"
	grep -q "no such process" attach.err || break
	info "the target was gone before pmutop attached (load $(cut -d' ' -f1 /proc/loadavg)): again"
done
if (( RC != 0 )); then
	info "FAILED: exit status $RC, want 0"
	errs=$((errs + 1))
fi
if awk -v e="$took" -v l="$life" 'BEGIN { exit !(e > l + 4) }'; then
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
