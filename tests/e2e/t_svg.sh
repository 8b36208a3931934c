#!/usr/bin/env bash
# t_svg.sh - the outputs users ask for by name: an SVG flame graph
# (flamegraph.pl's file: `-o x.svg`, `--format svg`, py-spy's `--format
# flamegraph`) and speedscope JSON (py-spy's `-f speedscope`), from a live
# run and from --load.
#
# 1. py-spy's command, `pmutop record -o live.svg --pid P`, on the shares
#    workload: the SVG is well-formed XML (python3's parser); every frame's
#    width is its weight / the root's weight of the chart (1180 px) to
#    0.01 px; the ten functions keep their k/55 shares within 2 pp.
# 2. --load of a pprof file to `--format flamegraph` and `-f speedscope`:
#    each of the ten functions weighs in the SVG and in the speedscope file
#    exactly what the folded stacks of the same file give it; speedscope's
#    schema ($schema, one "sampled" profile, unit, samples and weights of
#    one length, frame indices in range, weights summing to endValue).
# 3. chromium opens the SVG with no error: Ctrl-F's prompt highlights the
#    matches and shows "Matched: X%", clicking J_expect_18_18 zooms it to
#    the chart's width, Reset Zoom restores it; a 512-frame recursion's SVG
#    opens with its root ("all") in the window.
# 4. a hostile JIT name (markup, control bytes, invalid UTF-8) leaves the
#    SVG well-formed; an unknown --format or extension lists the formats.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares deep_fp jit
need_browser

DUR=$(quick_or 3 2)
TOL=2.0

# svg_check FILE: parse the SVG, check widths against weights, print the
# ten functions' weights (NAME WEIGHT per line) to FILE.weights.
svg_check() {
	python3 - "$1" <<'PY'
import sys, re, xml.etree.ElementTree as ET
ns = {'s': 'http://www.w3.org/2000/svg'}
root = ET.parse(sys.argv[1]).getroot()
frames = []
for g in root.iter('{http://www.w3.org/2000/svg}g'):
    if g.get('class') != 'f':
        continue
    title = g.find('s:title', ns).text
    m = re.match(r'^(.*) \(([0-9]+) [^,]*, [0-9.]+%\)$', title)
    if not m:
        sys.exit('title not "NAME (WEIGHT UNIT, P%%)": %r' % title)
    w = float(g.find('s:rect', ns).get('width'))
    frames.append((m.group(1), int(m.group(2)), w))
allw = [f for f in frames if f[0] == 'all']
if len(allw) != 1:
    sys.exit('want one root frame "all", found %d' % len(allw))
total = allw[0][1]
worst = max(abs(w - 1180.0 * v / total) for _, v, w in frames)
print('  %d frames, root weight %d, worst width error %.4f px' % (len(frames), total, worst))
if worst > 0.01:
    sys.exit('a frame width is not proportional to its weight (%.4f px off)' % worst)
weights = {}
for n, v, _ in frames:
    if re.match(r'^[A-J]_expect_', n):
        weights[n] = weights.get(n, 0) + v
with open(sys.argv[1] + '.weights', 'w') as f:
    for n in sorted(weights):
        f.write('%s %d\n' % (n, weights[n]))
PY
}

# shares_ok FILE.weights: the ten functions' k/55 shares within TOL pp.
shares_ok() {
	awk -v tol="$TOL" '{ w[$1] = $2; sum += $2 }
	END {
		split("A_expect_1_82 B_expect_3_64 C_expect_5_45 D_expect_7_27 E_expect_9_09 " \
		      "F_expect_10_91 G_expect_12_73 H_expect_14_55 I_expect_16_36 J_expect_18_18", fn, " ")
		if (sum <= 0) { print "  none of the ten functions"; exit 1 }
		for (k = 1; k <= 10; k++) {
			err = 100 * w[fn[k]] / sum - 100 * k / 55; if (err < 0) err = -err
			if (err > maxerr) { maxerr = err; worst = fn[k] }
		}
		printf "  max share error %.2f pp (%s), tolerance %.1f pp\n", maxerr, worst, tol
		exit maxerr > tol
	}' "$1"
}

# 1. py-spy's record command on a running process.
start_bg "$W/shares" 300
PID=$BG_PID
run_pmutop live record -o live.svg --pid "$PID" -d "$DUR" -e task-clock --period 100000
show live.err 6
(( RC == 0 )) || fail "pmutop record -o live.svg --pid exited with status $RC"
grep -q 'wrote live.svg (SVG flame graph' live.err || fail "no 'wrote live.svg' line"
svg_check live.svg || fail "live.svg is not a well-formed flame graph"
shares_ok live.svg.weights || fail "the SVG's widths do not keep the k/55 shares"

# 2. The same formats from a saved profile; the folded stacks are the truth.
run_pmutop rec -e task-clock --period 100000 -d "$DUR" -o rec.pb.gz -p "$PID"
(( RC == 0 )) || { show rec.err; fail "recording rec.pb.gz failed ($RC)"; }
run_pmutop lsvg --load rec.pb.gz --format flamegraph -o loaded.svg
(( RC == 0 )) || { show lsvg.err; fail "--load --format flamegraph exited with status $RC"; }
run_pmutop lss --load rec.pb.gz -f speedscope -o loaded.json
(( RC == 0 )) || { show lss.err; fail "--load -f speedscope exited with status $RC"; }
grep -q 'speedscope' lss.err || fail "no 'wrote ... speedscope' line"
run_pmutop lfold --load rec.pb.gz -o loaded.folded
(( RC == 0 )) || { show lfold.err; fail "--load -o loaded.folded exited with status $RC"; }
svg_check loaded.svg || fail "loaded.svg is not a well-formed flame graph"
awk '{ n = split($0, p, " "); w = p[n]; k = split(substr($0, 1, length($0) - length(w) - 1), f, ";")
       for (i = 1; i <= k; i++) if (f[i] ~ /^[A-J]_expect_/) { t[f[i]] += w; break } }
     END { for (x in t) print x, t[x] }' loaded.folded | sort >folded.weights
sort loaded.svg.weights | diff folded.weights - >/dev/null ||
	{ paste folded.weights loaded.svg.weights; fail "the SVG's weights differ from the folded stacks'"; }
python3 - loaded.json folded.weights <<'PY' || fail "loaded.json is not a speedscope file with the folded stacks' weights"
import json, sys
d = json.load(open(sys.argv[1]))
assert d['$schema'] == 'https://www.speedscope.app/file-format-schema.json', d.get('$schema')
frames = d['shared']['frames']
assert frames and all(isinstance(f.get('name'), str) for f in frames)
assert len(d['profiles']) == 1, len(d['profiles'])
p = d['profiles'][0]
assert p['type'] == 'sampled' and p['unit'] == 'nanoseconds', (p['type'], p['unit'])
assert len(p['samples']) == len(p['weights']) > 0
assert all(0 <= i < len(frames) for s in p['samples'] for i in s), 'frame index out of range'
assert sum(p['weights']) == p['endValue'] - p['startValue'], 'weights do not sum to endValue'
want = dict(l.split() for l in open(sys.argv[2]))
got = {}
for s, w in zip(p['samples'], p['weights']):
    for i in s:
        n = frames[i]['name']
        if n[:1] in 'ABCDEFGHIJ' and n[1:9] == '_expect_':
            got[n] = got.get(n, 0) + w
            break
assert {k: int(v) for k, v in want.items()} == got, (want, got)
print('  speedscope: %d frames, %d samples, endValue %d' % (len(frames), len(p['samples']), p['endValue']))
PY

# 3. In a browser: search, zoom, and a deep graph opening on its root.
info "\$ check_svg live.svg --search _expect_ --zoom J_expect_18_18"
timeout -k 5 100 node "$E2E_REPO/tests/web/check_svg.js" "file://$T/live.svg" --search _expect_ \
	--zoom J_expect_18_18 >live.json 2>live.jerr || { show live.jerr; fail "live.svg failed in chromium"; }
info "$(json_get live.json 'o.matched + ", " + o.highlighted + " highlighted, zoom " + o.zoom.width_before + " -> " + o.zoom.width_after + " px"')"
run_pmutop deep -e task-clock -d "$DUR" -o deep.svg -- "$W/deep_fp" $((DUR + 5)) 510
(( RC == 0 )) || { show deep.err; fail "pmutop -o deep.svg exited with status $RC"; }
depth=$(python3 -c 'import sys,xml.etree.ElementTree as E; r=E.parse(sys.argv[1]).getroot(); print(r.get("height"))' deep.svg)
timeout -k 5 100 node "$E2E_REPO/tests/web/check_svg.js" "file://$T/deep.svg" --size 1200x800 \
	>deep.json 2>deep.jerr || { show deep.jerr; fail "deep.svg failed in chromium"; }
info "deep.svg: ${depth} px tall, opened at scrollY $(json_get deep.json o.scroll_y)"
[[ $(json_get deep.json o.root_visible) == true ]] || fail "deep.svg does not open with its root in view"

# 4. Hostile names stay text; unknown formats list the known ones.
if [[ $(uname -m) == x86_64 ]]; then
	HOSTILE=$'</text><script>alert(1)</script>&amp;\'"\x01\xff<!--]]>'
	run_pmutop hostile -e task-clock -d 1 -o hostile.svg -- "$W/jit" 3 "$HOSTILE"
	(( RC == 0 )) || { show hostile.err; fail "pmutop on the jit workload exited with status $RC"; }
	python3 -c 'import sys,xml.etree.ElementTree as E; E.parse(sys.argv[1])' hostile.svg ||
		fail "a hostile name broke the SVG"
	(( $(grep -c '<script' hostile.svg) == 1 )) || fail "hostile.svg has a script element of the target's"
fi
run_pmutop badfmt --format bogus -o x -p "$PID"
(( RC == 2 )) && grep -q 'svg' badfmt.err && grep -q 'speedscope' badfmt.err ||
	fail "--format bogus: want status 2 and the formats (got $RC: $(head -1 badfmt.err))"
run_pmutop badext -o x.xyz -d 1 -p "$PID"
(( RC == 2 )) && grep -q '\.svg' badext.err && grep -q 'speedscope' badext.err ||
	fail "-o x.xyz: want status 2 and the formats (got $RC: $(head -1 badext.err))"
pass "SVG and speedscope: py-spy's commands, widths = weights, k/55 shares, --load agrees with folded, chromium search/zoom, deep root in view, hostile names inert"
