#!/usr/bin/env bash
# t_broken_pipe.sh - a reader of stdout/stderr that goes away costs
# pmutop's messages, never the profile (issue 32).
#
# `pmutop --dump F -- CMD 2>&1 | head -1` used to die of SIGPIPE at its next
# message (exit 141): F never written, the launched command left to run if
# it still did. Now pmutop ignores SIGPIPE, finishes the run, and exits 141
# to say output was lost; the launched command gets SIGPIPE's default back.
#
# 1. stdout and stderr on a pipe whose reader is already gone (a FIFO
#    opened for writing, then its only reader closed: every write fails,
#    whatever the machine's speed): exit 141, F written and readable with
#    the workload's functions, the command not running afterwards.
# 2. The same with `--dump -`: the profile itself went to the broken pipe,
#    so pmutop failed: exit 1.
# 3. The issue's own line, `2>&1 | head -1`: F written, the command ended,
#    exit 141 (or 0 if head had not yet exited by pmutop's last message:
#    that is head's timing, not ours, so both are accepted there).
# 4. The launched command gets SIGPIPE's default action back (an ignored
#    signal would stay ignored across exec): `sh -c 'kill -PIPE $$'` dies of
#    it, and pmutop passes on its 141.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares

cp "$W/shares" "$T/bp_shares" || fail "cp shares"
errs=0

# Is a process still running $T/bp_shares? (It is then ended, so that a
# failed run leaves nothing behind.)
left_running() {
	local e p found=1

	for e in /proc/[0-9]*/exe; do
		if [[ $(readlink "$e" 2>/dev/null) == "$T/bp_shares" ]]; then
			p=${e#/proc/}
			kill -KILL "${p%/exe}" 2>/dev/null
			found=0
		fi
	done
	return $found
}

check_profile() {
	local f=$1 what=$2

	if [[ ! -s $f ]]; then
		info "FAILED ($what): no profile written"
		errs=$((errs + 1))
	elif ! top_flat "$f" >flat.txt; then
		info "FAILED ($what): go tool pprof cannot read the profile"
		errs=$((errs + 1))
	elif ! grep -q '_expect_' flat.txt; then
		info "FAILED ($what): the workload's functions are not in the profile"
		errs=$((errs + 1))
	fi
	if left_running; then
		info "FAILED ($what): the launched command is still running"
		errs=$((errs + 1))
	fi
}

# A pipe without a reader on fd 4.
mkfifo widowed || fail "mkfifo"
exec 3<>widowed 4>widowed 3<&-

info "\$ pmutop --dump one.pb.gz --duration 1 -- bp_shares 30 >broken 2>broken"
timeout -k 5 60 "$PMUTOP" --dump one.pb.gz --duration 1 -- "$T/bp_shares" 30 >&4 2>&4
rc=$?
info "exit status $rc"
if (( rc != 141 )); then
	info "FAILED (1): exit status $rc, want 141 (done, output lost)"
	errs=$((errs + 1))
fi
check_profile one.pb.gz 1

info "\$ pmutop --dump - --duration 1 -- bp_shares 30 >broken 2>two.err"
timeout -k 5 60 "$PMUTOP" --dump - --duration 1 -- "$T/bp_shares" 30 >&4 2>two.err
rc=$?
show two.err
if (( rc != 1 )); then
	info "FAILED (2): exit status $rc, want 1 (the profile could not be written)"
	errs=$((errs + 1))
fi
if ! grep -q "cannot write profile to '-'.*Broken pipe" two.err; then
	info "FAILED (2): no 'cannot write profile ... Broken pipe' error"
	errs=$((errs + 1))
fi
left_running && { info "FAILED (2): the launched command is still running"; errs=$((errs + 1)); }
exec 4>&-

info "\$ pmutop --dump three.pb.gz --duration 1 -- bp_shares 30 2>&1 | head -1"
timeout -k 5 60 "$PMUTOP" --dump three.pb.gz --duration 1 -- "$T/bp_shares" 30 2>&1 | head -1 >three.out
rc=${PIPESTATUS[0]}
show three.out
info "exit status $rc"
if (( rc != 141 && rc != 0 )); then
	info "FAILED (3): exit status $rc, want 141 (or 0 had head not exited yet)"
	errs=$((errs + 1))
fi
check_profile three.pb.gz 3

info "\$ pmutop --dump four.pb.gz -- sh -c 'kill -PIPE \$\$'"
timeout -k 5 60 "$PMUTOP" --dump four.pb.gz -- sh -c 'kill -PIPE $$' 2>four.err
rc=$?
show four.err
if (( rc != 141 )) || ! grep -q 'killed by signal 13' four.err; then
	info "FAILED (4): the command did not die of SIGPIPE (exit status $rc)"
	errs=$((errs + 1))
fi

(( errs == 0 )) || fail "$errs problem(s) with a broken stdout/stderr"
pass "broken pipe on stdout/stderr: exit 141, profile written and readable, command ended; --dump - to it: exit 1; the command keeps SIGPIPE's default"
