/*
 * inline_hot.c - hot code that exists only as inlined frames (-O2 -g).
 *
 * Ground truth: nearly all time is spent in spin_leaf(), which the compiler
 * must inline (always_inline) into spin_mid(), itself inlined into the
 * real function outer_caller(). So the symbol table knows only
 * outer_caller; DWARF knows the chain
 *
 *   spin_leaf   (inline)  at the line marked LINE_LEAF
 *   spin_mid    (inline)  at the line marked LINE_MID (the call of spin_leaf)
 *   outer_caller          at the line marked LINE_OUTER (the call of spin_mid)
 *   main
 *
 * The e2e tests find the line numbers by grepping the markers.
 *
 * usage: inline_hot [SECONDS]     (default: forever)
 */
#include "workload.h"

#define C 200000L

static inline __attribute__((always_inline)) void spin_leaf(long n)
{
	WL_SPIN(n); /* LINE_LEAF */
}

static inline __attribute__((always_inline)) void spin_mid(long n)
{
	spin_leaf(n); /* LINE_MID */
}

WL_NOINLINE static void outer_caller(void)
{
	spin_mid(C); /* LINE_OUTER */
}

int main(int argc, char **argv)
{
	double secs = wl_arg_double(argc, argv, 1, -1.0);
	double end = wl_now() + secs;

	for (;;) {
		outer_caller();
		if (secs >= 0 && wl_now() >= end)
			break;
	}
	return 0;
}
