#!/usr/bin/env bash
# t_fault_exec.sh - the target execs another program while being profiled.
#
# fault_exec spins in pre_exec_spin() for a while, then execs the exiter,
# which spins in exiter_spin() for as long again (same PID, new image).
# Attach mode and launch mode: pmutop must follow the exec - samples after
# it are named from the new image (exiter_spin gets roughly its half of the
# time, not 0 and not everything) - exit 0 and write a readable profile.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
e2e_init
need_wl fault_exec exiter

HALF=$(quick_or 1.5 1)

# check_halves NAME: both images' functions each have 20-80 % of the time.
check_halves() {
	local pre post
	pre=$(share pre_exec_spin)
	post=$(share exiter_spin)
	info "$1: pre_exec_spin ${pre}%, exiter_spin ${post}% (want ~50/50)"
	awk -v a="$pre" 'BEGIN { exit !(a >= 20 && a <= 80) }' ||
		problem "$1: pre_exec_spin (old image) has ${pre}% of the time"
	awk -v a="$post" 'BEGIN { exit !(a >= 20 && a <= 80) }' ||
		problem "$1: exiter_spin (new image) has ${post}% of the time: symbols did not follow the exec"
}

# The halves need pmutop sampling from early in the first one: a starved
# pmutop (ASan build at load 12+) attached so late that the old image had
# 0% of the time. The profile's start (its Time) against the target's says
# when sampling began; a run that began past 40% of the first half says
# nothing about exec and is run again with halves three times as long (up
# to twice).
half=$HALF
for attempt in 1 2 3; do
	info "== attach (halves of $half s)"
	t_start=$(now)
	start_bg "$W/fault_exec" "$half" "$W/exiter" 60
	target=$BG_PID
	wait_started "$target"
	run_pmutop attach -e task-clock --period 500000 --duration "$(awk -v h="$half" 'BEGIN { print 2 * h }')" \
		--dump attach.pb.gz -p "$target"
	show attach.err
	began=$(pprof -raw attach.pb.gz 2>/dev/null | awk '/^Time:/ { print $2 " " $3; exit }')
	delay=$(awk -v a="$(date -d "$began" +%s.%N 2>/dev/null || echo 0)" -v b="$t_start" 'BEGIN { printf "%.2f", a - b }')
	info "sampling began ${delay} s after the target started"
	awk -v d="$delay" -v h="$half" 'BEGIN { exit !(d > 0.4 * h) }' || break
	(( attempt < 3 )) || break
	info "too late for the halves (load $(cut -d' ' -f1 /proc/loadavg)): again"
	kill "$target" 2>/dev/null
	half=$(awk -v h="$half" 'BEGIN { print 3 * h }')
done
(( RC == 0 )) || problem "attach: exit status $RC, want 0"
alive "$target" || problem "attach: the target did not survive"
readable attach.pb.gz && check_halves attach

info "== launch"
run_pmutop launch -e task-clock --period 500000 --duration 20 --dump launch.pb.gz \
	-- "$W/fault_exec" "$HALF" "$W/exiter" "$HALF" 0
show launch.err
(( RC == 0 )) || problem "launch: exit status $RC, want 0"
grep -q 'exited with status 0' launch.err || problem "launch: the command's exit status 0 is not reported"
readable launch.pb.gz && check_halves launch

(( ERRS == 0 )) || fail "$ERRS problem(s) with a target that execs"
pass "exec mid-run: symbols follow the new image (attach and launch)"
