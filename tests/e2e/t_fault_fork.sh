#!/usr/bin/env bash
# t_fault_fork.sh - the target forks child processes; they are not followed.
#
# fault_fork spins in parent_spin() and forks a child every 0.2 s that
# spins in child_spin() for 0.2 s. pmutop follows threads, not processes
# (inherit_thread; --children is not implemented): the profile must have
# parent_spin, no child_spin, and every sample's tid must be the parent's.
# Attach and launch mode; pmutop exits 0 and the target is unharmed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
e2e_init
need_wl fault_fork

DUR=$(quick_or 2 1.5)

# check NAME PROFILE PARENT_PID
check() {
	local n bad
	readable "$2" || return
	(( $(flat_of parent_spin) > 0 )) || problem "$1: parent_spin not in the profile"
	(( $(flat_of child_spin) == 0 )) || problem "$1: samples of child_spin (a child process) in the profile"
	raw_samples "$2" >samples.txt || { problem "$1: pprof -raw cannot read it"; return; }
	n=$(wc -l <samples.txt)
	bad=$(awk -F'\t' -v p="$3" '$3 != p' samples.txt | wc -l)
	info "$1: $n samples, $bad with a tid other than $3; children forked: $(wc -l <"$1.children")"
	(( bad == 0 )) || problem "$1: $bad samples from other tids (children?)"
	(( $(wc -l <"$1.children") >= 3 )) || problem "$1: the workload forked too few children"
}

info "== attach"
"$W/fault_fork" 30 0.2 >attach.children &
target=$!
E2E_BG_PIDS+=("$target")
wait_started "$target"
run_pmutop attach -e task-clock --period 250000 --duration "$DUR" --dump attach.pb.gz -p "$target"
show attach.err
(( RC == 0 )) || problem "attach: exit status $RC, want 0"
alive "$target" || problem "attach: the target did not survive"
check attach attach.pb.gz "$target"

info "== launch"
run_pmutop launch -e task-clock --period 250000 --duration 20 --dump launch.pb.gz \
	-- sh -c "echo \$\$ >launch.pid; exec '$W/fault_fork' $DUR 0.2 >launch.children"
show launch.err
(( RC == 0 )) || problem "launch: exit status $RC, want 0"
grep -q 'exited with status 0' launch.err || problem "launch: the command's exit status 0 is not reported"
check launch launch.pb.gz "$(cat launch.pid)"

(( ERRS == 0 )) || fail "$ERRS problem(s) with a forking target"
pass "forked children ignored cleanly: no child samples (attach and launch)"
