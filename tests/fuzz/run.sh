#!/usr/bin/env bash
# tests/fuzz/run.sh - build the libFuzzer targets and run each for a while.
#
# usage: tests/fuzz/run.sh [TARGET...]      (default: every tests/fuzz/fuzz_*.c)
# Environment: FUZZ_SECONDS (default 30) per target; FUZZ_JOBS (default 1)
#              parallel fuzzing processes per target; CLANG (default: clang).
#
# What it does, from the repository root:
#  1. installs clang and libclang-rt-14-dev if missing (as root; otherwise
#     says what to install) - only here, never for `make test`;
#  2. builds pmutop's library and the targets with clang,
#     -fsanitize=fuzzer-no-link,address,undefined into build-fuzz/;
#  3. runs each target with a working corpus build-fuzz/corpus/TARGET seeded
#     from tests/fuzz/corpus/TARGET, for FUZZ_SECONDS, artifacts (crash-*,
#     leak-*, timeout-*, oom-*) into build-fuzz/artifacts/TARGET/;
#  4. prints one line per target (runs, coverage, corpus size) and exits 1
#     if any target found something.
# A finding becomes a regression test by copying it into
# tests/fuzz/corpus/TARGET/ (test_fuzz_replay replays it in `make test`)
# once the bug is fixed.
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
SECS=${FUZZ_SECONDS:-30}
JOBS=${FUZZ_JOBS:-1}
B=build-fuzz

bash tests/install-deps.sh fuzz || exit 1
CLANG=${CLANG:-}
if [[ -z $CLANG ]]; then
	for c in clang clang-14; do
		command -v "$c" >/dev/null 2>&1 && { CLANG=$c; break; }
	done
fi
[[ -n $CLANG ]] || { echo "fuzz: clang not found" >&2; exit 1; }

# The sanitizers go on the library too; -fsanitize=fuzzer only on the
# final link (fuzz.mk), so libFuzzer's main() is not pulled into the library.
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"
make --no-print-directory BUILD=$B PMUTOP_OUT=$B/pmutop CC="$CLANG" \
	CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link $SAN" \
	EXTRA_LDFLAGS="$SAN" fuzz-bins || exit 1

targets=()
if (( $# )); then
	for t in "$@"; do targets+=("${t%.c}"); done
else
	for f in tests/fuzz/fuzz_*.c; do targets+=("$(basename "$f" .c)"); done
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
found=0
summary=()
for t in "${targets[@]}"; do
	bin=$B/fuzz/$t
	seeds=tests/fuzz/corpus/$t
	work=$B/corpus/$t
	art=$B/artifacts/$t
	log=$B/fuzz-$t.log
	[[ -x $bin ]] || { echo "fuzz: $bin not built" >&2; exit 1; }
	mkdir -p "$work" "$art" "$seeds"
	echo "== $t: ${SECS} s (log $log)"
	args=(-max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
		-artifact_prefix="$art/")
	if (( JOBS > 1 )); then
		args+=(-jobs="$JOBS" -workers="$JOBS")
	fi
	"$bin" "${args[@]}" "$work" "$seeds" >"$log" 2>&1
	rc=$?
	runs=$(awk '/stat::number_of_executed_units/ { s += $2 } END { print s + 0 }' "$log")
	last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
	cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<<"$last")
	ncorp=$(find "$work" -type f | wc -l)
	nart=$(find "$art" -type f | wc -l)
	line="$t: ${runs} runs in ${SECS} s, cov ${cov:-?} edges, ft ${ft:-?} features, corpus ${ncorp}, findings ${nart}"
	summary+=("$line")
	echo "   $line"
	if (( rc != 0 || nart > 0 )); then
		found=1
		grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -n 20 | sed 's/^/   | /'
	fi
done

echo "fuzz summary:"
printf '  %s\n' "${summary[@]}"
if (( found )); then
	echo "fuzz: FAILED: findings in $B/artifacts/ (reproduce: $B/fuzz/TARGET FILE)"
	exit 1
fi
echo "fuzz: ${#targets[@]} passed, 0 failed"
