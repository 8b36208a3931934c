#!/usr/bin/env bash
# t_flame_http.sh - `pmutop --http` serves the flame graph page:
#   - the /debug/pprof/ index links /debug/pprof/flamegraph and a live one;
#   - GET /debug/pprof/flamegraph?seconds=N&event=E&period=P answers the page
#     (text/html) for a fresh profile; in chromium its search shows the
#     shares workload's k/55 within 2 pp (3 in quick, ASan, runs), zooming
#     works, nothing is requested
#     from anywhere, no console errors;
#   - ?format=json answers the data alone (application/json); a bad format
#     gets 400;
#   - a live page (&live=1) fetches fresh data from the same endpoint and
#     redraws, and requests nothing else.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares
need_browser
command -v curl >/dev/null || fail "curl not installed (make deps)"

start_bg "$W/shares" 120
WL=$BG_PID
wait_started "$WL"
HTTP_TIMEOUT=110 http_start 127.0.0.1:0 -p "$WL"
U=http://127.0.0.1:$PORT/debug/pprof
info "server on $U (shares pid $WL)"

curl -s "$U/" >index.html
grep -q 'href="flamegraph?seconds=' index.html && grep -q 'live=1' index.html ||
	fail "the index does not link the flame graph pages"

SECS=$(quick_or 4 3)
TOL=$(quick_or 2.0 3.0)
q="seconds=$SECS&event=task-clock&period=100000"
code=$(curl -s -o page.html -D hdr.txt -w '%{http_code}' "$U/flamegraph?$q")
[[ $code == 200 ]] && grep -qi '^content-type: text/html' hdr.txt &&
	[[ $(head -c 15 page.html) == '<!DOCTYPE html>' ]] || { show page.html; fail "flamegraph: status $code, not a page"; }
info "curl: $(stat -c %s page.html) bytes of page"
code=$(curl -s -o data.json -D hdr.txt -w '%{http_code}' "$U/flamegraph?seconds=1&event=task-clock&format=json")
[[ $code == 200 ]] && grep -qi '^content-type: application/json' hdr.txt &&
	json_get data.json 'o.nodes.frame.length > 1' | grep -q true || fail "format=json: status $code, no tree"
code=$(curl -s -o bad.txt -w '%{http_code}' "$U/flamegraph?seconds=1&format=svg")
[[ $code == 400 ]] || fail "format=svg: want 400, got $code"

# The page straight from the server, in chromium.
timeout -k 5 120 node "$BROWSER_CHECK" "$U/flamegraph?$q" --shares --tol "$TOL" --zoom J_expect_18_18 \
	>served.json 2>served.err || { show served.err; fail "the served page failed in chromium"; }
json_get served.json 'o.shares.rows.map(r => "    " + r.name + " " + r.share + "% (want " + r.want + "%)").join("\n")'
info "max error $(json_get served.json o.shares.max_error_pp) pp; zoom on $(json_get served.json o.zoom.state.zoom)"

# A live page refreshes itself from the same endpoint.
timeout -k 5 120 node "$BROWSER_CHECK" "$U/flamegraph?seconds=1&event=task-clock&live=1" \
	--allow-fetch --wait-refresh >live.json 2>live.err || { show live.err; fail "the live page failed"; }
info "live: $(json_get live.json o.live_notes) ($(json_get live.json o.live_requests) data requests)"
show server.err 8
pass "flame graph over HTTP: index links, page and JSON, shares within $TOL pp, zoom, live refresh"
