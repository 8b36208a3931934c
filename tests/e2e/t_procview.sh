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
#     COMM-PID;
#  4. --http -p PARENT --subprocesses: ?pid=WORKER serves that worker's
#     samples only (pid labels), without it both workers; a pid outside
#     the tree and a malformed one get 400 with the reason;
#  5. --stacks -p PARENT shows the parent and both workers (worker_spin on
#     a worker's stack), --json nests them under "descendants", and
#     --no-children shows the parent only.
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

# 4. HTTP ?pid=: one worker of a prefork tree served by --http -p PARENT.
info "== --http: ?pid="
start_bg "$W/fanout" prefork 2 60 >pre.pids
parent=$BG_PID
for _ in $(seq 100); do (( $(wc -l <pre.pids) >= 3 )) && break; sleep 0.05; done
w1=$(sed -n 2p pre.pids)
w2=$(sed -n 3p pre.pids)
info "prefork parent $parent, workers $w1 $w2"
http_start 127.0.0.1:0 -e task-clock -p "$parent" --subprocesses
url="http://127.0.0.1:$PORT/debug/pprof/profile"
code=$(curl -s -o w1.pb.gz -w '%{http_code}' "$url?seconds=1&pid=$w1")
(( code == 200 )) || { show w1.pb.gz; problem "?pid=$w1: HTTP $code"; }
pids=$(tag_values w1.pb.gz pid | cut -f1 | tr '\n' ' ')
info "?pid=$w1: pid labels in the profile: ${pids:-none}"
[[ $pids == "$w1 " ]] || problem "?pid=$w1: the profile holds pids '${pids}', want only $w1"
s=$(cum_share w1.pb.gz worker_spin)
info "?pid=$w1: worker_spin ${s}%"
awk -v s="$s" 'BEGIN { exit !(s >= 80) }' || problem "?pid=$w1: worker_spin only ${s}%"
code=$(curl -s -o all.pb.gz -w '%{http_code}' "$url?seconds=1")
n=$(tag_values all.pb.gz pid | grep -cE "^($w1|$w2)"$'\t')
(( code == 200 && n == 2 )) || problem "without ?pid: HTTP $code, $n of the two workers in the profile"
code=$(curl -s -o bad.txt -w '%{http_code}' "$url?seconds=1&pid=1")
info "?pid=1: HTTP $code: $(head -c 120 bad.txt)"
(( code == 400 )) && grep -q "not pid $parent or one of its descendants" bad.txt ||
	problem "?pid=1 (outside the tree): want 400 naming the tree, got $code"
code=$(curl -s -o bad2.txt -w '%{http_code}' "$url?seconds=1&pid=12x")
(( code == 400 )) && grep -q 'invalid pid "12x"' bad2.txt || problem "?pid=12x: want 400, got $code"
kill "$SRV" 2>/dev/null

# 5. --stacks over the tree: the parent waits, both workers spin.
info "== --stacks over the process tree"
run_pmutop tree_st --stacks -p "$parent"
show tree_st.err 3
(( RC == 0 )) || problem "--stacks -p $parent: exit status $RC"
for p in "$parent" "$w1" "$w2"; do
	grep -q "^Process $p: " tree_st.out || problem "--stacks: no block for process $p"
done
n=$(awk -v w="$w1" '/^Process / { on = $2 == w ":" } on && /worker_spin/' tree_st.out | wc -l)
(( n >= 1 )) || { show tree_st.out 40; problem "--stacks: worker $w1's stack lacks worker_spin"; }
run_pmutop tree_js --stacks --json -p "$parent"
got=$(python3 -c 'import json,sys; d = json.load(open(sys.argv[1]))
print(d["pid"], " ".join(str(x["pid"]) for x in d["descendants"]))' tree_js.out 2>&1)
info "--stacks --json: root and descendants: $got"
[[ $got == "$parent $w1 $w2" || $got == "$parent $w2 $w1" ]] ||
	problem "--stacks --json: want '$parent' with descendants $w1 $w2, got '$got'"
run_pmutop tree_one --stacks --no-children -p "$parent"
n=$(grep -c '^Process ' tree_one.out)
(( n == 1 )) || problem "--stacks --no-children: $n process blocks, want 1"
kill "$parent" 2>/dev/null

if (( EUID != 0 )); then
	(( errs == 0 )) || fail "$errs problem(s)"
	skip "-a needs root (parts 1 and 2); parts 3 to 5 passed"
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
# 500 samples/s per CPU: -a's default rate loses half of them on this loaded 2-core VM.
run_pmutop all -a --period 2000000 --no-tui --duration "$(quick_or 5 3)" --table-file all.txt
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
run_in_pane "$PMUTOP -a --period 1000000 --refresh 0.5 2>view.err; echo EXIT=\$?"
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
# J's share of the ten *_expect_* functions (kernel frames are in the 100% too).
j=$(awk 'NF >= 2 && $(NF-1) ~ /_expect_/ { v = $2; sub(/%/, "", v); t += v; if ($(NF-1) == "J_expect_18_18") j = v }
	END { if (t > 0) printf "%.1f", 100 * j / t }' <<<"$s")
info "J_expect_18_18: ${j:-?}% of the ten functions' samples in shares (truth 18.2%)"
awk -v j="${j:-0}" 'BEGIN { exit !(j >= 14 && j <= 22.5) }' || problem "J_expect_18_18 at ${j:-?}%"
keys Escape
screen | grep -qE "^ +$sp shares .*\*$" || { show_screen; problem "Esc did not come back to the list on shares"; }
keys q
wait_for "EXIT=0" 30 || problem "q did not exit 0"
grep -E '^pmutop: processes: [0-9]+ followed' view.err | sed 's/^/    | /'
grep -qE '^pmutop: processes: [0-9]+ followed \([0-9]+ exited, [0-9]+ still running\)' view.err ||
	problem "the live view's summary does not count the processes"

(( errs == 0 )) || fail "$errs problem(s)"
pass "process table, --by-process, folded by process, HTTP ?pid=, --stacks over the tree; -a: shares by process match CPU time, live drill-in and back"
