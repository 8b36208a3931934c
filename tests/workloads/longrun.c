/*
 * longrun.c - a churning service for long-run tests and benchmarks (issue 23).
 *
 * Everything that makes a profiler's memory grow with time when it keeps
 * what it should fold, all at once, for SECONDS (argv[1], default 60):
 *   - NWORK worker threads (named "worker") doing deep random recursion
 *     through four functions (a different call path almost every time),
 *     the pool replaced by new threads every 1-3 s;
 *   - a "plugin" thread that dlopen()s libhot.so (next to this binary),
 *     spins in it briefly and dlclose()s it, several times a second;
 *   - an "mmap" thread that maps and unmaps memory, some of it executable
 *     (each a new mapping the profiler is told about).
 * No ground truth on shares; what matters is that pmutop's memory stays
 * flat after warm-up. usage: longrun [SECONDS]
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "workload.h"

#define NWORK 4

static volatile int stop_pool, stop_all;
static char libpath[PATH_MAX];

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

WL_NOINLINE static long rec_a(unsigned *s, int d);
WL_NOINLINE static long rec_b(unsigned *s, int d);
WL_NOINLINE static long rec_c(unsigned *s, int d);
WL_NOINLINE static long rec_d(unsigned *s, int d);

static long next(unsigned *s, int d)
{
	if (d <= 0) {
		WL_SPIN(2000L);
		return 1;
	}
	switch (rnd(s) % 4) {
	case 0: return rec_a(s, d - 1) + 1;
	case 1: return rec_b(s, d - 1) + 2;
	case 2: return rec_c(s, d - 1) + 3;
	default: return rec_d(s, d - 1) + 4;
	}
}

WL_NOINLINE static long rec_a(unsigned *s, int d) { WL_SPIN(50L); return next(s, d); }
WL_NOINLINE static long rec_b(unsigned *s, int d) { WL_SPIN(80L); return next(s, d) * 2; }
WL_NOINLINE static long rec_c(unsigned *s, int d) { WL_SPIN(30L); return next(s, d) + d; }
WL_NOINLINE static long rec_d(unsigned *s, int d) { WL_SPIN(60L); return next(s, d) - 1; }

static void *worker(void *arg)
{
	unsigned s = (unsigned)(uintptr_t)arg;

	pthread_setname_np(pthread_self(), "worker");
	while (!stop_pool)
		wl_sink += (uint64_t)next(&s, 5 + (int)(rnd(&s) % 60));
	return NULL;
}

static void *plugin(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "plugin");
	while (!stop_all) {
		void *h = dlopen(libpath, RTLD_NOW | RTLD_LOCAL);
		double (*spin)(double) = h ? (double (*)(double))dlsym(h, "libhot_spin") : NULL;

		if (spin)
			spin(0.02);
		if (h)
			dlclose(h);
		usleep(100000);
	}
	return NULL;
}

static void *mapper(void *arg)
{
	unsigned s = 7;

	(void)arg;
	pthread_setname_np(pthread_self(), "mmap");
	while (!stop_all) {
		size_t len = (size_t)(1 + rnd(&s) % 64) * 4096;
		int prot = rnd(&s) % 4 ? PROT_READ | PROT_WRITE : PROT_READ | PROT_EXEC;
		void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p != MAP_FAILED) {
			if (prot & PROT_WRITE)
				memset(p, 1, len);
			munmap(p, len);
		}
		usleep(5000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 60, t0 = wl_now();
	pthread_t pool[NWORK], pl, mp;
	unsigned s = 1, gen = 0;
	char *slash;

	snprintf(libpath, sizeof(libpath), "%s", argv[0]);
	slash = strrchr(libpath, '/');
	snprintf(slash ? slash + 1 : libpath, sizeof(libpath) - (size_t)(slash ? slash + 1 - libpath : 0),
		 "libhot.so");
	pthread_create(&pl, NULL, plugin, NULL);
	pthread_create(&mp, NULL, mapper, NULL);
	while (wl_now() - t0 < secs) {
		stop_pool = 0;
		for (int i = 0; i < NWORK; i++)
			pthread_create(&pool[i], NULL, worker, (void *)(uintptr_t)(++gen * 7919u));
		usleep(1000000u + rnd(&s) % 2000000u);
		stop_pool = 1;
		for (int i = 0; i < NWORK; i++)
			pthread_join(pool[i], NULL);
	}
	stop_all = 1;
	pthread_join(pl, NULL);
	pthread_join(mp, NULL);
	fprintf(stderr, "longrun: %u worker threads in %.0f s\n", gen, wl_now() - t0);
	return 0;
}
