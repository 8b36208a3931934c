#!/usr/bin/env bash
# t_fault_killed.sh - the target is killed (SIGKILL) while pmutop samples it.
#
# Attach mode: `pmutop -p PID --duration 20 --dump F`; the exiter is killed
# with SIGKILL after ~1 s. Launch mode: `pmutop --duration 20 --dump F --
# exiter 30`, and the command pmutop started is killed the same way.
# Either way pmutop must notice within a few seconds (not wait out the 20),
# exit 0, write a profile go tool pprof reads with exiter_spin in it, and in
# launch mode report that its command was killed by signal 9.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
e2e_init
need_wl exiter

RUN_FOR=$(quick_or 1.5 1)

info "== attach: SIGKILL to the target after ${RUN_FOR} s"
start_bg "$W/exiter" 60
target=$BG_PID
wait_started "$target"
pm_start attach -e task-clock --period 500000 --duration 20 --dump attach.pb.gz -p "$target"
pm_wait_sampling || problem "pmutop did not attach"
sleep "$RUN_FOR"
kill -KILL "$target"
t0=$(now)
pm_finish 8
show attach.err
info "pmutop exited with status $RC $(elapsed "$t0") s after the kill"
(( RC == 0 )) || problem "attach: exit status $RC, want 0"
grep -q 'target exited' attach.err || problem "attach: the summary does not say the target exited"
if readable attach.pb.gz; then
	(( $(flat_of exiter_spin) > 0 )) || problem "attach: exiter_spin not in the profile"
fi

info "== launch: SIGKILL to pmutop's command after ${RUN_FOR} s"
pm_start launch -e task-clock --period 500000 --duration 20 --dump launch.pb.gz -- "$W/exiter" 60
child=
for i in $(seq 100); do
	child=$(pgrep -P "$PM" exiter | head -n 1)
	[[ -n $child ]] && break
	sleep 0.05
done
[[ -n $child ]] || { show launch.err; fail "launch: cannot find the exiter pmutop started"; }
sleep "$RUN_FOR"
kill -KILL "$child"
t0=$(now)
pm_finish 8
show launch.err
info "pmutop exited with status $RC $(elapsed "$t0") s after the kill"
# Launch mode is transparent (issue 21): pmutop exits as its command did,
# 128 + 9 for SIGKILL, like time(1) and perf stat.
(( RC == 137 )) || problem "launch: exit status $RC, want 137 (the command's: SIGKILL)"
grep -qiE 'killed by signal 9|signal 9' launch.err || problem "launch: stderr does not report signal 9"
if readable launch.pb.gz; then
	(( $(flat_of exiter_spin) > 0 )) || problem "launch: exiter_spin not in the profile"
fi

(( ERRS == 0 )) || fail "$ERRS problem(s) with a target killed mid-run"
pass "target killed mid-run: pmutop stops (attach: 0; launch: the command's 137), profile readable"
