#!/usr/bin/env bash
# t_fault_churn.sh - thread churn: thousands of short-lived threads a second.
#
# churn runs alone for Q1 s, then creates and joins batches of 4 threads
# (each a few tens of microseconds of churn_work) for CHURN s (10; 4 quick),
# then runs alone again for Q2 s. pmutop is attached during the first quiet
# phase. Checks: pmutop survives and exits 0 when the target ends; it holds
# no more perf_event fds in the last quiet phase than in the first; new fds
# (counted in /proc/PMUTOP/fd: a leak per churned thread would show as
# thousands) are the target's module and debug files, at most 2 each (a
# DWARF reader's file and the duplicate kept to reopen it), plus at most 2
# others; they are listed; the profile is
# readable and has churn_work samples from many different tids, labelled
# with the threads' name "churn".
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
e2e_init
need_wl churn

CHURN=$(quick_or 10 4)

# fd_list: "FD -> TARGET" for every open fd of pmutop.
fd_list() {
	local f
	for f in /proc/"$PM"/fd/*; do
		echo "${f##*/} -> $(readlink "$f" 2>/dev/null)"
	done | sort -n
}
Q1=1.5
Q2=3

start_bg "$W/churn" "$CHURN" "$Q1" "$Q2" 2>target.err
target=$BG_PID
t_start=$(now)
wait_started "$target"
pm_start churn -e task-clock --period 100000 --duration 60 --dump churn.pb.gz -p "$target"
pm_wait_sampling || { show churn.err; fail "pmutop did not attach"; }
fds_start=$(pm_fds)
perf_start=$(pm_perf_fds)
fd_list >fds.start
info "fds at the start: $fds_start ($perf_start perf_event) at $(elapsed "$t_start") s"
# Into the second quiet phase: Q1 + CHURN + 1 s after the target started.
sleep "$(awk -v a="$(elapsed "$t_start")" -v q="$Q1" -v c="$CHURN" \
	'BEGIN { t = q + c + 1 - a; print (t > 0 ? t : 0) }')"
if kill -0 "$PM" 2>/dev/null; then
	fds_end=$(pm_fds)
	perf_end=$(pm_perf_fds)
	fd_list >fds.end
	info "fds in the last quiet phase: $fds_end ($perf_end perf_event) at $(elapsed "$t_start") s"
	diff fds.start fds.end | sed -n 's/^[<>]/    fd &/p'
	# A leak per churned thread would be thousands. Files of the target's
	# modules and their debug files are per module, not per thread: a
	# module's DWARF reader holds its file and keeps a duplicate to reopen
	# it later (debuginfo.c's trim), so at most 2 per such file. Anything
	# else new: at most 2 (e.g. /proc/PID/maps cached).
	(( perf_end <= perf_start )) ||
		problem "pmutop holds $perf_end perf_event fds after the churn, $perf_start before it (leak)"
	read -r mod_files other_new < <(diff fds.start fds.end | sed -n 's/^> [0-9]* -> //p' |
		awk -v maps="/proc/$target/maps" '
		BEGIN { while ((getline l < maps) > 0) { n = split(l, f, " "); if (n >= 6) mapped[f[6]] = 1 } }
		{ if (($0 in mapped) || $0 ~ "^/usr/lib/debug/") { per[$0]++ } else other++ }
		END { bad = 0; for (p in per) { files++; if (per[p] > 2) bad++ }
		      printf "%d %d\n", (bad ? -1 : files + 0), other + 0 }')
	info "new fds: ${mod_files:-?} module/debug files (<= 2 fds each), ${other_new:-?} other"
	(( ${mod_files:--1} >= 0 )) || problem "a module file is open more than twice (leak)"
	(( ${other_new:-99} <= 2 )) ||
		problem "pmutop holds $other_new more fds that are not module files after the churn (leak)"
else
	problem "pmutop is gone before the end of the churn"
fi
pm_finish 15
show churn.err
info "target said: $(cat target.err)"
(( RC == 0 )) || problem "exit status $RC, want 0"
grep -q 'target exited' churn.err || problem "pmutop did not stop with the target"

if readable churn.pb.gz; then
	(( $(flat_of churn_work) > 0 )) || problem "no churn_work samples"
	raw_samples churn.pb.gz >samples.txt || problem "pprof -raw cannot read it"
	ntids=$(awk -F'\t' -v p="$target" '$3 != p && $3 != "-" { print $3 }' samples.txt | sort -u | wc -l)
	nnamed=$(awk -F'\t' '$2 == "churn" && $4 ~ /churn_work/' samples.txt | wc -l)
	# Exited threads past a cap are folded into one record per name (issue
	# 23): its "threads" label counts them.
	nfolded=$(awk '/thread:\[churn\]/ { named = 1; next }
		named && match($0, /threads:\[[0-9]+\]/) {
			v = substr($0, RSTART + 9, RLENGTH - 10) + 0; if (v > m) m = v }
		/^ *[0-9]+ +[0-9]+: / { named = 0 }
		END { print m + 0 }' "$T/raw.txt")
	info "churned threads with samples: $ntids distinct tids, $nfolded folded under \"churn\"; $nnamed churn_work stacks labelled thread=churn"
	(( ntids + nfolded >= 100 )) || problem "samples from only $((ntids + nfolded)) churned threads (want >= 100)"
	(( nnamed > 0 )) || problem "no churn_work sample carries the thread name \"churn\""
fi

(( ERRS == 0 )) || fail "$ERRS problem(s) under thread churn"
pass "thread churn: no crash, no fd leak, churned threads sampled"
