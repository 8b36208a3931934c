/*
 * churn.c - thread churn: thousands of short-lived threads per second.
 *
 * Ground truth, in three phases:
 *   1. QUIET1 seconds (argv[2], default 1): the main thread alone, in
 *      churn_quiet();
 *   2. CHURN seconds (argv[1], default 10): the main thread creates batches
 *      of NPAR threads (named "churn"), each running churn_work() for a few
 *      tens of microseconds, and joins them, over and over;
 *   3. QUIET2 seconds (argv[3], default 2): the main thread alone again.
 * A profiler must survive the churn, see churn_work samples from many
 * different tids, and hold no more file descriptors in phase 3 than in
 * phase 1. The number of threads created goes to stderr at the end.
 *
 * usage: churn [CHURN_SECONDS [QUIET1 [QUIET2]]]
 */
#include <pthread.h>
#include <string.h>

#include "workload.h"

#define NPAR 4

WL_NOINLINE static void churn_quiet(void)
{
	WL_SPIN(20000L);
}

WL_NOINLINE static void churn_work(void)
{
	WL_SPIN(30000L);
}

static void *churn_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "churn");
	churn_work();
	return NULL;
}

static void quiet(double secs)
{
	double end = wl_now() + secs;

	while (wl_now() < end)
		churn_quiet();
}

int main(int argc, char **argv)
{
	double churn = wl_arg_double(argc, argv, 1, 10.0);
	double q1 = wl_arg_double(argc, argv, 2, 1.0);
	double q2 = wl_arg_double(argc, argv, 3, 2.0);
	unsigned long created = 0;
	double end;

	quiet(q1);
	end = wl_now() + churn;
	while (wl_now() < end) {
		pthread_t t[NPAR];
		int n = 0, err;

		for (int i = 0; i < NPAR; i++) {
			err = pthread_create(&t[n], NULL, churn_thread, NULL);
			if (err) {
				fprintf(stderr, "churn: pthread_create: %s\n", strerror(err));
				break;
			}
			n++;
		}
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
		created += (unsigned long)n;
	}
	fprintf(stderr, "churn: %lu threads in %.1f s (%.0f/s)\n", created, churn,
		churn > 0 ? (double)created / churn : 0.0);
	quiet(q2);
	return 0;
}
