#!/usr/bin/env bash
# t_procview.sh - the profile by process (issue 21), on real processes:
#  1. -a as root, batch: the per-process table names two known workloads
#     (shares, and fanout spin under nice 10) with shares of samples that
#     match the CPU time the kernel charged them meanwhile (/proc/PID/stat),
#     within 10 points - cpu-clock samples are CPU time;
#  2. the same in the live view (tmux): -a opens on the process list, Enter
#     on shares' row shows shares' functions only (J_expect_18_18 near its
#     18.2 %, no fanout frame), Esc comes back to the list;
#  3. without -a: a prefork tree (two workers) gets a process table with
#     both workers' pids, --by-process prints it for one process too, and
#     --folded-processes roots every worker_spin stack at its worker's
#     COMM-PID.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl fanout shares
source "$(dirname "$0")/tmux_lib.sh"   # problem/errs, and the live view in part 2

# cpu_ticks PID: utime + stime of PID in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# proc_samples FILE PID: the samples column of PID's row in a process table.
proc_samples() {
	awk -v p="$2" '/^Processes:/ { on = 1; next } on && NF == 0 { exit }
		on && $1 == p { print $4; exit }' "$1"
}

# 3. Without -a (any user): a prefork tree.
info "== process table, --by-process, --folded-processes"
run_pmutop tree -e task-clock --no-tui --table-file tree.txt -- "$W/fanout" prefork 2 1.5
show tree.err 4
(( RC == 0 )) || fail "prefork run: exit status $RC"
mapfile -t workers < <(sed -n '/^ready$/,$p' tree.out | grep -E '^[0-9]+$')
info "workers: ${workers[*]}"
(( ${#workers[@]} == 2 )) || fail "fanout prefork did not print two worker pids"
sed -n '/^Processes:/,/^$/p' tree.txt | sed 's/^/    | /'
for p in "${workers[@]}"; do
	n=$(proc_samples tree.txt "$p")
	(( ${n:-0} > 50 )) || problem "worker $p: ${n:-no} samples in the process table (want > 50)"
done
run_pmutop one -q -e task-clock --no-tui --by-process --table-file one.txt -- "$W/shares" 0.5
grep -qE '^Processes: 1 with samples' one.txt || problem "--by-process: no process table for one process"
grep -qE "^ +[0-9]+ shares +1 " one.txt || problem "--by-process: no row for shares with 1 thread"
run_pmutop fold -q -e task-clock --format folded --folded-processes --dump tree.folded \
	-- "$W/fanout" prefork 2 1
mapfile -t workers < <(sed -n '/^ready$/,$p' fold.out | grep -E '^[0-9]+$')
for p in "${workers[@]}"; do
	n=$(grep -c "^fanout-$p;.*worker_spin" tree.folded)
	(( n > 0 )) || problem "--folded-processes: no worker_spin stack rooted at fanout-$p"
done
bad=$(grep worker_spin tree.folded | grep -vcE "^fanout-($(IFS='|'; echo "${workers[*]}"));")
(( bad == 0 )) || problem "--folded-processes: $bad worker_spin stacks under another root"

if (( EUID != 0 )); then
	(( errs == 0 )) || fail "$errs problem(s)"
	skip "-a needs root (parts 1 and 2); part 3 passed"
fi

# 1. -a as root, batch: shares of two known processes against their CPU time.
info "== -a: per-process shares against /proc CPU time"
start_bg "$W/shares" 60
sp=$BG_PID
start_bg nice -n 10 "$W/fanout" spin 60
fp=$BG_PID
wait_started "$sp"
wait_started "$fp"
s0=$(cpu_ticks "$sp"); f0=$(cpu_ticks "$fp")
run_pmutop all -a --no-tui --duration "$(quick_or 3 2)" --table-file all.txt
s1=$(cpu_ticks "$sp"); f1=$(cpu_ticks "$fp")
show all.err 4
(( RC == 0 )) || problem "-a: exit status $RC"
sed -n '/^Processes:/,/^$/p' all.txt | head -8 | sed 's/^/    | /'
ns=$(proc_samples all.txt "$sp"); nf=$(proc_samples all.txt "$fp")
grep -qE "^ +$sp shares " all.txt || problem "-a: no row 'pid $sp shares'"
grep -qE "^ +$fp fanout " all.txt || problem "-a: no row 'pid $fp fanout'"
verdict=$(awk -v ns="${ns:-0}" -v nf="${nf:-0}" -v s=$((s1 - s0)) -v f=$((f1 - f0)) 'BEGIN {
	if (ns + nf == 0 || s + f == 0) { print "none"; exit }
	got = 100 * ns / (ns + nf); want = 100 * s / (s + f)
	d = got - want; if (d < 0) d = -d
	printf "%s shares: %.1f%% of the two by samples, %.1f%% by CPU time (%d/%d ticks)\n",
		d <= 10 ? "ok" : "off", got, want, s, s + f }')
info "$verdict"
[[ $verdict == ok* ]] || problem "-a: per-process shares do not match CPU time: $verdict"

# 2. The live view: the process list, drill into shares, back.
info "== -a live view: processes, Enter, Esc"
tmux_start 100 30
run_in_pane "$PMUTOP -a --refresh 0.5 2>view.err; echo EXIT=\$?"
wait_for "^ +$sp shares " 15 || { show_screen; fail "the process list does not show shares ($sp)"; }
screen | sed -n 6p | grep -qE 'pid +command +thr +samples' ||
	problem "-a did not open on the process list"
# Enough of shares' samples for its function shares (~800: a few seconds).
for (( i = 0; i < 300; i++ )); do
	n=$(screen | awk -v p="$sp" '$1 == p && $2 == "shares" { print $4; exit }')
	(( ${n:-0} >= 800 )) && break
	sleep 0.1
done
info "shares: ${n:-?} samples in the list"
keys Space   # pause: the rows stay where they are while we count them
line=$(screen | awk -v p="$sp" '/^ +pid +command/ { on = 1; n = 0; next }
	on { if ($1 == p) { print n; exit } n++ }')
info "shares is row $line of the list (0: all)"
for (( i = 0; i < ${line:-0}; i++ )); do tm send-keys -t tui Down; done
keys Enter
wait_for "J_expect_18_18" 5 || { show_screen; problem "Enter on shares did not show its functions"; }
s=$(screen)
sed -n 1,12p <<<"$s" | sed 's/^/    | /'
grep -qE "pid $sp shares" <<<"$(sed -n 3p <<<"$s")" || problem "the header does not name pid $sp shares"
grep -q "solo_spin" <<<"$s" && problem "fanout's solo_spin is in shares' table"
j=$(awk '$NF == "(shares)" && $(NF-1) == "J_expect_18_18" { sub(/%/, "", $2); print $2 }' <<<"$s")
info "J_expect_18_18: ${j:-?}% of shares' samples (truth 18.2%)"
awk -v j="${j:-0}" 'BEGIN { exit !(j >= 14 && j <= 22.5) }' || problem "J_expect_18_18 at ${j:-?}%"
keys Escape
screen | grep -qE "^ +$sp shares .*\*$" || { show_screen; problem "Esc did not come back to the list on shares"; }
keys q
wait_for "EXIT=0" 30 || problem "q did not exit 0"

(( errs == 0 )) || fail "$errs problem(s)"
pass "process table, --by-process, folded by process; -a: shares by process match CPU time, live drill-in and back"
