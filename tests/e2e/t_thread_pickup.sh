#!/usr/bin/env bash
# t_thread_pickup.sh - threads created after attach are sampled from birth.
#
# short_threads starts 20 threads one after another after attach, each
# living for ~40 ms of CPU time (named short00..short19). At a 1 ms period
# each should get ~40 samples; a thread picked up 100 ms late would get
# none. Require every thread to be present with at least half its expected
# samples, i.e. picked up within ~20 ms of its creation (inherited counters
# cover it from its first instruction).
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl short_threads

start_bg "$W/short_threads" 1 40
pid=$BG_PID
wait_started "$pid"
run_pmutop pickup -e task-clock --period 1000000 --duration 10 --dump pickup.pb.gz -p "$pid"
show pickup.err
(( RC == 0 )) || fail "pmutop exited with status $RC"
raw_samples pickup.pb.gz >samples.txt || fail "go tool pprof -raw cannot read the profile"
# Samples per thread name (first value = sample count).
awk -F'\t' '$2 ~ /^short[0-9][0-9]$/ { split($1, v, " "); n[$2] += v[1] }
	END { for (t in n) print t, n[t] }' samples.txt | sort >per_thread.txt
show per_thread.txt 25
have=$(wc -l <per_thread.txt)
(( have == 20 )) || fail "only $have of the 20 short-lived threads appear in the profile"
low=$(awk '$2 < 20 { print $1 "(" $2 ")" }' per_thread.txt | tr '\n' ' ')
[[ -z $low ]] || fail "threads with fewer than half their ~40 expected samples: $low"
pass "all 20 short-lived threads sampled from their start (>= 20 of ~40 samples each)"
