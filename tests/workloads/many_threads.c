/*
 * many_threads.c - a process with many, mostly sleeping threads.
 *
 * Ground truth: NTHREADS threads "mt0".."mtN-1" (plus main, which sleeps in
 * pthread_join), each waking every INTERVAL_MS milliseconds (first wake at a
 * random phase, so they do not all wake together) to spin SPIN serially
 * dependent steps in mt_work(), then sleeping again. The process uses about
 * NTHREADS * (SPIN time) / INTERVAL_MS of CPU: with the defaults (200 ms,
 * 40000 steps ~ 0.1 ms) 1,000 threads keep about half a CPU busy. For the
 * scale benchmark (bench/run.sh): attach time, fds, memory and sample rate
 * of a profiler against 10 ... 1,000 threads. Prints nothing; a thread that
 * cannot be created is an error (exit 1).
 *
 * All threads exist once /proc/PID/task has NTHREADS+1 entries. The process
 * exits after SECONDS (default 60) - a backstop; the benchmark kills it.
 *
 * usage: many_threads NTHREADS [SECONDS [INTERVAL_MS [SPIN]]]
 */
#include <pthread.h>
#include <string.h>

#include "workload.h"

static double deadline;
static long interval_ms;
static long spin;

WL_NOINLINE static void mt_work(void)
{
	WL_SPIN(spin);
}

static void sleep_until(double t)
{
	struct timespec ts;

	ts.tv_sec = (time_t)t;
	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_nsec = 999999999L;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void *worker(void *arg)
{
	long idx = (long)arg;
	char name[16];
	double period = (double)interval_ms / 1e3;
	/* A fixed, spread-out phase per thread (golden-ratio sequence). */
	double next = wl_now() + period * ((double)((idx * 2654435761UL) % 1000) / 1000.0);

	snprintf(name, sizeof(name), "mt%ld", idx);
	pthread_setname_np(pthread_self(), name);
	for (;;) {
		sleep_until(next);
		if (wl_now() >= deadline)
			break;
		mt_work();
		next += period;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = wl_arg_long(argc, argv, 1, 10);
	double secs = wl_arg_double(argc, argv, 2, 60.0);
	pthread_attr_t attr;
	pthread_t *tids;
	int err;

	interval_ms = wl_arg_long(argc, argv, 3, 200);
	spin = wl_arg_long(argc, argv, 4, 40000);
	if (interval_ms < 1)
		interval_ms = 1;
	tids = calloc((size_t)(n ? n : 1), sizeof(*tids));
	if (!tids) {
		fprintf(stderr, "many_threads: out of memory\n");
		return 1;
	}
	deadline = wl_now() + secs;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 128 * 1024);
	for (long i = 0; i < n; i++) {
		err = pthread_create(&tids[i], &attr, worker, (void *)i);
		if (err) {
			fprintf(stderr, "many_threads: pthread_create #%ld: %s\n", i, strerror(err));
			return 1;
		}
	}
	for (long i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	return 0;
}
