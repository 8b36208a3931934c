/*
 * late_threads.c - threads that appear after the profiler has attached.
 *
 * Ground truth: for the first PHASE1 seconds (argv[2], default 1) only the
 * main thread runs, in main_spin(). Then three threads start; each names
 * itself "late0", "late1", "late2" (pthread_setname_np, from inside the
 * thread, before working) and spins in late_work() until argv[1] seconds
 * (default 3) after start. A profiler attached during phase 1 must pick up
 * the new threads (and their names) to see any late_work samples. The main
 * thread sleeps in pthread_join meanwhile.
 *
 * usage: late_threads [TOTAL_SECONDS [PHASE1_SECONDS]]
 */
#include <pthread.h>
#include <string.h>

#include "workload.h"

#define NLATE 3

static double deadline;

WL_NOINLINE static void main_spin(void)
{
	WL_SPIN(100000L);
}

WL_NOINLINE static void late_work(void)
{
	WL_SPIN(100000L);
}

static void *late_thread(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "late%ld", (long)arg);
	pthread_setname_np(pthread_self(), name);
	while (wl_now() < deadline)
		late_work();
	return NULL;
}

int main(int argc, char **argv)
{
	double total = wl_arg_double(argc, argv, 1, 3.0);
	double phase1 = wl_arg_double(argc, argv, 2, 1.0);
	double start = wl_now();
	pthread_t tids[NLATE];
	int err;

	deadline = start + total;
	while (wl_now() - start < phase1)
		main_spin();
	for (long i = 0; i < NLATE; i++) {
		err = pthread_create(&tids[i], NULL, late_thread, (void *)i);
		if (err) {
			fprintf(stderr, "late_threads: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (int i = 0; i < NLATE; i++)
		pthread_join(tids[i], NULL);
	return 0;
}
