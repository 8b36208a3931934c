/*
 * cachey.c - pointer chasing over a large array vs streaming a small one.
 *
 * Ground truth: chase() follows a random cyclic permutation over 64 MiB
 * (each load depends on the previous and misses every cache level), while
 * stream() sums a 16 KiB array that stays in L1. Both run for the same
 * number of loads per round, so `-e cacheMisses` lands on chase().
 *
 * usage: cachey [SECONDS]
 */
#include "workload.h"

#define BIG (64u << 20) / sizeof(uint32_t)
#define SMALL (16u << 10) / sizeof(uint32_t)
#define STEPS 200000

static uint32_t *big, small_arr[SMALL];

WL_NOINLINE static uint32_t chase(uint32_t start)
{
	uint32_t p = start;

	for (int i = 0; i < STEPS; i++)
		p = big[p];
	return p;
}

WL_NOINLINE static uint64_t stream(void)
{
	uint64_t sum = 0;

	for (int i = 0; i < STEPS; i++) {
		sum += small_arr[i & (SMALL - 1)];
		__asm__ volatile("" : "+r"(sum));
	}
	return sum;
}

int main(int argc, char **argv)
{
	double secs = wl_arg_double(argc, argv, 1, -1.0);
	double end = wl_now() + secs;
	uint64_t x = 0x9E3779B97F4A7C15ULL;
	uint32_t p = 0;

	big = malloc(BIG * sizeof(uint32_t));
	if (!big)
		return 1;
	/* Sattolo's algorithm: one cycle through every element. */
	for (uint32_t i = 0; i < BIG; i++)
		big[i] = i;
	for (uint32_t i = BIG - 1; i > 0; i--) {
		x = wl_xorshift64(x);
		uint32_t j = (uint32_t)(x % i);
		uint32_t t = big[i];
		big[i] = big[j];
		big[j] = t;
	}
	for (uint32_t i = 0; i < SMALL; i++)
		small_arr[i] = i;
	for (;;) {
		p = chase(p);
		wl_sink += stream() + p;
		if (secs >= 0 && wl_now() >= end)
			break;
	}
	free(big);
	return 0;
}
