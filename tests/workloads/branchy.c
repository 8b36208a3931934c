/*
 * branchy.c - two functions of equal cost, one with unpredictable branches.
 *
 * Ground truth: random_branches() and pattern_branches() run the same
 * instructions over arrays of the same size; the first branches on random
 * bits (about half its branches mispredict), the second on a period-4
 * pattern the predictor learns. So `-e branchMisses` must put nearly all
 * misses in random_branches, while `-e instructions` splits about evenly.
 *
 * usage: branchy [SECONDS]
 */
#include "workload.h"

#define N 4096

static uint8_t random_bits[N], pattern_bits[N];

static inline __attribute__((always_inline)) uint64_t walk(const uint8_t *bits)
{
	uint64_t acc = 0;

	for (int i = 0; i < N; i++) {
		/* The branch the predictor must guess; the asm keeps it a branch.
		 * walk() is inlined so each caller owns its loop (its flat time). */
		if (bits[i]) {
			acc += (uint64_t)i * 3;
			__asm__ volatile("" : "+r"(acc));
		} else {
			acc ^= (uint64_t)i;
			__asm__ volatile("" : "+r"(acc));
		}
	}
	return acc;
}

WL_NOINLINE static uint64_t random_branches(void)
{
	return walk(random_bits);
}

WL_NOINLINE static uint64_t pattern_branches(void)
{
	return walk(pattern_bits);
}

int main(int argc, char **argv)
{
	double secs = wl_arg_double(argc, argv, 1, -1.0);
	double end = wl_now() + secs;
	uint64_t x = 88172645463325252ULL;

	for (int i = 0; i < N; i++) {
		x = wl_xorshift64(x);
		random_bits[i] = (uint8_t)(x & 1);
		pattern_bits[i] = (uint8_t)((i & 3) == 0);
	}
	for (;;) {
		for (int r = 0; r < 200; r++)
			wl_sink += random_branches() + pattern_branches();
		if (secs >= 0 && wl_now() >= end)
			break;
	}
	return 0;
}
