#!/usr/bin/env bash
# t_tui.sh - the live view in a real terminal: tmux, 80x24.
#
# `pmutop -p PID --refresh 0.5` on the shares workload (functions with known
# shares k/55) runs in a tmux pane; the screen is read with capture-pane:
#   - the header shows the PID, the event and a growing sample count;
#   - the hottest function (J_expect_18_18, 18.18%) is the top row with a
#     plausible share; `c` sorts by cum and puts main among the 100% rows;
#   - Enter shows the callers (round_once) and Esc comes back; `/` filters;
#     `t` lists the thread; `?` shows the keys;
#   - `w` writes a profile that go tool pprof -top reads;
#   - tmux resize-window reflows the table without garbage;
#   - `q` exits 0 and the terminal is sane (stty: icanon, echo);
# then `--load` of the written profile in the same view, `--dump F --top`
# writing F on quit, SIGTERM to the view restoring the terminal, and
# `-e task-clock,cpu-clock,page-faults`: a column per other event, `e`
# making the next event the one of flat/cum and the sort.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares
source "$(dirname "$0")/tmux_lib.sh"

# table_rows with every column (80 columns and more).
table_rows() {
	screen | awk '/^ +flat +flat%/ { on = 1; next } /qQuit/ { on = 0 } on && NF >= 6'
}

# stty_sane NAME: the pane's shell writes `stty -a` to NAME; check it.
stty_sane() {
	run_in_pane "stty -a > $T/$1"
	for _ in $(seq 30); do [[ -s $T/$1 ]] && break; sleep 0.1; done
	if ! grep -qE '(^| )icanon( |$)' "$T/$1" || ! grep -qE '(^| )echo( |$)' "$T/$1"; then
		problem "terminal not restored: $(grep -oE -- '-?(icanon|echo) ' "$T/$1" | tr '\n' ' ')"
		return 1
	fi
	return 0
}

start_bg "$W/shares" 120
target=$BG_PID
wait_started "$target"

tmux_start 80 24
run_in_pane "cd $T; $PMUTOP -p $target --refresh 0.5; echo EXIT=\$?"

# ---- header and the hottest function ----
if ! wait_for "J_expect_18_18" 15; then
	show_screen
	fail "the view did not show the workload's functions within 15 s"
fi
sleep 1
s1=$(screen)
echo "$s1" | sed 's/^/    | /'
grep -q "pmutop - PID $target" <<<"$s1" || problem "header lacks the target PID"
grep -qE "event (cycles|task-clock)" <<<"$s1" || problem "header lacks the event"
grep -q "\[sampling\]" <<<"$s1" || problem "header lacks the sampling state"
n1=$(grep -oE 'samples [0-9,]+' <<<"$s1" | head -n1 | tr -dc 0-9)
sleep 1.2
n2=$(screen | grep -oE 'samples [0-9,]+' | head -n1 | tr -dc 0-9)
info "samples on screen: ${n1:-?} then ${n2:-?}"
[[ -n $n1 && -n $n2 ]] && (( n2 > n1 )) || problem "the sample count does not grow (${n1:-?} -> ${n2:-?})"

top=$(table_rows | head -n1)
info "top row: $top"
[[ $top == *J_expect_18_18* ]] || problem "the hottest function is not the top row"
share=$(awk '{ sub(/%/, "", $2); print $2 }' <<<"$top")
awk -v s="${share:-0}" 'BEGIN { exit !(s >= 14 && s <= 23) }' ||
	problem "J_expect_18_18 has flat% ${share:-?}, want about 18.2"
# Each function of the workload with flat time is there (main and
# round_once, flat ~0, can sit below kernel rows: checked sorted by cum).
for f in A_expect_1_82 E_expect_9_09; do
	table_rows | grep -q " $f " || problem "$f missing from the table"
done

# ---- sort by cum ----
keys c
rows=$(table_rows)
echo "$rows" | head -n 6 | sed 's/^/    c | /'
first_cum=$(head -n1 <<<"$rows" | awk '{ print $5 + 0 }')
awk -v c="${first_cum:-0}" 'BEGIN { exit !(c >= 99) }' ||
	problem "sorted by cum, the top row has cum% $first_cum, want ~100%"
# main and the functions above it tie at ~100%: main is among the first rows.
head -n 6 <<<"$rows" | awk '$6 == "main" && $5 + 0 >= 99 { ok = 1 } END { exit !ok }' ||
	problem "sorted by cum, main is not among the top rows with ~100% cum"
head -n 8 <<<"$rows" | grep -q " round_once " || problem "sorted by cum, round_once is not among the top rows"
screen | grep -q "| cum |" || problem "header does not say the sort is cum"

# ---- callers of the hottest function ----
keys f Home Enter
sleep 0.3
if screen | grep -q "Callers (1)" && screen | grep -q "round_once"; then
	screen | sed -n '5,9p' | sed 's/^/ Enter | /'
else
	show_screen
	problem "Enter on J_expect_18_18 does not show its caller round_once"
fi
keys Escape
screen | grep -qE '^ +flat +flat%' || problem "Esc does not go back to the table"

# ---- filter ----
keys /
tm send-keys -t tui -l "expect_1"
keys Enter
rows=$(table_rows)
nrows=$(grep -c . <<<"$rows")
echo "$rows" | sed 's/^/    \/ | /'
# J 18_18, I 16_36, H 14_55, G 12_73, F 10_91, A 1_82
(( nrows == 6 )) || problem "filter expect_1 shows $nrows rows, want 6"
grep -q " main" <<<"$rows" && problem "filter expect_1 still shows main"
screen | grep -qE 'filter "expect_1"|/expect_1 6/' || problem "the filter is not shown"
keys Escape
(( $(table_rows | grep -c .) > 6 )) || problem "Esc does not clear the filter"

# ---- threads ----
keys t
if ! screen | grep -q "(every thread)" || ! screen | grep -qE "^ +$target +shares "; then
	show_screen
	problem "t does not list the thread with its name"
fi
keys Escape

# ---- help ----
keys '?'
screen | grep -q "pause the display" || problem "? does not show the keys"
keys Escape
screen | grep -qE '^ +flat +flat%' || problem "Esc does not leave the help"

# ---- write ----
keys w
msg=$(screen | grep -oE "wrote [^ ]+\.pb\.gz" | head -n1)
info "w: ${msg:-no message}"
written=${msg#wrote }
if [[ -z $msg || ! -s $written ]]; then
	problem "w did not write a profile (or did not say where)"
elif ! top_flat "$written" >w_flat.txt || ! grep -q J_expect_18_18 w_flat.txt; then
	problem "go tool pprof -top cannot read the profile w wrote"
fi

# ---- resize ----
tm resize-window -t tui -x 120 -y 40
sleep 1
big=$(screen)
nbig=$(table_rows | grep -c .)
info "120x40: $nbig rows"
(( nbig >= 15 )) || problem "after growing to 120x40 only $nbig table rows"
[[ $(grep -c 'flat%' <<<"$big") == 1 ]] || problem "after resize the column titles appear more than once"
[[ $(tail -n1 <<<"$big") == *qQuit* ]] || problem "after resize the footer is not on the last line"
grep -q "\[sampling\]" <<<"$big" || problem "after resize the header lost its state tag"
tm resize-window -t tui -x 60 -y 14
sleep 1
small=$(screen)
echo "$small" | sed 's/^/ 60x14 | /'
[[ $(grep -c 'flat%' <<<"$small") == 1 ]] || problem "at 60x14 the column titles appear more than once"
grep -q "pmutop - PID" <<<"$small" || problem "at 60x14 the header is gone"
awk 'length($0) > 60 { bad = 1 } END { exit bad }' <<<"$small" || problem "lines wider than the window"
tm resize-window -t tui -x 80 -y 24
sleep 1
[[ $(screen | tail -n1) == *qQuit* ]] || problem "back at 80x24 the footer is not on the last line"

# ---- quit ----
keys q
if ! wait_for "EXIT=0" 10; then
	show_screen
	problem "q did not end pmutop with status 0"
fi
wait_for 'tui-prompt\$ *$' 3 || problem "the shell prompt is not back after q"
stty_sane stty_q.txt

# ---- --load of the profile w wrote ----
if [[ -s ${written:-} ]]; then
	run_in_pane "clear; $PMUTOP --load $written; echo EXIT=\$?"
	if wait_for "J_expect_18_18" 10; then
		screen | head -n 7 | sed 's/^/ load | /'
		screen | grep -q "\[saved profile\]" || problem "--load header does not say saved profile"
		[[ $(table_rows | head -n1) == *J_expect_18_18* ]] || problem "--load: J_expect_18_18 is not on top"
	else
		show_screen
		problem "--load did not show the profile"
	fi
	keys q
	wait_for "EXIT=0" 5 || problem "--load: q did not exit 0"
fi

# ---- --dump F --top: the view, and F written on quit ----
run_in_pane "clear; $PMUTOP -p $target --refresh 0.5 --dump top.pb.gz --top; echo EXIT=\$?"
wait_for "J_expect_18_18" 15 || problem "--dump --top did not open the view"
keys q
wait_for "EXIT=0" 10 || problem "--dump --top: q did not exit 0"
if [[ ! -s top.pb.gz ]] || ! top_flat top.pb.gz >top_flat.txt || ! grep -q J_expect top_flat.txt; then
	problem "--dump top.pb.gz --top did not write a readable profile on quit"
fi

# ---- SIGTERM restores the terminal ----
run_in_pane "clear; $PMUTOP -p $target --refresh 0.5; echo EXIT=\$?"
wait_for "J_expect_18_18" 15 || problem "the view did not start again"
shell=$(tm display-message -p -t tui '#{pane_pid}')
pm=$(pgrep -P "$shell" | head -n1)
if [[ -z $pm ]]; then
	problem "cannot find pmutop's pid"
else
	kill -TERM "$pm"
	if wait_for "EXIT=0" 10; then
		wait_for 'tui-prompt\$ *$' 3 || problem "the shell prompt is not back after SIGTERM"
		stty_sane stty_term.txt
	else
		show_screen
		problem "SIGTERM did not end the view with status 0"
	fi
fi
kill -0 "$target" 2>/dev/null || problem "the target died"

# ---- several events: a flat column per other event; `e` switches the shown one ----
# title_line: the column titles.
title_line() { screen | grep -E '^ +flat +flat%' | head -n1; }
# flat_sorted: the flat column (counts with k/M/G or times) never grows going down.
flat_sorted() {
	table_rows | awk '
	function val(s,   n) {
		n = s + 0
		if (s ~ /ns$/) return n; if (s ~ /us$/) return n * 1e3
		if (s ~ /ms$/) return n * 1e6; if (s ~ /s$/) return n * 1e9
		if (s ~ /k$/) return n * 1e3; if (s ~ /M$/) return n * 1e6
		if (s ~ /G$/) return n * 1e9; return n
	}
	{ v = val($1); if (NR > 1 && v > prev * 1.0001) bad = 1; prev = v }
	END { exit bad }'
}
run_in_pane "clear; $PMUTOP -p $target -e task-clock,cpu-clock,page-faults --refresh 0.5; echo EXIT=\$?"
if wait_for "J_expect_18_18" 15; then
	sleep 1
	screen | head -n 8 | sed 's/^/ multi | /'
	title=$(title_line)
	screen | grep -q "event task-clock \[1/3\]" || problem "multi-event header lacks 'event task-clock [1/3]'"
	[[ $title == *" cpu-clock page-faults  function"* ]] ||
		problem "multi-event titles lack the cpu-clock and page-faults columns: $title"
	[[ $title == *task-clock* ]] && problem "the shown event also has a column of its own: $title"
	[[ $(table_rows | head -n1) == *J_expect_18_18* ]] ||
		problem "multi-event: J_expect_18_18 is not on top by task-clock"
	# The cpu-clock column counts CPU time too: a time on the hottest row.
	table_rows | awk '$8 == "J_expect_18_18" { print $6; exit }' | grep -qE '^[0-9.]+(ns|us|ms|s)$' ||
		problem "the cpu-clock column of J_expect_18_18 is not a time"

	keys e
	sleep 0.3
	title=$(title_line)
	screen | head -n 8 | sed 's/^/ e    | /'
	screen | grep -q "event cpu-clock \[2/3\]" || problem "after e the header does not show cpu-clock [2/3]"
	[[ $title == *" task-clock page-faults  function"* ]] ||
		problem "after e the titles are not task-clock, page-faults: $title"
	flat_sorted || problem "after e the rows are not sorted by cpu-clock's flat"

	keys e
	sleep 0.3
	title=$(title_line)
	screen | head -n 8 | sed 's/^/ e e  | /'
	screen | grep -q "event page-faults \[3/3\]" || problem "after e e the header does not show page-faults [3/3]"
	[[ $title == *" task-clock cpu-clock  function"* ]] ||
		problem "after e e the titles are not task-clock, cpu-clock: $title"
	# flat is page faults now (counts, not times) and decides the order.
	table_rows | head -n1 | awk '{ exit !($1 ~ /^[0-9.]+[kMG]?$/) }' ||
		problem "after e e the flat column is not a count of page faults"
	flat_sorted || problem "after e e the rows are not sorted by page-faults' flat"
	table_rows | awk '$8 == "J_expect_18_18" { print $6; exit }' | grep -qE '^[0-9.]+(ns|us|ms|s)$' ||
		problem "after e e the task-clock column of J_expect_18_18 is not a time"

	keys e
	screen | grep -q "event task-clock \[1/3\]" || problem "e does not cycle back to task-clock"
	keys q
	wait_for "EXIT=0" 10 || problem "multi-event view: q did not exit 0"
else
	show_screen
	problem "-e task-clock,cpu-clock,page-faults: the view did not show the functions"
fi

(( errs == 0 )) || fail "$errs problem(s) in the live view"
pass "live view: header, top function, cum sort, callers, filter, threads, help, w, resize, q, --load, --top, SIGTERM, several events"
