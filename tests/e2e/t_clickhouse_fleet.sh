#!/usr/bin/env bash
# t_clickhouse_fleet.sh - nothing lost, nothing twice: two agents push into
# a real clickhouse-server that is stopped and started again mid-run, and a
# reader merges the fleet back (issue 35 items 2 and 3).
#
#   - agents alpha and beta (--dump-every 1 --dump DIR/ --push --spool
#     --push-queue 1), the server stopped ~2 s in and started ~3 s later:
#     windows wait, are spooled, then sent in order; each agent exits 0,
#     its summary counts them (spooled > 0, dropped 0, nothing left in the
#     spool) and its windows in ClickHouse equal its local window files
#     (count and samples);
#   - --load clickhouse://...?host=alpha gives alpha's samples, the fleet's
#     gives both, written to pprof and read by go tool pprof;
#   - --by host: one row per agent with its samples and hottest function;
#     --by service: one row; --by on a file refused;
#   - a window sent twice (a spool sent again by a second run) counts once;
#   - a spool directory not ours is refused; a full spool (a 24 KiB tmpfs):
#     windows dropped and counted, exit 1, the local profile still written,
#     sampling never stalled (one local window per second, none lost).
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/clickhouse_lib.sh"
e2e_init
need_wl shares
ch_need

ERRS=0
DUR=9
ch_start
URL=$CH_URL/fleet

# sum_local DIR: samples in the window files of DIR.
sum_local() {
	local f n s=0
	for f in "$1"/*.pb.gz; do
		n=$(pprof -comments "$f" 2>/dev/null | sed -n 's/^pmutop: samples=\([0-9]*\) .*/\1/p')
		s=$((s + ${n:-0}))
	done
	echo "$s"
}

for h in alpha beta; do
	timeout -k 5 90 "$PMUTOP" -e task-clock --period 1000000 --dump-every 1 --dump "$h/" \
		--push "$URL" --label host=$h --label service=demo --spool "sp-$h" --push-queue 1 \
		-- "$W/shares" "$DUR" >"$h.out" 2>"$h.err" &
	eval "PID_$h=\$!"
	E2E_BG_PIDS+=("$!")
done
sleep 2.2
info "stopping the server"
ch_stop
sleep 3
info "starting it again"
ch_start
wait "$PID_alpha"; rc_a=$?
wait "$PID_beta"; rc_b=$?
total_local=0
for h in alpha beta; do
	show "$h.err" 12
	rc=rc_${h:0:1}
	(( ${!rc} == 0 )) || { info "$h exited with ${!rc}"; ERRS=$((ERRS + 1)); }
	files=("$h"/*.pb.gz)
	loc=$(sum_local "$h")
	total_local=$((total_local + loc))
	read -r nwin chs < <(ch_q "SELECT uniqExact(window_id), sum(samples) FROM
		fleet.pmutop_samples_v1 FINAL WHERE host = '$h' FORMAT TSV")
	info "$h: ${#files[@]} local windows, $loc samples; ClickHouse: $nwin windows, $chs samples"
	[[ $nwin == "${#files[@]}" && $chs == "$loc" ]] || { info "$h: ClickHouse differs"; ERRS=$((ERRS + 1)); }
	line=$(grep "windows pushed" "$h.err")
	[[ $line =~ ([0-9]+)\ spooled,\ ([0-9]+)\ dropped.*\ ([0-9]+)\ left\ in\ the\ spool ]] ||
		{ info "$h: no push summary"; ERRS=$((ERRS + 1)); continue; }
	(( BASH_REMATCH[1] > 0 && BASH_REMATCH[2] == 0 && BASH_REMATCH[3] == 0 )) ||
		{ info "$h: want windows spooled, none dropped, none left: $line"; ERRS=$((ERRS + 1)); }
	left=$(find "sp-$h" -type f | wc -l)
	(( left == 0 )) || { info "$h: $left files left in its spool"; ERRS=$((ERRS + 1)); }
	[[ $(stat -c %a "sp-$h") == 700 ]] || { info "spool mode $(stat -c %a "sp-$h")"; ERRS=$((ERRS + 1)); }
done

# The reader: one host, the fleet.
run_pmutop ra --load "$URL?host=alpha&service=demo&from=-1h&to=now" --dump ra.pb.gz
show ra.err 3
ra=$(pprof -comments ra.pb.gz 2>/dev/null | sed -n 's/^pmutop: samples=\([0-9]*\) .*/\1/p')
[[ $ra == "$(sum_local alpha)" ]] || { info "reader, host=alpha: ${ra:-?} samples, want $(sum_local alpha)"; ERRS=$((ERRS + 1)); }
run_pmutop rall --load "$URL" --dump rall.pb.gz
rall=$(pprof -comments rall.pb.gz 2>/dev/null | sed -n 's/^pmutop: samples=\([0-9]*\) .*/\1/p')
[[ $rall == "$total_local" ]] || { info "reader, fleet: ${rall:-?} samples, want $total_local"; ERRS=$((ERRS + 1)); }
share=$(cum_share rall.pb.gz J_expect_18_18)
info "reader: alpha $ra, fleet $rall samples (local $total_local); J_expect_18_18 ${share}%"
awk -v s="$share" 'BEGIN { exit !(s > 14 && s < 23) }' || { info "J's share off"; ERRS=$((ERRS + 1)); }
# The fleet's top view: one row per host, its share and hottest function.
run_pmutop by --load "$URL" --by host
show by.out 4
for h in alpha beta; do
	read -r _ share smp hot _ < <(grep "^$h " by.out)
	want=$(sum_local $h)
	[[ $smp == "$want" && $hot == J_expect_18_18 ]] ||
		{ info "--by host, $h: ${smp:-?} samples (want $want), hottest ${hot:-?}"; ERRS=$((ERRS + 1)); }
done
[[ $(grep -c . by.out) == 3 ]] || { info "--by host: want a header and 2 rows"; ERRS=$((ERRS + 1)); }
run_pmutop bysvc --load "$URL?from=-1h" --by service
grep -q "^demo  *100.00%  *$total_local  *J_expect_18_18" bysvc.out || { info "--by service"; show bysvc.out; ERRS=$((ERRS + 1)); }
run_pmutop byfile --load ra.pb.gz --by host
(( RC == 2 )) && grep -q "by makes the fleet's per-label table" byfile.err || { info "--by on a file: exit $RC"; ERRS=$((ERRS + 1)); }
run_pmutop rnone --load "$URL?host=nosuch"
(( RC == 1 )) && grep -q "nothing in .* matches host=nosuch" rnone.err || { info "no match: exit $RC"; ERRS=$((ERRS + 1)); }
run_pmutop rbad --load "$URL?from=yesterday"
(( RC == 1 )) && grep -q "bad from=yesterday" rbad.err || { info "bad time: exit $RC"; ERRS=$((ERRS + 1)); }

# A window sent twice counts once: a spool left by a run while the server
# was down, copied, and sent by two later runs.
ch_stop
run_pmutop down -e task-clock --period 1000000 --dump-every 1 --dump down/ --push "$URL" \
	--label host=gamma --spool sp-g --push-queue 1 -- "$W/shares" 2
show down.err 8
nspool=$(find sp-g -name '*.win' | wc -l)
(( nspool >= 2 )) || { info "want the windows in the spool, found $nspool"; ERRS=$((ERRS + 1)); }
cp -a sp-g sp-g2
ch_start
run_pmutop send1 -e task-clock --push "$URL" --label host=delta --spool sp-g -- true
run_pmutop send2 -e task-clock --push "$URL" --label host=delta --spool sp-g2 -- true
show send2.err 4
grep -q "$nspool windows left in the spool .* sent first" send2.err || { info "leftovers not announced"; ERRS=$((ERRS + 1)); }
read -r gw gs < <(ch_q "SELECT uniqExact(window_id), sum(samples) FROM fleet.pmutop_samples_v1 FINAL
	WHERE host = 'gamma' FORMAT TSV")
info "gamma: local $(sum_local down) samples in $(find down -name '*.pb.gz' | wc -l) windows; ClickHouse $gs in $gw"
[[ $gs == "$(sum_local down)" ]] || { info "a window sent twice counted twice"; ERRS=$((ERRS + 1)); }
for r in send1 send2; do
	grep -q "[1-9][0-9]* windows pushed .*; $nspool from the spool)" $r.err ||
		{ info "$r did not send the $nspool spooled windows"; show $r.err 6; ERRS=$((ERRS + 1)); }
done

# A spool directory that is not ours, or that others can write: refused.
mkdir -m 0777 open; chmod 0777 open
run_pmutop open -e task-clock --push "$URL" --spool open -- true
(( RC == 2 )) && grep -q "refusing the spool directory" open.err || { info "mode 0777 spool: exit $RC"; ERRS=$((ERRS + 1)); }
mkdir -m 0700 theirs; chown nobody theirs 2>/dev/null
if [[ $(stat -c %u theirs) != "$(id -u)" ]]; then
	run_pmutop theirs -e task-clock --push "$URL" --spool theirs -- true
	(( RC == 2 )) && grep -q "refusing the spool directory" theirs.err || { info "spool of another user: exit $RC"; ERRS=$((ERRS + 1)); }
fi

# A full spool: dropped, counted; the local profile written, sampling on.
ch_stop
mkdir -m 0700 full
if mount -t tmpfs -o size=24k,mode=0700 tmpfs full 2>/dev/null; then
	run_pmutop full -e task-clock --period 1000000 --dump-every 1 --dump fwin/ --push "$URL" \
		--spool full --push-queue 1 -- "$W/shares" 4
	umount full
	show full.err 12
	nf=$(find fwin -name '*.pb.gz' | wc -l)
	(( RC == 1 )) && grep -q "[1-9][0-9]* dropped" full.err && grep -q "cannot write .*spool" full.err ||
		{ info "full spool: exit $RC, want 1, drops counted and the spool's error"; ERRS=$((ERRS + 1)); }
	(( nf >= 4 )) && grep -q "lost 0," full.err ||
		{ info "full spool: $nf local windows for 4 s, or samples lost"; ERRS=$((ERRS + 1)); }
else
	info "(no tmpfs mount here: the full-spool case is not run)"
fi

(( ERRS == 0 )) || fail "$ERRS checks failed"
pass "fleet: alpha+beta $total_local samples through a server restart (spooled, none dropped), reader equal; a re-sent spool counted once; full and foreign spools handled"
