#!/usr/bin/env bash
# t_annotate_tui.sh - `a` in the live view: the selected function's
# instructions, live, in a real terminal (tmux, 110x32).
#
# On two_loops (loop A 3x loop B's iterations): `a` on the top row opens the
# listing with the function's name, the column per event, the source lines
# of both loops, and the selection on the hottest instruction, which lies in
# loop A; `G`/`H` move to the last and back to the hottest instruction; `a`
# refreshes; Esc returns to the table; `q` exits 0.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl two_loops
command -v tmux >/dev/null 2>&1 || skip "tmux not installed (apt-get install tmux; make deps)"

SOCK=$T/tmux.sock
tm() { tmux -S "$SOCK" "$@"; }
trap 'rc=$?; tmux -S "$SOCK" kill-server >/dev/null 2>&1; (exit $rc); e2e_cleanup' EXIT
screen() { tm capture-pane -p -t ann; }
wait_for() {
	local i

	for (( i = 0; i < ${2:-10} * 10; i++ )); do
		screen | grep -qE -- "$1" && return 0
		sleep 0.1
	done
	return 1
}
keys() { tm send-keys -t ann "$@"; sleep 0.5; }

start_bg "$W/two_loops" 120
target=$BG_PID
wait_started "$target"
tm -f /dev/null new-session -d -s ann -x 110 -y 32 \
	"env NO_COLOR=1 TERM=xterm-256color $PMUTOP -p $target -e task-clock --refresh 0.5; echo exit=\$?; sleep 60" ||
	fail "cannot start tmux"
tm set -g escape-time 10 >/dev/null

wait_for 'two_loops \(two_loops\)' 20 || { screen | sed 's/^/    | /'; fail "the table never showed two_loops"; }
sleep 1
keys a
wait_for 'address: +instruction' 10 || { screen | sed 's/^/    | /'; fail "a opened no listing"; }
screen >listing.txt
sed 's/^/    | /' listing.txt
grep -q '^two_loops ' listing.txt || fail "the listing does not name two_loops"
grep -q 'LOOP_A' listing.txt || fail "no source line of loop A"
grep -qE '^ *task-clock +address:' listing.txt || fail "no task-clock column"

# The selection (the hottest instruction) is in loop A: between the LOOP_A
# and LOOP_B source lines. tmux shows the selected row in reverse video:
# with NO_COLOR, capture with escapes and find it.
selected_row() { tm capture-pane -e -p -t ann | grep -n $'\e\[[0-9;]*7m' | grep -E '[0-9a-f]+:  ' | head -n 1; }
sel=$(selected_row | cut -d: -f1)
[[ -n $sel ]] || fail "no selected instruction"
a_line=$(grep -n 'LOOP_A' listing.txt | cut -d: -f1)
b_line=$(grep -n 'LOOP_B' listing.txt | cut -d: -f1)
info "selected line $sel; loop A from line $a_line, loop B from ${b_line:-(below)}"
(( sel > a_line )) && { [[ -z $b_line ]] || (( sel < b_line )); } ||
	fail "the hottest instruction is not in loop A"

# Loop A's instruction addresses, from the first listing.
loop_a=$(sed -n "${a_line},${b_line:-\$}p" listing.txt | grep -oE '^ *([0-9.]+%)? +[0-9a-f]+:  ' |
	grep -oE '[0-9a-f]+:' | tr -d : | tr '\n' ' ')
[[ -n $loop_a ]] || fail "no instructions of loop A in the listing"

keys G
wait_for 'retq? *$' 5 || { screen | sed 's/^/    | /'; fail "G did not move to the last instruction"; }
keys H
keys a
# `a` refreshes the listing in place: still two_loops' instructions, the
# selection still on loop A's hottest. (Which of loop A's near-equal
# instructions is hottest, and so how far the view scrolls, changes with
# the samples: the loop's source line may be above the window.)
wait_for 'address: +instruction' 5 && screen | grep -q '^two_loops ' ||
	{ screen | sed "s/^/    | /"; fail "a on the listing lost it"; }
addr=$(selected_row | grep -oE '[0-9a-f]+:  ' | head -n 1 | tr -d ': ')
info "after G, H, a: selected instruction $addr; loop A: $loop_a"
[[ -n $addr && " $loop_a " == *" $addr "* ]] || {
	screen | sed "s/^/    | /"
	fail "after G, H and a the selection ($addr) is not on loop A's hottest instruction"
}
keys Escape
wait_for 'flat +flat%' 5 || { screen | sed 's/^/    | /'; fail "Esc did not return to the table"; }
keys q
wait_for 'exit=0' 10 || { screen | sed 's/^/    | /'; fail "q did not exit 0"; }
pass "a lists two_loops with source lines, selection on loop A's hottest instruction; G, H, a, Esc, q"
