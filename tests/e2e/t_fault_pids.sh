#!/usr/bin/env bash
# t_fault_pids.sh - PIDs pmutop cannot profile: clear errors, fast, no file.
#
#   - a zombie (exited, not reaped): the message says "zombie";
#   - a PID that does not exist: "no such process";
#   - PID 1 as a non-root user (uid/gid 65534 via setpriv), and another
#     user's process (a workload run as uid 65534, pmutop as uid 65533):
#     a permission error that names the knob to turn (CAP_SYS_PTRACE /
#     CAP_PERFMON / kernel.perf_event_paranoid / ptrace_scope).
# Each case: non-zero exit within 5 s, the message on stderr, no --dump file
# left behind. The user cases need root to drop to those uids (else SKIP
# them, or run them as the current user when it is not root).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
e2e_init
need_wl exiter

PM_TIMEOUT=10
KNOB='perf_event_paranoid|CAP_SYS_PTRACE|CAP_PERFMON|ptrace_scope'

# expect NAME REGEX CMD...: CMD (a pmutop invocation) fails cleanly.
expect() {
	local name=$1 re=$2 t0 took
	shift 2
	info "\$ $*"
	t0=$(now)
	timeout -k 2 "$PM_TIMEOUT" "$@" >"$name.out" 2>"$name.err"
	RC=$?
	took=$(elapsed "$t0")
	show "$name.err" 3
	if (( RC == 0 || RC >= 124 )); then
		problem "$name: exit status $RC, want a clean non-zero status"
	elif ! grep -qiE -- "$re" "$name.err"; then
		problem "$name: the message does not match /$re/"
	elif awk -v e="$took" 'BEGIN { exit !(e > 5) }'; then
		problem "$name: took ${took} s"
	else
		info "ok: $name (status $RC, ${took} s)"
	fi
	[[ ! -e $name.pb.gz ]] || problem "$name: left $name.pb.gz behind"
	ls "$name".pb.gz.tmp* >/dev/null 2>&1 && problem "$name: left a temp file behind"
}

# A zombie: the shell forks a short sleep and execs a long one, which never
# reaps the child.
bash -c 'sleep 0.1 & exec sleep 30' &
zparent=$!
E2E_BG_PIDS+=("$zparent")
zombie=
for i in $(seq 60); do
	zombie=$(pgrep -P "$zparent" | head -n 1)
	if [[ -n $zombie && $(awk '{ print $3 }' "/proc/$zombie/stat" 2>/dev/null) == Z ]]; then
		break
	fi
	zombie=
	sleep 0.05
done
if [[ -n $zombie ]]; then
	expect zombie 'zombie' "$PMUTOP" -p "$zombie" --duration 1 --dump zombie.pb.gz
else
	problem "could not make a zombie process"
fi

# A PID that is not in use.
pid_max=$(cat /proc/sys/kernel/pid_max)
unused=
for cand in $((pid_max - 3)) $((pid_max - 11)) $((pid_max - 211)); do
	if [[ ! -e /proc/$cand ]]; then unused=$cand; break; fi
done
[[ -n $unused ]] && expect nopid "no such process.*$unused|$unused.*(not exist|no such)" \
	"$PMUTOP" -p "$unused" --duration 1 --dump nopid.pb.gz

# Other users' processes.
if (( EUID != 0 )); then
	expect pid1 "$KNOB" "$PMUTOP" -p 1 --duration 1 --dump pid1.pb.gz
elif ! command -v setpriv >/dev/null 2>&1; then
	info "SKIP (user cases): setpriv not found"
else
	as65534=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	as65533=(setpriv --reuid=65533 --regid=65533 --clear-groups)
	nobody_paths exiter
	chmod 777 "$T"
	expect pid1 "$KNOB" "${as65534[@]}" "$NB_PMUTOP" -p 1 --duration 1 --dump pid1.pb.gz
	"${as65534[@]}" "$NB_W/exiter" 30 &
	other=$!
	E2E_BG_PIDS+=("$other")
	wait_started "$other"
	expect otheruser "$KNOB" "${as65533[@]}" "$NB_PMUTOP" -p "$other" --duration 1 --dump otheruser.pb.gz
	alive "$other" || problem "otheruser: the target did not survive"
fi

(( ERRS == 0 )) || fail "$ERRS problem(s) with unprofilable PIDs"
pass "zombie, missing PID, PID 1 and another user's process: clear errors"
