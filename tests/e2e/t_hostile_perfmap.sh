#!/usr/bin/env bash
# t_hostile_perfmap.sh - a JIT perf map that is rewritten all the time
# (issue 17). The jit workload names its code in /tmp/perf-PID.map; a
# churner replaces that file (new inode) every 50 ms with the genuine lines
# plus 200,000 junk ones (~8 MB). Names outlive re-reads, so each parse
# used to add ~10 MB to pmutop for good, five times a second. Now a
# rewritten map is parsed at most once a second (and all names are capped
# at 512 MiB): pmutop's peak memory stays bounded, the JIT code is still
# named, the summary says how many re-reads were put off, and the profile
# is written on time. And a map older than its process (a dead process's
# with the same pid) is not read.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl jit
[[ $(uname -m) == x86_64 ]] || skip "the jit workload generates x86-64 code"

RUN=8
start_bg "$W/jit" $((RUN + 30))
JIT=$BG_PID
wait_started "$JIT"
MAP=/tmp/perf-$JIT.map
[[ -s $MAP ]] || fail "the workload wrote no $MAP"
cp "$MAP" genuine.map
JUNK=$(quick_or 200000 50000)
awk -v n="$JUNK" 'BEGIN { for (i = 0; i < n; i++) printf "%x 10 junk_symbol_number_%d\n", 0x100000000 + i * 16, i }' >junk.map
cat genuine.map junk.map >full.map
info "junk map: $(stat -c %s full.map) bytes"

churn() {
	local i=0
	while kill -0 "$JIT" 2>/dev/null; do
		cp full.map "$MAP.new.$i" && mv "$MAP.new.$i" "$MAP"
		i=$((i + 1))
		sleep 0.05
	done
}
churn &
CH=$!
E2E_BG_PIDS+=("$CH")
t0=$(now)
info "\$ pmutop -p $JIT -e task-clock --duration $RUN --dump churn.pb.gz"
timeout -k 5 60 /usr/bin/time -f '%M' -o churn.rss "$PMUTOP" -p "$JIT" -e task-clock \
	--duration $RUN --dump churn.pb.gz >churn.out 2>churn.err
RC=$?
EL=$(elapsed "$t0")
RSS=$(( $(tail -1 churn.rss | tr -dc 0-9) / 1024 ))
kill "$CH" 2>/dev/null
info "status $RC in $EL s, max RSS $RSS MB"
show churn.err
(( RC == 0 )) || fail "pmutop exited with $RC"
awk -v e="$EL" -v r=$RUN -v q="$(quick_or 15 30)" 'BEGIN { exit !(e < r + q) }' ||
	fail "took $EL s for --duration $RUN"
pprof -top churn.pb.gz >churn.top 2>&1 || fail "pprof cannot read the profile"
grep -q jit_hot_first churn.top || { show churn.top; fail "JIT code not named under churn"; }
grep -q "perf map .*re-reads put off" churn.err || fail "the summary does not say the map was throttled"
(( RSS < 150 )) || fail "max RSS $RSS MB under perf-map churn (names pile up)"
kill -0 "$JIT" || fail "the target is gone"
info "perf map rewritten every 50 ms: parsed at most once a second, peak $RSS MB, JIT code named"

# A map older than its process: what a JIT killed with SIGKILL leaves in
# /tmp for the next process its pid goes to. Not that process's names (a
# 7 MB one parsed for a short-lived process cost pmutop 7-12 MB): left
# unread, and the summary says so; written again by the process, read.
start_bg "$W/jit" 30
J2=$BG_PID
wait_started "$J2"
MAP2=/tmp/perf-$J2.map
[[ -s $MAP2 ]] || fail "the workload wrote no $MAP2"
touch -d '1 hour ago' "$MAP2"
run_pmutop stale -p "$J2" -e task-clock --duration 1 --dump stale.pb.gz
show stale.err 4
(( RC == 0 )) || fail "pmutop exited with $RC on a stale perf map"
grep -q "perf map $MAP2: not read, last written before PID $J2 started" stale.err ||
	fail "the summary does not say the stale map was left unread"
top_flat stale.pb.gz >stale.top || fail "pprof cannot read the profile"
! grep -q jit_hot stale.top || fail "JIT code named from a map older than its process"
touch "$MAP2"
run_pmutop fresh -p "$J2" -e task-clock --duration 1 --dump fresh.pb.gz
(( RC == 0 )) || fail "pmutop exited with $RC"
top_flat fresh.pb.gz >fresh.top || fail "pprof cannot read the profile"
grep -q jit_hot_first fresh.top || { show fresh.top; fail "JIT code not named once its map is written again"; }
! grep -q "not read" fresh.err || fail "a fresh map called stale"
pass "perf map rewritten every 50 ms: parsed at most once a second, peak $RSS MB, JIT code named; a map older than its process left unread"
