/*
 * test_symbolize.c - frames from addresses: the leaf/caller (ip vs ip-1)
 * rule on hand-made adjacent functions and on a real call, and the fallback
 * names for frames without a symbol.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"
#include "pmutop/symbols/symbolize.h"

/* Two adjacent functions: tsym_second starts right where tsym_first ends. */
__asm__(".pushsection .text\n"
	".p2align 4\n"
	".type tsym_first, @function\n"
	"tsym_first:\n"
	"  nop\n"
	"  ret\n"
	".size tsym_first, .-tsym_first\n"
	".type tsym_second, @function\n"
	"tsym_second:\n"
	"  nop\n"
	"  ret\n"
	".size tsym_second, .-tsym_second\n"
	".popsection\n");

__attribute__((visibility("hidden"))) void tsym_first(void);
__attribute__((visibility("hidden"))) void tsym_second(void);

static volatile int sink;

__attribute__((noinline, noclone))
static uintptr_t callee(void)
{
	sink++;
	return (uintptr_t)__builtin_return_address(0);
}

__attribute__((noinline, noclone))
static uintptr_t caller(void)
{
	uintptr_t ret = callee();

	sink++;
	return ret;
}

struct fixture {
	struct module_cache *cache;
	struct maps *maps;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->cache = module_cache_new();
	f->maps = maps_new(getpid(), f->cache);
	if (!f->cache || !f->maps || maps_load_proc(f->maps) != 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	maps_free(f->maps);
	module_cache_free(f->cache);
	free(f);
	return 0;
}

static void test_leaf_and_caller(void **state)
{
	struct fixture *f = *state;
	uint64_t second = (uintptr_t)&tsym_second;
	uint64_t ips[2] = { second, second };
	struct frame fr[2];

	assert_int_equal(second, (uintptr_t)&tsym_first + 2);
	symbolize_stack(f->maps, ips, 2, fr);

	/* The leaf is looked up as is. */
	assert_int_equal(fr[0].addr, second);
	assert_non_null(fr[0].map);
	assert_string_equal(fr[0].func, "tsym_second");
	assert_int_equal(fr[0].func_off, 0);

	/* A return address right after a call at the end of tsym_first. */
	assert_int_equal(fr[1].addr, second - 1);
	assert_ptr_equal(fr[1].map, fr[0].map);
	assert_string_equal(fr[1].func, "tsym_first");
	assert_int_equal(fr[1].func_off, 1);
}

static void test_real_call(void **state)
{
	struct fixture *f = *state;
	uint64_t ips[2];
	struct frame fr[2];

	ips[0] = (uintptr_t)&callee;
	ips[1] = caller();
	symbolize_stack(f->maps, ips, 2, fr);
	assert_string_equal(fr[0].func, "callee");
	assert_string_equal(fr[1].func, "caller");
	assert_int_equal(fr[1].addr, ips[1] - 1);
	assert_true(fr[1].func_off > 0);
}

static void test_unknown(void **state)
{
	struct fixture *f = *state;
	uint64_t ips[3] = { 0x10, 0, 1 };
	struct frame fr[3];
	char buf[64];

	symbolize_stack(f->maps, ips, 3, fr);
	assert_null(fr[0].map);
	assert_null(fr[0].func);
	assert_int_equal(fr[0].addr, 0x10);
	assert_int_equal(fr[1].addr, 0);   /* no wrap-around below zero */
	assert_int_equal(fr[2].addr, 0);
	assert_string_equal(symbolize_fallback_name(&fr[0], buf, sizeof(buf)), "0x10");

	/* No maps at all: every frame unknown, nothing crashes. */
	symbolize_stack(NULL, ips, 3, fr);
	assert_null(fr[2].map);
	symbolize_stack(f->maps, ips, 0, fr);
}

static void test_fallback_names(void **state)
{
	struct mapping file = { .id = 1, .start = 0x1000, .end = 0x5000, .pgoff = 0x3000,
				.exec = true, .path = "/usr/lib/x86_64-linux-gnu/libfoo.so.1" };
	struct mapping anon = { .id = 2, .start = 0x10000, .end = 0x20000, .path = "" };
	struct mapping perf_anon = { .id = 3, .start = 0x10000, .end = 0x20000,
				     .pgoff = 0x10000, .path = "//anon" };
	struct mapping heap = { .id = 4, .start = 0x10000, .end = 0x20000, .path = "[heap]" };
	struct mapping root = { .id = 5, .start = 0x1000, .end = 0x2000, .path = "/" };
	struct frame fr = { 0 };
	char buf[64], tiny[8];
	(void)state;

	fr.map = &file;
	fr.addr = 0x1234;
	assert_string_equal(symbolize_fallback_name(&fr, buf, sizeof(buf)), "libfoo.so.1+0x3234");

	fr.map = &anon;
	fr.addr = 0x10abc;
	assert_string_equal(symbolize_fallback_name(&fr, buf, sizeof(buf)), "[anon]+0xabc");
	fr.map = &perf_anon;
	assert_string_equal(symbolize_fallback_name(&fr, buf, sizeof(buf)), "[anon]+0xabc");
	fr.map = &heap;
	assert_string_equal(symbolize_fallback_name(&fr, buf, sizeof(buf)), "[heap]+0xabc");

	fr.map = &root;
	fr.addr = 0x1010;
	assert_string_equal(symbolize_fallback_name(&fr, buf, sizeof(buf)), "/+0x10");

	fr.map = NULL;
	fr.addr = 0x7fffdeadbeefULL;
	assert_string_equal(symbolize_fallback_name(&fr, buf, sizeof(buf)), "0x7fffdeadbeef");
	/* Truncated, still terminated. */
	assert_ptr_equal(symbolize_fallback_name(&fr, tiny, sizeof(tiny)), tiny);
	assert_string_equal(tiny, "0x7fffd");
}

/* The fallback of a real unsymbolized address in this binary: file offset. */
static void test_fallback_real(void **state)
{
	struct fixture *f = *state;
	uint64_t ip = (uintptr_t)&tsym_first;
	struct frame fr;
	char buf[256], want[256];
	const char *base;

	symbolize_stack(f->maps, &ip, 1, &fr);
	assert_non_null(fr.map);
	base = strrchr(fr.map->path, '/') + 1;
	snprintf(want, sizeof(want), "%s+0x%lx", base,
		 (unsigned long)(ip - fr.map->start + fr.map->pgoff));
	assert_string_equal(symbolize_fallback_name(&fr, buf, sizeof(buf)), want);
}

/* The cache answers exactly as the direct lookup, and forgets on map changes. */
static void test_cached(void **state)
{
	struct fixture *f = *state;
	struct symbol_cache *c = symbol_cache_new();
	uint64_t second = (uintptr_t)&tsym_second;
	uint64_t ips[3] = { second, second, (uintptr_t)&callee + 1 };
	struct frame direct[3], cached[3];

	assert_non_null(c);
	symbolize_stack(f->maps, ips, 3, direct);
	for (int round = 0; round < 2; round++) { /* a miss, then hits */
		symbolize_stack_cached(c, f->maps, ips, 3, cached);
		for (int i = 0; i < 3; i++) {
			assert_int_equal(cached[i].addr, direct[i].addr);
			assert_ptr_equal(cached[i].map, direct[i].map);
			assert_string_equal(cached[i].func, direct[i].func);
			assert_int_equal(cached[i].func_off, direct[i].func_off);
		}
	}
	/* Anonymous memory mapped over the code: the cache must not answer. */
	assert_int_equal(maps_add(f->maps, second & ~0xfffULL, 0x1000, 0, 0, 0, true, ""), 0);
	symbolize_stack_cached(c, f->maps, ips, 1, cached);
	assert_null(cached[0].func);
	assert_true(cached[0].map == NULL || cached[0].map->mod == NULL);
	/* The real map back for the tests after this one. */
	assert_int_equal(maps_load_proc(f->maps), 0);
	symbol_cache_free(c);
	symbol_cache_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leaf_and_caller),
		cmocka_unit_test(test_real_call),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_fallback_names),
		cmocka_unit_test(test_fallback_real),
		cmocka_unit_test(test_cached),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
