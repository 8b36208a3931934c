#!/usr/bin/env bash
# tests/valgrind/run.sh - pmutop under valgrind memcheck, end to end.
#
# usage: tests/valgrind/run.sh      (make check-valgrind builds and runs it)
# Environment: PMUTOP, WORKLOAD_DIR (as for the e2e tests), VG_KEEP=1 keeps
# the logs and profiles in the printed directory.
#
# pmutop (not its target: valgrind does not follow the fork/exec of launch
# mode, and the target must run at full speed) runs under memcheck with
# --leak-check=full, definite leaks counted as errors, in three runs that
# together cross every stage of the pipeline:
#   launch - `-- exiter`: launch, enable-on-exec, the target exits;
#   dlopen - attach to dl_main, which dlopen()s libhot.so 4 s later, well
#            after the slow start under valgrind (MMAP2 records, a
#            module opened mid-run, the vDSO copied from the target);
#   exec   - `-- fault_exec ... exiter`: an exec mid-run (maps reset, new
#            modules), stopped by --duration with the command still running.
# Each must end with 0 errors (no invalid read or write, no use of
# uninitialised memory, no definite leak) and a profile go tool pprof reads.
# Known limits of valgrind 3.19 (Debian 12), reported, not errors:
# pidfd_open (syscall 434) is "unhandled" and fails with ENOSYS, so pmutop
# falls back to noticing the target's exit by its /proc rescan and waitpid
# (the launch run checks that this ends the run when the command exits);
# pmutop runs ~20x slower, so its ring buffers can overflow ("lost N").
set -uo pipefail

source "$(dirname "$0")/../e2e/lib.sh"
e2e_resolve_paths
command -v valgrind >/dev/null 2>&1 || bash "$E2E_REPO/tests/install-deps.sh" valgrind || exit 1
command -v valgrind >/dev/null 2>&1 || { echo "valgrind: not installed" >&2; exit 1; }
[[ -x $PMUTOP ]] || { echo "valgrind: $PMUTOP not built" >&2; exit 1; }
W=$WORKLOAD_DIR
for n in exiter dl_main libhot.so fault_exec; do
	[[ -e $W/$n ]] || { echo "valgrind: workload $W/$n not built (make workloads)" >&2; exit 1; }
done

D=$(mktemp -d "${TMPDIR:-/tmp}/pmutop-vg.XXXXXX")
passed=0 failed=0 bgpid=
cleanup() {
	[[ -n $bgpid ]] && kill -KILL "$bgpid" 2>/dev/null
	if [[ ${VG_KEEP:-0} == 1 ]]; then echo "(kept $D)"; else rm -rf "$D"; fi
}
trap cleanup EXIT

VG=(valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite
	--errors-for-leak-kinds=definite --error-exitcode=99 --track-origins=yes
	--num-callers=30)

# vg_run NAME ARGS...: pmutop ARGS under memcheck; judge log and profile.
vg_run() {
	local name=$1 rc errs why=
	shift
	echo "=== $name: pmutop $*"
	timeout -k 10 180 "${VG[@]}" --log-file="$D/$name.vg" "$PMUTOP" \
		--dump "$D/$name.pb.gz" "$@" >"$D/$name.out" 2>"$D/$name.err"
	rc=$?
	sed 's/^/    | /' "$D/$name.err" | head -n 8
	errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$D/$name.vg" | tail -n 1)
	grep -E 'WARNING: unhandled|definitely lost|ERROR SUMMARY|in use at exit' "$D/$name.vg" |
		sed 's/^==[0-9]*== */    vg: /; s/^--[0-9]*-- */    vg: /'
	if (( rc == 99 )) || [[ ${errs:-x} != 0 ]]; then
		why="memcheck reported ${errs:-?} error(s)"
		grep -E '^==[0-9]+== (Invalid|Conditional|Use of uninit|Syscall param|[0-9,]+ bytes in)' \
			"$D/$name.vg" | head -n 10 | sed 's/^/    /'
	elif (( rc != 0 )); then
		why="pmutop exited with status $rc"
	elif ! HOME=${HOME:-/tmp} GOCACHE=${GOCACHE:-/tmp/gocache} \
		go tool pprof -symbolize=none -top "$D/$name.pb.gz" >"$D/$name.top" 2>&1; then
		why="go tool pprof cannot read the profile"
	fi
	if [[ -z $why ]]; then
		echo "--- PASS $name"
		passed=$((passed + 1))
	else
		echo "--- FAIL $name: $why (log: $D/$name.vg; VG_KEEP=1 keeps it)"
		failed=$((failed + 1))
	fi
}

vg_run launch -e task-clock --period 1000000 --duration 10 -- "$W/exiter" 1.5 0
# Without pidfd_open (see above), the exit must still end the run early.
if ! grep -q 'stopped: target exited' "$D/launch.err"; then
	echo "--- FAIL launch: pmutop did not notice its command's exit without a pidfd"
	passed=$((passed - 1))
	failed=$((failed + 1))
fi

"$W/dl_main" 12 4 >"$D/dl_main.out" 2>&1 &
bgpid=$!
sleep 0.2
vg_run dlopen -e task-clock --period 1000000 --duration 6 -p "$bgpid"
kill -KILL "$bgpid" 2>/dev/null
wait "$bgpid" 2>/dev/null
bgpid=

vg_run exec -e task-clock --period 1000000 --duration 2.5 -- "$W/fault_exec" 1 "$W/exiter" 10

echo "valgrind: $passed passed, $failed failed"
(( failed == 0 ))
