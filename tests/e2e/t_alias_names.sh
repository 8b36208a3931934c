#!/usr/bin/env bash
# t_alias_names.sh - one name per frame (issue 33): a function exported
# under several aliases is named as perf and gdb show it - malloc and free,
# not __libc_malloc, __GI___libc_malloc or cfree - in every output, before
# and after its debug info (DWARF calls malloc __libc_malloc) is read.
#
# A small C program calling malloc/free in a loop (compiled here) is
# profiled to pprof and to folded stacks (both read every line before
# writing), and --stacks looks at it while it runs (ELF names only): each
# must name malloc and free and none of the aliases.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
command -v cc >/dev/null || skip "no C compiler"

cat >m.c <<'C'
#include <stdlib.h>
int main(int argc, char **argv)
{
	volatile long s = 0;
	long n = argc > 1 ? atol(argv[1]) : 20000000;
	for (long i = 0; i < n; i++) {
		void *p = malloc(64 + (i & 255));
		s += (long)p;
		free(p);
	}
	return s == 1;
}
C
cc -O1 -o m m.c || fail "cannot compile m.c"
ALIASES='(__libc_malloc|__GI___libc_malloc|__malloc|__libc_free|__GI___libc_free|cfree)$'

run_pmutop pp -e task-clock -o m.pb.gz -- ./m
(( RC == 0 )) || { show pp.err; fail "pmutop -o m.pb.gz exited with status $RC"; }
run_pmutop tab --load m.pb.gz --no-tui --rows all
names=$(awk '/^ +flat +flat%/ { on = 1; next } on { print $NF }' tab.out)
grep -qx malloc <<<"$names" || fail "the profile has no function named malloc: $(grep -i malloc <<<"$names" | tr '\n' ' ')"
grep -qx free <<<"$names" || fail "the profile has no function named free: $(grep -i free <<<"$names" | tr '\n' ' ')"
bad=$(grep -E "^$ALIASES" <<<"$names" | tr '\n' ' ')
[[ -z $bad ]] || fail "the profile names aliases: $bad"
run_pmutop fold -e task-clock -o m.folded -- ./m
bad=$(tr ';' '\n' <m.folded | sed 's/ [0-9]*$//' | grep -E "^$ALIASES" | sort -u | tr '\n' ' ')
[[ -z $bad ]] || fail "the folded stacks name aliases: $bad"
grep -q ';malloc' m.folded || fail "no malloc frame in the folded stacks"
start_bg ./m 2000000000
sleep 0.5
run_pmutop st --stacks -p "$BG_PID"
bad=$(grep -oE "$ALIASES" st.out | sort -u | tr '\n' ' ')
[[ -z $bad ]] || fail "--stacks names aliases: $bad"
info "table: $(grep -E '^(malloc|free|_int_malloc|_int_free)$' <<<"$names" | tr '\n' ' ')"
pass "malloc and free named as perf/gdb show them in pprof, folded and --stacks"
