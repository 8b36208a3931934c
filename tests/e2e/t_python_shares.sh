#!/usr/bin/env bash
# t_python_shares.sh - Python functions in profiles of Debian's python3.11,
# with known shares; a native target untouched.
#
# The py_shares workload runs ten Python functions, A_expect_1_82 ...
# J_expect_18_18, function k doing k/55 of the work, and prints its own
# measure of each one's share (its thread CPU time around every call,
# "self NAME PERCENT"): on a loaded machine that measure moves a point or
# more away from k/55, so the profile is held to it. Profiled from its
# start (pmutop -- python3.11 ...), in one thread and in four, each
# function's share of the ten functions' cumulative total (they call
# nothing but the interpreter's C) must be within TOL percentage points of
# the program's own; the distance to k/55 is shown too. The summary must
# count the samples that had Python frames and say how long after the
# sample they were read.
#
# TOL is 3.0 pp: the Python frames are read when the session processes the
# sample, which on this 2-core machine shared with other test runs (load
# 10+) comes a median 4-8 ms after the event (the summary says), and what
# the thread ran in that gap is attributed (README "Python"). The issue's
# goal is 1.0 pp.
#
# Multiprocessing workers (py_children.py: a pool of two forked workers)
# are read as the processes they are: the summary counts three processes
# or more and child_work holds a quarter of the samples or more (46-62%
# here: the rest is interpreter start-up and the pool's fork, whose
# copy-on-write faults weigh on a loaded machine; without Python frames it
# has none).
#
# The native shares workload must come out as before: no Python line, no
# Python mapping, its ten C functions named.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares

PY=/usr/bin/python3.11
[[ -x $PY ]] || skip "$PY not installed (apt-get install python3.11)"
WL=$E2E_REPO/tests/workloads/py_shares.py
SECS=$(quick_or 8 4)
TOL=3.0
errs=0
bad() { info "FAILED: $*"; errs=$((errs + 1)); }

# compare PROFILE OUT: each function's cumulative share vs the program's own
# (OUT's "self" lines) and k/55; exit 1 when one is off by more than TOL.
compare() {
	pprof -top -nodecount=100000 -nodefraction=0 -edgefraction=0 -unit=ns "$1" 2>/dev/null |
		awk -v tol="$TOL" -v out="$2" '
	BEGIN {
		while ((getline l < out) > 0) {
			split(l, a, " ")
			if (a[1] == "self") self[a[2]] = a[3]
		}
		n = split("A_expect_1_82 B_expect_3_64 C_expect_5_45 D_expect_7_27 " \
			"E_expect_9_09 F_expect_10_91 G_expect_12_73 H_expect_14_55 " \
			"I_expect_16_36 J_expect_18_18", fn, " ")
	}
	/^ +flat +flat%/ { body = 1; next }
	body && NF >= 6 { c = $4; sub(/[a-z]+$/, "", c); cum[$6] += c }
	END {
		for (k = 1; k <= n; k++) sum += cum[fn[k]]
		if (sum <= 0) { print "  none of the ten Python functions has samples"; exit 1 }
		printf "  %-16s %7s %7s %8s %7s\n", "function", "k/55", "self", "profile", "error"
		for (k = 1; k <= n; k++) {
			if (!(fn[k] in self)) { print "  no self measure for " fn[k]; exit 1 }
			got = 100 * cum[fn[k]] / sum; err = got - self[fn[k]]
			ab = err < 0 ? -err : err; d = got - 100 * k / 55; d = d < 0 ? -d : d
			if (ab > maxerr) { maxerr = ab; worst = fn[k] }
			if (d > maxk) maxk = d
			printf "  %-16s %6.2f%% %6.2f%% %7.2f%% %+6.2f%s\n", fn[k], 100 * k / 55,
				self[fn[k]], got, err, (ab > tol ? "  <-- over " tol " pp" : "")
		}
		printf "  max error %.2f pp (%s) against the program'"'"'s own measure, tolerance %.1f pp; %.2f pp from k/55\n",
			maxerr, worst, tol, maxk
		exit maxerr > tol
	}'
}

for nth in 1 4; do
	info "--- $nth thread(s), $SECS s"
	run_pmutop py$nth -e task-clock --period 100000 --duration $((SECS + 60)) \
		--dump py$nth.pb.gz -- "$PY" "$WL" "$SECS" "$nth"
	show py$nth.err
	(( RC == 0 )) || { bad "pmutop exited $RC ($nth threads)"; continue; }
	grep -q "^self J_expect_18_18" py$nth.out || { bad "the workload did not finish ($nth threads)"; continue; }
	grep -Eq "^pmutop: Python 3\.11\.[0-9]+ \(1 process\): [1-9][0-9]* of [0-9]+ samples with Python frames" py$nth.err ||
		bad "no summary line counting samples with Python frames ($nth threads)"
	grep -Eq "after the sample" py$nth.err || bad "the summary does not say how long after the sample frames were read"
	compare py$nth.pb.gz py$nth.out || bad "Python function shares off by more than $TOL pp ($nth threads)"
	# A mapping for Python code: the workload's file.
	pprof -raw py$nth.pb.gz >py$nth.raw 2>/dev/null
	sed -n '/^Mappings/,$p' py$nth.raw | grep -q " 0x5079[0-9a-f]*/0x5079[0-9a-f]*/0x0 $WL " ||
		bad "no mapping for $WL ($nth threads)"
done

info "--- multiprocessing workers"
run_pmutop kids -e task-clock --duration 60 --dump kids.pb.gz -- "$PY" \
	"$E2E_REPO/tests/workloads/py_children.py" "$(quick_or 2 1)"
show kids.err
(( RC == 0 )) || bad "pmutop exited $RC (multiprocessing)"
grep -Eq "^pmutop: Python 3\.11\.[0-9]+ \(([3-9]|[1-9][0-9]+) processes\)" kids.err ||
	bad "the workers' Python frames were not read (want 3 processes or more in the summary)"
share=$(cum_share kids.pb.gz child_work)
info "child_work: $share% of the samples (cumulative)"
awk -v s="$share" 'BEGIN { exit !(s >= 25) }' || bad "child_work has $share% of the samples, want 25% or more"

info "--- native target"
run_pmutop native -e task-clock --period 100000 --duration 2 --dump native.pb.gz -- "$W/shares" 10
(( RC == 0 )) || bad "pmutop on the native workload exited $RC"
grep -qi "python" native.err && { show native.err; bad "Python mentioned for a native target"; }
pprof -raw native.pb.gz >native.raw 2>/dev/null
sed -n '/^Mappings/,$p' native.raw | grep -q '^[0-9]*: 0x5079' && bad "a Python mapping in a native profile"
top_flat native.pb.gz >native.flat || bad "cannot read the native profile"
grep -q "^J_expect_18_18" native.flat || bad "native functions not named"

(( errs == 0 )) || fail "$errs check(s) failed"
pass "ten Python functions within $TOL pp of the program's own shares, one and four threads; multiprocessing workers read; native target untouched"
