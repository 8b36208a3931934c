#!/usr/bin/env bash
# t_events_table.sh - the text table (no --dump, stdout not a terminal) of a
# run with several events.
#
# Runs everywhere: `-e task-clock,cpu-clock` on the shares workload prints
# the pprof columns for task-clock plus a cpu-clock flat column, with a line
# naming the events; both columns give each of the ten functions its known
# share k/55; software events make no ratio column. One event prints the
# plain pprof table, as before.
# Needs a PMU (SKIP with the reason otherwise): `-e cycles,instructions`
# adds an IPC~ column, and on fixed_work (one hot function) its IPC is
# within 10% of `perf stat`'s whole-program IPC when perf is installed.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares fixed_work

DUR=$(quick_or 3 2)

# table_rows FILE: the rows under the column titles.
table_rows() {
	awk '/^ +flat +flat%/ { on = 1; next } on' "$1"
}

# shares_ok FILE COLUMN NAME_COLUMN TOL: the ten functions' shares of COLUMN
# (pprof-style values: 1.50s, 358.25ms, 12, ...) are within TOL pp of k/55.
shares_ok() {
	table_rows "$1" | awk -v col="$2" -v ncol="$3" -v tol="$4" '
	function val(s,   n) {
		n = s + 0
		if (s ~ /hrs$/) return n * 3600e9; if (s ~ /ns$/) return n
		if (s ~ /us$/) return n * 1e3; if (s ~ /ms$/) return n * 1e6
		if (s ~ /s$/) return n * 1e9; return n
	}
	BEGIN { n = split("A_expect_1_82 B_expect_3_64 C_expect_5_45 D_expect_7_27 " \
		"E_expect_9_09 F_expect_10_91 G_expect_12_73 H_expect_14_55 " \
		"I_expect_16_36 J_expect_18_18", fn, " ") }
	{ v[$ncol] += val($col) }
	END {
		for (k = 1; k <= n; k++) sum += v[fn[k]]
		if (sum <= 0) { print "  column " col ": no samples in the ten functions"; exit 1 }
		for (k = 1; k <= n; k++) {
			d = 100 * v[fn[k]] / sum - 100 * k / 55
			if (d < 0) d = -d
			if (d > maxerr) maxerr = d
		}
		printf "  column %d: max error %.2f pp (tolerance %.1f)\n", col, maxerr, tol
		exit maxerr > tol
	}'
}

# 1. Two software events: the first event's pprof columns, then cpu-clock.
run_pmutop two -e task-clock,cpu-clock --duration "$DUR" --table-file two.table -- "$W/shares" $((DUR + 5))
mv two.table two.out # launched: the table goes to -o, never into the command's stdout
show two.out 16
(( RC == 0 )) || { show two.err; fail "pmutop -e task-clock,cpu-clock exited with status $RC"; }
grep -qx 'Events: task-clock (flat, cum); cpu-clock (flat); sampled counts are estimates (samples x period)' two.out ||
	fail "the table does not say which event each column is"
title=$(grep -E '^ +flat +flat%' two.out)
[[ $title =~ ^\ +flat\ +flat%\ +sum%\ +cum\ +cum%\ +cpu-clock$ ]] ||
	fail "column titles are not flat flat% sum% cum cum% cpu-clock: '$title'"
grep -q 'Ratios' two.out && fail "software events got a ratio line"
# Rows: flat flat% sum% cum cum% cpu-clock name
shares_ok two.out 1 7 1.0 || fail "task-clock (flat) shares are wrong"
shares_ok two.out 6 7 1.0 || fail "cpu-clock column shares are wrong"
info "task-clock and cpu-clock columns both give the known shares"

# 2. One event: the plain pprof table.
run_pmutop one -e task-clock --duration 1 --table-file one.table -- "$W/shares" 6
mv one.table one.out
(( RC == 0 )) || { show one.err; fail "pmutop -e task-clock exited with status $RC"; }
grep -q '^Events:' one.out && fail "a single-event table got the events line"
title=$(grep -E '^ +flat +flat%' one.out)
[[ $title =~ ^\ +flat\ +flat%\ +sum%\ +cum\ +cum%$ ]] ||
	fail "single-event titles changed: '$title'"
table_rows one.out | awk 'NF != 6 { bad = 1 } END { exit bad }' ||
	fail "single-event rows do not have pprof's 6 fields"

# 3. Hardware: IPC.
pick_event
if (( ! EV_HW )); then
	echo "SKIP (part): no hardware PMU here: the IPC~ column of -e cycles,instructions"
	echo "      and its agreement with perf stat cannot be measured on this machine"
	pass "multi-event text table: event columns, shares in each, single-event table unchanged"
fi
ITERS=$(quick_or 40000 20000)
run_pmutop ipc -e cycles,instructions --table-file ipc.table -- "$W/fixed_work" "$ITERS"
mv ipc.table ipc.out
show ipc.out 8
(( RC == 0 )) || { show ipc.err; fail "pmutop -e cycles,instructions exited with status $RC"; }
grep -q 'Ratios (~) of the flat estimates: IPC~ = instructions/cycles' ipc.out ||
	fail "no IPC~ ratio line for cycles,instructions"
title=$(grep -E '^ +flat +flat%' ipc.out)
[[ $title == *instructions*IPC~ ]] || fail "titles lack instructions and IPC~: '$title'"
# Rows: flat flat% sum% cum cum% instructions IPC~ name
ipc=$(table_rows ipc.out | awk '$8 == "fixed_leaf" { print $7; exit }')
info "fixed_leaf IPC~ from the table: ${ipc:-?}"
[[ $ipc =~ ^[0-9]+\.[0-9]+$ ]] || fail "fixed_leaf has no IPC value"
if ! command -v perf >/dev/null 2>&1; then
	echo "SKIP (part): perf not installed: the IPC is not compared with perf stat"
	pass "multi-event text table: event columns, shares, IPC~ column"
fi
perf stat -x, -e instructions,cycles -o perfstat.txt "$W/fixed_work" "$ITERS" >/dev/null 2>&1 ||
	{ show perfstat.txt; fail "perf stat failed"; }
pipc=$(awk -F, '$3 ~ /^instructions/ { i = $1 } $3 ~ /^cycles/ { c = $1 }
	END { if (c > 0) printf "%.3f", i / c }' perfstat.txt)
info "perf stat IPC: ${pipc:-?}"
[[ -n $pipc ]] || { show perfstat.txt; fail "cannot read perf stat's counts"; }
awk -v a="$ipc" -v b="$pipc" 'BEGIN { d = (a - b) / b; if (d < 0) d = -d; exit d > 0.10 }' ||
	fail "fixed_leaf IPC $ipc is not within 10% of perf stat's $pipc"
pass "multi-event text table: event columns, shares, IPC~ within 10% of perf stat"
