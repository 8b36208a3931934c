#!/usr/bin/env bash
# t_container.sh - a target in its own mount (and pid) namespace is
# symbolized from its own files, and its JIT perf map is found under the
# pid it knows itself by.
#
# 1. unshare -m: inside the namespace the shares binary is bind-mounted at
#    $T/inside and its host directory $T/bin is hidden under an empty bind
#    mount. On the host, $T/inside/shares is a decoy (the threads binary).
#    pmutop (outside) must name A_expect_1_82 ... J_expect_18_18, i.e. open
#    the target's file through /proc/PID/map_files or /proc/PID/root -
#    never the decoy at the host path (pmutop does not fall back to host
#    paths for a target in another mount namespace).
# 2. unshare -m -p: the jit workload runs as pid 1 of a new pid namespace
#    with a private tmpfs on /tmp, so its perf map is /tmp/perf-1.map in
#    its own /tmp; pmutop finds it through /proc/PID/root and NSpid.
# Needs root (namespaces); SKIPs otherwise.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares threads jit
(( EUID == 0 )) || skip "needs root to create mount namespaces"
unshare -m --propagation private true 2>/dev/null || skip "unshare -m not permitted here"

DUR=$(quick_or 3 2)
mkdir -p bin inside empty
cp "$W/shares" bin/shares
cp "$W/threads" inside/shares   # the decoy, visible only outside the namespace

unshare -m --propagation private -- bash -c '
	mount --bind "$1/bin" "$1/inside" && mount --bind "$1/empty" "$1/bin" &&
	exec "$1/inside/shares" "$2"' ns "$T" $((DUR + 6)) &
NS_PID=$!
E2E_BG_PIDS+=("$NS_PID")
# bash execs the workload: the pid stays the same.
for _ in $(seq 100); do
	[[ $(readlink "/proc/$NS_PID/exe" 2>/dev/null) == "$T/inside/shares" ]] && break
	sleep 0.05
done
[[ $(readlink "/proc/$NS_PID/exe" 2>/dev/null) == "$T/inside/shares" ]] ||
	fail "the namespaced workload did not start"
[[ $(stat -L -c %i /proc/self/ns/mnt) != $(stat -L -c %i "/proc/$NS_PID/ns/mnt") ]] ||
	fail "the workload is not in its own mount namespace"
info "target $NS_PID runs $T/inside/shares in its own mount namespace; the host path is a decoy"

run_pmutop ns -e task-clock --duration "$DUR" --dump ns.pb.gz -p "$NS_PID"
show ns.err 4
(( RC == 0 )) || fail "pmutop exited with status $RC"
top_flat ns.pb.gz >ns.flat || fail "go tool pprof cannot read the profile"
show "$T/top.txt" 14
n=$(grep -cE '^[A-J]_expect_[0-9_]+	' ns.flat)
(( n >= 8 )) || fail "only $n of the ten shares functions named (container files not used?)"
! grep -q '^thread_work' ns.flat || fail "symbols came from the decoy at the host path"
pprof -raw ns.pb.gz | grep -qE "^[0-9]+: .* $T/inside/shares " ||
	fail "the mapping is not named by the target's own path"

# 2. pid namespace + private /tmp: the perf map is /tmp/perf-1.map in there.
mkdir -p jbin && cp "$W/jit" jbin/jit_ct
unshare -m -p -f --propagation private --mount-proc -- bash -c '
	mount --bind "$1/jbin" /srv && mount -t tmpfs tmpfs /tmp && exec /srv/jit_ct "$2"' \
	ns "$T" $((DUR + 6)) &
E2E_BG_PIDS+=("$!")
# Found by its name (one pgrep), not by reading every /proc/PID/exe: on a
# loaded machine a readlink per process per try took minutes.
JPID=
for _ in $(seq 200); do
	for p in $(pgrep -x jit_ct); do
		[[ $(readlink "/proc/$p/exe" 2>/dev/null) == /srv/jit_ct ]] && JPID=$p
	done
	[[ -n $JPID ]] && break
	sleep 0.05
done
[[ -n $JPID ]] || fail "the jit workload in the pid namespace did not start"
NSPID=$(awk '/^NSpid:/ { print $NF }' "/proc/$JPID/status")
info "jit: host pid $JPID, namespace pid $NSPID"
[[ $NSPID == 1 ]] || fail "expected the jit workload to be pid 1 in its namespace"
sleep 0.3
[[ -s /proc/$JPID/root/tmp/perf-1.map ]] || fail "no perf map in the namespace's /tmp"
[[ ! -e /tmp/perf-$JPID.map ]] || fail "unexpected perf map under the host pid"
run_pmutop jit -e task-clock --duration "$DUR" --dump jit.pb.gz -p "$JPID"
(( RC == 0 )) || { show jit.err; fail "pmutop (jit in a pid namespace) exited with status $RC"; }
top_flat jit.pb.gz >jit.flat || fail "go tool pprof cannot read the jit profile"
show "$T/top.txt" 10
grep -qE '^jit_hot_(first|second)	' jit.flat ||
	fail "no perf-map name for JIT code in a pid namespace (NSpid / /proc/PID/root not used?)"
pass "mount-namespaced target symbolized from its own files; JIT names via NSpid"
