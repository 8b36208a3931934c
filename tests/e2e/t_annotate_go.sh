#!/usr/bin/env bash
# t_annotate_go.sh - --annotate on Go code shows its source lines (issue 33):
# Go's DWARF has no .debug_aranges, so the listing took no lines from it
# and said "debug info has no lines for this code" though the binary has
# .gopclntab and .debug_line and the profile itself has lines. Now the
# lines come from .gopclntab, as the profile's do: go_shares' main.hotOne
# is listed under go_shares.go's lines of its xorshift loop (x ^= x << 13,
# >> 7, << 17), which hold nearly all of its samples, and the stripped
# go_stacks_stripped (no DWARF at all) gets its lines the same way.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl go_shares go_stacks_stripped

run_pmutop ann -e task-clock -d 2 --annotate main.hotOne -- "$W/go_shares" 30
(( RC == 0 )) || { show ann.err; fail "--annotate main.hotOne exited with status $RC"; }
sed -n '1,40p' ann.out | sed 's/^/    | /' | head -24
! grep -q 'has no lines' ann.out ann.err || fail "the listing says the debug info has no lines"
for l in 'x \^= x << 13' 'x \^= x >> 7' 'x \^= x << 17'; do
	grep -qE "go_shares\.go:[0-9]+ +$l" ann.out || fail "no go_shares.go line '$l' in the listing"
done
# The loop's three lines hold most of the function's samples.
share=$(awk '/go_shares\.go:[0-9]+/ { cur = ($0 ~ /x \^= x (<<|>>) (13|7|17)/) }
	/^ +[0-9.]+% +[0-9a-f]+:/ { v = $1; sub("%", "", v); if (cur) s += v }
	END { printf "%.0f", s }' ann.out)
info "the three xorshift lines hold ${share}% of main.hotOne"
(( share >= 70 )) || fail "the xorshift lines hold only ${share}% of main.hotOne"

start_bg "$W/go_stacks_stripped" 60
sleep 0.5
fn=$(timeout 20 "$PMUTOP" -e task-clock -d 1 -p "$BG_PID" --no-tui --rows 5 2>/dev/null |
	awk '/^ +flat +flat%/ { on = 1; next } on && $NF ~ /^main\./ { print $NF; exit }')
[[ -n $fn ]] || fail "no main.* function in go_stacks_stripped's table"
run_pmutop ann2 -e task-clock -d 1 --annotate "$fn" -p "$BG_PID"
(( RC == 0 )) || { show ann2.err; fail "--annotate $fn (stripped) exited with status $RC"; }
grep -qE '\.go:[0-9]+ ' ann2.out || { show ann2.out 12; fail "the stripped binary's $fn has no .go lines"; }
pass "--annotate on Go: source lines from .gopclntab (xorshift lines ${share}%), stripped too"
