#!/usr/bin/env bash
# t_tui_windows.sh - the live view's windows, threads, notes and terminals
# (issue 15 items 4-5, issue 22 item 7), on real processes in tmux:
#   - z: the table starts a new window, named in the header ("since z at");
#     the run's samples since start stay on the header and in the exit
#     summary (>= what the screen showed before z), the summary also gives
#     the window, and `w` says which window its file holds;
#   - the header shows the unwind quality (root / cut / no info %);
#   - threads: every thread of the target is listed, those that never ran
#     on a CPU too (many_threads with a 100 s wake interval); in the
#     interval window a thread's samples are the interval's (a fraction of
#     its samples since start);
#   - an idle target (sleep): the empty table says that the event counts
#     CPU time only and suggests --stacks -p PID;
#   - callers: the column titles sit right above the rows they name;
#   - 40 columns: the function names are still there;
#   - without a PMU: the fallback note is on the view's notice line, not
#     with -q, and never before an unrelated error (-p of a dead pid);
#   - TERM=dumb: a note on stderr and the table instead of the view.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares many_threads threads
source "$(dirname "$0")/tmux_lib.sh"

# header_samples: the since-start sample count on line 2 of the screen.
header_samples() { screen | sed -n 2p | grep -oE 'samples [0-9,]+' | tr -dc 0-9; }

# Does this machine have a PMU? pmutop says when it falls back.
"$PMUTOP" --no-tui --duration 0.2 -- true >/dev/null 2>"$T/probe.err"
no_pmu=0
grep -q "no hardware PMU" "$T/probe.err" && no_pmu=1
info "no PMU here: $no_pmu"

# ---- the fallback note comes after validation, and -q silences it ----
run_pmutop dead -p 999999 --duration 1
show dead.err 3
(( RC != 0 )) || problem "-p 999999 exited 0"
grep -q "no hardware PMU" dead.err && problem "-p 999999: the no-PMU note precedes the error"
grep -q "999999" dead.err || problem "-p 999999: the error does not name the pid"
run_pmutop quiet -q --no-tui --duration 0.3 -- true
grep -q "no hardware PMU" quiet.err && problem "-q still prints the no-PMU note"

start_bg "$W/shares" 120
shares=$BG_PID
wait_started "$shares"
tmux_start 80 24

# ---- z: two windows, both named; the summary keeps the run since start ----
run_in_pane "$PMUTOP -p $shares --refresh 0.5 2>view.err; echo EXIT=\$?"
wait_for "J_expect_18_18" 15 || { show_screen; fail "the view did not show the workload"; }
sleep 1
s=$(screen)
echo "$s" | head -n 6 | sed 's/^/ start | /'
grep -qE 'unwind: root [0-9.]+%  cut [0-9.]+%  no info [0-9.]+%' <<<"$s" ||
	problem "the header does not show the unwind quality"
grep -qE 'lost [0-9,]+  throttled [0-9,]+' <<<"$s" || problem "the header lacks lost and throttled"
if (( no_pmu )); then
	sed -n 5p <<<"$s" | grep -q "no hardware PMU here" ||
		problem "the no-PMU note is not on the view's notice line"
fi
before=$(header_samples)
keys z
sleep 1.5
s=$(screen)
echo "$s" | head -n 6 | sed 's/^/ z     | /'
grep -q "since z at" <<<"$(sed -n 3p <<<"$s")" || problem "after z the header does not name the window"
win=$(sed -n 4p <<<"$s" | sed -n 's/^since z at [0-9]*s: samples \([0-9,]*\).*/\1/p' | tr -dc 0-9)
total=$(header_samples)
info "before z: $before samples; after: ${total:-?} since start, ${win:-?} since z"
[[ -n $win && -n $total ]] || problem "after z the header lacks the two sample counts"
(( ${total:-0} >= before + ${win:-0} - 100 )) ||
	problem "since start (${total:-?}) lost what came before z ($before + ${win:-?})"
(( ${win:-0} < ${total:-0} )) || problem "the window since z is not smaller than since start"
keys w
screen | grep -qE "wrote .*\.pb\.gz \(all threads, since z at [0-9]+s\)" ||
	problem "w does not say its file holds the window since z"
keys q
wait_for "EXIT=0" 10 || problem "q did not exit 0"
cat view.err | sed 's/^/ summary | /'
sum_total=$(sed -n 's/^pmutop: \([0-9]*\) samples of .* lost [0-9]*, throttled [0-9]*$/\1/p' view.err)
sum_win=$(sed -n 's/^pmutop: since the last reset (z at [0-9.]* s): \([0-9]*\) samples; lost [0-9]*, throttled [0-9]*.*/\1/p' view.err)
[[ -n $sum_total && -n $sum_win ]] || problem "the summary lacks the run or the window since z"
(( ${sum_total:-0} >= before + ${sum_win:-0} - 100 )) ||
	problem "the summary's since-start samples (${sum_total:-?}) forget what came before z ($before)"
(( ${sum_total:-0} > ${sum_win:-0} )) || problem "the summary's window is not smaller than the run"
if (( no_pmu )); then
	grep -q "no hardware PMU" view.err || problem "the no-PMU note is not in the summary"
fi

# ---- callers: titles above their rows; 40 columns keep the names ----
run_in_pane "clear; $PMUTOP -p $shares --refresh 0.5; echo EXIT=\$?"
wait_for "J_expect_18_18" 15 || problem "the view did not start again"
keys f Home Enter
s=$(screen)
t=$(grep -n 'events  *share  *total%' <<<"$s" | head -n1 | cut -d: -f1)
c=$(grep -n '^Callers (' <<<"$s" | head -n1 | cut -d: -f1)
f=$(grep -nE '^[A-Za-z_0-9]+ \(shares\) +flat' <<<"$s" | head -n1 | cut -d: -f1)
info "callers screen: function on line ${f:-?}, titles ${t:-?}, Callers ${c:-?}"
[[ -n $t && -n $c && -n $f ]] && (( f < t && t + 1 == c )) ||
	{ show_screen; problem "the callers titles are not between the function and its callers"; }
keys Escape
tm resize-window -t tui -x 40 -y 20
sleep 1
s=$(screen)
echo "$s" | head -n 9 | sed 's/^/ 40x20 | /'
table_rows | grep -q "J_expect_18_18" || problem "at 40 columns the function names are gone"
awk 'length($0) > 40 { bad = 1 } END { exit bad }' <<<"$s" || problem "lines wider than 40 columns"
tm resize-window -t tui -x 80 -y 24
keys q
wait_for "EXIT=0" 10 || problem "q did not exit 0 (callers)"

# ---- threads: every thread, window counts ----
start_bg "$W/many_threads" 4 60 100000 1000
mt=$BG_PID
for _ in $(seq 50); do (( $(ls /proc/$mt/task 2>/dev/null | wc -l) >= 5 )) && break; sleep 0.1; done
ntask=$(ls /proc/$mt/task | wc -l)
run_in_pane "clear; $PMUTOP -p $mt --refresh 0.5; echo EXIT=\$?"
wait_for "threads $ntask" 15 || problem "the header does not count $ntask threads"
keys t
s=$(screen)
echo "$s" | sed -n '6,13p' | sed 's/^/ idle t | /'
listed=$(grep -cE '^ +[0-9]+ +(mt[0-9]+|many_threads) ' <<<"$s")
(( listed == ntask )) || problem "the thread list shows $listed of the $ntask threads"
keys Escape q
wait_for "EXIT=0" 10 || problem "q did not exit 0 (many_threads)"

start_bg "$W/threads" 60
th=$BG_PID
wait_started "$th"
run_in_pane "clear; $PMUTOP -p $th --refresh 0.5; echo EXIT=\$?"
wait_for "thread_work" 15 || problem "the view did not show thread_work"
sleep 2
keys t
all_start=$(screen | awk '$1 == "all" { print $4; exit }')
keys i
sleep 1.2
s=$(screen)
echo "$s" | sed -n '3p;6,9p' | sed 's/^/ i t | /'
all_int=$(awk '$1 == "all" { print $4; exit }' <<<"$s")
info "samples of all threads: ${all_start:-?} since start, ${all_int:-?} in the last interval"
grep -q "last interval" <<<"$(sed -n 3p <<<"$s")" || problem "the header does not say last interval"
[[ -n $all_start && -n $all_int ]] && (( all_int > 0 && all_int * 2 < all_start )) ||
	problem "interval thread samples (${all_int:-?}) are not the interval's (since start ${all_start:-?})"
keys Escape q
wait_for "EXIT=0" 10 || problem "q did not exit 0 (threads)"

# ---- an idle target: the empty view explains ----
start_bg sleep 60
idle=$BG_PID
run_in_pane "clear; $PMUTOP -p $idle --refresh 0.5; echo EXIT=\$?"
if wait_for "No samples yet" 10; then
	s=$(screen)
	echo "$s" | sed -n '6,13p' | sed 's/^/ idle | /'
	grep -q "counts CPU time only" <<<"$s" || problem "the empty view does not say the event counts CPU time"
	grep -q -- "--stacks -p $idle" <<<"$s" || problem "the empty view does not suggest --stacks -p $idle"
else
	show_screen
	problem "an idle target's view does not explain the empty table"
fi
keys q
wait_for "EXIT=0" 10 || problem "q did not exit 0 (idle)"

# ---- TERM=dumb: a note and the table, on the terminal ----
run_in_pane "clear; TERM=dumb $PMUTOP -p $shares --duration 1.5 --rows 12 2>dumb.err; echo EXIT=\$?"
wait_for "EXIT=" 20 || problem "TERM=dumb: pmutop did not finish"
screen | grep -q "EXIT=0" || problem "TERM=dumb: exit status not 0"
show dumb.err 3
grep -q "no live view: TERM=dumb cannot move the cursor" dumb.err || problem "TERM=dumb: no note saying why"
screen | grep -q "J_expect_18_18" || problem "TERM=dumb: no table on the terminal"

(( errs == 0 )) || fail "$errs problem(s)"
pass "z keeps since-start counts and names both windows; unwind quality; every thread, interval counts; empty view explained; callers titles; 40 columns; no-PMU note placement; TERM=dumb table"
