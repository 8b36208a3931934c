/*
 * offcpu.c - threads that block for known times (for -e offcpu).
 *
 * Usage: offcpu SECONDS
 *
 * Truth, per round, by thread name:
 *   pipe_waiter  sleeps 30 ms in nap_30ms(), then asks pipe_writer for a
 *                byte and waits for it in wait_pipe_60ms(): the writer
 *                sleeps 60 ms (writer_nap_60ms) before writing. Off-CPU
 *                shares of pipe_waiter: 1/3 nap_30ms, 2/3 wait_pipe_60ms.
 *   lock_waiter  waits in wait_lock_40ms() for a mutex lock_holder holds
 *                for 40 ms (holder_nap_40ms), then sleeps 20 ms in
 *                nap_20ms() before the next round: 2/3 and 1/3.
 *   parked       blocks in parked_forever() (a read on a pipe nobody
 *                writes) from the start to the end.
 *   main         burns CPU in burn() for a few ms per 50 ms (so a CPU
 *                event has something), sleeping in main_nap() between.
 * After SECONDS the process exits (exit_group) while every thread but main
 * is blocked: the blocks end with it.
 */
#include "workload.h"

#include <pthread.h>
#include <unistd.h>

static int req[2], resp[2], park[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int lock_go[2], lock_taken[2];

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

WL_NOINLINE static void nap_30ms(void) { nap_ms(30); }
WL_NOINLINE static void nap_20ms(void) { nap_ms(20); }
WL_NOINLINE static void writer_nap_60ms(void) { nap_ms(60); }
WL_NOINLINE static void holder_nap_40ms(void) { nap_ms(40); }
WL_NOINLINE static void main_nap(void) { nap_ms(45); }

WL_NOINLINE static void wait_pipe_60ms(void)
{
	char c;
	if (read(resp[0], &c, 1) != 1)
		exit(3);
}

WL_NOINLINE static void wait_lock_40ms(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
}

WL_NOINLINE static void parked_forever(void)
{
	char c;
	while (read(park[0], &c, 1) < 0 && errno == EINTR)
		;
}

WL_NOINLINE static void burn(void) { WL_SPIN(3000000); }

static void *pipe_waiter(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "pipe_waiter");
	for (;;) {
		nap_30ms();
		if (write(req[1], "r", 1) != 1)
			exit(3);
		wait_pipe_60ms();
	}
	return NULL;
}

static void *pipe_writer(void *arg)
{
	char c;
	(void)arg;
	pthread_setname_np(pthread_self(), "pipe_writer");
	while (read(req[0], &c, 1) == 1) {
		writer_nap_60ms();
		if (write(resp[1], "w", 1) != 1)
			exit(3);
	}
	return NULL;
}

/* The holder takes the lock, tells the waiter, holds it 40 ms. */
static void *lock_holder(void *arg)
{
	char c;
	(void)arg;
	pthread_setname_np(pthread_self(), "lock_holder");
	while (read(lock_go[0], &c, 1) == 1) {
		pthread_mutex_lock(&lock);
		if (write(lock_taken[1], "t", 1) != 1)
			exit(3);
		holder_nap_40ms();
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static void *lock_waiter(void *arg)
{
	char c;
	(void)arg;
	pthread_setname_np(pthread_self(), "lock_waiter");
	for (;;) {
		if (write(lock_go[1], "g", 1) != 1 || read(lock_taken[0], &c, 1) != 1)
			exit(3);
		wait_lock_40ms();
		nap_20ms();
	}
	return NULL;
}

static void *parked(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "parked");
	parked_forever();
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	void *(*fns[])(void *) = { pipe_waiter, pipe_writer, lock_holder, lock_waiter, parked };
	struct timespec t0, t;
	pthread_t th;

	if (pipe(req) || pipe(resp) || pipe(park) || pipe(lock_go) || pipe(lock_taken))
		return 2;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (pthread_create(&th, NULL, fns[i], NULL))
			return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		burn();
		main_nap();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	_exit(0);
}
