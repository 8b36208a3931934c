#!/usr/bin/env bash
# t_shares.sh - flat shares of ten functions match the known truth.
#
# The shares workload runs A_expect_1_82 ... J_expect_18_18, function k doing
# k/55 of the work. Profile it (cycles, or task-clock without a PMU) and
# check each function's share of the ten functions' flat total, read with
# `go tool pprof -top`, is within 1.0 percentage point of k/55.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares

DUR=$(quick_or 5 3)
TOL=1.0
pick_event
if [[ $EV == cycles ]]; then PERIOD=1000000; else PERIOD=100000; fi
info "event $EV, period $PERIOD, ${DUR} s"

# The workload's own time limit is a backstop should pmutop not end it.
run_pmutop shares -e "$EV" --period "$PERIOD" --duration "$DUR" --dump shares.pb.gz \
	-- "$W/shares" $((DUR + 5))
show shares.err
(( RC == 0 )) || fail "pmutop exited with status $RC"
[[ -s shares.pb.gz ]] || fail "no profile written"

top_flat shares.pb.gz "$EV" >flat.txt || top_flat shares.pb.gz 1 >flat.txt ||
	fail "go tool pprof -top cannot read the profile"
show "$T/top.txt" 16

awk -F'\t' -v tol="$TOL" '
BEGIN {
	n = split("A_expect_1_82 B_expect_3_64 C_expect_5_45 D_expect_7_27 " \
		"E_expect_9_09 F_expect_10_91 G_expect_12_73 H_expect_14_55 " \
		"I_expect_16_36 J_expect_18_18", fn, " ")
}
{ flat[$1] += $2 }
END {
	for (k = 1; k <= n; k++) sum += flat[fn[k]]
	if (sum <= 0) { print "  none of the ten functions has samples"; exit 1 }
	printf "  %-16s %9s %9s %7s\n", "function", "expected", "measured", "error"
	maxerr = 0
	for (k = 1; k <= n; k++) {
		want = 100 * k / 55; got = 100 * flat[fn[k]] / sum
		err = got - want; abserr = err < 0 ? -err : err
		if (abserr > maxerr) { maxerr = abserr; worst = fn[k] }
		printf "  %-16s %8.2f%% %8.2f%% %+6.2f%s\n", fn[k], want, got, err,
			(abserr > tol ? "  <-- over " tol " pp" : "")
	}
	printf "  max error %.2f pp (%s), tolerance %.1f pp\n", maxerr, worst, tol
	exit maxerr > tol
}' flat.txt || fail "function shares off by more than $TOL pp ($EV)"
pass "ten function shares within $TOL pp of k/55 ($EV)"
