#!/usr/bin/env bash
# t_hints.sh - the hints pmutop prints work when followed (issue 33):
#
# 1. an unsupported hardware event named pmutop's way (-e branchMisses)
#    suggests `perf stat -e branch-misses true`, perf's spelling: the
#    command is run (when perf is installed) and perf must not reject it as
#    a syntax error. Only where the machine has no PMU.
# 2. `-c 10` without -e: the note about the raised period names the event
#    that was sampled (task-clock, in ns, after the no-PMU fallback line;
#    cycles where there is a PMU), never cycles with task-clock's period.
# 3. `--http ADDR` alone asks for -p PID (the next try, `-- COMMAND`, would
#    be refused), and following its advice starts a server.
# 4. `-p PID` as root on a process the kernel still refuses (PID 1 of this
#    VM holds capabilities pmutop lacks) says what failed, not "needs root
#    or CAP_SYS_PTRACE"; --stacks says the same. Only where /proc/1/maps is
#    unreadable to root.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares
pick_event
errs=0
bad() { info "FAILED: $*"; errs=$((errs + 1)); }

# 1. perf's spelling in the perf hint.
if (( EV_HW == 0 )); then
	run_pmutop bm -e branchMisses -d 1 -- true
	show bm.err 2
	(( RC == 1 )) || bad "-e branchMisses without a PMU: status $RC, want 1"
	hint=$(grep -o '`perf stat -e [^`]*`' bm.err | tr -d '`')
	[[ $hint == "perf stat -e branch-misses true" ]] || bad "the hint is '$hint', want perf stat -e branch-misses true"
	if command -v perf >/dev/null 2>&1 && [[ -n $hint ]]; then
		$hint >perf.out 2>&1
		show perf.out 3
		! grep -q 'syntax error' perf.out || bad "perf rejects the suggested command: $hint"
	fi
else
	info "(a PMU here: -e branchMisses opens; case 1 skipped)"
fi

# 2. -c 10 names the event that got the period.
run_pmutop c10 -c 10 -d 0.5 -- "$W/shares" 2
show c10.err 4
(( RC == 0 )) || bad "-c 10: status $RC"
sampled=$(grep -oE 'samples of [a-z-]+' c10.err | head -1 | awk '{print $3}')
note=$(grep -- '--period 10 is shorter' c10.err)
[[ -n $note ]] || bad "-c 10: no note about the raised period"
[[ $note == *"than $sampled can be"* ]] || bad "-c 10: the note names another event than the sampled $sampled: $note"
if (( EV_HW == 0 )); then
	fb=$(grep -n 'no hardware PMU here' c10.err | cut -d: -f1)
	nl=$(grep -n -- '--period 10 is shorter' c10.err | cut -d: -f1)
	[[ -n $fb && -n $nl ]] && (( nl > fb )) || bad "-c 10: the period note comes before the fallback line"
	[[ $note == *" ns" ]] || bad "-c 10: task-clock's period is not said to be in ns: $note"
fi

# 3. --http alone.
run_pmutop http --http 127.0.0.1:0
show http.err 1
(( RC == 2 )) || bad "--http alone: status $RC, want 2"
grep -q -- '-p PID' http.err || bad "--http alone does not ask for -p PID"
! grep -q -- '-- COMMAND' http.err || bad "--http alone suggests -- COMMAND, which --http refuses"
run_pmutop http_cmd --http 127.0.0.1:0 -- true
(( RC == 2 )) && grep -q 'give -p PID' http_cmd.err || bad "--http -- COMMAND: want status 2 and -p PID"

# 4. Root refused a process.
if (( EUID == 0 )) && ! head -c1 /proc/1/maps >/dev/null 2>&1; then
	for mode in sample stacks; do
		if [[ $mode == sample ]]; then run_pmutop p1 -p 1 -d 1 -e task-clock; else run_pmutop p1 --stacks -p 1; fi
		show p1.err 2
		(( RC == 1 )) || bad "-p 1 ($mode): status $RC, want 1"
		! grep -q 'needs root' p1.err || bad "-p 1 ($mode) as root says it needs root"
		grep -q 'although pmutop runs as root' p1.err || bad "-p 1 ($mode): does not say root was refused"
	done
else
	info "(not root, or root reads /proc/1/maps here: case 4 skipped)"
fi
(( errs == 0 )) || fail "$errs hint(s) do not work"
pass "hints: perf's event spelling, -c 10 names the sampled event, --http asks for -p PID, root refused says why"
