#!/usr/bin/env bash
# t_kernel.sh - kernel frames by default where the kernel allows them.
#
# The syscalls workload spends about half its CPU time in read(2) on
# /dev/zero (read_zero clears the buffer) and half summing it in user_sum().
#  1. As root, pmutop's default (no option) profile has kernel frames from
#     kallsyms in a [kernel.kallsyms] mapping, stacked on the user stack
#     (read_zero's samples reach kernel_read and main), and its kernel share
#     (samples whose leaf is kernel code) is within 5 points of perf's
#     default mode on the same process over the same run: both attach (-p)
#     side by side while it waits at its start gate (workload.h) and stop
#     when it exits, on a workload whose read and sum lengths vary (a
#     strictly periodic loop let timer samples lock onto its phases: perf
#     and pmutop disagreed by up to 9 points on the same seconds). The
#     program's kernel share differs from run to run (42-50 % here), so
#     separate runs of the two, or windows of different seconds, failed
#     the 5 points now and then (49.7 % against 42.1 % in a CI run).
#     Without perf, pmutop launches it and must come within 10 of the
#     program's own stime/(utime+stime), which the kernel accounts by ticks.
#  2. -e task-clock:u and --user-only opt out: no kernel frame, no note.
#  3. As nobody (perf_event_paranoid >= 2): user mode only, and the summary,
#     the table and the pprof comments say so in one line naming the knob;
#     --kernel fails with the same reason and names neither a tid nor an
#     event the machine lacks.
#  4. As nobody with CAP_PERFMON but not CAP_SYSLOG, /proc/kallsyms reads as
#     zeros: kernel time is one "[kernel]" row and the note says why.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl syscalls
[[ $(id -u) == 0 ]] || skip "needs root (kernel frames; then runs the user-only checks as nobody)"

DUR=$(quick_or 3 2)
TOL=5

# Kernel share of a profile: samples whose leaf location is in a mapping
# named [kernel.kallsyms] or [module], from `go tool pprof -raw`.
kshare() {
	pprof -raw "$1" 2>/dev/null | awk '
	/^Samples:/ { sec = "s"; next }
	/^Locations/ { sec = "l"; next }
	/^Mappings/ { sec = "m"; next }
	sec == "s" && $2 ~ /^[0-9]+:$/ { v = $2; sub(":", "", v); leaf[++ns] = $3; val[ns] = v }
	sec == "l" && $1 ~ /^[0-9]+:$/ { id = $1; sub(":", "", id); m = $3; sub("M=", "", m); lmap[id] = m }
	sec == "m" && $1 ~ /^[0-9]+:$/ { id = $1; sub(":", "", id); kern[id] = ($3 ~ /^\[(kernel|[a-z0-9_]+\])/ && $3 != "[vdso]") }
	END {
		for (i = 1; i <= ns; i++) { t += val[i]; if (kern[lmap[leaf[i]]]) k += val[i] }
		if (t == 0) { print "nan"; exit 1 }
		printf "%.1f\n", 100 * k / t
	}'
}

# 1. root, defaults.
HAVE_PERF=0
command -v perf >/dev/null 2>&1 && HAVE_PERF=1
if (( HAVE_PERF )); then
	# perf and pmutop on the same process over the same run: both attach
	# while it waits at its start gate and stop when it exits.
	rm -f gate; mkfifo gate
	WL_GATE=$T/gate start_bg "$W/syscalls" "$DUR" >ks.out
	SPID=$BG_PID
	wait_started "$SPID"
	info "\$ perf record -p $SPID   (beside pmutop, until the target exits)"
	timeout -k 5 60 perf record -q -o perf.data -p "$SPID" >perf.out 2>perf.err &
	PERFP=$!
	info "\$ pmutop --dump k.pb.gz -p $SPID   (until the target exits)"
	timeout -k 5 60 "$PMUTOP" --dump k.pb.gz -p "$SPID" >k.out 2>k.err &
	PMP=$!
	open_gate gate "$PERFP" "$PMP" || { kill "$SPID"; fail "perf and pmutop did not both attach to $SPID within 30 s"; }
	wait "$PMP"
	RC=$?
	wait "$PERFP" || { show perf.err; fail "perf record -p $SPID failed"; }
	wait "$SPID" # its rusage line
else
	run_pmutop k --dump k.pb.gz -- "$W/syscalls" "$DUR"
	cp k.out ks.out
fi
show k.err
(( RC == 0 )) || fail "pmutop exited with status $RC"
grep -q "user mode only\|kernel frames unnamed" k.err && fail "a kernel note as root"
pprof -raw k.pb.gz >k.raw 2>/dev/null || fail "go tool pprof cannot read the profile"
grep -qE '^ *[0-9]+: 0xffff[0-9a-f]+/0x[0-9a-f]+/0x0 \[kernel\.kallsyms\]' k.raw ||
	fail "no [kernel.kallsyms] mapping in the profile"
# The mapping carries the running kernel's build-id (/sys/kernel/notes).
NOTES=$(od -A n -t x1 -v /sys/kernel/notes 2>/dev/null | tr -d ' \n')
KBID=""
[[ $NOTES == *03000000474e5500* ]] && { KBID=${NOTES#*03000000474e5500}; KBID=${KBID:0:40}; }
if [[ -n $KBID ]]; then
	grep -qE "\[kernel\.kallsyms\] $KBID" k.raw || fail "the [kernel.kallsyms] mapping lacks build-id $KBID"
fi
pprof -top k.pb.gz >k.top 2>/dev/null
show k.top 18
grep -qE ' (read_zero|clear_user|__clear_user|rep_stos_alternative)$' k.top ||
	fail "no kernel function of read(/dev/zero) in the top rows"
# Stacked: a sample in read_zero also holds the user frames under it.
pprof -traces k.pb.gz 2>/dev/null | awk '
	/^-----/ { if (rz && kr && mn) ok = 1; rz = kr = mn = 0; next }
	$NF == "read_zero" { rz = 1 } $NF == "kernel_read" { kr = 1 } $NF == "main" { mn = 1 }
	END { if (rz && kr && mn) ok = 1; exit !ok }' ||
	fail "no stack runs from read_zero down through kernel_read to main"
PM=$(kshare k.pb.gz) || fail "cannot compute the kernel share"
read -r UT ST <ks.out
RU=$(awk -v u="$UT" -v s="$ST" 'BEGIN { printf "%.1f", 100 * s / (u + s) }')
info "pmutop kernel share ${PM}% (rusage stime share ${RU}%)"

if (( HAVE_PERF )); then
	# perf's default mode: its default event falls back to cpu-clock without a PMU.
	PF=$(perf report -i perf.data --sort dso --stdio 2>/dev/null |
		awk '$2 ~ /^\[/ && $2 != "[vdso]" { sub("%", "", $1); k += $1 } END { printf "%.1f", k }')
	info "perf kernel share ${PF}%"
	awk -v a="$PM" -v b="$PF" -v t="$TOL" 'BEGIN { d = a - b; if (d < 0) d = -d; exit d > t }' ||
		fail "kernel share ${PM}% is more than $TOL points from perf's ${PF}%"
fi
# The program's own stime share is tick-based accounting (utime/stime split
# by which mode the timer tick lands in): on a loaded VM it swung 34-58 %
# over three runs where perf said 48-49.5 %. So it is the reference only
# where perf is missing, with a wider bound; beside perf it is shown above.
if (( ! HAVE_PERF )); then
	awk -v a="$PM" -v b="$RU" -v t=$((2 * TOL)) 'BEGIN { d = a - b; if (d < 0) d = -d; exit d > t }' ||
		fail "kernel share ${PM}% is more than $((2 * TOL)) points from the program's own ${RU}%"
fi

# 2. user mode only, asked for.
run_pmutop u -e task-clock:u --dump u.pb.gz -- "$W/syscalls" 1
(( RC == 0 )) || { show u.err; fail "pmutop -e task-clock:u exited with status $RC"; }
grep -q "user mode only\|kernel frames unnamed" u.err && fail "a kernel note when user mode was asked for"
[[ $(kshare u.pb.gz) == 0.0 ]] || fail "kernel frames with -e task-clock:u"
run_pmutop uo --user-only --dump uo.pb.gz -- "$W/syscalls" 1
(( RC == 0 )) || { show uo.err; fail "pmutop --user-only exited with status $RC"; }
grep -q "user mode only\|kernel frames unnamed" uo.err && fail "a kernel note with --user-only"
[[ $(kshare uo.pb.gz) == 0.0 ]] || fail "kernel frames with --user-only"

# 3. and 4. as nobody: copies they can run.
chmod 755 "$T"
cp "$PMUTOP" "$T/pmutop" && cp "$W/syscalls" "$T/syscalls" || fail "cannot copy the binaries"
mkdir -m 1777 "$T/nb" || fail "mkdir"
as_nobody() {
	timeout -k 5 60 setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}
PARANOID=$(cat /proc/sys/kernel/perf_event_paranoid)
if (( PARANOID >= 2 )); then
	(cd "$T" && as_nobody --inh-caps=-all ./pmutop --no-tui --table-file nb/nb.table -- ./syscalls 1 >/dev/null 2>nb.err)
	RC=$?
	show nb.err
	(( RC == 0 )) || fail "pmutop as nobody exited with status $RC"
	NOTE="user mode only: kernel samples not allowed (kernel.perf_event_paranoid=$PARANOID"
	grep -qF "pmutop: $NOTE" nb.err || fail "no user-only note in the summary"
	grep -qF "Note: $NOTE" nb/nb.table || fail "no user-only note in the table"
	(cd "$T" && as_nobody --inh-caps=-all ./pmutop -q --dump nb/nb.pb.gz -- ./syscalls 1 >/dev/null 2>&1)
	pprof -raw nb/nb.pb.gz 2>/dev/null | grep -qF "Comment: $NOTE" || fail "no user-only note in the pprof comments"
	[[ $(kshare nb/nb.pb.gz) == 0.0 ]] || fail "kernel frames as nobody"

	(cd "$T" && as_nobody --inh-caps=-all ./pmutop --kernel --no-tui -- ./syscalls 1 >nk.out 2>nk.err)
	RC=$?
	show nk.err
	(( RC != 0 )) || fail "--kernel as nobody succeeded"
	grep -q -- "--kernel: kernel-mode sampling is not allowed here (kernel.perf_event_paranoid=$PARANOID" nk.err ||
		fail "--kernel as nobody: no reason naming the knob"
	grep -qE "tid|cycles counter" nk.err && fail "--kernel as nobody names a tid or a counter"
else
	info "perf_event_paranoid=$PARANOID lets nobody sample the kernel: user-only note not checked"
fi

# 4. kernel mode allowed (CAP_PERFMON), kernel addresses hidden (no CAP_SYSLOG).
if (( PARANOID >= 2 )); then
	(cd "$T" && as_nobody --inh-caps=+perfmon --ambient-caps=+perfmon ./pmutop --no-tui \
		--table-file nb/kp.table -- ./syscalls 1 >/dev/null 2>kp.err)
	cp nb/kp.table kp.out 2>/dev/null
	RC=$?
	show kp.out 8
	(( RC == 0 )) || { show kp.err; fail "pmutop with CAP_PERFMON exited with status $RC"; }
	grep -q "Note: kernel frames unnamed (\[kernel\]): /proc/kallsyms shows this user zero addresses" kp.out ||
		fail "no hidden-kallsyms note"
	awk '$NF == "[kernel]" { k = 1 } END { exit !k }' kp.out || fail "no [kernel] row"
	awk '$NF ~ /^(0xffff|\[kernel\.kallsyms\]\+)/ { exit 1 }' kp.out || fail "kernel rows by address"
fi
pass "kernel share ${PM}% (perf ${PF:-n/a}%, rusage ${RU}%); user-only and hidden-kallsyms notes"
