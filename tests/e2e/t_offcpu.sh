#!/usr/bin/env bash
# t_offcpu.sh - -e offcpu: where threads wait, weighted by how long.
#
# The offcpu workload's threads block for known times per round (its header
# says which): pipe_waiter 1/3 in nap_30ms and 2/3 in wait_pipe_60ms,
# lock_waiter 2/3 in wait_lock_40ms and 1/3 in nap_20ms, and "parked"
# blocked from before pmutop attaches to the end.
#  1. Attach with -e task-clock,offcpu: one profile with both sample types;
#     each waiter's off-CPU shares within 3 points of the truth (read with
#     go tool pprof -tagfocus=thread=NAME); the parked thread accounted for
#     at least 90% of the recording; the main thread's on + off CPU time
#     (its wall time) within 10% of the recording; no lost switches.
#  2. Launch mode, the target exits while its threads are blocked: pmutop
#     ends by itself, exit status 0, a profile whose blocks end at the exit
#     (the parked thread's time is the target's run, not pmutop's).
#     The -e task-clock,offcpu table's wall column gives a function that only
#     waits the recording's length; --http serves event=offcpu; a switch
#     storm in tiny buffers (pingpong, --mmap-pages 8) reports its losses.
#     Every off-CPU sample has a "switch" label (voluntary / preempted, the
#     latter exactly the [preempted] leaf); a waiter's blocks are voluntary.
#  3. As nobody: at kernel.perf_event_paranoid 2 a refusal naming the knob;
#     at 1 (set for that run) its own process profiled, the parked thread's
#     time accounted.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl offcpu

DUR=$(quick_or 4 3)
TOL=3

# cum_ms FILE INDEX THREAD FUNC: cumulative ms of FUNC on THREAD's samples.
cum_ms() {
	pprof -top -unit=ms -nodecount=200 -sample_index="$2" -tagfocus="thread=$3" "$1" 2>/dev/null |
		awk -v f="$4" '$6 == f { v = $4; sub("ms", "", v); print v + 0; found = 1 }
			END { if (!found) print 0 }'
}
# total_ms FILE INDEX [THREAD]: the sample total of a profile (of one thread).
total_ms() {
	pprof -top -unit=ms -nodefraction=0 -nodecount=100000 -sample_index="$2" \
		${3:+-tagfocus=thread=$3} "$1" 2>/dev/null |
		awk '/^Showing nodes accounting for/ { v = $5; sub("ms,?", "", v); print v + 0; exit }'
}
share_check() { # NAME MEASURED_MS TOTAL_MS EXPECTED_PCT
	awk -v n="$1" -v m="$2" -v t="$3" -v e="$4" -v tol="$TOL" 'BEGIN {
		if (t <= 0) { printf "  %s: no off-CPU time\n", n; exit 1 }
		got = 100 * m / t; d = got - e; if (d < 0) d = -d
		printf "  %-28s expected %5.1f%% measured %5.1f%% (%.0f of %.0f ms)%s\n", n, e, got,
			m, t, (d > tol ? "  <-- over " tol " pp" : "")
		exit d > tol }'
}

# 1. Attach.
start_bg "$W/offcpu" $((DUR + 60))
WPID=$BG_PID
wait_started "$WPID"
sleep 0.3
run_pmutop att -p "$WPID" -e task-clock,offcpu --duration "$DUR" --dump att.pb.gz
show att.err
(( RC == 0 )) || fail "pmutop -e task-clock,offcpu exited with status $RC"
pprof -raw att.pb.gz 2>/dev/null | grep -q "^ *task-clock/nanoseconds\s*offcpu/nanoseconds" ||
	pprof -raw att.pb.gz 2>/dev/null | grep -qE "task-clock/nanoseconds.*offcpu/nanoseconds" ||
	fail "the profile does not have both sample types task-clock and offcpu (nanoseconds)"
grep -q "offcpu: [0-9]* blocks" att.err || fail "no offcpu line in the summary"
grep -q "lost switches: [0-9]* switch-outs without a switch-in" att.err ||
	fail "the summary does not report lost switches"

errs=0
pw=$(total_ms att.pb.gz offcpu pipe_waiter)
share_check "pipe_waiter nap_30ms" "$(cum_ms att.pb.gz offcpu pipe_waiter nap_30ms)" "$pw" 33.33 || errs=$((errs + 1))
share_check "pipe_waiter wait_pipe_60ms" "$(cum_ms att.pb.gz offcpu pipe_waiter wait_pipe_60ms)" "$pw" 66.67 || errs=$((errs + 1))
lw=$(total_ms att.pb.gz offcpu lock_waiter)
share_check "lock_waiter wait_lock_40ms" "$(cum_ms att.pb.gz offcpu lock_waiter wait_lock_40ms)" "$lw" 66.67 || errs=$((errs + 1))
share_check "lock_waiter nap_20ms" "$(cum_ms att.pb.gz offcpu lock_waiter nap_20ms)" "$lw" 33.33 || errs=$((errs + 1))
(( errs == 0 )) || fail "$errs off-CPU share(s) off by more than $TOL pp"

# Why each thread left the CPU, as the label "switch": every off-CPU sample
# has one; a waiter's blocks are voluntary; "preempted" is exactly the
# [preempted] leaf (however much contention this run met).
tot=$(total_ms att.pb.gz offcpu)
lab=$(pprof -tags -unit=ms -sample_index=offcpu att.pb.gz |
	awk '/^ *switch: Total/ { v = $3; sub("ms", "", v); print v + 0; found = 1 } END { if (!found) print 0 }')
info "switch label: on ${lab} of ${tot} ms off-CPU"
awk -v l="$lab" -v t="$tot" 'BEGIN { d = l - t; if (d < 0) d = -d; exit !(t > 0 && d <= 0.001 * t + 1) }' ||
	fail "off-CPU samples without a switch label ($lab of $tot ms)"
pwn=$(pprof -top -unit=ms -sample_index=offcpu -tagfocus=thread=pipe_waiter -tagignore=switch=voluntary att.pb.gz |
	awk '/^Showing nodes accounting for/ { v = $5; sub("ms,?", "", v); print v + 0; found = 1 } END { if (!found) print 0 }')
info "pipe_waiter: ${pwn} of ${pw} ms not labelled voluntary"
awk -v a="$pwn" -v b="$pw" 'BEGIN { exit !(b > 0 && a <= 0.05 * b) }' ||
	fail "pipe_waiter's waits are not labelled switch=voluntary ($pwn of $pw ms are not)"
pre=$(pprof -top -unit=ms -sample_index=offcpu -tagfocus=switch=preempted att.pb.gz |
	awk '/^Showing nodes accounting for/ { v = $5; sub("ms,?", "", v); t = v + 0 }
	     $6 == "[preempted]" { v = $1; sub("ms", "", v); f = v + 0 } END { print t + 0, f + 0 }')
info "switch=preempted: total and [preempted] flat (ms): $pre"
awk -v p="$pre" 'BEGIN { split(p, a, " "); d = a[1] - a[2]; if (d < 0) d = -d; exit !(d <= 0.01 * a[1] + 0.5) }' ||
	fail "switch=preempted samples are not the [preempted] ones ($pre)"

durms=$(awk -v d="$DUR" 'BEGIN { print d * 1000 }')
parked=$(cum_ms att.pb.gz offcpu parked parked_forever)
info "parked thread: ${parked} ms in parked_forever of a ${durms} ms recording"
awk -v p="$parked" -v d="$durms" 'BEGIN { exit !(p >= 0.9 * d && p <= 1.05 * d) }' ||
	fail "the thread parked for the whole run is not accounted ($parked ms of $durms)"
on=$(total_ms att.pb.gz task-clock offcpu)
off=$(total_ms att.pb.gz offcpu offcpu)
info "main thread: on-CPU ${on} ms + off-CPU ${off} ms (recording ${durms} ms)"
awk -v a="$on" -v b="$off" -v d="$durms" 'BEGIN { w = a + b; exit !(a > 0 && w >= 0.9 * d && w <= 1.1 * d) }' ||
	fail "main thread's on + off CPU time is not its wall time"

# 2. The target exits while its threads are blocked.
START=$(now)
PM_TIMEOUT=30 run_pmutop ex -e offcpu --duration 20 --dump ex.pb.gz -- "$W/offcpu" 1.5
ELAPSED=$(elapsed "$START")
show ex.err
(( RC == 0 )) || fail "launch mode: pmutop exited with status $RC when the target exited mid-block"
awk -v e="$ELAPSED" 'BEGIN { exit !(e < 10) }' || fail "launch mode took ${ELAPSED} s for a 1.5 s target"
grep -q "stopped: target exited" ex.err || fail "launch mode: not stopped by the target's exit"
# Its whole off-CPU time, whatever the stack: its one switch-out sample may
# be among those a busy start loses (then it is "[switch-out sample lost]").
exparked=$(total_ms ex.pb.gz offcpu parked)
info "parked thread of a 1.5 s target: ${exparked} ms off-CPU"
awk -v p="$exparked" 'BEGIN { exit !(p >= 1300 && p <= 2500) }' ||
	fail "launch mode: the parked thread's block does not end at the target's exit ($exparked ms)"

# 2b. The table's wall column (on + off CPU cum) for a function that only waits.
# (Attached to the first run's workload: a launched one's parked thread has one
# switch-out sample, which a busy start may lose, leaving its time stackless.)
kill -0 "$WPID" 2>/dev/null || fail "the workload of part 1 ended early"
PM_TIMEOUT=30 run_pmutop tab -p "$WPID" -e task-clock,offcpu --duration 1.5 --table-file tab.txt
(( RC == 0 )) || { show tab.err; fail "table run exited with status $RC"; }
grep -q "wall cum" tab.txt || { show tab.txt; fail "no wall column in the -e task-clock,offcpu table"; }
grep -E " parked_forever$" tab.txt | sed 's/^/    | /'
awk '$NF == "parked_forever" { v = $(NF-1); f = 1e-9
	if (v ~ /ms$/) f = 1e-3; else if (v ~ /us$/) f = 1e-6; else if (v ~ /s$/) f = 1
	sub(/[a-z]+$/, "", v); w = v * f; found = 1 }
	END { exit !(found && w >= 1.2 && w <= 1.8) }' tab.txt ||
	fail "parked_forever's wall time in the table is not the 1.5 s recording"

# 2c. Over HTTP: event=offcpu.
start_bg "$W/offcpu" 30
HPID=$BG_PID
wait_started "$HPID"
PORT=$((20000 + RANDOM % 20000))
start_bg bash -c 'exec timeout 30 "$0" "$@" >http.log 2>&1' "$PMUTOP" -p "$HPID" --http "127.0.0.1:$PORT"
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.1; done
curl -s -o http.pb.gz "http://127.0.0.1:$PORT/debug/pprof/profile?seconds=1&event=offcpu" ||
	fail "GET /debug/pprof/profile?event=offcpu failed"
pprof -raw http.pb.gz 2>/dev/null | grep -q "offcpu/nanoseconds" || fail "event=offcpu over HTTP: no offcpu sample type"
hp=$(cum_ms http.pb.gz offcpu parked parked_forever)
info "over HTTP: parked_forever ${hp} ms in a 1 s profile"
awk -v p="$hp" 'BEGIN { exit !(p >= 900 && p <= 1200) }' || fail "event=offcpu over HTTP: parked thread not accounted"

# 2d. Switches faster than pmutop can keep: nothing lost silently. pingpong
# blocks each of its two threads once per round; with tiny buffers the
# kernel drops records, and the summary must say so - else the blocks are
# all there.
ROUNDS=20000
need_wl pingpong
PM_TIMEOUT=60 run_pmutop pp -e offcpu --mmap-pages 8 -o /dev/null -- "$W/pingpong" "$ROUNDS" pp.time
(( RC == 0 )) || { show pp.err; fail "pingpong run exited with status $RC"; }
grep -E "offcpu: [0-9]+ blocks|lost [0-9]+" pp.err | sed 's/^/    | /'
blocks=$(sed -n 's/.*offcpu: \([0-9]*\) blocks.*/\1/p' pp.err)
lost=$(sed -n 's/.*; lost \([0-9]*\), throttled.*/\1/p' pp.err)
[[ -n $blocks && -n $lost ]] || fail "no offcpu or lost count in the pingpong summary"
if (( blocks < ROUNDS * 2 * 95 / 100 )); then
	(( lost > 0 )) && grep -q "WARNING: the kernel dropped" pp.err ||
		fail "$blocks blocks of $((ROUNDS * 2)) switch-outs and no loss reported"
	info "$blocks of $((ROUNDS * 2)) switch-outs recorded; the kernel's $lost lost records reported"
fi

# 2e. With a hardware event where the machine has a PMU: -e cycles,offcpu.
pick_event
if [[ $EV == cycles ]]; then
	run_pmutop hw -p "$WPID" -e cycles,offcpu --duration 1 --dump hw.pb.gz
	(( RC == 0 )) || { show hw.err; fail "-e cycles,offcpu exited with status $RC"; }
	pprof -raw hw.pb.gz 2>/dev/null | grep -qE "cycles/count.*offcpu/nanoseconds" ||
		fail "-e cycles,offcpu: not both sample types in one profile"
	hwp=$(cum_ms hw.pb.gz offcpu parked parked_forever)
	awk -v p="$hwp" 'BEGIN { exit !(p >= 900 && p <= 1200) }' ||
		fail "-e cycles,offcpu: parked thread not accounted ($hwp ms)"
else
	echo "SKIP (part): no hardware PMU here: -e cycles,offcpu not run"
fi

# 3. As nobody: refused with the knob where the kernel says no; where it
#    allows kernel-mode samples (kernel.perf_event_paranoid <= 1, set here
#    for this one run and put back however the test ends), profiled.
nobody_offcpu() { # LABEL
	(cd "$T" && timeout -k 5 30 setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
		./pmutop -e offcpu --duration 1 --dump "nb/$1.pb.gz" -- ./offcpu 1 >"$1.out" 2>"$1.err")
	RC=$?
	show "$1.err"
}
nobody_profiled() { # LABEL WHEN
	(( RC == 0 )) || fail "as nobody ($2): pmutop exited with status $RC"
	[[ $(pprof -raw "nb/$1.pb.gz" 2>/dev/null) == *offcpu/nanoseconds* ]] ||
		fail "as nobody ($2): exit 0 but no offcpu profile"
	local p
	p=$(total_ms "nb/$1.pb.gz" offcpu parked)
	awk -v p="$p" 'BEGIN { exit !(p >= 800 && p <= 1500) }' ||
		fail "as nobody ($2): the parked thread's off-CPU time is $p ms of a 1 s run"
	info "as nobody ($2): profiled, parked thread ${p} ms off-CPU"
}
if command -v setpriv >/dev/null 2>&1 && (( EUID == 0 )); then
	chmod 755 "$T"
	cp "$PMUTOP" "$T/pmutop" && cp "$W/offcpu" "$T/offcpu" || fail "cannot copy the binaries"
	mkdir -m 1777 "$T/nb" || fail "mkdir"
	PARANOID=$(cat /proc/sys/kernel/perf_event_paranoid)
	nobody_offcpu nb
	if (( PARANOID <= 1 )); then
		nobody_profiled nb "kernel.perf_event_paranoid=$PARANOID"
	else
		(( RC != 0 && RC < 128 )) || fail "as nobody: pmutop exited with status $RC at kernel.perf_event_paranoid=$PARANOID"
		grep -q "kernel.perf_event_paranoid" nb.err || fail "as nobody: the error does not name kernel.perf_event_paranoid"
		info "as nobody: refused, naming the knob (kernel.perf_event_paranoid=$PARANOID)"
		trap 'rc=$?; echo "$PARANOID" >/proc/sys/kernel/perf_event_paranoid; (exit $rc); e2e_cleanup' EXIT
		if echo 1 >/proc/sys/kernel/perf_event_paranoid 2>/dev/null; then
			nobody_offcpu nb1
			echo "$PARANOID" >/proc/sys/kernel/perf_event_paranoid
			nobody_profiled nb1 "kernel.perf_event_paranoid=1"
		else
			info "SKIP (part): kernel.perf_event_paranoid cannot be set here (container?)"
		fi
	fi
fi
pass "off-CPU shares within $TOL pp, both sample types, parked thread and exit mid-block accounted"
