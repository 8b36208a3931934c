/*
 * libhot.c - the shared library dl_main dlopen()s mid-run (libhot.so).
 *
 * Ground truth: once loaded, all of dl_main's time is in libhot_spin(), a
 * function in a mapping that did not exist when the profiler attached. A
 * profiler that reads /proc/PID/maps only once cannot name it.
 */
#include "workload.h"

double libhot_spin(double seconds);

/*
 * Spin for the given number of seconds; returns the seconds actually spent.
 * The loop work is in this function (its flat time).
 */
__attribute__((noinline, visibility("default"))) double libhot_spin(double seconds)
{
	double start = wl_now();
	double t;

	do {
		WL_SPIN(100000L);
		t = wl_now();
	} while (t - start < seconds);
	return t - start;
}
