#!/usr/bin/env bash
# t_signal_twice.sh - Ctrl-C twice (issue 17): the first SIGINT stops
# sampling; a second one, while pmutop resolves debug info and writes the
# profile, must neither lose the profile nor turn the exit into "killed by
# SIGINT" (status 130) once the profile is written. Five runs, the second
# signal 0 to 300 ms after the first.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
e2e_init
need_wl inline_hot
for gap in 0 0.05 0.1 0.2 0.3; do
	pm_start twice -e task-clock --dump twice.pb.gz -- "$W/inline_hot" 30
	pm_wait_sampling 10 || { show twice.err; fail "pmutop did not start sampling"; }
	sleep 1
	kill -INT "$PM"; sleep "$gap"; kill -INT "$PM" 2>/dev/null
	pm_finish 30 || fail "pmutop did not end after two SIGINTs"
	info "gap $gap s: status $RC"
	(( RC == 0 )) || { show twice.err; fail "status $RC after a second SIGINT (gap $gap s)"; }
	pprof -top twice.pb.gz >twice.top 2>&1 || fail "no readable profile (gap $gap s)"
	rm -f twice.pb.gz
done
pass "a second SIGINT while stopping: status 0 and a profile, 5 runs"
