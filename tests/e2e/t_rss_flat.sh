#!/usr/bin/env bash
# t_rss_flat.sh - pmutop's memory stays flat on a churning target (issue 23).
#
# pmutop -p PID --duration 60 (40 quick) --max-memory 4M on longrun (deep
# random recursion - a new call path almost every sample -, a thread pool
# renewed every 1-3 s, dlopen/dlclose and mmap churn). pmutop's RSS is read
# every 2 s; after a warm-up of 25 s (the cap reached, debug info opened at
# 10 s) its median must not grow by more than 4 MiB from the first half
# of the rest of the run to the second while sampling goes on, the
# summary must say what the budget merged (pruned frames), the profile must
# name them ("[N cold frames pruned]") and open in go tool pprof. The small
# budget (longrun's tree passes 4 MiB within seconds) makes the steady state
# come within the test's time; make bench measures the default over 10
# minutes (bench/RESULTS.md).
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl longrun libhot.so
# Under ASan freed memory sits in a quarantine (256 MiB by default) and every
# block has shadow bytes: RSS grows with what the program frees, so it says
# nothing about pmutop's own footprint there.
is_asan &&
	skip "an ASan build's RSS is the sanitizer's quarantine, not pmutop's memory (make test checks it)"

DUR=$(quick_or 60 40)
WARM=25
start_bg "$W/longrun" $((DUR + 20))
target=$BG_PID
wait_started "$target"

"$PMUTOP" -e task-clock --period 100000 --duration "$DUR" --max-memory 4M \
	--dump flat.pb.gz -p "$target" >flat.out 2>flat.err &
PM=$!
E2E_BG_PIDS+=("$PM")
t0=$(now)
: >rss.txt
while kill -0 "$PM" 2>/dev/null; do
	r=$(awk '/^VmRSS/ { print $2 }' "/proc/$PM/status" 2>/dev/null)
	[[ -n $r ]] && echo "$(elapsed "$t0") $r" >>rss.txt
	sleep 2
done
wait "$PM"
RC=$?
show flat.err
(( RC == 0 )) || fail "pmutop exited with status $RC"
info "RSS (s KiB): $(awk '{ printf "%s:%s ", int($1), $2 }' rss.txt)"
# Flat means no upward trend: the median reading of the second half after
# the warm-up against the median of the first. Not the first reading or the
# peaks: the aggregate grows to its cap and is rebuilt (two aggregates for
# a moment, then the heap is trimmed), so readings saw-tooth by several MiB
# while the level stays put.
read -r med1 med2 peak n < <(awk -v w="$WARM" -v d="$DUR" '
	$1 >= w && $1 <= d - 1 { r[n++] = $2; if ($2 > p) p = $2 }
	function median(lo, hi,   m, i, j, t, k) { m = 0
		for (i = lo; i < hi; i++) v[m++] = r[i]
		for (i = 1; i < m; i++) { t = v[i]; for (j = i - 1; j >= 0 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
		return m % 2 ? v[int(m / 2)] : (v[m / 2 - 1] + v[m / 2]) / 2 }
	END { h = int(n / 2); print int(median(0, h)), int(median(h, n)), p + 0, n + 0 }' rss.txt)
(( n >= 6 )) || fail "only $n RSS readings after the warm-up (the machine is too slow?)"
growth=$(( (med2 - med1) / 1024 ))
info "after ${WARM} s: median RSS $((med1 / 1024)) MiB in the first half of $n readings, $((med2 / 1024)) MiB in the second (+$growth MiB), peak $((peak / 1024)) MiB"
(( med2 - med1 <= 4096 )) || fail "RSS grew by $growth MiB after the warm-up (want <= 4 MiB between the halves' medians)"
grep -q 'pruned [1-9][0-9]* cold frames' flat.err ||
	fail "the summary does not report pruned frames (the budget was not reached?)"
pprof -top flat.pb.gz >top.txt 2>&1 || { show top.txt 5; fail "go tool pprof cannot read the profile"; }
pprof -raw flat.pb.gz >raw.txt 2>&1 || { show raw.txt 5; fail "go tool pprof -raw failed"; }
grep -q '\[[0-9]* cold frames\? pruned\]' raw.txt ||
	fail "the profile names no [N cold frames pruned] frame"
pass "RSS flat after ${WARM} s (+$growth MiB), merges reported, profile readable"
