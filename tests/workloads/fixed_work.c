/*
 * fixed_work.c - a fixed amount of CPU work, for overhead benchmarks.
 *
 * Ground truth: ITERS rounds, each a descent through DEPTH frames of
 * fixed_descend() to fixed_leaf(), which spins LEAF_ITERS serially dependent
 * steps (~50-100 us), and back up. The amount of work is fixed, not the run
 * time, so the wall time of a run measures how much a profiler slows it down
 * (bench/run.sh, section "target overhead"). Single-threaded; prints nothing.
 *
 * When TIMEFILE is given (and not "-"), one line is written there:
 *     WALL USER SYS
 * the wall time of the work itself (CLOCK_MONOTONIC, from main's entry to the
 * end of the last round, so process start-up and a profiler's own start and
 * end are not counted) and the process's user and system CPU time
 * (getrusage), all in seconds.
 *
 * usage: fixed_work ITERS [DEPTH [TIMEFILE]]      DEPTH defaults to 8
 */
#include <string.h>
#include <sys/resource.h>

#include "workload.h"

#define LEAF_ITERS 20000L

WL_NOINLINE static long fixed_leaf(void)
{
	WL_SPIN(LEAF_ITERS);
	return (long)(wl_sink & 1);
}

WL_NOINLINE static long fixed_descend(long n)
{
	volatile long r;

	if (n <= 0)
		r = fixed_leaf();
	else
		r = fixed_descend(n - 1);
	return r + n;
}

int main(int argc, char **argv)
{
	double t0 = wl_now();
	long iters = wl_arg_long(argc, argv, 1, 1000);
	long depth = wl_arg_long(argc, argv, 2, 8);
	const char *timefile = argc > 3 ? argv[3] : NULL;

	for (long i = 0; i < iters; i++)
		wl_sink += (uint64_t)fixed_descend(depth);
	if (timefile && strcmp(timefile, "-") != 0) {
		double el = wl_now() - t0;
		struct rusage ru;
		FILE *f;

		getrusage(RUSAGE_SELF, &ru);
		f = fopen(timefile, "w");
		if (!f || fprintf(f, "%.9f %ld.%06ld %ld.%06ld\n", el,
				  (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec,
				  (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec) < 0 ||
		    fclose(f) != 0) {
			perror(timefile);
			return 1;
		}
	}
	return 0;
}
