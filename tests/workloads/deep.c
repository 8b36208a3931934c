/*
 * deep.c - a deep, exactly known call stack.
 *
 * Ground truth: nearly all time is spent in deep_leaf(), always called from
 * recurse(0), called from recurse(1), ... recurse(DEPTH), called from main.
 * So every sample whose leaf is deep_leaf has the stack
 *     deep_leaf, recurse x (DEPTH+1), main
 * and an unwinder that reaches main on a sample shows all of them in order.
 *
 * Built twice: deep_fp (-fno-omit-frame-pointer) and deep_nofp
 * (-fomit-frame-pointer, so only DWARF CFI unwinding gets through). Both with
 * -fno-optimize-sibling-calls, and the result of each recursive call is used
 * after the call through a volatile, so the recursion stays real frames.
 *
 * Each descent spins ~1-2 ms in deep_leaf, returns all the way up and
 * descends again, for argv[1] seconds (default 5).
 *
 * usage: deep_fp|deep_nofp [SECONDS [DEPTH]]     DEPTH defaults to 120
 */
#include "workload.h"

#define LEAF_ITERS 500000L

WL_NOINLINE static long deep_leaf(void)
{
	WL_SPIN(LEAF_ITERS);
	return (long)(wl_sink & 1);
}

WL_NOINLINE static long recurse(long n)
{
	volatile long r;

	if (n <= 0)
		r = deep_leaf();
	else
		r = recurse(n - 1);
	/* Using r after the call keeps this from being a (sibling) tail call. */
	return r + n;
}

int main(int argc, char **argv)
{
	double secs = wl_arg_double(argc, argv, 1, 5.0);
	long depth = wl_arg_long(argc, argv, 2, 120);
	double end = wl_now() + secs;

	do
		wl_sink += (uint64_t)recurse(depth);
	while (wl_now() < end);
	return 0;
}
