#!/usr/bin/env bash
# t_errors.sh - bad input and missing permissions fail cleanly.
#
# Each case must exit non-zero with a message on stderr (matching what the
# case is about), quickly and without leaving a file behind:
#   no such pid, unknown event, --period 0 / 12abc, unwritable --dump
#   (reported before sampling starts), profiling PID 1 as an unprivileged
#   user (permission / ptrace / perf_event_paranoid), and a hardware event
#   on a machine without a PMU ("not supported"; only checked when there is
#   no PMU).
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl exiter

PM_TIMEOUT=20
errs=0

# expect_error NAME REGEX ARGS...: pmutop ARGS must exit non-zero, with
# stderr non-empty and matching the extended regex (case-insensitive).
expect_error() {
	local name=$1 re=$2
	shift 2
	local t0
	t0=$(now)
	run_pmutop "$name" "$@"
	ELAPSED=$(elapsed "$t0")
	show "$name.err" 3
	if (( RC == 0 )); then
		info "FAILED: $name: exit status 0, want non-zero"
		errs=$((errs + 1))
	elif (( RC >= 124 )); then
		info "FAILED: $name: killed or crashed (status $RC)"
		errs=$((errs + 1))
	elif [[ ! -s $name.err ]]; then
		info "FAILED: $name: status $RC but no message on stderr"
		errs=$((errs + 1))
	elif ! grep -qiE -- "$re" "$name.err"; then
		info "FAILED: $name: message does not match /$re/"
		errs=$((errs + 1))
	else
		info "ok: $name (status $RC, ${ELAPSED} s)"
		return 0
	fi
	return 1
}

# A pid that is not in use (and not about to be: far above recent pids).
pid_max=$(cat /proc/sys/kernel/pid_max)
unused=
for cand in $((pid_max - 1)) $((pid_max - 7)) $((pid_max - 101)) 4194301 99999; do
	if (( cand > 1 && cand < pid_max )) && [[ ! -e /proc/$cand ]]; then
		unused=$cand
		break
	fi
done

expect_error nopid 'no such|not found|does not exist|exited|invalid|999999999' -p 999999999 --duration 1
if [[ -n $unused ]]; then
	expect_error unusedpid "no such|not found|does not exist|exited|$unused" -p "$unused" --duration 1
fi
expect_error badpid 'invalid|abc' -p abc --duration 1
expect_error badevent 'nosuchevent' -e nosuchevent --duration 1 -- "$W/exiter" 1
expect_error period0 'period|0' --period 0 --duration 1 -- "$W/exiter" 1
expect_error periodjunk '12abc' --period 12abc --duration 1 -- "$W/exiter" 1
expect_error notarget 'usage|pid|command|target|-p' --duration 1

# Durations (issue 31): a nonsense unit, a negative or zero duration is a
# command-line error (status 2) naming the accepted forms.
for d in 5q -5s 0 0ms 1e3; do
	if expect_error "duration$d" '500ms, 5s, 2m, 1h.*bare number of seconds' \
		--duration "$d" -- "$W/exiter" 1 && (( RC != 2 )); then
		info "FAILED: --duration $d: exit status $RC, want 2 (bad command line)"
		errs=$((errs + 1))
	fi
done
expect_error dumpevery5q '500ms, 5s, 2m, 1h' --dump-every 5q --dump "$T/w/" -- "$W/exiter" 1

# Unwritable dump: must be refused before sampling (not after 5 s), and
# leave no file.
if expect_error baddump 'nonexistent|No such file|directory|cannot|permission' \
	--dump /nonexistent-dir/x.pb.gz --duration 5 -- "$W/exiter" 5; then
	if awk -v e="$ELAPSED" 'BEGIN { exit !(e > 2.5) }'; then
		info "FAILED: baddump: took ${ELAPSED} s: the error must come before sampling"
		errs=$((errs + 1))
	fi
fi
[[ ! -e /nonexistent-dir/x.pb.gz ]] || { info "FAILED: baddump: file exists"; errs=$((errs + 1)); }

# Unprivileged user vs PID 1.
perm_re='permission|not permitted|ptrace|perf_event_paranoid|EPERM|EACCES|access'
if (( EUID != 0 )); then
	expect_error pid1 "$perm_re" -p 1 --duration 1
elif command -v setpriv >/dev/null 2>&1; then
	run_as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	# The binary must be reachable by nobody (it is under the repo).
	if run_as_nobody test -x "$PMUTOP"; then
		saved=$PMUTOP
		cat >"$T/as_nobody.sh" <<-EOS
		#!/bin/sh
		exec setpriv --reuid=65534 --regid=65534 --clear-groups "$saved" "\$@"
		EOS
		chmod 755 "$T/as_nobody.sh"
		chmod 755 "$T"
		PMUTOP=$T/as_nobody.sh
		expect_error pid1 "$perm_re" -p 1 --duration 1
		PMUTOP=$saved
	else
		info "(skipped the PID 1 case: $PMUTOP is not executable by uid 65534)"
	fi
elif command -v runuser >/dev/null 2>&1; then
	saved=$PMUTOP
	cat >"$T/as_nobody.sh" <<-EOS
	#!/bin/sh
	exec runuser -u nobody -- "$saved" "\$@"
	EOS
	chmod 755 "$T/as_nobody.sh"
	PMUTOP=$T/as_nobody.sh
	expect_error pid1 "$perm_re" -p 1 --duration 1
	PMUTOP=$saved
else
	info "(skipped the PID 1 case: no setpriv or runuser to drop root)"
fi

# A hardware event without a PMU.
if perf stat -e cycles true 2>&1 | grep -q 'not supported' ||
	! "$PMUTOP" -q -e cycles --duration 0.2 --dump "$T/hw.pb.gz" -- true >/dev/null 2>&1; then
	for hw in cycles instructions; do
		expect_error "nopmu-$hw" 'not supported|unsupported|not available|no hardware|no pmu|not counted' \
			-e "$hw" --duration 1 -- "$W/exiter" 1
	done
else
	echo "SKIP: (case nopmu only) this machine has a hardware PMU"
fi

(( errs == 0 )) || fail "$errs error case(s) not handled as expected"
pass "all error cases exit non-zero with a message"
