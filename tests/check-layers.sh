#!/usr/bin/env bash
# tests/check-layers.sh - the one-way rule of ARCHITECTURE.md, checked.
#
# Every file belongs to a stage by its folder; a file may include the public
# headers of its own stage and of stages before it, never of a later one:
#
#   target < sample < unwind < symbols < profile < frontend < ui < main
#
# A violation that is known and has a reason is listed in ALLOWED below with
# that reason; anything else fails `make test`. Prints one line per
# violation and "layers: N passed, N failed" (files checked).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

declare -A RANK=([target]=1 [sample]=2 [unwind]=3 [symbols]=4 [profile]=5
		 [frontend]=6 [ui]=7 [main]=8)

# "file -> header": why it is allowed. Keep this list short; each entry is
# a debt with an owner issue.
declare -A ALLOWED=(
	# The ptrace engine names the function a sample was taken in to
	# measure skid (sample IP vs stop IP); statistics only, not the stack.
	["src/unwind/ptrace_engine.c -> symbols/symbolize"]=1
)

stage_of() {
	case $1 in
	src/main.c) echo main ;;
	src/*/*|include/pmutop/*/*) local p=${1#src/}; p=${p#include/pmutop/}; echo "${p%%/*}" ;;
	ui/*) echo ui ;;
	*) echo "" ;;
	esac
}

passed=0 failed=0
while IFS= read -r f; do
	st=$(stage_of "$f")
	if [[ -z $st || -z ${RANK[$st]:-} ]]; then
		echo "layers: $f is in no stage folder (see ARCHITECTURE.md)"
		failed=$((failed + 1))
		continue
	fi
	bad=0
	while IFS= read -r inc; do
		hst=${inc%%/*}
		if [[ -z ${RANK[$hst]:-} ]]; then
			echo "layers: $f includes pmutop/$inc.h, which is in no stage folder"
			bad=1
		elif (( RANK[$hst] > RANK[$st] )) && [[ -z ${ALLOWED["$f -> $inc"]:-} ]]; then
			echo "layers: $f ($st) includes pmutop/$inc.h ($hst): a later stage"
			bad=1
		fi
	done < <(sed -n 's|^#include "pmutop/\(.*\)\.h".*|\1|p' "$f")
	# ui/ headers are ui's own; only main (above it) may call into it.
	if [[ $st != ui && $st != main ]] && grep -qE '^#include "(crt|view|tui|model|state)\.h"' "$f"; then
		echo "layers: $f ($st) includes a private ui/ header"
		bad=1
	fi
	# Inside ui/, screens draw what they are given (view.h's view_ctx) and
	# never call back into the loop or the key handlers (issue 18).
	if [[ $f == ui/*_view.c || $f == ui/frame.c ]] &&
	   grep -qE '^#include "(tui|state)\.h"' "$f"; then
		echo "layers: $f is a screen and includes the loop's state (draw a struct view_ctx)"
		bad=1
	fi
	if (( bad )); then failed=$((failed + 1)); else passed=$((passed + 1)); fi
done < <(git ls-files 'src/*.c' 'src/*.h' 'include/pmutop/*.h' 'ui/*.c' 'ui/*.h' 2>/dev/null ||
	 find src include/pmutop ui -name '*.[ch]')

echo "layers: $passed passed, $failed failed"
(( failed == 0 ))
