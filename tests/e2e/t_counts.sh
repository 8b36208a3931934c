#!/usr/bin/env bash
# t_counts.sh - the summaries' counts agree (issue 33):
#
# 1. a command that starts six busy children: the batch summary's "from N
#    threads" is the threads with samples, what --load of its profile says
#    (it said "from 1 thread": counters opened, not threads sampled), and
#    after every process exited none is "still running".
# 2. -a across busy processes: the summary counts their threads (not the
#    one per-CPU counter), as --load of its profile does.
# 3. the live view's exit summary (q, after the terminal is back; run under
#    script(1)) prints what a batch run prints: the samples line with its
#    threads, the unwinder's outcomes and, when samples were lost, the
#    warning.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares

KIDS='for i in 1 2 3 4 5 6; do sh -c "i=0; while [ \$i -lt 40000 ]; do i=\$((i+1)); done" & done; wait'
run_pmutop kids -e task-clock -o kids.pb.gz -- sh -c "$KIDS"
show kids.err 4
(( RC == 0 )) || fail "pmutop -- sh (six children) exited with status $RC"
n_rec=$(grep -oE 'from [0-9]+ threads?' kids.err | grep -oE '[0-9]+')
run_pmutop kload --load kids.pb.gz -f folded -o kids.folded
n_load=$(grep -oE 'from [0-9]+ threads?' kload.err | grep -oE '[0-9]+')
info "batch summary: $n_rec threads; --load: $n_load threads"
(( n_rec >= 4 )) || fail "six busy children sampled, but the summary says $n_rec thread(s)"
(( n_rec == n_load )) || fail "the summary says $n_rec threads, --load of its profile $n_load"
grep -q 'processes: [0-9]* followed ([0-9]* exited, 0 still running)' kids.err ||
	fail "every process exited, but: $(grep 'processes:' kids.err)"

if (( EUID == 0 )); then
	start_bg "$W/shares" 60
	start_bg "$W/shares" 60
	run_pmutop all -a -e task-clock -d 1.5 -o all.pb.gz
	show all.err 3
	(( RC == 0 )) || fail "pmutop -a exited with status $RC"
	n_rec=$(grep -oE 'from [0-9]+ threads?' all.err | grep -oE '[0-9]+')
	run_pmutop aload --load all.pb.gz -f folded -o all.folded
	n_load=$(grep -oE 'from [0-9]+ threads?' aload.err | grep -oE '[0-9]+')
	info "-a summary: $n_rec threads; --load: $n_load threads"
	(( n_rec >= 2 )) || fail "-a over two busy processes says $n_rec thread(s)"
	(( n_rec == n_load )) || fail "-a: the summary says $n_rec threads, --load $n_load"
else
	info "(not root: the -a case skipped)"
fi

if command -v script >/dev/null 2>&1; then
	(sleep 4; printf q; sleep 2) | TERM=xterm timeout -k 5 30 script -qec \
		"$PMUTOP -e task-clock --period 20000 --mmap-pages 1 --top -d 1.5 -- $W/shares 8" /dev/null \
		>tui.raw 2>&1
	tr -d '\r' <tui.raw | grep -ao 'pmutop: .*' >tui.txt
	show tui.txt 8
	grep -qE 'samples of task-clock .* from [0-9]+ threads? on [0-9]+ CPU' tui.txt ||
		fail "the live view's exit summary has no batch-style samples line"
	grep -q '^pmutop: unwind:' tui.txt || fail "the live view's exit summary has no unwind line"
	lost=$(grep -oE '; lost [0-9]+' tui.txt | head -1 | grep -oE '[0-9]+')
	if (( ${lost:-0} > 0 )); then
		grep -q 'WARNING: the kernel dropped' tui.txt ||
			fail "the live view lost $lost samples and did not warn"
	else
		info "(no samples lost in the live view run: the warning was not exercised)"
	fi
else
	info "(script(1) not installed: the live view case skipped)"
fi
pass "threads and processes agree between the summary and --load; the live view's exit summary is the batch one"
