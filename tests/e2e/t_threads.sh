#!/usr/bin/env bash
# t_threads.sh - per-thread shares from the `thread` sample label.
#
# The threads workload runs ten identical, never-blocking threads named
# worker0..worker9, so each gets 10% of the CPU time. Each worker's share of
# the event total, grouped by the profile's `thread` label, must be within
# 10% +- 1.5 pp; every sample must carry `thread` and `tid` labels.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl threads

DUR=$(quick_or 5 3)
TOL=1.5
# A moderate rate: ten always-running threads keep every CPU's ring buffer
# busy, and samples the kernel drops when a buffer is full come in bursts
# that skew per-thread shares (4 kHz per CPU still gives > 10^4 samples).
pick_event
if [[ $EV == cycles ]]; then PERIOD=1000000; else PERIOD=250000; fi
info "event $EV, period $PERIOD, ${DUR} s"

run_pmutop threads -e "$EV" --period "$PERIOD" --duration "$DUR" --dump threads.pb.gz \
	-- "$W/threads" $((DUR + 5))
show threads.err
(( RC == 0 )) || fail "pmutop exited with status $RC"
[[ -s threads.pb.gz ]] || fail "no profile written"

raw_samples threads.pb.gz >samples.txt || fail "go tool pprof -raw cannot read the profile"
pprof -tags threads.pb.gz 2>/dev/null | sed -n '1,14p' | sed 's/^/    | /'

# Columns: values (samples event) <TAB> thread <TAB> tid <TAB> stack.
awk -F'\t' -v tol="$TOL" '
{
	split($1, v, " "); w = (2 in v) ? v[2] : v[1]
	total += w; by[$2] += w
	if ($2 == "-") nothr += w
	if ($3 == "-") notid += w
	if ($2 ~ /^worker[0-9]$/ && $3 != "-") tids[$2 SUBSEP $3] = 1
}
END {
	if (total <= 0) { print "  no samples"; exit 1 }
	bad = 0
	printf "  %-10s %9s %9s %7s\n", "thread", "expected", "measured", "error"
	for (k = 0; k < 10; k++) {
		t = "worker" k; got = 100 * by[t] / total; err = got - 10
		abserr = err < 0 ? -err : err
		if (abserr > maxerr) maxerr = abserr
		if (abserr > tol) bad = 1
		printf "  %-10s %8.2f%% %8.2f%% %+6.2f%s\n", t, 10, got, err,
			(abserr > tol ? "  <-- over " tol " pp" : "")
	}
	for (t in by)
		if (t !~ /^worker[0-9]$/)
			printf "  (other: %s %.2f%%)\n", t, 100 * by[t] / total
	printf "  max error %.2f pp, tolerance %.1f pp\n", maxerr, tol
	if (nothr > 0) { printf "  %.2f%% of the samples have no thread label\n", 100 * nothr / total; bad = 1 }
	if (notid > 0) { printf "  %.2f%% of the samples have no tid label\n", 100 * notid / total; bad = 1 }
	for (k in tids) { split(k, p, SUBSEP); ntid[p[1]]++ }
	for (t in ntid) if (ntid[t] != 1) { printf "  %s has %d different tids\n", t, ntid[t]; bad = 1 }
	exit bad
}' samples.txt || fail "per-thread shares or labels wrong ($EV)"
pass "ten worker threads each within $TOL pp of 10% ($EV)"
