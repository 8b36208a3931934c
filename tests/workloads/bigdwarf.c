/*
 * bigdwarf.c - a program with a large DWARF of its own and hot code that
 * nobody can name: what made `go tool pprof` re-symbolize pmutop's profiles
 * for minutes (issue 31, t_pprof_open.sh).
 *
 * 4,000 small functions (f1000 ... f4999, each with inlined helpers, so the
 * one compile unit has ~84,000 DIEs at -O0, as tests.mk builds it) call each
 * other in random chains of DEPTH frames; each chain ends in leaf(), which
 * spins half its time in C and half in a top-level asm block that has no
 * symbol, no CFI and no line rows. pmutop names everything but that block
 * ("bigdwarf+0xOFF"); a profile that leaves this mapping unmarked as
 * symbolized makes pprof look every one of its ~4,000 locations up again in
 * Go's DWARF reader, which walks the compile unit's DIEs for each.
 *
 * usage: bigdwarf [SECONDS [DEPTH]]     defaults 5 and 100
 */
#include "workload.h"

#include <stdlib.h>
#include <time.h>

#ifndef NFUNC
#define NFUNC 4000
#endif

typedef unsigned long (*step_fn)(unsigned long x, int d);
extern const step_fn bigdwarf_steps[NFUNC];

#if defined(__x86_64__)
/* Code without a symbol (a .L label), CFI or line rows; its address is
 * reached through a pointer in data. rdi: seed, rsi: iterations. */
__asm__(".pushsection .text.unlikely.bigdwarf_anon,\"ax\",@progbits\n"
	".p2align 4\n"
	".Lbigdwarf_anon:\n"
	"	mov %rdi, %rax\n"
	"1:	imul $0x5851f42d, %rax, %rax\n"
	"	add $1, %rax\n"
	"	dec %rsi\n"
	"	jnz 1b\n"
	"	ret\n"
	".popsection\n"
	".pushsection .data.rel.ro,\"aw\"\n"
	".p2align 3\n"
	"bigdwarf_anon:\n"
	"	.quad .Lbigdwarf_anon\n"
	".popsection\n");
extern unsigned long (*const bigdwarf_anon)(unsigned long seed, unsigned long n);
#else
#error "bigdwarf: the unnamed code is x86-64 assembly"
#endif

static inline __attribute__((always_inline)) unsigned long mix(unsigned long x, unsigned long k)
{
	unsigned long a = x ^ (k * 0x9e3779b97f4a7c15UL);
	unsigned long b = a ^ (a >> 31);

	return b * 0xbf58476d1ce4e5b9UL;
}

static inline __attribute__((always_inline)) unsigned long fold(unsigned long x, int d)
{
	unsigned long lo = x & 0xffffffffUL, hi = x >> 32;

	return mix(lo ^ hi, (unsigned long)d);
}

WL_NOINLINE static unsigned long leaf(unsigned long z)
{
	WL_SPIN(4000);
	return bigdwarf_anon(z, 4000) + (unsigned long)(wl_sink & 1);
}

/* Function n: a few inlined steps, then a random next function (not a tail call). */
#define F(n)                                                                           \
	WL_NOINLINE static unsigned long f##n(unsigned long x, int d)                     \
	{                                                                              \
		unsigned long y = mix(x, n##UL);                                       \
		unsigned long z = fold(y, d);                                          \
		volatile unsigned long r;                                              \
		if (d <= 0)                                                            \
			r = leaf(z);                                                   \
		else                                                                   \
			r = bigdwarf_steps[z % NFUNC](z, d - 1);                       \
		return r + n##UL;                                                      \
	}
#define F10(p) F(p##0) F(p##1) F(p##2) F(p##3) F(p##4) F(p##5) F(p##6) F(p##7) F(p##8) F(p##9)
#define F100(p) F10(p##0) F10(p##1) F10(p##2) F10(p##3) F10(p##4) \
		F10(p##5) F10(p##6) F10(p##7) F10(p##8) F10(p##9)
#define F1000(p) F100(p##0) F100(p##1) F100(p##2) F100(p##3) F100(p##4) \
		 F100(p##5) F100(p##6) F100(p##7) F100(p##8) F100(p##9)
F1000(1) F1000(2)
#if NFUNC > 2000
F1000(3) F1000(4)
#endif

#define E(n) f##n,
#define E10(p) E(p##0) E(p##1) E(p##2) E(p##3) E(p##4) E(p##5) E(p##6) E(p##7) E(p##8) E(p##9)
#define E100(p) E10(p##0) E10(p##1) E10(p##2) E10(p##3) E10(p##4) \
		E10(p##5) E10(p##6) E10(p##7) E10(p##8) E10(p##9)
#define E1000(p) E100(p##0) E100(p##1) E100(p##2) E100(p##3) E100(p##4) \
		 E100(p##5) E100(p##6) E100(p##7) E100(p##8) E100(p##9)
const step_fn bigdwarf_steps[NFUNC] = { E1000(1) E1000(2)
#if NFUNC > 2000
	E1000(3) E1000(4)
#endif
};

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	int depth = argc > 2 ? atoi(argv[2]) : 100;
	struct timespec t0, t;
	unsigned long seed = 1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 16; i++)
			seed = bigdwarf_steps[seed % NFUNC](seed + (unsigned long)i, depth);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return (int)(seed & 0);
}
