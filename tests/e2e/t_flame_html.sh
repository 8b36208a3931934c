#!/usr/bin/env bash
# t_flame_html.sh - `--dump FILE.html` writes a flame graph page that works
# in a real browser (Debian's chromium, headless, tests/web/check_flame.js):
#
#   - recorded on the shares workload: the search box's "Matched: X%" for
#     each of the ten functions, relative to what "_expect_" matches, is
#     k/55 within 2 pp (t_shares.sh holds the profiler itself to 1 pp; this
#     is the page, on a machine that may be busy); a search matching twice
#     on one stack counts it once;
#     clicking J_expect_18_18 zooms (it spans the chart, the other nine are
#     no longer drawn, the pixels change) and Reset restores the view; the
#     icicle toggle redraws; the tooltip names the function, its module and
#     its samples;
#   - `--load PROFILE.pb.gz --dump page.html` of a two-event profile: the
#     page's Matched for each of the ten is go tool pprof's flat share of it
#     (to the rounding); colouring by the ratio of the two events has a
#     legend naming both (IPC first with cycles,instructions);
#   - `--diff-base`: the page colours by difference, with a legend, and the
#     tooltip shows the base value and the change;
#   - a JIT function named with </script>, <img onerror>, quotes, '&', a
#     control byte and invalid UTF-8 shows as that text in the tooltip and
#     runs nothing;
#   - always: no console error, no dialog, no request leaves the page;
#   - `--dump flame.svg` is refused with the formats listed, and
#     `--dump - --format html` writes the page to stdout.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares jit
need_browser

DUR=$(quick_or 3 2)
pick_event
if [[ $EV == cycles ]]; then PERIOD=1000000; else PERIOD=100000; fi
info "event $EV, period $PERIOD, ${DUR} s"

# browser NAME URL ARGS...: the checker's JSON in NAME.json; fails the test on a failed check.
browser() {
	local name=$1
	shift
	info "\$ check_flame $*"
	timeout -k 5 120 node "$BROWSER_CHECK" "$@" >"$name.json" 2>"$name.err"
	local rc=$?
	show "$name.err"
	(( rc == 0 )) || fail "$name: the page failed in chromium (status $rc)"
}

shares_table() {
	json_get "$1" 'o.shares.rows.map(r => "    " + r.name + " matched " + r.matched + "% -> " + r.share + "% of the ten (want " + r.want + "%)").join("\n")'
	info "max error $(json_get "$1" o.shares.max_error_pp) pp"
}

# 1. Recorded straight to a page.
run_pmutop direct -e "$EV" --period "$PERIOD" --duration "$DUR" --dump direct.html \
	-- "$W/shares" $((DUR + 5))
show direct.err
(( RC == 0 )) || fail "pmutop --dump direct.html exited with status $RC"
[[ $(head -c 15 direct.html) == '<!DOCTYPE html>' ]] || fail "direct.html is not an HTML page"
grep -q 'flame graph' direct.err || fail "no 'wrote ... flame graph' line on stderr"
info "direct.html: $(stat -c %s direct.html) bytes"
browser direct "file://$T/direct.html" --shares --tol 2.0 --zoom J_expect_18_18 --invert \
	--hover J_expect_18_18
shares_table direct.json
info "zoom: $(json_get direct.json o.zoom.drawn_before) frames drawn -> $(json_get direct.json o.zoom.drawn_after); gone: $(json_get direct.json 'o.zoom.gone.slice(0,4).join(" ")') ..."
tip=$(json_get direct.json 'o.tooltip.join(" | ")')
info "tooltip: $tip"
[[ $tip == *"J_expect_18_18"*"shares"*"$EV: "*" samples"* ]] ||
	fail "the tooltip lacks the function, module or samples: $tip"
title=$(json_get direct.json o.title)
[[ $title == *"/shares $((DUR + 5))" ]] || fail "the header does not show the command line: $title"
facts=$(json_get direct.json o.facts)
for f in Events Duration Samples Lost Unwind; do
	[[ $facts == *"$f"* ]] || fail "the header lacks $f: $facts"
done

# 2. A saved profile, loaded and written as a page; cross-checked with pprof.
# Two events (with a PMU: cycles,instructions, so the IPC colours are offered).
if [[ $EV == cycles ]]; then EV2=instructions; else EV2=cpu-clock; fi
run_pmutop rec -e "$EV,$EV2" --period "$PERIOD" --duration "$DUR" --dump shares.pb.gz \
	-- "$W/shares" $((DUR + 5))
(( RC == 0 )) || fail "pmutop --dump shares.pb.gz exited with status $RC"
run_pmutop load --load shares.pb.gz --dump loaded.html
(( RC == 0 )) && [[ -s loaded.html ]] || { show load.err; fail "--load shares.pb.gz --dump loaded.html failed ($RC)"; }
browser loaded "file://$T/loaded.html" --shares --tol 2.0 --color custom
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
# Each function is a leaf here: its Matched share is its flat share of the total.
awk -F'\t' 'NR == FNR { s += $2; flat[$1] = $2; next }
	{ want = 100 * flat[$1] / s; d = $2 - want; if (d < 0) d = -d
	  printf "    %-16s page %6.2f%%  pprof %8.4f%%\n", $1, $2, want
	  if (!(s > 0 && d <= 0.011)) bad++ }
	END { exit bad > 0 }' flat.txt matched.txt ||
	fail "the page's Matched shares are not go tool pprof's flat shares (to 0.01 pp)"

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

# 3. A hostile name, through a JIT perf map (any byte but a newline).
HOSTILE=$'</script><script>alert("pwned")</script><img src=x onerror=alert(2)>&amp;\'"\x01\xff<!--'
SHOWN=$'</script><script>alert("pwned")</script><img src=x onerror=alert(2)>&amp;\'"\x01\xef\xbf\xbd<!--'
if [[ $(uname -m) == x86_64 ]]; then
	run_pmutop hostile -e "$EV" --period "$PERIOD" --duration 2 --dump hostile.html \
		-- "$W/jit" 4 "$HOSTILE"
	(( RC == 0 )) || { show hostile.err; fail "pmutop on the jit workload exited with status $RC"; }
	# Only the two closing tags of the page itself: the data element's and the script's.
	n=$(grep -o '</script' hostile.html | wc -l)
	(( n == 2 )) || fail "hostile.html has $n '</script' (want 2: the name ended an element)"
	browser hostile "file://$T/hostile.html" --hover "$SHOWN" --expect-text "$SHOWN" --search 'alert'
	info "tooltip: $(json_get hostile.json 'JSON.stringify(o.tooltip[0])'), $(json_get hostile.json 'o.searches[0].text')"
	(( $(json_get hostile.json o.tooltip_elements) == $(json_get hostile.json o.tooltip.length) )) ||
		fail "the tooltip holds elements the page did not make"
else
	info "(hostile name check needs the x86-64 jit workload; skipped on $(uname -m))"
fi

# 4. Formats: an unknown extension is an error that lists them; '-' is stdout.
run_pmutop svg -e "$EV" --duration 1 --dump flame.svg -- "$W/shares" 3
(( RC == 2 )) && grep -q 'unknown extension ".svg"' svg.err && grep -q '.html' svg.err ||
	fail "--dump flame.svg: want status 2 and the formats (got $RC: $(head -1 svg.err))"
[[ ! -e flame.svg ]] || fail "--dump flame.svg wrote a file anyway"
run_pmutop stdout --load shares.pb.gz --dump - --format html
(( RC == 0 )) && [[ $(head -c 15 stdout.out) == '<!DOCTYPE html>' ]] ||
	fail "--dump - --format html did not write the page to stdout ($RC)"
pass "flame graph page: shares k/55 within 2 pp and equal to pprof's, zoom, icicle, tooltip, hostile name inert, formats"
