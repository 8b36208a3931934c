#!/usr/bin/env bash
# t_ptrace_stuck.sh - a thread that cannot stop under --unwind=ptrace
# (issue 17). vfork_stuck's thread "stuck" waits in vfork() (killable,
# not interruptible) for 25 s, so PTRACE_INTERRUPT never stops it.
#   1. batch: --duration 2 ends within ~2 s + the 2 s detach wait, the
#      profile is written, the summary says one thread did not stop, and
#      once pmutop has exited no thread of the target is traced;
#   2. --http: a keep-alive client asks for a 1 s profile and keeps its
#      connection open; the server closes it after the response, so the
#      connection's thread (the tracer) ends and the stuck thread is no
#      longer traced while the server keeps running.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl vfork_stuck
traced() { grep -h TracerPid "/proc/$1"/task/*/status 2>/dev/null | awk '$2 != 0' | wc -l; }

start_bg "$W/vfork_stuck" 40 25
TP=$BG_PID
for _ in $(seq 50); do grep -q 'D (disk sleep)' "/proc/$TP"/task/*/status 2>/dev/null && break; sleep 0.05; done
grep -q 'D (disk sleep)' "/proc/$TP"/task/*/status || skip "the vfork thread is not in uninterruptible sleep here"

# 1.
t0=$(now)
PM_TIMEOUT=40 run_pmutop batch --unwind=ptrace -p "$TP" -e task-clock --duration 2 --dump batch.pb.gz
EL=$(elapsed "$t0")
info "batch: status $RC in $EL s"
(( RC == 0 )) || { show batch.err; fail "batch: status $RC"; }
awk -v e="$EL" 'BEGIN { exit !(e < 15) }' || fail "batch: took $EL s for --duration 2"
grep -q "1 threads did not stop" batch.err || { show batch.err; fail "batch: the stuck thread is not reported"; }
pprof -top batch.pb.gz 2>/dev/null | grep -q spin_main || fail "batch: spin_main not in the profile"
(( $(traced "$TP") == 0 )) || fail "batch: a thread is still traced after pmutop exited"

# 2.
command -v curl >/dev/null || skip "curl not installed (HTTP part)"
timeout -k 5 60 "$PMUTOP" --http 127.0.0.1:0 --unwind=ptrace -p "$TP" 2>server.err &
SRV=$!
E2E_BG_PIDS+=("$SRV")
for _ in $(seq 100); do grep -q 'serving profiles' server.err 2>/dev/null && break; sleep 0.05; done
PORT=$(grep -o '127.0.0.1:[0-9]*' server.err | head -1 | cut -d: -f2)
[[ -n $PORT ]] || { show server.err; fail "the server did not start"; }
exec {C}<>"/dev/tcp/127.0.0.1/$PORT"
printf 'GET /debug/pprof/profile?seconds=1&event=task-clock HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n' >&"$C"
timeout 30 head -c 200 <&"$C" >resp.head
grep -q '^HTTP/1.1 200' resp.head || { show resp.head; show server.err; fail "http: no 200"; }
for _ in $(seq 60); do (( $(traced "$TP") == 0 )) && break; sleep 0.05; done
(( $(traced "$TP") == 0 )) || fail "http: a thread is still traced 3 s after the response, connection kept open by the client"
kill -0 "$SRV" || fail "http: the server is gone"
exec {C}<&-
kill "$SRV"; wait "$SRV" 2>/dev/null
kill -0 "$TP" || fail "the target is gone"
pass "a thread stuck in vfork: batch ends on time and detaches; --http releases it after the response"
