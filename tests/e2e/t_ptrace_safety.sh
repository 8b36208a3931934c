#!/usr/bin/env bash
# t_ptrace_safety.sh - the ptrace engine never leaves its target traced or
# stopped, passes the target's signals on, and refuses a target that
# another tracer holds.
#
# On stacks_target (threads sleeping, spinning, blocked in read):
#  1. `pmutop --unwind=ptrace -p PID`, SIGUSR1s sent to the target meanwhile,
#     then kill -INT pmutop: it exits 0 with a profile; every thread of the
#     target shows TracerPid: 0 and a state other than t/T; the target
#     finishes its work, exits 0 and has handled every SIGUSR1.
#  2. The same with kill -KILL of pmutop: the kernel detaches.
#  3. The target is group-stopped (SIGSTOP) while traced, then pmutop gets
#     SIGINT: the target stays stopped (T, as its user asked) and untraced,
#     and SIGCONT lets it finish normally.
#  4. With strace attached to the target, --unwind=ptrace and --stacks fail
#     within seconds with the "already traced by PID N (strace)" message.
#  5. As root: the same as an unprivileged user on their own process (1).
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl stacks_target

# Profiles go where an unprivileged pmutop may write them too.
chmod 711 "$T"
D=$T/w
mkdir -m 1777 "$D"

errs=0
bad() { info "FAILED: $*"; errs=$((errs + 1)); }

# check_untraced PID [ALLOW_T]: no thread of PID traced or ptrace-stopped
# (nor job-stopped unless ALLOW_T).
check_untraced() {
	local task tr st n=0
	for task in /proc/"$1"/task/*; do
		tr=$(awk '/^TracerPid:/ { print $2 }' "$task/status" 2>/dev/null)
		st=$(awk '/^State:/ { print $2 }' "$task/status" 2>/dev/null)
		[[ -z $tr ]] && continue
		n=$((n + 1))
		[[ $tr == 0 ]] || bad "thread ${task##*/} still traced by $tr"
		[[ $st != t ]] || bad "thread ${task##*/} left in tracing stop (t)"
		[[ $st != T || ${2:-} == allow_T ]] || bad "thread ${task##*/} left stopped (T)"
	done
	info "checked $n threads of $1: $(awk '/^State:|^TracerPid:/ { printf "%s %s  ", $1, $2 }' /proc/"$1"/status)"
}

# start_target LABEL SECS [PREFIX...]: stacks_target in the background, ready.
start_target() {
	local label=$1 secs=$2 i
	shift 2
	"$@" "$W/stacks_target" "$secs" >"$label.target.out" 2>"$label.target.err" &
	TGT=$!
	E2E_BG_PIDS+=("$TGT")
	for i in $(seq 100); do
		grep -q ready "$label.target.out" 2>/dev/null && return 0
		sleep 0.05
	done
	bad "$label: stacks_target never got ready"
	return 1
}

# finish_target LABEL USR1: wait for the target; exit 0 with USR1 signals handled.
finish_target() {
	wait "$TGT"
	local rc=$?
	show "$1.target.out"
	show "$1.target.err"
	(( rc == 0 )) || bad "$1: stacks_target exited with status $rc"
	grep -q "stacks_target: ok usr1=$2\$" "$1.target.out" ||
		bad "$1: want 'ok usr1=$2' (signals sent while traced must be delivered)"
}

# start_pmutop LABEL PID [PREFIX...]: pmutop --unwind=ptrace in the background.
start_pmutop() {
	local label=$1 pid=$2
	shift 2
	set -m # a background job of a script would otherwise ignore SIGINT
	"$@" "$PMUTOP" --unwind=ptrace -e task-clock --period 1000000 --duration 60 \
		--dump "$D/$label.pb.gz" -p "$pid" >"$label.out" 2>"$label.err" &
	PM=$!
	set +m
	E2E_BG_PIDS+=("$PM")
	sleep 1
	kill -0 "$PM" 2>/dev/null || { show "$label.err"; bad "$label: pmutop ended early"; return 1; }
}

# stop_pmutop LABEL SIG: kill pmutop with SIG and wait (5 s at most).
stop_pmutop() {
	local t0 rc
	t0=$(now)
	kill -"$2" "$PM"
	wait_gone "$PM" 5 || bad "$1: pmutop still running 5 s after SIG$2"
	wait "$PM"
	rc=$?
	info "$1: pmutop exited with status $rc $(elapsed "$t0") s after SIG$2"
	show "$1.err" 8
	RC=$rc
}

# ---- 1 and 5: SIGINT, signals passed on ----
sigint_case() {
	local label=$1
	shift
	start_target "$label" 4 "$@" || return
	info "[$label] pmutop --unwind=ptrace -p $TGT, 3 SIGUSR1 to the target, then SIGINT"
	start_pmutop "$label" "$TGT" "$@" || return
	for i in 1 2 3; do
		kill -USR1 "$TGT"
		sleep 0.1
	done
	sleep 0.3
	stop_pmutop "$label" INT
	(( RC == 0 )) || bad "$label: exit status $RC after SIGINT, want 0"
	sleep 0.1
	check_untraced "$TGT"
	if [[ -s $D/$label.pb.gz ]] && top_flat "$D/$label.pb.gz" >"$label.flat"; then
		grep -q stk_busy_named_function "$label.flat" ||
			bad "$label: the profile lacks the spinning function"
	else
		bad "$label: no readable profile after SIGINT"
	fi
	grep -q 'ptrace: .* threads seized' "$label.err" || bad "$label: no ptrace summary line"
	finish_target "$label" 3
}
sigint_case int

# ---- 2: SIGKILL ----
start_target kill 4 && {
	info "[kill] pmutop --unwind=ptrace -p $TGT, then SIGKILL"
	if start_pmutop kill "$TGT"; then
		kill -USR1 "$TGT"
		sleep 0.3
		stop_pmutop kill KILL
		sleep 0.1
		check_untraced "$TGT"
		finish_target kill 1
	fi
}

# ---- 3: group-stop kept ----
start_target stop 4 && {
	info "[stop] pmutop --unwind=ptrace -p $TGT; SIGSTOP to the target; SIGINT to pmutop"
	if start_pmutop stop "$TGT"; then
		kill -STOP "$TGT"
		sleep 0.5
		stop_pmutop stop INT
		(( RC == 0 )) || bad "stop: exit status $RC after SIGINT, want 0"
		sleep 0.1
		st=$(awk '/^State:/ { print $2 }' /proc/"$TGT"/status)
		[[ $st == T ]] || bad "stop: the target should still be stopped (T), it is $st"
		check_untraced "$TGT" allow_T
		kill -CONT "$TGT"
		sleep 0.1
		check_untraced "$TGT"
		finish_target stop 0
	fi
}

# ---- 4: another tracer ----
if command -v strace >/dev/null 2>&1; then
	start_target strace 4 && {
		strace -f -qq -e trace=none -p "$TGT" -o /dev/null &
		sp=$!
		E2E_BG_PIDS+=("$sp")
		for i in $(seq 100); do
			[[ $(awk '/^TracerPid:/ { print $2 }' /proc/"$TGT"/status) != 0 ]] && break
			sleep 0.05
		done
		info "[strace] strace (pid $sp) holds $TGT; \$ pmutop --unwind=ptrace -p $TGT"
		t0=$(now)
		timeout -k 2 20 "$PMUTOP" --unwind=ptrace -e task-clock --duration 5 -p "$TGT" \
			>strace.out 2>strace.err
		rc=$?
		took=$(elapsed "$t0")
		show strace.err
		info "exit status $rc after $took s"
		(( rc != 0 && rc != 124 && rc != 137 )) || bad "strace: --unwind=ptrace status $rc, want a failure"
		awk -v t="$took" 'BEGIN { exit !(t < 4) }' || bad "strace: took $took s to fail"
		grep -q "already traced by PID $sp (strace)" strace.err ||
			bad "strace: the message does not name the tracer (want 'already traced by PID $sp (strace)')"
		grep -q -- '--unwind=snapshot' strace.err || bad "strace: the message does not suggest --unwind=snapshot"
		timeout -k 2 20 "$PMUTOP" --stacks -p "$TGT" >strace2.out 2>strace2.err
		rc=$?
		show strace2.err
		(( rc == 1 )) && grep -q "already traced by PID $sp" strace2.err ||
			bad "strace: --stacks status $rc or message wrong"
		kill "$sp"
		wait "$sp" 2>/dev/null
		sleep 0.1
		check_untraced "$TGT"
		finish_target strace 0
	}
else
	info "(strace not installed: the other-tracer case is skipped)"
fi

# ---- 5: unprivileged ----
if (( EUID == 0 )) && command -v setpriv >/dev/null 2>&1; then
	nobody_paths stacks_target
	PMUTOP=$NB_PMUTOP W=$NB_W sigint_case nobody setpriv --reuid=65534 --regid=65534 --clear-groups
else
	info "(not root or no setpriv: the unprivileged run is skipped)"
fi

(( errs == 0 )) || fail "$errs check(s) failed"
pass "ptrace engine: detached on SIGINT and SIGKILL, signals and group-stops kept, other tracer refused"
