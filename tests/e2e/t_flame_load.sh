#!/usr/bin/env bash
# t_flame_load.sh - flame graph pages of saved profiles, in chromium
# (tests/web/check_flame.js):
#   - `--load PROFILE.pb.gz --dump page.html` of a two-event profile of the
#     shares workload: the page's Matched for each of the ten functions is
#     go tool pprof's cumulative share of it (to the rounding: the page's
#     arithmetic, exactly), and k/55 within 2 pp (3 pp in quick runs);
#     colouring by the ratio of the two events has a legend naming both
#     (IPC first with cycles,instructions);
#   - `--diff-base`: the page colours by difference, with a legend, and the
#     tooltip shows the base value and the change;
#   - `--dump - --format html` writes the page to stdout;
#   - always: no console error, no dialog, no request leaves the page.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares
need_browser

DUR=$(quick_or 3 2)
TOL=$(quick_or 2.0 3.0)
pick_event
if [[ $EV == cycles ]]; then PERIOD=1000000; else PERIOD=100000; fi
info "event $EV, period $PERIOD, ${DUR} s"

# A saved profile, loaded and written as a page; cross-checked with pprof.
# Two events (with a PMU: cycles,instructions, so the IPC colours are offered).
if [[ $EV == cycles ]]; then EV2=instructions; else EV2=cpu-clock; fi
run_pmutop rec -e "$EV,$EV2" --period "$PERIOD" --duration "$DUR" --dump shares.pb.gz \
	-- "$W/shares" $((DUR + 5))
(( RC == 0 )) || fail "pmutop --dump shares.pb.gz exited with status $RC"
run_pmutop load --load shares.pb.gz --dump loaded.html
(( RC == 0 )) && [[ -s loaded.html ]] || { show load.err; fail "--load shares.pb.gz --dump loaded.html failed ($RC)"; }
browser loaded "file://$T/loaded.html" --shares --tol "$TOL" --color custom
shares_table loaded.json
legend=$(json_get loaded.json o.legend)
info "two events, colour by their ratio: legend '$legend'"
[[ $legend == *"$EV2 / $EV:"* || $legend == *"$EV / $EV2:"* ]] ||
	fail "the ratio colouring has no legend naming both events: $legend"
if [[ $EV == cycles ]]; then
	json_get loaded.json 'o.state.color' | grep -qx ipc || fail "cycles,instructions: IPC is not the first colouring"
fi
top_flat shares.pb.gz "$EV" >flat.txt || top_flat shares.pb.gz 1 >flat.txt ||
	fail "go tool pprof -top cannot read shares.pb.gz"
json_get loaded.json 'o.shares.rows.map(r => r.name + "\t" + r.matched).join("\n")' >matched.txt
# Matched counts the samples with the function on their stack: pprof's cum
# (not flat: kernel frames, when pmutop names them, sit below the ten).
awk 'NR == FNR { if (/^ +flat +flat%/) { body = 1; next }
		 if (body && NF >= 6) { f = $1; c = $4; sub(/[a-zA-Z]+$/, "", f); sub(/[a-zA-Z]+$/, "", c)
					 s += f; cum[$6] = c } next }
	{ split($0, r, "\t"); want = 100 * cum[r[1]] / s; d = r[2] - want; if (d < 0) d = -d
	  printf "    %-16s page %6.2f%%  pprof cum %8.4f%%\n", r[1], r[2], want
	  if (!(s > 0 && d <= 0.011)) bad++ }
	END { exit bad > 0 }' "$T/top.txt" matched.txt ||
	fail "the page's Matched shares are not go tool pprof's cum shares (to 0.01 pp)"

# A differential page against a short profile of the same program.
run_pmutop base -e "$EV" --period "$PERIOD" --duration 1 --dump base.pb.gz -- "$W/shares" 6
run_pmutop diff --load shares.pb.gz --diff-base base.pb.gz --dump diff.html
(( RC == 0 )) || { show diff.err; fail "--diff-base: status $RC"; }
browser diff "file://$T/diff.html" --hover J_expect_18_18
info "diff: colour $(json_get diff.json o.state.color), legend '$(json_get diff.json o.legend)'"
info "diff tooltip: $(json_get diff.json 'o.tooltip.join(" | ")')"
[[ $(json_get diff.json o.state.color) == diff ]] && json_get diff.json o.legend | grep -q grew &&
	json_get diff.json 'o.tooltip.join(" ")' | grep -q 'base: .* change [-+]' ||
	fail "the differential page lacks its colours, legend or base values"

run_pmutop stdout --load shares.pb.gz --dump - --format html
(( RC == 0 )) && [[ $(head -c 15 stdout.out) == '<!DOCTYPE html>' ]] ||
	fail "--dump - --format html did not write the page to stdout ($RC)"
pass "flame graph pages of saved profiles: Matched equal to pprof's cum shares, k/55 within $TOL pp, ratio colours, --diff-base, stdout"
