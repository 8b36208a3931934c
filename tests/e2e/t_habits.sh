#!/usr/bin/env bash
# t_habits.sh - what perf and py-spy users type, on real processes (issue 22).
#
# One table, one row per habit: the command line, the exit status it must
# give (0 = works, 2 = refused as a command line, 1 = profiling refused) and
# a regex its output (stderr + stdout) must match. A row never launches a
# program the user did not ask for (pmutop top/stat/record/dump are not
# /usr/bin/top or coreutils' stat) and never writes an empty profile.
# After the table, the checks that need a profile read back: -t samples only
# its thread, -p TID the whole process, :u / :k keep user / kernel frames,
# -o picks the format from the extension, every hint printed for a written
# file works when pasted (the flame graph hint must not overwrite its input),
# and, as the unprivileged user nobody, :u works and :k or another user's
# process is refused with the knob to turn.
#
# Add a row whenever a new habit is answered: the list can only grow.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl many_threads

DUR=0.3
PM_TIMEOUT=30
errs=0

# Four threads mt0..mt3 waking every 10 ms to spin ~0.25 ms: samples for
# task-clock without loading the machine.
start_bg "$W/many_threads" 4 600 10 100000
PID=$BG_PID
wait_started "$PID"
for _ in $(seq 100); do
	(( $(ls "/proc/$PID/task" | wc -l) >= 5 )) && break
	sleep 0.05
done
TID=$(ls "/proc/$PID/task" | sort -n | tail -1)
(( TID != PID )) || fail "many_threads workload has no worker threads"
info "target: many_threads workload PID $PID, worker thread TID $TID"
# A thread of another process (ours), for "threads of two processes".
OTHER=$$
KTHREAD=
[[ $(awk '{ print $9 }' /proc/2/stat 2>/dev/null) =~ ^[0-9]+$ ]] &&
	(( ($(awk '{ print $9 }' /proc/2/stat) & 0x200000) != 0 )) && KTHREAD=2

# row NAME RC REGEX ARGS...: pmutop ARGS must exit RC with output matching REGEX.
row() {
	local name=$1 want=$2 re=$3
	shift 3
	run_pmutop "$name" "$@" </dev/null
	cat "$name.out" >>"$name.err"
	if (( RC != want )); then
		show "$name.err" 4
		info "FAILED: $name: exit status $RC, want $want"
		errs=$((errs + 1))
	elif ! grep -qE -- "$re" "$name.err"; then
		show "$name.err" 4
		info "FAILED: $name: output does not match /$re/"
		errs=$((errs + 1))
	else
		info "ok: $name -> $RC: $(grep -m1 -E -- "$re" "$name.err" | cut -c1-110)"
	fi
}

EV=(-e task-clock)
# ---- py-spy's verbs ----------------------------------------------------------
row top_no_tty        2 'pmutop top needs a terminal|needs a terminal' top --pid "$PID"
row record_pprof      0 'wrote rec\.pb\.gz' record -p "$PID" -o rec.pb.gz -d "$DUR" "${EV[@]}"
row record_table      0 'flat%' record -p "$PID" --rate 500 -d "$DUR" --native --nonblocking "${EV[@]}"
row record_launch     0 'wrote launch\.folded' record -o launch.folded "${EV[@]}" -d 1 -- "$W/many_threads" 2 5 10 400000
row dump              0 'Thread [0-9]+ "mt[0-9]"' dump -p "$PID"
row dump_json         0 '"threads"' dump -p "$PID" --json
row dump_no_pid       2 'pmutop dump needs -p PID' dump
row record_no_target  2 'nothing to profile' record
row record_help       0 'Usage: pmutop record' record --help
row top_help          0 'Usage: pmutop top' top --help
row dump_help         0 'Usage: pmutop dump' dump --help
row help_verb         0 'Usage: pmutop dump' help dump
row verb_wrong_opt    2 '--http does not apply to pmutop record' record --http :0 -p "$PID"
row dump_with_event   2 '-e does not apply to pmutop dump' dump -p "$PID" -e cycles
# ---- perf's other commands: a pointer, never a launch -------------------------
row perf_stat         2 'perf stat.*pmutop -- stat' stat -p "$PID"
row perf_report       2 'pmutop --load FILE' report
row perf_list         2 'pmutop --list-events' list
row perf_annotate     2 'go tool pprof -list' annotate
row perf_trace        2 'verbs are record, top and dump' trace -p "$PID"
row launch_stat       0 'GNU coreutils' "${EV[@]}" -- stat --version
row launch_first_word 0 'samples of task-clock' "${EV[@]}" -d "$DUR" true
# ---- perf record/top options --------------------------------------------------
row perf_c_g_m        0 'period 100000' -p "$PID" -c 100000 -g -m 64 -d "$DUR" --no-tui "${EV[@]}"
grep -q -- '-g: pmutop always records call stacks' perf_c_g_m.err ||
	{ info "FAILED: -g gave no note"; errs=$((errs + 1)); }
row perf_call_fp      0 'samples of task-clock' -p "$PID" --call-graph=fp -d "$DUR" --no-tui "${EV[@]}"
row perf_call_lbr     2 'LBR' -p "$PID" --call-graph lbr
row perf_o_folded     0 'wrote out\.folded.*flamegraph\.pl out\.folded > out\.svg' -p "$PID" -o out.folded -d "$DUR" "${EV[@]}"
row perf_o_svg        2 'unknown extension "\.xyz".*\.svg: SVG flame graph' -p "$PID" -o flame.xyz
row perf_p_tid        0 "$TID is thread \"mt[0-9]\" of process $PID" -p "$TID" -d "$DUR" --no-tui "${EV[@]}"
row perf_t_tid        0 'wrote tid\.pb\.gz' -t "$TID" -o tid.pb.gz -d "$DUR" "${EV[@]}"
row perf_t_two_procs  2 'one process' -t "$TID,$OTHER" -d "$DUR" "${EV[@]}"
row perf_t_and_p      2 "not of -p $OTHER" -t "$TID" -p "$OTHER" "${EV[@]}"
row perf_t_gone       1 'no such thread' -t 4194303 "${EV[@]}"
row perf_t_cmd        2 'without a command' -t "$TID" -- true
if [[ -n $KTHREAD ]]; then
	row kthread       2 'kernel thread.*no user space.*EVENT:k' -p "$KTHREAD"
else
	info "skip: kthread row (no kernel thread visible as PID 2 here)"
fi
row no_such_pid       1 'no such process' -p 4194303 "${EV[@]}"
row freq_clamped      0 'max_sample_rate=[0-9]+: sampling at [0-9]+ Hz' -p "$PID" -F 1000000 -d "$DUR" --no-tui "${EV[@]}"
row period_absurd     0 '--period 1 is shorter.*using [0-9]+' -p "$PID" --period 1 -d "$DUR" --no-tui "${EV[@]}"
# ---- options pmutop does not have: the nearest one and what differs ------------
row perf_a_and_p      2 '-a profiles every process already: drop -p' -a -p "$PID"
row perf_K            2 '-e EVENT:k' -K -p "$PID"
row perf_U            2 '-e EVENT:k' -U -p "$PID"
row pyspy_idle        2 'e offcpu' --idle -p "$PID"
row pyspy_subproc     0 'wrote sub\.pb\.gz' record --subprocesses -p "$PID" -o sub.pb.gz -d "$DUR" "${EV[@]}"
row pyspy_s           2 '--subprocesses' -s -p "$PID"
row pyspy_f           0 'wrote f\.json \(speedscope' record -f speedscope -o f.json -p "$PID" -d "$DUR" "${EV[@]}"
row pyspy_gil         2 'Python-only' --gil -p "$PID"
row typo_duration     2 'did you mean --duration\?' -p "$PID" --durtion 5
row typo_event        2 'did you mean --event\?' -p "$PID" --events cycles
row missing_arg       2 '--dump needs an argument \(FILE\)' -p "$PID" --dump
row unknown_nothing   2 'unknown option "--zzzzzz" \(see --help\)' -p "$PID" --zzzzzz
row version_V         0 '^pmutop [0-9]+\.[0-9]+' -V
# ---- event modifiers exactly as perf parses them ------------------------------
row mod_K             2 "invalid modifier 'K'" -e task-clock:K -p "$PID"
row mod_U             2 "invalid modifier 'U'" -e page-faults:U -p "$PID"
row mod_twice         2 "given twice" -e task-clock:uu -p "$PID"
row mod_pppp          2 "too many 'p'" -e cycles:pppp -p "$PID"
row mod_sw_precise    2 'needs a hardware PMU event' -e task-clock:p -p "$PID"
row mod_G             2 'guest' -e task-clock:G -p "$PID"
row mod_group         2 'counting groups' -e task-clock:S -p "$PID"
row mod_uH_unit       0 'samples of task-clock:uH \(period 250000\)' -e task-clock:uH -p "$PID" -d "$DUR" --no-tui
if perf stat -e cycles true 2>&1 | grep -q 'not supported' ||
	! "$PMUTOP" -q -e cycles -d 0.1 -- true >/dev/null 2>&1; then
	row mod_p_no_pmu  1 'not supported|PMU' -e cycles:p -p "$PID" -d "$DUR" --no-tui
else
	# Where a PMU exists :p either works or says precise sampling is not there.
	run_pmutop mod_p -e cycles:p -p "$PID" -d "$DUR" --no-tui
	if (( RC != 0 )) && ! grep -qE 'precise' mod_p.err; then
		info "FAILED: mod_p: exit $RC without saying why"; errs=$((errs + 1))
	else
		info "ok: mod_p -> $RC"
	fi
fi

# ---- profiles read back -------------------------------------------------------
# -t TID: only that thread; -p TID: every worker.
threads_in() { pprof -raw "$1" 2>/dev/null | grep -oE 'thread:\[[^]]*\]' | sort -u | wc -l; }
n=$(threads_in tid.pb.gz)
(( n == 1 )) || { info "FAILED: -t $TID sampled $n threads, want 1"; errs=$((errs + 1)); }
grep -qE 'from 1 thread\b' perf_t_tid.err || { info "FAILED: -t summary does not say 1 thread"; errs=$((errs + 1)); }
# The summary counts threads with samples (as --load does): the workers at least.
grep -qE 'from [2-5] threads' perf_p_tid.err ||
	{ info "FAILED: -p TID did not sample the whole process"; show perf_p_tid.err 3; errs=$((errs + 1)); }
info "ok: -t sampled $n thread; -p TID sampled the process"
# -o picks the format from the extension.
gzip -t rec.pb.gz 2>/dev/null && pprof -top rec.pb.gz >/dev/null 2>&1 ||
	{ info "FAILED: record -o rec.pb.gz is not a pprof profile"; errs=$((errs + 1)); }
grep -qE ' [0-9]+$' out.folded 2>/dev/null ||
	{ info "FAILED: -o out.folded is not folded stacks"; errs=$((errs + 1)); }
grep -qE 'mt_work [0-9]+$' launch.folded 2>/dev/null ||
	{ info "FAILED: record -o launch.folded has no mt_work stacks"; errs=$((errs + 1)); }

# Every hint for a written file works when pasted: run it (flamegraph.pl
# stubbed when absent: it must read the folded file and write the svg).
mkdir -p bin
command -v flamegraph.pl >/dev/null ||
	printf '#!/bin/sh\n[ -s "$1" ] && echo "<svg/>"\n' >bin/flamegraph.pl
chmod +x bin/flamegraph.pl 2>/dev/null
for f in perf_o_folded record_pprof; do
	hint=$(grep -oE '\((folded stacks|view): [^)]*\)' "$f.err" | sed -E 's/^\((folded stacks|view): //; s/\)$//')
	[[ -n $hint ]] || { info "FAILED: $f printed no hint"; errs=$((errs + 1)); continue; }
	before=$(md5sum out.folded rec.pb.gz)
	if ! PATH=$PWD/bin:$PATH HOME=${HOME:-/tmp} GOCACHE=${GOCACHE:-/tmp/gocache} \
		bash -c "$hint" >hint.out 2>hint.err; then
		show hint.err 3
		info "FAILED: hint \"$hint\" fails when pasted"; errs=$((errs + 1))
	elif [[ $(md5sum out.folded rec.pb.gz) != "$before" ]]; then
		info "FAILED: hint \"$hint\" changed its own input"; errs=$((errs + 1))
	else
		info "ok: pasted \"$hint\""
	fi
done
[[ -s out.svg ]] || { info "FAILED: the flame graph hint wrote no out.svg"; errs=$((errs + 1)); }
# a file name that needs quoting
run_pmutop quoted -p "$PID" -o "it's -x.folded" -d "$DUR" "${EV[@]}"
hint=$(grep -oE '\(folded stacks: [^)]*\)$' quoted.err | sed -E 's/^\(folded stacks: //; s/\)$//')
if PATH=$PWD/bin:$PATH bash -c "$hint" >/dev/null 2>&1 && [[ -s "it's -x.svg" && -s "it's -x.folded" ]]; then
	info "ok: pasted \"$hint\""
else
	info "FAILED: hint \"$hint\" for a name with a quote and a dash"; errs=$((errs + 1))
fi

# :u keeps user frames only, :k kernel frames only (kernel addresses are the
# upper half). A launched dd spends time on both sides of read/write.
addrs() { pprof -raw "$1" 2>/dev/null | sed -n '/^Locations/,/^Mappings/p' | grep -oE '^ +[0-9]+: 0x[0-9a-f]+' | awk '{ print $2 }'; }
for mod in u k; do
	run_pmutop "mod_$mod" -e "task-clock:$mod" -o "mod_$mod.pb.gz" -d "$DUR" -- \
		dd if=/dev/zero of=/dev/null bs=1 count=100000000
	if (( RC != 0 )); then
		show "mod_$mod.err" 3; info "FAILED: -e task-clock:$mod exited $RC"; errs=$((errs + 1)); continue
	fi
	total=$(addrs "mod_$mod.pb.gz" | wc -l)
	kern=$(addrs "mod_$mod.pb.gz" | grep -cE '^0xffff')
	if (( total == 0 )); then
		info "FAILED: -e task-clock:$mod: no locations"; errs=$((errs + 1))
	elif [[ $mod == u ]] && (( kern != 0 )); then
		info "FAILED: :u profile has $kern kernel addresses of $total"; errs=$((errs + 1))
	elif [[ $mod == k ]] && (( kern != total )); then
		info "FAILED: :k profile has $((total - kern)) user addresses of $total"; errs=$((errs + 1))
	else
		info "ok: task-clock:$mod: $kern of $total locations in the kernel"
	fi
done

# As an unprivileged user: :u on its own process works; :k (with
# kernel.perf_event_paranoid >= 2) and root's process are refused with the knob.
if (( EUID == 0 )) && runuser -u nobody -- "$PMUTOP" -V >/dev/null 2>&1; then
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
	nb() { runuser -u nobody -- timeout -k 5 30 "$PMUTOP" "$@"; }
	if (( paranoid <= 2 )); then
		out=$(cd / && nb -e task-clock:u -d "$DUR" --no-tui -- dd if=/dev/zero of=/dev/null bs=1 count=100000000 2>&1)
		rc=$?
		if (( rc == 0 )) && grep -qE '[1-9][0-9]* samples of task-clock:u' <<<"$out"; then
			info "ok: nobody: task-clock:u sampled"
		else
			info "FAILED: nobody: task-clock:u (exit $rc): $(head -2 <<<"$out")"; errs=$((errs + 1))
		fi
	fi
	if (( paranoid >= 2 )); then
		out=$(cd / && nb -e task-clock:k -d "$DUR" --no-tui -- true 2>&1)
		rc=$?
		if (( rc != 0 )) && grep -q 'perf_event_paranoid' <<<"$out"; then
			info "ok: nobody: task-clock:k refused: $(head -1 <<<"$out" | cut -c1-100)"
		else
			info "FAILED: nobody: task-clock:k (exit $rc): $(head -2 <<<"$out")"; errs=$((errs + 1))
		fi
	fi
	out=$(cd / && nb -e task-clock -p "$PID" -d "$DUR" --no-tui 2>&1)
	rc=$?
	if (( rc == 1 )) && grep -qiE 'permission denied.*uid' <<<"$out"; then
		info "ok: nobody: root's PID refused: $(head -1 <<<"$out" | cut -c1-100)"
	else
		info "FAILED: nobody -p root's PID (exit $rc): $(head -2 <<<"$out")"; errs=$((errs + 1))
	fi
else
	info "skip: unprivileged checks (not root, or nobody cannot run $PMUTOP)"
fi

(( errs == 0 )) || fail "$errs habit(s) answered wrongly"
pass "every habit answered as the table says"
