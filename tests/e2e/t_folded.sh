#!/usr/bin/env bash
# t_folded.sh - `--format folded` writes collapsed stacks flame-graph tools
# read: one "frame;frame;...;leaf COUNT" line per stack, root first.
#
# 1. shares (ten functions, k/55 of the work each): every line is well
#    formed, the hot stacks read _start/main → round_once → X_expect_*, and
#    the ten leaf weights keep their k/55 shares (within 1.5 pp), the same
#    truth t_shares checks through pprof.
# 2. threads with --folded-threads: the worker threads' names are the root
#    frames, and without the flag no line starts with a thread name.
# 3. bad combinations are refused with a message naming the option.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares threads

DUR=$(quick_or 4 2)
TOL=1.5

run_pmutop shares -e task-clock --period 100000 --duration "$DUR" --format folded \
	--dump shares.folded -- "$W/shares" $((DUR + 5))
show shares.err 6
(( RC == 0 )) || fail "pmutop exited with status $RC"
[[ -s shares.folded ]] || fail "no folded file written"
show shares.folded 5

# Well formed: frames without spaces at the ends, a positive count.
bad=$(grep -cvE '^[^ ;][^;]*(;[^;]+)* [0-9]+$' shares.folded)
(( bad == 0 )) || fail "$bad malformed lines in shares.folded"
# Root first: main comes before round_once before the leaf.
grep -qE '(^|;)main;round_once;J_expect_18_18 [0-9]+$' shares.folded ||
	fail "no main;round_once;J_expect_18_18 line (frames not root first?)"
# Sorted and merged: no stack text twice.
dups=$(sed 's/ [0-9]*$//' shares.folded | sort | uniq -d | wc -l)
(( dups == 0 )) || fail "$dups stacks appear on more than one line"

awk -v tol="$TOL" '
{
	n = split($0, parts, " "); w = parts[n]
	stack = substr($0, 1, length($0) - length(w) - 1)
	k = split(stack, fr, ";"); leaf = fr[k]
	if (leaf ~ /^[A-J]_expect_/) flat[leaf] += w
}
END {
	split("A_expect_1_82 B_expect_3_64 C_expect_5_45 D_expect_7_27 E_expect_9_09 " \
	      "F_expect_10_91 G_expect_12_73 H_expect_14_55 I_expect_16_36 J_expect_18_18", fn, " ")
	for (k = 1; k <= 10; k++) sum += flat[fn[k]]
	if (sum <= 0) { print "  none of the ten functions is a leaf"; exit 1 }
	for (k = 1; k <= 10; k++) {
		want = 100 * k / 55; got = 100 * flat[fn[k]] / sum; err = got - want
		if (err < 0) err = -err
		if (err > maxerr) { maxerr = err; worst = fn[k] }
	}
	printf "  max share error %.2f pp (%s), tolerance %.1f pp\n", maxerr, worst, tol
	exit maxerr > tol
}' shares.folded || fail "leaf shares in the folded output are off by more than $TOL pp"

run_pmutop threads -e task-clock --duration "$DUR" --format folded --folded-threads \
	--dump threads.folded -- "$W/threads" $((DUR + 5))
(( RC == 0 )) || { show threads.err; fail "pmutop --folded-threads exited with status $RC"; }
show threads.folded 3
nworkers=$(grep -oE '^worker[0-9]+;' threads.folded | sort -u | wc -l)
(( nworkers >= 8 )) || fail "only $nworkers worker threads as root frames (want >= 8 of 10)"
grep -qE '^worker[0-9]+;.*thread_work [0-9]+$' threads.folded ||
	fail "no worker;...;thread_work line"

run_pmutop nothreads -e task-clock --duration 1 --format folded --dump nothreads.folded \
	-- "$W/threads" 6
(( RC == 0 )) || fail "pmutop --format folded (threads) exited with status $RC"
! grep -qE '^worker[0-9]+;' nothreads.folded || fail "thread names as roots without --folded-threads"

run_pmutop bad1 --format folded -p $$
(( RC == 2 )) && grep -q -- '--format folded needs --dump' bad1.err ||
	fail "--format folded without --dump: want status 2 and a message (got $RC: $(head -1 bad1.err))"
run_pmutop bad2 --format bogus --dump x -p $$
(( RC == 2 )) && grep -q 'invalid format "bogus"' bad2.err ||
	fail "--format bogus: want status 2 and 'invalid format' (got $RC: $(head -1 bad2.err))"
run_pmutop bad3 --folded-threads --dump x -p $$
(( RC == 2 )) && grep -q -- '--folded-threads applies to --format folded' bad3.err ||
	fail "--folded-threads alone: want status 2 and a message (got $RC)"
pass "folded stacks: well formed, root first, k/55 shares, thread roots"
