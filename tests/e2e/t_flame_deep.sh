#!/usr/bin/env bash
# t_flame_deep.sh - the flame graph page of a deep program opens on its root
# and names every reduction of the data in its header (issue 33).
#
# 1. A 512-frame recursion (deep_fp 3 510): the page is thousands of pixels
#    tall; in chromium (1200x800 window) the root row must be in the window
#    as the page opens, not 8,000 px below the first screen.
# 2. The same with --max-depth 300: the header's notes say how many samples'
#    stacks were cut at --max-depth.
# 3. longrun under --max-memory 1M (its tree passes 1 MiB within seconds):
#    the summary reports pruned frames and the page's notes say how many
#    cold frames were pruned (the "[N cold frames pruned]" frames) and that
#    exited threads were folded, as the summary does.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl deep_fp longrun libhot.so
need_browser

DUR=$(quick_or 3 2)

run_pmutop deep -e task-clock -d "$DUR" -o deep.html -- "$W/deep_fp" $((DUR + 5)) 510
(( RC == 0 )) || { show deep.err; fail "pmutop -o deep.html exited with status $RC"; }
browser deep "file://$T/deep.html" --size 1200x800
info "deep.html: canvas $(json_get deep.json o.opened.canvas_h) px, opened at scrollY $(json_get deep.json o.opened.scroll_y)"
(( $(json_get deep.json 'o.opened.canvas_h > 4000 ? 1 : 0') )) ||
	fail "the 512-frame page is not taller than 4000 px: the recursion was not profiled?"
[[ $(json_get deep.json o.opened.root_in_view) == true ]] ||
	fail "the deep page does not open with its root in the window"

run_pmutop cut -e task-clock -d "$DUR" --max-depth 300 -o cut.html -- "$W/deep_fp" $((DUR + 5)) 510
(( RC == 0 )) || { show cut.err; fail "pmutop --max-depth 300 exited with status $RC"; }
browser cut "file://$T/cut.html"
notes=$(json_get cut.json 'o.note_items.join(" | ")')
info "notes: $notes"
[[ $notes == *"deeper than --max-depth"* ]] || fail "the page does not name the --max-depth cuts"

run_pmutop budget -e task-clock --period 100000 -d $((DUR + 3)) --max-memory 1M -o budget.html \
	-- "$W/longrun" $((DUR + 10))
(( RC == 0 )) || { show budget.err; fail "pmutop --max-memory 1M exited with status $RC"; }
show budget.err 8
pruned=$(grep -o 'pruned [0-9]* cold frames' budget.err | grep -o '[0-9]*')
[[ -n $pruned ]] || fail "the summary reports no pruned frames (the 1M budget was not reached?)"
browser budget "file://$T/budget.html"
notes=$(json_get budget.json 'o.note_items.join(" | ")')
info "notes: $notes"
[[ ${notes//,/} == *"$pruned cold frames were pruned"* ]] ||
	fail "the page does not say the $pruned cold frames the summary reports were pruned"
if grep -q 'folded [1-9][0-9]* exited threads' budget.err; then
	[[ $notes == *"exited threads were folded"* ]] || fail "the page does not name the folded threads"
fi
pass "deep page opens on its root; max-depth cuts and budget pruning named in the page"
