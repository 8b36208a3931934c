/*
 * short_threads.c - short-lived threads, one after another.
 *
 * Ground truth: after argv[1] seconds (default 1) of main_wait() sleeping,
 * 20 threads run one at a time; thread k names itself "short%02d" and
 * burns argv[2] milliseconds (default 40) of CPU in short_work(), then
 * exits. A profiler attached before they start sees each thread only if it
 * picks new threads up well within their lifetime: with per-thread counters
 * inherited at creation, each gets its full share.
 *
 * usage: short_threads [DELAY_SECONDS [MS_PER_THREAD]]
 */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

static double ms_each;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

WL_NOINLINE static void short_work(void)
{
	double end = cpu_now() + ms_each / 1000.0;

	while (cpu_now() < end)
		WL_SPIN(2000);
}

static void *thread_main(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "short%02d", (int)(long)arg);
	pthread_setname_np(pthread_self(), name);
	short_work();
	return NULL;
}

WL_NOINLINE static void main_wait(double secs)
{
	usleep((useconds_t)(secs * 1e6));
}

int main(int argc, char **argv)
{
	double delay = wl_arg_double(argc, argv, 1, 1.0);

	ms_each = wl_arg_double(argc, argv, 2, 40.0);
	main_wait(delay);
	for (long k = 0; k < 20; k++) {
		pthread_t t;

		if (pthread_create(&t, NULL, thread_main, (void *)k))
			return 1;
		pthread_join(t, NULL);
	}
	return 0;
}
