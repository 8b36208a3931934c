/*
 * pingpong.c - a fixed number of context switches (bench: -e offcpu cost).
 *
 * Usage: pingpong ROUNDS TIMEFILE [SPIN]
 *
 * Two threads pass a byte back and forth over two pipes ROUNDS times: each
 * round every thread blocks once in read(), so a round is at least two
 * switch-outs. With SPIN, the main thread does SPIN steps of work
 * (WL_SPIN) per round, for a lower switch rate. Writes "WALL USER SYS" (seconds: the rounds' CLOCK_MONOTONIC
 * time, the process's CPU) to TIMEFILE, as fixed_work does.
 */
#include "workload.h"

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

static int ab[2], ba[2];
static long rounds, spin;

static void *echo(void *arg)
{
	char c;
	(void)arg;
	for (long i = 0; i < rounds; i++)
		if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
			exit(3);
	return NULL;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	pthread_t th;
	FILE *f;
	char c = 'x';

	if (argc < 3 || argc > 4 || (rounds = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: pingpong ROUNDS TIMEFILE [SPIN]\n");
		return 2;
	}
	if (pipe(ab) || pipe(ba) || pthread_create(&th, NULL, echo, NULL))
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	spin = argc > 3 ? atol(argv[3]) : 0;
	for (long i = 0; i < rounds; i++) {
		if (spin)
			WL_SPIN(spin);
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 3;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_join(th, NULL);
	getrusage(RUSAGE_SELF, &ru);
	f = fopen(argv[2], "w");
	if (!f)
		return 2;
	fprintf(f, "%.6f %.6f %.6f\n",
		(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
		(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
		(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	return fclose(f) ? 2 : 0;
}
