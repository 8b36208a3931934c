#!/usr/bin/env bash
# t_dump_every.sh - continuous profiling: --dump-every, --keep (issue 23).
#
# pmutop -p PID --dump-every 1 --dump DIR/ on a shares process for ~6 s
# (the --keep run spells its durations with units: 4s, 1000ms - issue 31),
# and beside it a second pmutop writing one profile of the same span:
#   - one profile per window, named TARGET-PID-YYYYmmddTHHMMSS.mmmZ.pb.gz,
#     each read by go tool pprof, with the window's duration (about 1 s);
#   - no sample lost or counted twice between windows: the windows'
#     samples add up exactly to the run's (the summary and the last file's
#     "since start" comment), and to the whole-run profile beside it within
#     sampling noise (two sets of counters; lost samples allowed for);
#   - --keep 2 on a second run leaves exactly the 2 newest files, and never
#     touches files it did not write.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares

DUR=$(quick_or 6 4)
start_bg "$W/shares" 120
target=$BG_PID
wait_started "$target"

"$PMUTOP" -e task-clock --period 1000000 --duration "$DUR" --dump whole.pb.gz \
	-p "$target" >whole.out 2>whole.err &
beside=$!
E2E_BG_PIDS+=("$beside")
run_pmutop win -e task-clock --period 1000000 --duration "$DUR" --dump-every 1 \
	--dump win/ -p "$target"
show win.err
wait "$beside"
brc=$?
(( RC == 0 )) || fail "pmutop --dump-every exited with status $RC"
(( brc == 0 )) || { show whole.err; fail "the whole-run pmutop beside it exited with status $brc"; }

shopt -s nullglob
files=(win/shares-"$target"-2*Z.pb.gz)
(( ${#files[@]} >= DUR - 1 )) || fail "${#files[@]} window profiles for a $DUR s run (want >= $((DUR - 1)))"
info "${#files[@]} window profiles: ${files[0]##*/} ..."
ERRS=0
sum=0
prev=""
for f in "${files[@]}"; do
	[[ ${f##*/} =~ ^shares-$target-[0-9]{8}T[0-9]{6}\.[0-9]{3}Z\.pb\.gz$ ]] ||
		{ info "bad name: $f"; ERRS=$((ERRS + 1)); }
	[[ -z $prev || $f > $prev ]] || { info "names do not sort by time: $prev, $f"; ERRS=$((ERRS + 1)); }
	prev=$f
	if ! pprof -comments "$f" >c.txt 2>&1; then
		info "go tool pprof cannot read $f"; show c.txt 3; ERRS=$((ERRS + 1)); continue
	fi
	n=$(sed -n 's/^pmutop: samples=\([0-9]*\) .*/\1/p' c.txt)
	sum=$((sum + ${n:-0}))
	run=$(sed -n 's/.*run_samples=\([0-9]*\) .*/\1/p' c.txt)
	d=$(pprof -top "$f" 2>/dev/null | sed -n 's/^Duration: \([0-9.]*\)\(m\?s\),.*/\1 \2/p')
	info "${f##*/}: ${n:-?} samples, duration ${d:-?}"
done
# Every window but the last lasts about one second.
for f in "${files[@]:0:${#files[@]}-1}"; do
	d=$(pprof -top "$f" 2>/dev/null |
		sed -n 's/^Duration: \([0-9.]*\)\(m\?s\),.*/\1 \2/p' | awk '{ print $2 == "ms" ? $1 / 1000 : $1 }')
	awk -v d="${d:-0}" 'BEGIN { exit !(d >= 0.8 && d <= 2.5) }' ||
		{ info "${f##*/}: duration ${d:-none}, want ~1 s"; ERRS=$((ERRS + 1)); }
done
total=$(sed -n 's/^pmutop: \([0-9]*\) samples of .*/\1/p' win.err)
lost=$(sed -n 's/.*; lost \([0-9]*\),.*/\1/p' win.err)
info "sum over windows $sum, summary $total, last file's since-start $run (lost ${lost:-?})"
(( sum == total )) || { info "windows sum $sum != summary $total"; ERRS=$((ERRS + 1)); }
(( sum == run )) || { info "windows sum $sum != last file's run_samples $run"; ERRS=$((ERRS + 1)); }
pprof -comments whole.pb.gz >w.txt 2>&1 || fail "go tool pprof cannot read whole.pb.gz"
wn=$(sed -n 's/^pmutop: samples=\([0-9]*\) .*/\1/p' w.txt)
wl=$(sed -n 's/^pmutop: samples=[0-9]* lost=\([0-9]*\) .*/\1/p' w.txt)
info "whole-run profile beside it: ${wn:-?} samples (lost ${wl:-?})"
slack=$(( (wn + sum) / 10 + ${wl:-0} + ${lost:-0} + 20 ))
diff=$(( sum > wn ? sum - wn : wn - sum ))
(( diff <= slack )) || { info "windows $sum vs whole run $wn: off by $diff (> $slack)"; ERRS=$((ERRS + 1)); }

# --keep: a foreign file in the directory stays; 2 of ours remain, the newest.
mkdir -p keep
touch keep/shares-1-20000101T000000.000Z.pb.gz
run_pmutop keep -e task-clock --period 1000000 --duration 4s --dump-every 1000ms --keep 2 \
	--dump keep/ -p "$target"
(( RC == 0 )) || { show keep.err; fail "pmutop --keep 2 exited with status $RC"; }
ours=(keep/shares-"$target"-*.pb.gz)
[[ -e keep/shares-1-20000101T000000.000Z.pb.gz ]] || { info "--keep removed a file it did not write"; ERRS=$((ERRS + 1)); }
(( ${#ours[@]} == 2 )) || { info "--keep 2 left ${#ours[@]} files: ${ours[*]}"; ERRS=$((ERRS + 1)); }
grep -q "removed by --keep" keep.err || { show keep.err; ERRS=$((ERRS + 1)); }

(( ERRS == 0 )) || fail "$ERRS problem(s) with --dump-every"
pass "--dump-every: ${#files[@]} windows, sums exact ($sum samples), --keep keeps the newest"
