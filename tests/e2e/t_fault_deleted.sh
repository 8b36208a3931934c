#!/usr/bin/env bash
# t_fault_deleted.sh - the target's binary is deleted after it started.
#
# A copy of the exiter runs from the test's directory and the file is then
# removed, so /proc/PID/maps names it "... (deleted)" and the path opens
# nothing (or something else). pmutop, attached afterwards, must still name
# exiter_spin (it reads the file through /proc/PID/map_files as root, or
# /proc/PID/exe), exit 0 and write a readable profile. Run as root and, when
# possible, as an unprivileged user profiling their own process (uid 65534).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
e2e_init
need_wl exiter

DUR=$(quick_or 1.5 1)

# run_case NAME [SETPRIV...]: run the copy and pmutop (both as the given user).
run_case() {
	local name=$1 target
	shift
	mkdir -p "$T/$name"
	cp "$W/exiter" "$T/$name/exiter_del"
	chmod -R a+rwx "$T/$name"
	"$@" "$T/$name/exiter_del" 30 &
	target=$!
	E2E_BG_PIDS+=("$target")
	wait_started "$target"
	rm -f "$T/$name/exiter_del"
	grep -q 'exiter_del (deleted)' "/proc/$target/maps" ||
		problem "$name: maps does not show the binary as deleted"
	info "\$ pmutop -e task-clock --period 500000 --duration $DUR --dump $name.pb.gz -p $target"
	timeout -k 5 60 "$@" "$PMUTOP" -e task-clock --period 500000 --duration "$DUR" \
		--dump "$T/$name/$name.pb.gz" -p "$target" >"$name.out" 2>"$name.err"
	RC=$?
	show "$name.err"
	(( RC == 0 )) || problem "$name: exit status $RC, want 0"
	alive "$target" || problem "$name: the target did not survive"
	if readable "$T/$name/$name.pb.gz"; then
		(( $(flat_of exiter_spin) > 0 )) ||
			problem "$name: exiter_spin not named in the profile of a deleted binary"
	fi
	kill -KILL "$target" 2>/dev/null
}

run_case root
if (( EUID == 0 )) && command -v setpriv >/dev/null 2>&1 &&
	setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$PMUTOP"; then
	chmod 777 "$T"
	run_case nobody setpriv --reuid=65534 --regid=65534 --clear-groups
else
	info "(the unprivileged case needs root to drop to uid 65534: skipped)"
fi

(( ERRS == 0 )) || fail "$ERRS problem(s) with a deleted binary"
pass "deleted binary still symbolized"
