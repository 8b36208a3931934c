/*
 * threads.c - ten threads doing identical work.
 *
 * Ground truth: threads "worker0" .. "worker9" (pthread_setname_np) each run
 * the same loop in thread_work() for the whole run and never block, so under
 * the fair scheduler each gets 10% of the process's CPU time. A profile
 * grouped by the thread label should show every worker at ~10%; the main
 * thread sleeps in pthread_join() and gets ~0%.
 *
 * The workers start together (barrier) and stop at a common deadline,
 * argv[1] seconds after start (default 5), then the process exits 0.
 *
 * usage: threads [SECONDS]
 */
#include <pthread.h>
#include <string.h>

#include "workload.h"

#define NTHREADS 10
/* ~0.2-0.5 ms of work between clock reads. */
#define CHUNK 100000L

static pthread_barrier_t start_barrier;
static double deadline;

WL_NOINLINE static void thread_work(void)
{
	WL_SPIN(CHUNK);
}

static void *worker(void *arg)
{
	long idx = (long)arg;
	char name[16];

	snprintf(name, sizeof(name), "worker%ld", idx);
	pthread_setname_np(pthread_self(), name);
	pthread_barrier_wait(&start_barrier);
	while (wl_now() < deadline)
		thread_work();
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = wl_arg_double(argc, argv, 1, 5.0);
	pthread_t tids[NTHREADS];
	int err;

	pthread_barrier_init(&start_barrier, NULL, NTHREADS + 1);
	deadline = wl_now() + secs;
	for (long i = 0; i < NTHREADS; i++) {
		err = pthread_create(&tids[i], NULL, worker, (void *)i);
		if (err) {
			fprintf(stderr, "threads: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	pthread_barrier_wait(&start_barrier);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(tids[i], NULL);
	return 0;
}
