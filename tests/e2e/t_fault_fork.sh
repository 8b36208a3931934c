#!/usr/bin/env bash
# t_fault_fork.sh - the target forks child processes after pmutop attached.
#
# fault_fork spins in parent_spin() and forks a child every 0.2 s that
# spins in child_spin() for 0.2 s. By default pmutop follows the children
# (issue 21): both functions are in the profile, each child's samples carry
# its own pid label and are child_spin, never parent_spin (a child's
# symbols are its own). With --no-children only the parent is sampled: no
# child_spin, and every sample's tid is the parent's. Attach and launch
# mode; pmutop exits 0 and the target is unharmed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
e2e_init
need_wl fault_fork

DUR=$(quick_or 2 1.5)

# check_children NAME PROFILE PARENT_PID: children followed, each by its
# pid. NAME.children lists the children in fork order; those forked before
# the counters were attached or after they closed are not followed
# (--subprocesses is for the first), so look from the first child with
# samples to the last: none in between may be missing.
check_children() {
	local kids=0 wrong=0 pid i=0 first=-1 last=-1
	readable "$2" || return
	(( $(flat_of parent_spin) > 0 )) || problem "$1: parent_spin not in the profile"
	(( $(flat_of child_spin) > 0 )) || problem "$1: child_spin (the children) not in the profile"
	for pid in $(cat "$1.children"); do
		pprof -top -nodecount=100000 -nodefraction=0 -unit=ns -tagfocus=pid="$pid" "$2" \
			>"$1.$pid.top" 2>/dev/null
		if grep -q ' child_spin$' "$1.$pid.top"; then
			(( first < 0 )) && first=$i
			last=$i
			kids=$((kids + 1))
		fi
		grep -q ' parent_spin$' "$1.$pid.top" && wrong=$((wrong + 1))
		i=$((i + 1))
	done
	local n=$((last - first + 1))
	info "$1: $kids of the $n children forked between the first and the last one sampled have child_spin under their pid label; $wrong show parent_spin"
	(( n >= 3 )) || problem "$1: too few children forked while sampling"
	(( kids == n )) || problem "$1: only $kids of $n children were sampled"
	(( wrong == 0 )) || problem "$1: $wrong children have the parent's function (symbols mixed)"
}

# check NAME PROFILE PARENT_PID: --no-children, only the parent.
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

for mode in children no-children; do
	flags=()
	[[ $mode == no-children ]] && flags=(--no-children)
	chk=check_children
	[[ $mode == no-children ]] && chk=check

	info "== attach ($mode)"
	"$W/fault_fork" 30 0.2 >"attach-$mode.children.all" &
	target=$!
	E2E_BG_PIDS+=("$target")
	wait_started "$target"
	run_pmutop "attach-$mode" "${flags[@]}" -e task-clock --period 250000 --duration "$DUR" \
		--dump "attach-$mode.pb.gz" -p "$target"
	show "attach-$mode.err"
	(( RC == 0 )) || problem "attach ($mode): exit status $RC, want 0"
	alive "$target" || problem "attach ($mode): the target did not survive"
	cp "attach-$mode.children.all" "attach-$mode.children"
	$chk "attach-$mode" "attach-$mode.pb.gz" "$target"
	kill "$target" 2>/dev/null

	info "== launch ($mode)"
	run_pmutop "launch-$mode" "${flags[@]}" -e task-clock --period 250000 --duration 20 \
		--dump "launch-$mode.pb.gz" \
		-- sh -c "echo \$\$ >launch.pid; exec '$W/fault_fork' $DUR 0.2 >launch-$mode.children"
	show "launch-$mode.err"
	(( RC == 0 )) || problem "launch ($mode): exit status $RC, want 0"
	grep -q 'exited with status 0' "launch-$mode.err" ||
		problem "launch ($mode): the command's exit status 0 is not reported"
	$chk "launch-$mode" "launch-$mode.pb.gz" "$(cat launch.pid)"
done

(( ERRS == 0 )) || fail "$ERRS problem(s) with a forking target"
pass "forked children: followed by default, each under its own pid; only the parent with --no-children (attach and launch)"
