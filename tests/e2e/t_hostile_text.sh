#!/usr/bin/env bash
# t_hostile_text.sh - text and requests a hostile target or web page
# controls (issue 17):
#   1. a target whose command line holds HTML and a terminal escape, and
#      whose thread name is an escape sequence: --stacks prints no raw
#      control character, the --http index page shows the HTML escaped;
#   2. --http: a foreign Host header (DNS rebinding) gets 403, an IP 200;
#   3. --http on 0.0.0.0 warns and makes a token: 401 without it, 200 with;
#   4. 40 idle connections from 127.0.0.1 do not lock out 127.0.0.2;
#   5. --unwind=ptrace refuses period=1 (it would stop the target per
#      sample) with 400 and the reason.
# The target stays running and untraced throughout.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
command -v curl >/dev/null || skip "curl not installed"
(( EUID == 0 )) || skip "needs root (renames another process's thread)"

ESC=$'\e'
# bash stays the process (a second command follows sleep): its cmdline is
# ours; it names its own thread (only a process itself may).
start_bg bash -c 'printf "%s" "$1" >/proc/$$/comm; sleep 120; :' \
	'<script>alert(1)</script>' "${ESC}[2Jevil" "${ESC}]0;owned${ESC}\\"
TP=$BG_PID
for _ in $(seq 50); do grep -q evil "/proc/$TP/comm" 2>/dev/null && break; sleep 0.05; done
grep -q evil "/proc/$TP/comm" || fail "the target did not rename its thread"
info "target $TP: comm $(od -c "/proc/$TP/comm" | head -1)"

# 1. --stacks: no raw control characters.
run_pmutop stacks --stacks -p "$TP"
(( RC == 0 )) || { show stacks.err; fail "--stacks exited with $RC"; }
grep -q 'evil' stacks.out || { show stacks.out; fail "--stacks does not show the thread"; }
LC_ALL=C grep -q "$ESC" stacks.out stacks.err && fail "--stacks printed a raw ESC"
grep -qF '\x1b[2Jevil' stacks.out || { show stacks.out; fail "the thread name is not shown escaped"; }

# 2.-4. --http on 0.0.0.0 (token) with a free port.
timeout -k 5 60 "$PMUTOP" --http 0.0.0.0:0 -p "$TP" 2>server.err &
SRV=$!
E2E_BG_PIDS+=("$SRV")
for _ in $(seq 100); do grep -q 'serving profiles' server.err 2>/dev/null && break; sleep 0.05; done
PORT=$(grep -o 'serving profiles.*:\([0-9]*\)/debug' server.err | grep -o ':[0-9]*/debug' | tr -dc 0-9)
TOKEN=$(grep -o 'token=[0-9a-f]*' server.err | head -1 | cut -d= -f2)
[[ -n $PORT ]] || { show server.err; fail "the server did not start"; }
[[ ${#TOKEN} == 32 ]] || { show server.err; fail "no token printed for 0.0.0.0"; }
grep -q 'WARNING: --http listens beyond loopback' server.err || fail "no warning for 0.0.0.0"
LC_ALL=C grep -q "$ESC" server.err && fail "the server printed the target's raw ESC"
U=http://127.0.0.1:$PORT
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$@"; }
c=$(code "$U/debug/pprof/"); [[ $c == 401 ]] || fail "no token: HTTP $c, expected 401"
c=$(code "$U/debug/pprof/?token=wrong$TOKEN"); [[ $c == 401 ]] || fail "wrong token: HTTP $c"
c=$(code -H "Authorization: Bearer $TOKEN" "$U/debug/pprof/"); [[ $c == 200 ]] || fail "bearer token: HTTP $c"
c=$(code -H 'Host: attacker.example' "$U/debug/pprof/?token=$TOKEN")
[[ $c == 403 ]] || fail "foreign Host header: HTTP $c, expected 403"
curl -s --max-time 10 -o index.html "$U/debug/pprof/?token=$TOKEN" || fail "index page"
grep -qF '&lt;script&gt;alert(1)&lt;/script&gt;' index.html || { show index.html; fail "cmdline not HTML-escaped"; }
grep -qF '<script>' index.html && fail "raw <script> in the index page"
LC_ALL=C grep -q "$ESC" index.html && fail "raw ESC in the index page"
info "token, Host check and HTML escaping hold"

# 4. One client's idle connections do not lock out another.
for _ in $(seq 40); do exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" 2>/dev/null || break; done
c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 --interface 127.0.0.2 \
	"http://127.0.0.2:$PORT/healthz?token=$TOKEN")
[[ $c == 200 ]] || fail "with 40 idle connections from 127.0.0.1, 127.0.0.2 got HTTP $c"
info "40 idle connections from 127.0.0.1: 127.0.0.2 still served"
kill "$SRV"; wait "$SRV" 2>/dev/null

# 5. --unwind=ptrace: period=1 refused.
timeout -k 5 60 "$PMUTOP" --http 127.0.0.1:0 --unwind=ptrace -p "$TP" 2>pt.err &
SRV=$!
E2E_BG_PIDS+=("$SRV")
for _ in $(seq 100); do grep -q 'serving profiles' pt.err 2>/dev/null && break; sleep 0.05; done
PORT=$(grep -o '127.0.0.1:[0-9]*' pt.err | head -1 | cut -d: -f2)
curl -s --max-time 10 -o pt.body -w '%{http_code}' \
	"http://127.0.0.1:$PORT/debug/pprof/profile?seconds=1&event=task-clock&period=1" >pt.code
[[ $(cat pt.code) == 400 ]] && grep -q 'too small for --unwind=ptrace' pt.body ||
	{ show pt.body; fail "period=1 under --unwind=ptrace: HTTP $(cat pt.code)"; }
kill "$SRV"; wait "$SRV" 2>/dev/null

kill -0 "$TP" || fail "the target is gone"
[[ $(awk '/^TracerPid:/ { print $2 }' "/proc/$TP/status") == 0 ]] || fail "the target is traced"
pass "escaped names in --stacks and HTML, Host check, token off loopback, per-client limit, ptrace period floor"
