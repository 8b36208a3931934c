#!/usr/bin/env bash
# tests/e2e/run.sh - run the end-to-end tests and sum up.
#
# usage: run.sh [NAME...]     NAME = t_shares (or shares); default: all t_*.sh
#
# Each test runs under `timeout 120`; exit 0 = pass, 77 = skip, anything
# else = fail (124 = timed out). Prints each test's output, then exactly
# "e2e: N passed, N failed, N skipped"; exits 1 if any test failed.
# Environment: see lib.sh (PMUTOP, WORKLOAD_DIR, PMUTOP_QUICK, E2E_KEEP).
#
# Two lanes: tests whose header says "# e2e-lane: beside" check what
# pmutop does with bad input and files (errors, hostile targets, output
# formats, servers) and nothing that depends on timing, shares or lost
# counts; they run one after another in a second lane while the others
# run one at a time in the first, so those see at most one such test on
# the other core - the busy-core condition the suite is held to anyway.
# Each test of the second lane prints its output in one block when it
# ends. E2E_LANES=1 runs everything in one lane (the order of the files).
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

# run_one TEST: run it, print its block, append "rc seconds name" to $RESULTS.
run_one() {
	local t=$1 name rc t0
	name=$(basename "$t" .sh)
	echo "=== $name"
	t0=$SECONDS
	if [[ ! -f $t ]]; then
		echo "no such test: $t"
		rc=1
	else
		timeout -k 10 "$TIMEOUT" bash "$t" 2>&1
		rc=$?
	fi
	case $rc in
	0) echo "--- PASS $name ($((SECONDS - t0)) s)" ;;
	77) echo "--- SKIP $name ($((SECONDS - t0)) s)" ;;
	124 | 137) echo "--- FAIL $name (timed out after $TIMEOUT s)" ;;
	*) echo "--- FAIL $name (exit status $rc) ($((SECONDS - t0)) s)" ;;
	esac
	echo "$rc $((SECONDS - t0)) $name" >>"$RESULTS"
}

RESULTS=$(mktemp /tmp/pmutop-e2e-results.XXXXXX)
lane1=() lane2=()
for t in "${tests[@]}"; do
	if (( ${E2E_LANES:-2} > 1 && ${#tests[@]} > 1 )) && [[ -f $t ]] &&
	   grep -q '^# e2e-lane: beside' "$t"; then
		lane2+=("$t")
	else
		lane1+=("$t")
	fi
done
lane2_pid=
if (( ${#lane2[@]} )); then
	(
		for t in "${lane2[@]}"; do
			out=$(mktemp /tmp/pmutop-e2e-lane2.XXXXXX)
			run_one "$t" >"$out" 2>&1
			cat "$out"
			rm -f "$out"
		done
	) &
	lane2_pid=$!
fi
for t in "${lane1[@]}"; do
	run_one "$t"
done
[[ -n $lane2_pid ]] && wait "$lane2_pid"
while read -r rc secs name; do
	times+=("$secs $name")
	case $rc in
	0) passed=$((passed + 1)) ;;
	77) skipped=$((skipped + 1)); skipped_names+=("$name") ;;
	*) failed=$((failed + 1)); failed_names+=("$name") ;;
	esac
done <"$RESULTS"
rm -f "$RESULTS"

# The slowest, to keep `make test` within its budget.
printf '%s\n' "${times[@]}" | sort -rn | head -8 | awk '{ s = s sprintf(" %s %ss", $2, $1) } END { print "slowest:" s }'
(( skipped > 0 )) && echo "skipped: ${skipped_names[*]}"
(( failed > 0 )) && echo "failed: ${failed_names[*]}"
echo "e2e: $passed passed, $failed failed, $skipped skipped in $((SECONDS - start)) s"
(( failed == 0 ))
