#!/usr/bin/env bash
# t_flame_wall.sh - a flame graph page of on-CPU and off-CPU time together
# (`-e task-clock,offcpu --dump x.html`) opens on wall time: widths are
# on-CPU + off-CPU per frame, colours the on-CPU share (red running, blue
# waiting), in Debian's chromium (tests/web/check_flame.js).
#
# Truth from the offcpu workload (tests/workloads/offcpu.c): six threads,
# each alive the whole run; pipe_waiter spends 1/3 of its time in
# nap_30ms() and 2/3 in wait_pipe_60ms(); `parked` blocks in
# parked_forever() from start to end. So in wall time wait_pipe_60ms is
# twice nap_30ms (within 0.5x), and parked_forever is 1/6 of the total
# (within 4 pp: threads start a few ms after pmutop, the run ends with
# every block still open and counted up to the end).
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl offcpu
need_browser

DUR=$(quick_or 4 3)
# Attached once the threads run (as t_offcpu does): in launch mode a busy
# start can lose the parked thread's one switch-out sample.
start_bg "$W/offcpu" $((DUR + 30))
WPID=$BG_PID
wait_started "$WPID"
sleep 0.3
run_pmutop wall -p "$WPID" -e task-clock,offcpu --duration "$DUR" --dump wall.html
show wall.err 8
(( RC == 0 )) || fail "pmutop -e task-clock,offcpu --dump wall.html exited with status $RC"
if grep -q 'offcpu.*not allowed\|offcpu.*perf_event_paranoid' wall.err; then
	skip "off-CPU sampling is not allowed here: $(grep -m1 offcpu wall.err)"
fi
browser wall "file://$T/wall.html" --search '^nap_30ms$' --search '^wait_pipe_60ms$' \
	--search '^parked_forever$' --search '^burn$'
width=$(json_get wall.json o.state.widthEvent)
color=$(json_get wall.json o.state.color)
legend=$(json_get wall.json o.legend)
info "width: $width; colour: $color; legend: $legend"
[[ $width == "wall (task-clock + offcpu)" ]] || fail "the page does not open on wall time (width: $width)"
[[ $color == oncpu ]] || fail "the page does not colour by on-CPU share (colour: $color)"
[[ $legend == *"on-CPU share of wall time"* ]] || fail "no on-CPU share legend: $legend"
m() { json_get wall.json "o.searches[$1].pct"; }
nap=$(m 0) pipe=$(m 1) parked=$(m 2) burn=$(m 3)
info "matched (share of wall): nap_30ms $nap%, wait_pipe_60ms $pipe%, parked_forever $parked%, burn $burn%"
awk -v n="$nap" -v p="$pipe" 'BEGIN { exit !(n > 0 && p / n >= 1.5 && p / n <= 2.5) }' ||
	fail "wait_pipe_60ms / nap_30ms = $pipe / $nap (want 2 within 0.5)"
awk -v x="$parked" 'BEGIN { d = x - 100 / 6; exit !(d <= 4 && d >= -4) }' ||
	fail "parked_forever is $parked% of wall time (want 16.7 within 4 pp)"
# On-CPU work is part of wall time too: burn() shows, and far less than a blocked thread.
awk -v b="$burn" -v x="$parked" 'BEGIN { exit !(b > 0 && b < x) }' ||
	fail "burn() is $burn% of wall time (want > 0 and below parked_forever's $parked%)"
# Off-CPU time alone: its own colour family (blues), said in the legend.
run_pmutop off -e offcpu --duration 2 --dump off.html -- "$W/offcpu" 6
(( RC == 0 )) || { show off.err; fail "pmutop -e offcpu --dump off.html exited with status $RC"; }
browser off "file://$T/off.html"
legend=$(json_get off.json o.legend)
info "offcpu alone: width $(json_get off.json o.state.widthEvent), legend: $legend"
[[ $legend == *"off-CPU user"* ]] || fail "an off-CPU page does not use the off-CPU colours: $legend"
pass "wall-time flame graph: on+off widths, hot/cold colours, pipe/nap 2:1, parked 1/6 of wall; off-CPU alone in blues"
