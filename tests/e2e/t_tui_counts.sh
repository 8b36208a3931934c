#!/usr/bin/env bash
# t_tui_counts.sh - the live view's header counts what the rest counts
# (issue 33): its "threads" and "procs" are the threads and processes with
# samples - what its exit summary, --load of the profile it writes and the
# process table say - not the counters attached (one per CPU with -a) or
# the processes alive at that moment ("threads 1 procs 5" beside a list
# of 25). Six busy children of sh, in tmux, 4 s with --top -o: the final
# header's numbers equal the exit summary's threads and processes (every
# process of this run is busy, so every one followed has samples).
source "$(dirname "$0")/lib.sh"
e2e_init
command -v tmux >/dev/null || skip "tmux not installed"
source "$E2E_DIR/tmux_lib.sh"

cat >kids.sh <<'SH'
for i in 1 2 3 4 5 6; do sh -c 'i=0; while [ $i -lt 600000 ]; do i=$((i+1)); done' & done
wait
SH
tmux_start 140 30
run_in_pane "$PMUTOP -e task-clock --refresh 0.5 -d 4 --top -o v.pb.gz -- sh kids.sh 2>view.err; echo EXIT=\$?"
# While sampling: the six children are running and sampled.
wait_for "dash" 15 || { show_screen; fail "the view did not show the children"; }
sleep 1
mid=$(screen | head -4)
m_threads=$(grep -oE 'threads +[0-9]+' <<<"$mid" | grep -oE '[0-9]+' | head -1)
m_procs=$(grep -oE 'procs +[0-9]+' <<<"$mid" | grep -oE '[0-9]+' | head -1)
info "while sampling: threads ${m_threads:-?} procs ${m_procs:-?}"
(( ${m_threads:-0} >= 4 && ${m_procs:-0} >= 4 )) ||
	problem "while six children run, the header says threads ${m_threads:-?} procs ${m_procs:-?}"
wait_for "sampling ended|exited: showing the final" 30 || { show_screen; fail "the view did not end sampling"; }
sleep 1
hdr=$(screen | head -4)
sed 's/^/    | /' <<<"$hdr"
keys q
wait_for "EXIT=" 15 || problem "q did not end the view"
h_threads=$(grep -oE 'threads +[0-9]+' <<<"$hdr" | grep -oE '[0-9]+' | head -1)
h_procs=$(grep -oE 'procs +[0-9]+' <<<"$hdr" | grep -oE '[0-9]+' | head -1)
s_threads=$(grep -oE 'from [0-9]+ threads?' view.err | grep -oE '[0-9]+' | head -1)
# Every process here is busy (sh and its six children): all have samples.
l_procs=$(grep -oE 'processes: [0-9]+ followed' view.err | grep -oE '[0-9]+')
info "header: threads ${h_threads:-?} procs ${h_procs:-?}; summary: ${s_threads:-?} threads; ${l_procs:-?} processes"
[[ -n $h_threads && $h_threads == "$s_threads" ]] || problem "header threads ${h_threads:-?} != summary's ${s_threads:-?}"
[[ -n $h_procs && $h_procs == "$l_procs" ]] || problem "header procs ${h_procs:-?} != the summary's ${l_procs:-?}"
(( ${h_threads:-0} >= 4 )) || problem "six busy children, header says ${h_threads:-?} threads"
(( errs == 0 )) || fail "$errs problem(s)"
pass "header threads/procs while sampling and at the end = exit summary ($h_threads threads, $h_procs processes)"
