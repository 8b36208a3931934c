/*
 * two_loops.c - one function, two loops with a known ratio of work
 * (ground truth for the instruction-level view, --annotate).
 *
 * two_loops() runs loop A for 3*N iterations, then loop B for N, with the
 * same serially dependent body, so of the samples in two_loops, the
 * instructions of loop A hold 75% and those of loop B 25%. Each loop is on
 * a source line of its own (LOOP_A, LOOP_B) so DWARF tells them apart.
 *
 * usage: two_loops [SECONDS]
 */
#include "workload.h"

#define N 400000L

WL_NOINLINE static void two_loops(void)
{
	WL_SPIN(3 * N); /* LOOP_A */
	WL_SPIN(N);     /* LOOP_B */
}

int main(int argc, char **argv)
{
	double secs = wl_arg_double(argc, argv, 1, 0), end = wl_now() + secs;

	do
		two_loops();
	while (secs <= 0 || wl_now() < end);
	return 0;
}
