#!/usr/bin/env bash
# t_tui_module.sh - the live view's module column is always the module
# (issue 33): once debug info names a function's source file (shares.c,
# libc's malloc.c, clock_gettime.c), the column must still say the file the
# code is in (shares, libc.so.6), as it did before the lines arrived.
# In tmux (120 columns), the view on shares for 3 s, then its final data
# (every line read when sampling ends): every row's "(...)" is a module of the process, none ends
# in a source suffix (.c, .h, .S, .cc).
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares
command -v tmux >/dev/null || skip "tmux not installed"
source "$E2E_DIR/tmux_lib.sh"

tmux_start 120 30
run_in_pane "$PMUTOP -e task-clock --refresh 0.5 -d 3 -- $W/shares 30 2>view.err; echo EXIT=\$?"
wait_for "J_expect_18_18" 15 || { show_screen; fail "the view did not show the workload"; }
# When sampling ends every pending line is read: the source file names are in.
wait_for "sampling ended" 20 || { show_screen; fail "the view did not end sampling"; }
sleep 1
table_rows >rows.txt
keys q
wait_for "EXIT=" 10 || problem "q did not end the view"
sed 's/^/    | /' rows.txt | head -12
mods=$(grep -oE '\(([^()]*)\) *$' rows.txt | tr -d '() ' | sort -u | tr '\n' ' ')
info "modules shown: $mods"
grep -q 'J_expect_18_18 *(shares)' rows.txt || problem "J_expect_18_18's module is not (shares)"
src=$(grep -cE '\([^()]*\.(c|h|S|cc|cpp)\) *$' rows.txt)
(( src == 0 )) || problem "$src rows show a source file in the module column"
(( errs == 0 )) || fail "$errs problem(s)"
pass "the module column shows modules ($mods)"
