#!/usr/bin/env bash
# t_exit_status.sh - a command pmutop cannot run exits as under time(1),
# which README promises pmutop is like: 127 when the command is not found,
# 126 when it is found but cannot be executed (no x bit, a directory), with
# one line saying which. Checked against /usr/bin/time's own status for the
# same command, in batch mode and in the live view (under script(1), which
# gives it a terminal); pmutop's own failures stay 1, bad options 2.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init

printf 'echo hi\n' >noexec.sh
chmod 644 noexec.sh
mkdir -p adir
errs=0

# case NAME WANT REGEX CMD...: pmutop -- CMD exits WANT with REGEX on stderr.
case_() {
	local name=$1 want=$2 re=$3 tstatus
	shift 3
	run_pmutop "$name" -e task-clock --no-tui -- "$@"
	show "$name.err" 2
	if [[ -x /usr/bin/time ]]; then
		/usr/bin/time -o /dev/null "$@" >/dev/null 2>&1
		tstatus=$?
		(( tstatus == want )) || info "(note: time(1) gives $tstatus for $*)"
	fi
	if (( RC != want )); then
		info "FAILED: $name: status $RC, want $want (time(1)'s)"
		errs=$((errs + 1))
	elif ! grep -qE -- "$re" "$name.err"; then
		info "FAILED: $name: message does not match /$re/"
		errs=$((errs + 1))
	fi
}

case_ notfound 127 'nosuchcommand-xyz: command not found' nosuchcommand-xyz
case_ notfound_path 127 'cannot run \./no/such/file: No such file' ./no/such/file
case_ noexec 126 'cannot run \./noexec\.sh: Permission denied' ./noexec.sh
case_ directory 126 'cannot run \./adir' ./adir
case_ ran_false 1 '' false

if command -v script >/dev/null 2>&1; then
	TERM=xterm script -qec "$PMUTOP -e task-clock --top -- nosuchcommand-xyz" /dev/null >tui.out 2>&1
	rc=$?
	info "live view: status $rc: $(grep -o 'nosuch.*' tui.out | head -1)"
	(( rc == 127 )) || { info "FAILED: the live view exits $rc for a missing command, want 127"; errs=$((errs + 1)); }
else
	info "(script(1) not installed: live view case skipped)"
fi
run_pmutop badopt --period 0 -- true
(( RC == 2 )) || { info "FAILED: a bad option exits $RC, want 2"; errs=$((errs + 1)); }
(( errs == 0 )) || fail "$errs exit status case(s) wrong"
pass "exit status like time(1): 127 not found, 126 not executable, the command's own otherwise"
