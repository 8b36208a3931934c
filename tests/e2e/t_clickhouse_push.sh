#!/usr/bin/env bash
# t_clickhouse_push.sh - pmutop as a fleet's node agent: --push
# clickhouse://... into a real clickhouse-server on loopback (issue 35).
#
#   - bad input refused before anything runs (exit 2, a message naming
#     it): a URL without a database, an unknown scheme, --label without =
#     or with two, with a newline, on a column's name; --spool without --push;
#   - a run with --dump-every 1 --dump DIR/ --push: the schema is created
#     (tables _v1, the schema-version row), one window id per local window
#     file, the samples in ClickHouse (read with FINAL) add up exactly to
#     the local files', every sample's stack is in the stacks table, the
#     labels (host, service, comm, pid) are on the rows, the user and
#     password from the environment work and the password is never printed;
#   - a wrong password: refused at start with the server's reason (exit 2);
#   - README's cluster DDL (Distributed over ReplicatedReplacingMergeTree,
#     the per-minute roll-up view), replication replaced by the plain
#     engines, on two shards of the test server: three agents' samples
#     reach both shards, and the reader and the roll-up add up to them;
#   - a connection closed mid-insert (a proxy drops the server's answer to
#     the first samples INSERT): the window is sent again, counted, and the
#     reader still counts it once;
#   - a refused connection: the run goes on, the local profile is written,
#     the window is counted dropped (no --spool) and the status says so;
#   - a server answering garbage (not HTTP; HTTP but not ClickHouse):
#     a counted retry, then dropped / a clear error at start.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/clickhouse_lib.sh"
e2e_init
need_wl shares
ch_need

ERRS=0
bad() { # bad NAME WANT ARGS...: exit 2 and WANT in the message
	local name=$1 want=$2
	shift 2
	run_pmutop "$name" "$@" -- true
	if (( RC != 2 )) || ! grep -q -- "$want" "$name.err"; then
		info "$name: exit $RC, want 2 and \"$want\""; show "$name.err" 3; ERRS=$((ERRS + 1))
	fi
}
bad nodb "no database" --push clickhouse://127.0.0.1:8123
bad nodb2 "no database" --push clickhouse://127.0.0.1:8123/
bad scheme "unknown URL scheme \"http\"" --push http://127.0.0.1:8123/db
bad port "bad port" --push clickhouse://127.0.0.1:99999/db
bad dbname "bad database name" --push "clickhouse://127.0.0.1/db;drop"
bad noeq "invalid --label" --push clickhouse://127.0.0.1/db --label service
bad twoeq "invalid --label" --push clickhouse://127.0.0.1/db --label a=b=c
bad newline "no newlines" --push clickhouse://127.0.0.1/db --label $'a=b\nc'
bad column "a column pmutop fills" --push clickhouse://127.0.0.1/db --label pid=3
bad nopush "apply to --push" --spool sp
run_pmutop annot --load clickhouse://127.0.0.1/db --annotate main
(( RC == 2 )) && grep -q "annotate needs a profile with addresses" annot.err || { info "--annotate on a ClickHouse load: exit $RC"; ERRS=$((ERRS + 1)); }

CH_AGENT_PASSWORD='pw-7f3Zq'
ch_start
URL=$CH_URL/fleet

# A run with windows: pushed and written beside each other.
PMUTOP_CLICKHOUSE_USER=agent PMUTOP_CLICKHOUSE_PASSWORD=$CH_AGENT_PASSWORD \
	run_pmutop agent -e task-clock --period 1000000 --dump-every 1 --dump win/ \
	--push "$URL" --label host=alpha --label service=demo -- "$W/shares" 3
show agent.err
(( RC == 0 )) || fail "pmutop --push exited with status $RC"
grep -q "$CH_AGENT_PASSWORD" agent.err agent.out && { info "the password was printed"; ERRS=$((ERRS + 1)); }
grep -q "windows pushed" agent.err || { info "no push summary"; ERRS=$((ERRS + 1)); }

ver=$(ch_q "SELECT max(version) FROM fleet.pmutop_schema")
[[ $ver == 1 ]] || { info "schema version row: \"$ver\""; ERRS=$((ERRS + 1)); }
shopt -s nullglob
files=(win/*.pb.gz)
local_sum=0
for f in "${files[@]}"; do
	n=$(pprof -comments "$f" 2>/dev/null | sed -n 's/^pmutop: samples=\([0-9]*\) .*/\1/p')
	local_sum=$((local_sum + ${n:-0}))
done
read -r nwin ch_sum hosts svc < <(ch_q "SELECT uniqExact(window_id), sum(samples),
	groupUniqArray(host), groupUniqArray(labels.value[indexOf(labels.key, 'service')])
	FROM fleet.pmutop_samples_v1 FINAL FORMAT TSV")
info "${#files[@]} local windows with $local_sum samples; ClickHouse: $nwin windows, $ch_sum samples, hosts $hosts, service $svc"
(( local_sum > 100 )) || { info "too few samples to judge ($local_sum)"; ERRS=$((ERRS + 1)); }
[[ $nwin == "${#files[@]}" ]] || { info "window count differs"; ERRS=$((ERRS + 1)); }
[[ $ch_sum == "$local_sum" ]] || { info "samples differ"; ERRS=$((ERRS + 1)); }
[[ $hosts == "['alpha']" && $svc == "['demo']" ]] || { info "labels wrong"; ERRS=$((ERRS + 1)); }
orphans=$(ch_q "SELECT count() FROM fleet.pmutop_samples_v1 WHERE stack_id NOT IN
	(SELECT stack_id FROM fleet.pmutop_stacks_v1)")
[[ $orphans == 0 ]] || { info "$orphans sample rows without their stack"; ERRS=$((ERRS + 1)); }
comm=$(ch_q "SELECT groupUniqArray(comm) FROM fleet.pmutop_samples_v1 WHERE pid > 0")
[[ $comm == "['shares']" ]] || { info "comm: $comm"; ERRS=$((ERRS + 1)); }
hot=$(ch_q "SELECT count() FROM fleet.pmutop_stacks_v1 WHERE has(frames.func, 'J_expect_18_18')
	AND has(frames.func, 'main')")
(( hot > 0 )) || { info "no stack with J_expect_18_18 under main"; ERRS=$((ERRS + 1)); }
unmapped=$(ch_q "SELECT count() FROM fleet.pmutop_stacks_v1 ARRAY JOIN frames WHERE
	frames.mapping_id != 0 AND frames.mapping_id NOT IN (SELECT mapping_id FROM fleet.pmutop_mappings_v1)")
[[ $unmapped == 0 ]] || { info "$unmapped frames whose mapping is missing"; ERRS=$((ERRS + 1)); }

# A wrong password: refused at start, with the server's reason.
PMUTOP_CLICKHOUSE_USER=agent PMUTOP_CLICKHOUSE_PASSWORD=wrong \
	run_pmutop badpw -e task-clock --push "$URL" -- true
(( RC == 2 )) && grep -q "Wrong password" badpw.err ||
	{ info "wrong password: exit $RC"; show badpw.err 3; ERRS=$((ERRS + 1)); }
# The same in the URL (percent-encoded characters allowed).
run_pmutop urlpw -e task-clock --duration 1 --push "clickhouse://agent:pw-7f3Zq@127.0.0.1:$CH_HTTP/fleet2" \
	-- "$W/shares" 1
(( RC == 0 )) && ! grep -q pw-7f3Zq urlpw.err ||
	{ info "credentials in the URL: exit $RC"; show urlpw.err 5; ERRS=$((ERRS + 1)); }
[[ $(ch_q "SELECT count() > 0 FROM fleet2.pmutop_samples_v1") == 1 ]] ||
	{ info "nothing in fleet2 (whole run as one window)"; ERRS=$((ERRS + 1)); }

# README's cluster DDL (Distributed over ReplicatedReplacingMergeTree and the
# per-minute roll-up), without replication (no ZooKeeper) on two shards of
# this server: agents push into it, the reader and the roll-up see it all.
python3 - "$E2E_REPO/README.md" >cluster.sql <<'PY'
import re, sys
t = open(sys.argv[1]).read()
ddl = t.split("<!-- cluster-ddl -->")[1].split("<!-- /cluster-ddl -->")[0]
ddl = ddl.replace("```sql", "").replace("```", "").replace(" ON CLUSTER fleet", "")
ddl = re.sub(r"Replicated(\w*)MergeTree\('[^']*', '\{replica\}'\)", r"\1MergeTree()", ddl)
ddl = re.sub(r"Distributed\(fleet, profiles,", "Distributed(pmutop_test, '',", ddl)
for st in (s.strip() for s in ddl.split(";")):
    if not st:
        continue
    if st.startswith("CREATE DATABASE"):
        for db in ("s1", "s2", "profiles"):
            print(re.sub(r"profiles$", db, st) + ";")
    elif "_local (" in st or "MATERIALIZED VIEW" in st:
        for shard in ("s1", "s2"):
            print(st.replace("profiles.", shard + ".") + ";")
    else:
        print(st.replace("AS profiles.", "AS s1.") + ";")
PY
nst=0
while IFS= read -r -d ';' st; do
	[[ -z ${st//[[:space:]]/} ]] && continue
	ch_q "$st" >/dev/null || { info "cluster DDL failed: ${st:0:100}"; ERRS=$((ERRS + 1)); }
	nst=$((nst + 1))
done <cluster.sql
csum=0
for h in c1 c2 c3; do
	run_pmutop "$h" -e task-clock --period 1000000 --dump "$h.pb.gz" --push "$CH_URL/profiles" \
		--label host=$h -- "$W/shares" 1
	n=$(pprof -comments "$h.pb.gz" 2>/dev/null | sed -n 's/^pmutop: samples=\([0-9]*\) .*/\1/p')
	csum=$((csum + ${n:-0}))
done
# Distributed inserts reach the shards in the background.
for _ in $(seq 50); do
	[[ $(ch_q "SELECT sum(samples) FROM profiles.pmutop_samples_v1") == "$csum" ]] && break
	sleep 0.2
done
read -r s1 s2 < <(ch_q "SELECT (SELECT sum(samples) FROM s1.pmutop_samples_v1_local),
	(SELECT sum(samples) FROM s2.pmutop_samples_v1_local) FORMAT TSV")
rolled_local=$(ch_q "SELECT (SELECT sum(samples) FROM s1.pmutop_samples_1m_v1) + (SELECT sum(samples) FROM s2.pmutop_samples_1m_v1)")
run_pmutop cl --load "$CH_URL/profiles" --dump cl.pb.gz
cl=$(pprof -comments cl.pb.gz 2>/dev/null | sed -n 's/^pmutop: samples=\([0-9]*\) .*/\1/p')
info "cluster: $nst statements; 3 agents $csum samples; shards $s1 + $s2; roll-up $rolled_local; reader ${cl:-?}"
[[ $((s1 + s2)) == "$csum" && $cl == "$csum" && $rolled_local == "$csum" ]] ||
	{ info "cluster: totals differ"; show cl.err 3; ERRS=$((ERRS + 1)); }

# A connection that closes mid-insert: a proxy hands the first samples
# INSERT to the server and closes the connection before the answer - the
# rows are in, the agent cannot know: it sends the window again (counted),
# and the reader counts it once.
read -r pport _ < <(ch_ports)
python3 - "$pport" "$CH_HTTP" >proxy.log 2>&1 <<'PY' &
import socket, sys, threading
lport, dport = int(sys.argv[1]), int(sys.argv[2])
dropped = [False]
def pipe(c):
    s = socket.create_connection(("127.0.0.1", dport))
    first = c.recv(65536)
    drop = b"INSERT%20INTO" in first and b"pmutop_samples_v1" in first and not dropped[0]
    s.sendall(first)
    def up():
        try:
            while True:
                d = c.recv(65536)
                if not d: break
                s.sendall(d)
        except OSError: pass
    threading.Thread(target=up, daemon=True).start()
    while True:
        d = s.recv(65536)
        if not d: break
        if drop:
            dropped[0] = True
            print("dropped the answer to a samples INSERT", flush=True)
            break
        c.sendall(d)
    for k in (c, s):
        try: k.shutdown(socket.SHUT_RDWR)
        except OSError: pass
        k.close()
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", lport)); l.listen(16)
while True:
    c, _ = l.accept()
    threading.Thread(target=pipe, args=(c,), daemon=True).start()
PY
E2E_BG_PIDS+=("$!")
for _ in $(seq 50); do
	python3 -c "import socket; socket.create_connection(('127.0.0.1', $pport))" 2>/dev/null && break
	sleep 0.1
done
run_pmutop midinsert -e task-clock --period 1000000 --dump-every 1 --dump mid/ \
	--push "clickhouse://127.0.0.1:$pport/fleet3" --label host=mid -- "$W/shares" 2
show midinsert.err 8
mid_local=0
for f in mid/*.pb.gz; do
	n=$(pprof -comments "$f" 2>/dev/null | sed -n 's/^pmutop: samples=\([0-9]*\) .*/\1/p')
	mid_local=$((mid_local + ${n:-0}))
done
run_pmutop midload --load "clickhouse://127.0.0.1:$CH_HTTP/fleet3" --dump mid.pb.gz
mid_ch=$(pprof -comments mid.pb.gz 2>/dev/null | sed -n 's/^pmutop: samples=\([0-9]*\) .*/\1/p')
info "closed mid-insert: local $mid_local samples, reader ${mid_ch:-?}"
grep -q "dropped the answer" proxy.log && (( RC == 0 )) &&
	grep -q "0 dropped, [1-9][0-9]* retries (1 sent again after an unknown outcome)" midinsert.err &&
	[[ $mid_ch == "$mid_local" ]] ||
	{ info "closed mid-insert: want one re-send and the reader equal to the local windows"; ERRS=$((ERRS + 1)); }
ch_stop

# Nothing listens: the run goes on, the profile is written, the window dropped (counted).
read -r closed _ < <(ch_ports)
run_pmutop refused -e task-clock --dump whole.pb.gz --push "clickhouse://127.0.0.1:$closed/fleet" \
	-- "$W/shares" 1
show refused.err
[[ -s whole.pb.gz ]] || { info "connection refused: the local profile was not written"; ERRS=$((ERRS + 1)); }
grep -q "WARNING: .*refused\|Couldn't connect" refused.err &&
	grep -q "0 windows pushed.* 1 dropped" refused.err && (( RC == 1 )) ||
	{ info "connection refused: exit $RC, want 1, a warning and 1 dropped"; ERRS=$((ERRS + 1)); }

# A server answering garbage: not HTTP (a counted retry, then dropped), and
# HTTP 200 that is not ClickHouse (refused at start with a clear error).
garbage_server() { # garbage_server MODE: listen on $closed, answer every connection
	python3 - "$closed" "$1" >garbage.log 2>&1 <<'PY' &
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
while True:
    c, _ = s.accept()
    c.recv(65536)
    c.sendall(b"\x00\x17garbage, not HTTP\r\n\r\n" if sys.argv[2] == "raw" else
              b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n")
    c.close()
PY
	GSRV=$!
	E2E_BG_PIDS+=("$GSRV")
	for _ in $(seq 50); do
		python3 -c "import socket; socket.create_connection(('127.0.0.1', $closed))" 2>/dev/null && return
		sleep 0.1
	done
	fail "the garbage server did not start"
}
garbage_server raw
run_pmutop garbage -e task-clock --dump g.pb.gz --push "clickhouse://127.0.0.1:$closed/fleet" \
	-- "$W/shares" 1
show garbage.err 6
[[ -s g.pb.gz ]] && (( RC == 1 )) && grep -q "0 windows pushed.* 1 dropped, [1-9][0-9]* retries" garbage.err &&
	! grep -q "Couldn't connect" garbage.err ||
	{ info "garbage (not HTTP): exit $RC, want 1, the profile written and a counted retry and drop"; ERRS=$((ERRS + 1)); }
kill "$GSRV"; wait "$GSRV" 2>/dev/null
garbage_server http
run_pmutop notch -e task-clock --dump n.pb.gz --push "clickhouse://127.0.0.1:$closed/fleet" -- true
show notch.err 3
(( RC == 2 )) && grep -q "did not answer as a ClickHouse server does" notch.err ||
	{ info "not ClickHouse: exit $RC, want 2 and a clear error"; ERRS=$((ERRS + 1)); }
kill "$GSRV"; wait "$GSRV" 2>/dev/null

(( ERRS == 0 )) || fail "$ERRS checks failed"
pass "push: $nwin windows, $ch_sum samples = the local windows'; README's cluster DDL on 2 shards: $csum = reader = roll-up; bad URLs, labels, password, refused and garbage servers handled"
