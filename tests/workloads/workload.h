/*
 * workload.h - helpers shared by the end-to-end test workloads.
 *
 * The workloads are programs whose profile is known in advance, so the e2e
 * tests can compare what pmutop measured against the truth. For that to hold
 * the compiler must neither delete, merge, inline nor clone the hot code:
 *
 *   WL_NOINLINE   keeps a function a real, separately named symbol (GCC's
 *                 noipa also stops .constprop/.isra clones, which would
 *                 rename it);
 *   WL_SPIN(n)    n iterations of a serially dependent xorshift step whose
 *                 state goes through an empty asm, so it cannot be computed
 *                 in closed form, vectorised or hoisted. It is a macro, not a
 *                 function, so the cycles land in the function that uses it
 *                 (its "flat" time), not in a shared helper.
 *
 * Everything here is static inline so each workload is a single .c file.
 */
#ifndef PMUTOP_WORKLOAD_H
#define PMUTOP_WORKLOAD_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__clang__)
#define WL_NOINLINE __attribute__((noinline, used))
#else
#define WL_NOINLINE __attribute__((noinline, noipa, used))
#endif

/* Written after every spin so its result is observable. */
static volatile uint64_t wl_sink;

#define WL_SPIN(iters)                                                  \
	do {                                                            \
		uint64_t wl_x_ = wl_sink | 1;                           \
		for (long wl_i_ = 0; wl_i_ < (long)(iters); wl_i_++) {  \
			wl_x_ ^= wl_x_ << 13;                           \
			wl_x_ ^= wl_x_ >> 7;                            \
			wl_x_ ^= wl_x_ << 17;                           \
			__asm__ volatile("" : "+r"(wl_x_) : : "memory"); \
		}                                                       \
		wl_sink = wl_x_;                                        \
	} while (0)

/* One xorshift64 step: the workloads' cheap, repeatable pseudo-random numbers. */
static inline uint64_t wl_xorshift64(uint64_t x)
{
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

/* Monotonic time in seconds. */
static inline double wl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * argv[idx] as a number of seconds (or any non-negative real), or dflt when
 * the argument is absent. Exits with status 2 on a malformed value.
 */
static inline double wl_arg_double(int argc, char **argv, int idx, double dflt)
{
	char *end;
	double v;

	if (idx >= argc)
		return dflt;
	errno = 0;
	v = strtod(argv[idx], &end);
	if (errno || end == argv[idx] || *end || v < 0) {
		fprintf(stderr, "%s: invalid number \"%s\"\n", argv[0], argv[idx]);
		exit(2);
	}
	return v;
}

/* argv[idx] as a non-negative integer, or dflt when absent; exits 2 if bad. */
static inline long wl_arg_long(int argc, char **argv, int idx, long dflt)
{
	char *end;
	long v;

	if (idx >= argc)
		return dflt;
	errno = 0;
	v = strtol(argv[idx], &end, 10);
	if (errno || end == argv[idx] || *end || v < 0) {
		fprintf(stderr, "%s: invalid integer \"%s\"\n", argv[0], argv[idx]);
		exit(2);
	}
	return v;
}

/*
 * Start gate: when WL_GATE names a FIFO, block until the test writes a byte
 * to it. A test attaches two profilers to the process while it sleeps here,
 * then opens the gate, so both see the same run from its first instruction
 * of work to its exit - no window edges that cut rounds differently.
 * Exits with status 2 when the FIFO cannot be read.
 */
static inline void wl_gate(void)
{
	const char *path = getenv("WL_GATE");
	char c;
	int fd;

	if (!path || !*path)
		return;
	fd = open(path, O_RDONLY);
	if (fd < 0 || read(fd, &c, 1) < 0) {
		fprintf(stderr, "WL_GATE %s: %s\n", path, strerror(errno));
		exit(2);
	}
	close(fd);
}

#endif
