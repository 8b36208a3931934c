/*
 * garbage_stack.c - threads that run on corrupt frame chains and garbage stacks.
 *
 * Ground truth: NMODES threads (plus the main thread, which sleeps). Each
 * first fills a large part of its stack with random words (garbage_fill),
 * then calls corrupt_and_spin(mode), which overwrites the saved frame
 * pointer and/or the return address of its own frame in a controlled way
 * and spins there forever (it never returns, so the corruption cannot
 * crash the workload):
 *   0  return address and saved RBP = random words;
 *   1  saved RBP = its own frame, return address = inside itself: a frame
 *      that is its own caller (a loop for a naive unwinder);
 *   2  saved RBP -> a fabricated chain of frames in the garbage area whose
 *      return addresses point into real code at random offsets;
 *   3  return address = 0 and saved RBP = 0 (looks like a clean root);
 *   4  saved RBP and return address pointing far below the stack pointer
 *      (a chain that grows the wrong way).
 * Every sample has its leaf in corrupt_and_spin(); whatever is above it
 * is garbage, and an unwinder must stop on it cleanly. The process exits
 * after SECONDS (argv[1], default 3).
 *
 * usage: garbage_stack [SECONDS]
 */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

#define NMODES 5
#define FILL_WORDS 4096

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	/* Racy across threads on purpose-free data: any value is fine. */
	uint64_t x = __atomic_load_n(&rnd_state, __ATOMIC_RELAXED);

	x = wl_xorshift64(x);
	__atomic_store_n(&rnd_state, x, __ATOMIC_RELAXED);
	return x;
}

/* Leave FILL_WORDS random words on the stack below the caller. */
WL_NOINLINE static void garbage_fill(void)
{
	volatile uint64_t junk[FILL_WORDS];

	for (int i = 0; i < FILL_WORDS; i++)
		junk[i] = rnd();
	wl_sink = junk[rnd() % FILL_WORDS];
}

WL_NOINLINE __attribute__((noreturn)) static void corrupt_and_spin(long mode)
{
	volatile uint64_t *fp = __builtin_frame_address(0);
	volatile uint64_t fake[64];
	uint64_t here = (uint64_t)(uintptr_t)&&spin;

	for (int i = 0; i < 64; i++)
		fake[i] = rnd();
	switch (mode) {
	case 0:
		fp[0] = rnd();
		fp[1] = rnd();
		break;
	case 1:
		fp[0] = (uint64_t)(uintptr_t)fp;
		fp[1] = here;
		break;
	case 2:
		/* fake[i] = saved RBP -> &fake[i + 2], fake[i + 1] = "return address". */
		for (int i = 0; i + 3 < 64; i += 2) {
			fake[i] = (uint64_t)(uintptr_t)&fake[i + 2];
			fake[i + 1] = (uint64_t)(uintptr_t)garbage_fill + rnd() % 512;
		}
		fp[0] = (uint64_t)(uintptr_t)&fake[0];
		fp[1] = (uint64_t)(uintptr_t)corrupt_and_spin + rnd() % 256;
		break;
	case 3:
		fp[0] = 0;
		fp[1] = 0;
		break;
	default:
		fp[0] = (uint64_t)(uintptr_t)fp - 65536;
		fp[1] = here + 1;
		break;
	}
spin:
	for (;;)
		WL_SPIN(100000L);
}

static void *garbage_thread(void *arg)
{
	garbage_fill();
	corrupt_and_spin((long)arg);
}

int main(int argc, char **argv)
{
	double secs = wl_arg_double(argc, argv, 1, 3.0);
	pthread_t t;

	for (long m = 0; m < NMODES; m++) {
		int err = pthread_create(&t, NULL, garbage_thread, (void *)m);

		if (err) {
			fprintf(stderr, "garbage_stack: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	usleep((useconds_t)(secs * 1e6));
	_exit(0);
}
