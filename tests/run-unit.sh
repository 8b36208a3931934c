#!/usr/bin/env bash
# tests/run-unit.sh - run unit test binaries and sum up.
#
# usage: run-unit.sh BINARY...
# Runs each binary (cmocka prints its own per-test lines), shows its output,
# and ends with exactly "unit: N passed, N failed" counting binaries. Exits 1
# if any binary failed (non-zero exit, including a crash or sanitizer abort).
set -uo pipefail
# Hermetic: no debuginfod server from the user's login (test_debuginfod
# serves its own from a directory).
unset DEBUGINFOD_URLS

passed=0
failed=0
failed_names=()

for bin in "$@"; do
	echo "== $bin"
	if [[ ! -x "$bin" ]]; then
		echo "run-unit: $bin: not found or not executable"
		failed=$((failed + 1))
		failed_names+=("$bin")
		continue
	fi
	"$bin" 2>&1
	rc=$?
	if (( rc == 0 )); then
		passed=$((passed + 1))
	else
		echo "run-unit: $bin FAILED (exit status $rc)"
		failed=$((failed + 1))
		failed_names+=("$bin")
	fi
done

if (( failed > 0 )); then
	echo "failed: ${failed_names[*]}"
fi
echo "unit: $passed passed, $failed failed"
(( failed == 0 ))
