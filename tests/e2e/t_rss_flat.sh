#!/usr/bin/env bash
# t_rss_flat.sh - pmutop's memory stays flat on a churning target (issue 23).
#
# pmutop -p PID --duration 60 (40 quick) --max-stacks 2000 on longrun (deep
# random recursion - a new call path almost every sample -, a thread pool
# renewed every 1-3 s, dlopen/dlclose and mmap churn). pmutop's RSS is read
# every 2 s; after a warm-up of 25 s (the cap reached, debug info opened at
# 10 s) it must not grow by more than 4 MiB while sampling goes on, the
# summary must say what it merged (compacted stacks, folded threads) and
# the profile must open in go tool pprof. The small cap makes the steady
# state come within the test's time; make bench measures the default over
# 10 minutes (bench/RESULTS.md).
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl longrun libhot.so
# Under ASan freed memory sits in a quarantine (256 MiB by default) and every
# block has shadow bytes: RSS grows with what the program frees, so it says
# nothing about pmutop's own footprint there.
# Read off the file (ldd runs the binary: under load it once missed libasan).
{ readelf -d "$PMUTOP" 2>/dev/null | grep -q 'NEEDED.*libasan' ||
	readelf -Ws "$PMUTOP" 2>/dev/null | grep -q ' __asan_init'; } &&
	skip "an ASan build's RSS is the sanitizer's quarantine, not pmutop's memory (make test checks it)"

DUR=$(quick_or 60 40)
WARM=25
start_bg "$W/longrun" $((DUR + 20))
target=$BG_PID
wait_started "$target"

"$PMUTOP" -e task-clock --period 100000 --duration "$DUR" --max-stacks 2000 \
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
read -r base peak n < <(awk -v w="$WARM" -v d="$DUR" '
	$1 >= w && $1 <= d - 1 { if (!seen) { b = $2; seen = 1 } if ($2 > p) p = $2; n++ }
	END { print b + 0, p + 0, n + 0 }' rss.txt)
(( n >= 3 )) || fail "only $n RSS readings after the warm-up (the machine is too slow?)"
growth=$(( (peak - base) / 1024 ))
info "after ${WARM} s: RSS from $((base / 1024)) MiB, peak $((peak / 1024)) MiB (+$growth MiB over $n readings)"
(( peak - base <= 4096 )) || fail "RSS grew by $growth MiB after the warm-up (want <= 4 MiB)"
grep -q 'compacted [1-9][0-9]* stacks' flat.err ||
	fail "the summary does not report compacted stacks (the cap was not reached?)"
pprof -top flat.pb.gz >top.txt 2>&1 || { show top.txt 5; fail "go tool pprof cannot read the profile"; }
pass "RSS flat after ${WARM} s (+$growth MiB), merges reported, profile readable"
