#!/usr/bin/env bash
# t_caps.sh - a non-root user with CAP_SYS_PTRACE and CAP_PERFMON may
# profile another user's process, as the error message for plain users
# says (issue 17: pmutop used to refuse anyone but root); without them the
# refusal names the capabilities.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl threads
(( EUID == 0 )) || skip "needs root to hand out capabilities"
command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+perfmon --ambient-caps=+perfmon \
	true 2>/dev/null || skip "this kernel or setpriv cannot grant CAP_PERFMON"

cp "$PMUTOP" ./pmutop && chmod 755 . ./pmutop
start_bg "$W/threads" 90
TP=$BG_PID
wait_started "$TP"
info "\$ setpriv --reuid=nobody --ambient-caps=+sys_ptrace,+perfmon pmutop -p $TP (a root process)"
timeout -k 5 60 setpriv --reuid=65534 --regid=65534 --clear-groups \
	--inh-caps=+sys_ptrace,+perfmon --ambient-caps=+sys_ptrace,+perfmon \
	./pmutop -p "$TP" -e task-clock --duration 2 --dump - >caps.pb.gz 2>caps.err
RC=$?
(( RC == 0 )) || { show caps.err; fail "with CAP_SYS_PTRACE+CAP_PERFMON: status $RC"; }
pprof -top caps.pb.gz >caps.top 2>&1 || fail "pprof cannot read the profile"
grep -q threads caps.top || { show caps.top; fail "no samples of the root-owned target"; }

timeout -k 5 60 setpriv --reuid=65534 --regid=65534 --clear-groups \
	./pmutop -p "$TP" -e task-clock --duration 1 >plain.out 2>plain.err
RC=$?
(( RC != 0 )) && grep -q "needs root or CAP_SYS_PTRACE" plain.err ||
	{ show plain.err; fail "without capabilities: status $RC and no clear refusal"; }
pass "CAP_SYS_PTRACE+CAP_PERFMON suffice to profile another user's process; without them a clear refusal"
