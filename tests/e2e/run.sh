#!/usr/bin/env bash
# tests/e2e/run.sh - run the end-to-end tests and sum up.
#
# usage: run.sh [NAME...]     NAME = t_shares (or shares); default: all t_*.sh
#
# Each test runs under `timeout 120`; exit 0 = pass, 77 = skip, anything
# else = fail (124 = timed out). Prints each test's output, then exactly
# "e2e: N passed, N failed, N skipped"; exits 1 if any test failed.
# Environment: see lib.sh (PMUTOP, WORKLOAD_DIR, PMUTOP_QUICK, E2E_KEEP).
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_resolve_paths

TIMEOUT=${E2E_TIMEOUT:-120}
tests=()
if (( $# )); then
	for n in "$@"; do
		n=${n%.sh}
		[[ $n == t_* ]] || n=t_$n
		tests+=("$E2E_DIR/$n.sh")
	done
else
	tests=("$E2E_DIR"/t_*.sh)
fi

echo "e2e: pmutop=$PMUTOP workloads=$WORKLOAD_DIR quick=$QUICK"
passed=0 failed=0 skipped=0 start=$SECONDS
failed_names=() skipped_names=() times=()
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	echo "=== $name"
	t0=$SECONDS
	if [[ ! -f $t ]]; then
		echo "no such test: $t"
		rc=1
	else
		timeout -k 10 "$TIMEOUT" bash "$t" 2>&1
		rc=$?
		times+=("$((SECONDS - t0)) $name")
	fi
	took="($((SECONDS - t0)) s)"
	case $rc in
	0)
		passed=$((passed + 1))
		echo "--- PASS $name $took" ;;
	77)
		skipped=$((skipped + 1))
		skipped_names+=("$name")
		echo "--- SKIP $name $took" ;;
	124 | 137)
		failed=$((failed + 1))
		failed_names+=("$name")
		echo "--- FAIL $name (timed out after $TIMEOUT s)" ;;
	*)
		failed=$((failed + 1))
		failed_names+=("$name")
		echo "--- FAIL $name (exit status $rc) $took" ;;
	esac
done

# The slowest, to keep `make test` within its budget.
printf '%s\n' "${times[@]}" | sort -rn | head -8 | awk '{ s = s sprintf(" %s %ss", $2, $1) } END { print "slowest:" s }'
(( skipped > 0 )) && echo "skipped: ${skipped_names[*]}"
(( failed > 0 )) && echo "failed: ${failed_names[*]}"
echo "e2e: $passed passed, $failed failed, $skipped skipped in $((SECONDS - start)) s"
(( failed == 0 ))
