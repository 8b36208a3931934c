#!/usr/bin/env bash
# t_flame_html.sh - `--dump FILE.html` writes a flame graph page that works
# in a real browser (Debian's chromium, headless, tests/web/check_flame.js):
#
#   - recorded on the shares workload: the search box's "Matched: X%" for
#     each of the ten functions, relative to what "_expect_" matches, is
#     k/55 within 2 pp, 3 pp in quick (ASan) runs, whose 2 s profiles on a
#     busy machine lose up to a fifth of their samples (t_shares.sh holds the
#     profiler itself to 1 pp; t_flame_load.sh checks the page's arithmetic
#     exactly against go tool pprof); a search matching twice on one stack
#     counts it once; clicking J_expect_18_18 zooms (it spans the chart, the
#     other nine are no longer drawn, the pixels change) and Reset restores
#     the view; the icicle toggle redraws; the tooltip names the function,
#     its module and its samples; the header shows the command line, events,
#     duration, samples, lost samples and the unwinder's outcomes;
#   - a JIT function named with </script>, <img onerror>, quotes, '&', a
#     control byte and invalid UTF-8 shows as that text in the tooltip and
#     runs nothing;
#   - always: no console error, no dialog, no request leaves the page;
#   - `--dump flame.xyz` is refused with the formats listed.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares jit
need_browser

DUR=$(quick_or 3 2)
TOL=$(quick_or 2.0 3.0)
pick_event
if [[ $EV == cycles ]]; then PERIOD=1000000; else PERIOD=100000; fi
info "event $EV, period $PERIOD, ${DUR} s"

# 1. Recorded straight to a page.
run_pmutop direct -e "$EV" --period "$PERIOD" --duration "$DUR" --dump direct.html \
	-- "$W/shares" $((DUR + 5))
show direct.err
(( RC == 0 )) || fail "pmutop --dump direct.html exited with status $RC"
[[ $(head -c 15 direct.html) == '<!DOCTYPE html>' ]] || fail "direct.html is not an HTML page"
grep -q 'flame graph' direct.err || fail "no 'wrote ... flame graph' line on stderr"
info "direct.html: $(stat -c %s direct.html) bytes"
browser direct "file://$T/direct.html" --shares --tol "$TOL" --zoom J_expect_18_18 --invert \
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

# 2. A hostile name, through a JIT perf map (any byte but a newline).
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

# 3. An unknown extension is an error that lists the formats.
run_pmutop xyz -e "$EV" --duration 1 --dump flame.xyz -- "$W/shares" 3
(( RC == 2 )) && grep -q 'unknown extension ".xyz"' xyz.err && grep -q '.html' xyz.err ||
	fail "--dump flame.xyz: want status 2 and the formats (got $RC: $(head -1 xyz.err))"
[[ ! -e flame.xyz ]] || fail "--dump flame.xyz wrote a file anyway"
pass "flame graph page: shares k/55 within $TOL pp, zoom, icicle, tooltip, header, hostile name inert, unknown extension refused"
