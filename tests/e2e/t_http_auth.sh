#!/usr/bin/env bash
# t_http_auth.sh - who may take a profile from a root pmutop's --http on
# loopback (issue 32).
#
# A root pmutop serving profiles of a process on 127.0.0.1 used to answer
# any local user (or container sharing the network namespace): addresses,
# names, command lines, raw events. Now a token is made at start and
# printed once; a client whose socket is root's or pmutop's user's needs
# none (so the operator's curl and go tool pprof work as before), any other
# needs ?token= or Authorization: Bearer. Here, as root:
#   1. uid 65534 without the token: 401; with ?token= or the header: 200,
#      and a profile with the workload's functions;
#   2. root without it: 200;
#   3. a browser's cross-site request (Origin of another site,
#      Sec-Fetch-Site: cross-site): 403 even from root;
#   4. the token is in the server's output once (its start line), never in
#      a request's log line (?token=... is logged as "token=...");
#   5. ?pid= is checked after the slot: with a task-clock profile under way,
#      a second task-clock request with pid=1 gets 429 at once (the /proc
#      walk came first: 400).
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares
command -v curl >/dev/null || skip "curl not installed"
command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
(( EUID == 0 )) || skip "needs root (a root server and another local user)"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

start_bg "$W/shares" 120
TP=$BG_PID
wait_started "$TP"
http_start 127.0.0.1:0 -p "$TP"
for _ in $(seq 100); do grep -q 'token=' server.err && break; sleep 0.05; done
TOKEN=$(grep -o 'token=[0-9a-f]*' server.err | head -1 | cut -d= -f2)
U=http://127.0.0.1:$PORT
errs=0
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 30 "$@"; }
expect() { # WHAT WANT GOT
	if [[ $3 != "$2" ]]; then
		info "FAILED ($1): HTTP $3, want $2"
		errs=$((errs + 1))
	else
		info "$1: HTTP $3"
	fi
}
if [[ ${#TOKEN} != 32 ]]; then
	show server.err
	info "FAILED: no token printed for a loopback server"
	errs=$((errs + 1))
fi

expect "nobody, no token" 401 "$(as_nobody curl -s -o /dev/null -w '%{http_code}' --max-time 30 "$U/debug/pprof/")"
expect "nobody, ?token=" 200 "$(as_nobody curl -s -o /dev/null -w '%{http_code}' --max-time 30 "$U/debug/pprof/?token=$TOKEN")"
expect "nobody, Bearer" 200 "$(as_nobody curl -s -o /dev/null -w '%{http_code}' --max-time 30 \
	-H "Authorization: Bearer $TOKEN" "$U/debug/pprof/")"
chmod a+rwx "$T"
c=$(as_nobody curl -s -o "$T/nb.pb.gz" -w '%{http_code}' --max-time 60 \
	"$U/debug/pprof/profile?seconds=1&token=$TOKEN")
expect "nobody, a profile with ?token=" 200 "$c"
if [[ $c == 200 ]] && { ! top_flat nb.pb.gz >nb.flat || ! grep -q _expect_ nb.flat; }; then
	info "FAILED: the profile taken with the token is not readable"
	errs=$((errs + 1))
fi
expect "root, no token" 200 "$(code "$U/debug/pprof/")"
expect "root, Origin of another site" 403 "$(code -H 'Origin: http://attacker.example' "$U/debug/pprof/")"
expect "root, Sec-Fetch-Site: cross-site" 403 "$(code -H 'Sec-Fetch-Site: cross-site' "$U/debug/pprof/")"
expect "root, same-origin fetch" 200 "$(code -H "Origin: http://127.0.0.1:$PORT" \
	-H 'Sec-Fetch-Site: same-origin' "$U/debug/pprof/")"

# 5. pid= after the slot check.
# The busy profile holds its slot from before its counters open to after
# they close: wait for them (holds_perf_fd), ask, then hang up on it.
curl -s -o busy.pb.gz --max-time 60 "$U/debug/pprof/profile?seconds=30&event=task-clock" &
busy=$!
for _ in $(seq 600); do holds_perf_fd "$SRV" && break; sleep 0.05; done
holds_perf_fd "$SRV" || { info "FAILED: the busy profile never started"; errs=$((errs + 1)); }
expect "pid=1 while task-clock is busy" 429 \
	"$(code "$U/debug/pprof/profile?seconds=1&event=task-clock&pid=1")"
kill "$busy" 2>/dev/null
wait "$busy" 2>/dev/null

if [[ -n $TOKEN ]] && (( $(grep -c "$TOKEN" server.err) != 1 )); then
	grep "$TOKEN" server.err | sed 's/^/    | /'
	info "FAILED: the token is in the server's output $(grep -c "$TOKEN" server.err) times, want once"
	errs=$((errs + 1))
fi
grep -q 'token=\.\.\.' server.err || { info "FAILED: no request logged with token=..."; errs=$((errs + 1)); }

(( errs == 0 )) || { show server.err 30; fail "$errs problem(s) with who may ask a root server"; }
pass "loopback server: other users need the token (printed once, never logged), root does not, cross-site browser requests 403, pid= after the slot check"
