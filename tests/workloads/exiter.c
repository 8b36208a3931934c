/*
 * exiter.c - a target that exits on its own with a chosen status.
 *
 * Ground truth: all time is in exiter_spin() for argv[1] seconds (default 1),
 * then the process exits with status argv[2] (default 0). Used to check that
 * a profiler stops early and cleanly when its target exits mid-run (keeping
 * the samples taken so far) and reports the target's exit status.
 *
 * usage: exiter [SECONDS [STATUS]]
 */
#include "workload.h"

WL_NOINLINE static void exiter_spin(void)
{
	WL_SPIN(100000L);
}

int main(int argc, char **argv)
{
	double secs = wl_arg_double(argc, argv, 1, 1.0);
	long status = wl_arg_long(argc, argv, 2, 0);
	double end = wl_now() + secs;

	if (status > 255) {
		fprintf(stderr, "exiter: exit status %ld out of range 0-255\n", status);
		return 2;
	}
	while (wl_now() < end)
		exiter_spin();
	return (int)status;
}
