/*
 * test_aggregate.c - unit tests of the stack aggregator: per-thread stack
 * deduplication, interning of mappings/functions/locations, thread records
 * and hash-table growth under many distinct stacks.
 *
 * Frames are built by hand with struct mapping values whose mod is NULL, so
 * no ELF module is involved.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmutop/profile/aggregate.h"
#include "pmutop/target/maps.h"
#include "pmutop/symbols/symbolize.h"
#include "agg_spec.h"

static struct mapping map_exe = {
	.id = 7, .key = 7, .start = 0x400000, .end = 0x500000, .pgoff = 0x1000,
	.exec = true, .path = "/usr/bin/app",
};
static struct mapping map_lib = {
	.id = 9, .key = 9, .start = 0x7f0000000000, .end = 0x7f0000100000, .pgoff = 0,
	.exec = true, .path = "/usr/lib/libx.so",
};

static struct frame fr(uint64_t addr, const struct mapping *m, const char *func)
{
	struct frame f = { .addr = addr, .map = m, .func = func, .func_off = 0 };

	return f;
}

static const struct agg_stack *find_stack(const struct aggregate *a, uint32_t tid,
					  const uint32_t *locs, uint32_t n)
{
	const struct agg_stack *s;
	size_t ns, i;

	s = aggregate_stacks(a, &ns);
	for (i = 0; i < ns; i++)
		if (s[i].tid == tid && s[i].nlocs == n &&
		    (n == 0 || !memcmp(s[i].locs, locs, n * sizeof(*locs))))
			return &s[i];
	return NULL;
}

static void test_new_free(void **state)
{
	struct aggregate *a = aggregate_new();
	size_t n = 99;

	(void)state;
	assert_non_null(a);
	aggregate_stacks(a, &n);
	assert_int_equal(n, 0);
	aggregate_locations(a, &n);
	assert_int_equal(n, 0);
	aggregate_functions(a, &n);
	assert_int_equal(n, 0);
	aggregate_mappings(a, &n);
	assert_int_equal(n, 0);
	aggregate_threads(a, &n);
	assert_int_equal(n, 0);
	assert_null(aggregate_thread(a, 1));
	assert_ptr_equal(aggregate_info(a), aggregate_info_const(a));
	aggregate_free(a);
	aggregate_free(NULL);
}

static void test_dedup_per_tid(void **state)
{
	struct frame f[3] = {
		fr(0x401000, &map_exe, "leaf"),
		fr(0x402000, &map_exe, "mid"),
		fr(0x403000, &map_exe, "main"),
	};
	struct aggregate *a = aggregate_new();
	const struct agg_stack *s;
	uint32_t ids[3] = { 1, 2, 3 };
	size_t n;

	(void)state;
	assert_int_equal(aggregate_add(a, 100, f, 3, 1000), 0);
	assert_int_equal(aggregate_add(a, 100, f, 3, 1500), 0);
	assert_int_equal(aggregate_add(a, 200, f, 3, 7), 0);
	/* Same frames but a shorter stack is a different stack. */
	assert_int_equal(aggregate_add(a, 100, f + 1, 2, 5), 0);

	s = aggregate_stacks(a, &n);
	assert_non_null(s);
	assert_int_equal(n, 3);
	aggregate_locations(a, &n);
	assert_int_equal(n, 3);

	s = find_stack(a, 100, ids, 3);
	assert_non_null(s);
	assert_int_equal(s->samples, 2);
	assert_int_equal(s->weight, 2500);
	s = find_stack(a, 200, ids, 3);
	assert_non_null(s);
	assert_int_equal(s->samples, 1);
	assert_int_equal(s->weight, 7);
	s = find_stack(a, 100, ids + 1, 2);
	assert_non_null(s);
	assert_int_equal(s->samples, 1);
	assert_int_equal(s->weight, 5);

	assert_int_equal(aggregate_thread(a, 100)->samples, 3);
	assert_int_equal(aggregate_thread(a, 200)->samples, 1);
	assert_int_equal(aggregate_info(a)->samples, 4);
	aggregate_free(a);
}

static void test_interning(void **state)
{
	char path[] = "/opt/mutable/libm.so";
	struct mapping map_mut = {
		.id = 11, .key = 11, .start = 0x10000, .end = 0x20000, .pgoff = 0x3000,
		.path = path,
	};
	struct frame f[] = {
		fr(0x401000, &map_exe, "work"),
		fr(0x401010, &map_exe, "work"),      /* same function, new address */
		fr(0x7f0000000100, &map_lib, "work"), /* same name, other file */
		fr(0x10100, &map_mut, "g"),
		fr(0xdead, NULL, "nomap"),
	};
	struct aggregate *a = aggregate_new();
	const struct agg_location *l;
	const struct agg_function *fn;
	const struct agg_mapping *m;
	size_t nl, nf, nm, i;

	(void)state;
	assert_int_equal(aggregate_add(a, 1, f, 5, 1), 0);
	/* Adding the frames in another order on another thread interns nothing new. */
	assert_int_equal(aggregate_add(a, 2, &f[4], 1, 1), 0);
	assert_int_equal(aggregate_add(a, 2, &f[2], 2, 1), 0);
	/* The aggregate copied the path. */
	strcpy(path, "/XXXXXXXXXXXXXXXXXXX");

	l = aggregate_locations(a, &nl);
	fn = aggregate_functions(a, &nf);
	m = aggregate_mappings(a, &nm);
	/* Two addresses of one function without debug info: one location. */
	assert_int_equal(nl, 4);
	assert_int_equal(nf, 4);
	assert_int_equal(nm, 3);
	for (i = 0; i < nl; i++)
		assert_int_equal(l[i].id, i + 1);
	for (i = 0; i < nf; i++)
		assert_int_equal(fn[i].id, i + 1);
	for (i = 0; i < nm; i++)
		assert_int_equal(m[i].id, i + 1);

	/* Locations in order of first sight, at the first address seen. */
	assert_int_equal(l[0].address, 0x401000);
	assert_int_equal(l[1].address, 0x7f0000000100);
	assert_int_not_equal(l[1].function_id, l[0].function_id);
	assert_int_equal(l[3].mapping_id, 0);
	assert_int_equal(l[3].address, 0xdead);
	{
		/* Both addresses are kept in the address table, on one location. */
		const struct agg_address *ad = aggregate_addresses(a, &i);

		assert_int_equal(i, 5);
		assert_int_equal(ad[0].address, 0x401000);
		assert_int_equal(ad[1].address, 0x401010);
		assert_int_equal(ad[0].loc_id, ad[1].loc_id);
		assert_int_equal(ad[0].leaf_samples, 1); /* the leaf of the first add */
		assert_int_equal(ad[1].leaf_samples, 0);
		assert_int_equal(ad[4].leaf_samples, 1); /* 0xdead, leaf of the second */
	}

	assert_string_equal(fn[l[0].function_id - 1].name, "work");
	assert_string_equal(fn[l[0].function_id - 1].file, "/usr/bin/app");
	assert_string_equal(fn[l[1].function_id - 1].name, "work");
	assert_string_equal(fn[l[1].function_id - 1].file, "/usr/lib/libx.so");
	assert_string_equal(fn[l[3].function_id - 1].name, "nomap");
	assert_string_equal(fn[l[3].function_id - 1].file, "");

	m = &m[l[0].mapping_id - 1];
	assert_int_equal(m->start, 0x400000);
	assert_int_equal(m->limit, 0x500000);
	assert_int_equal(m->offset, 0x1000);
	assert_string_equal(m->file, "/usr/bin/app");
	assert_string_equal(m->build_id, "");
	assert_true(m->has_functions);

	m = aggregate_mappings(a, &nm);
	m = &m[l[2].mapping_id - 1];
	assert_int_equal(m->start, 0x10000);
	assert_int_equal(m->limit, 0x20000);
	assert_int_equal(m->offset, 0x3000);
	assert_string_equal(m->file, "/opt/mutable/libm.so");
	aggregate_free(a);
}

static void test_unnamed_frame(void **state)
{
	struct frame f[2] = {
		fr(0x401234, &map_exe, NULL),
		fr(0x7f0000000100, &map_lib, "caller"),
	};
	struct aggregate *a = aggregate_new();
	const struct agg_location *l;
	const struct agg_function *fn;
	const struct agg_mapping *m;
	char expect[256];
	size_t n;

	(void)state;
	assert_int_equal(aggregate_add(a, 1, f, 2, 1), 0);
	l = aggregate_locations(a, &n);
	fn = aggregate_functions(a, &n);
	m = aggregate_mappings(a, &n);
	assert_int_equal(n, 2);
	symbolize_fallback_name(&f[0], expect, sizeof(expect));
	assert_string_equal(fn[l[0].function_id - 1].name, expect);
	assert_false(m[l[0].mapping_id - 1].has_functions);
	assert_true(m[l[1].mapping_id - 1].has_functions);
	aggregate_free(a);
}

static void test_empty_stack(void **state)
{
	struct aggregate *a = aggregate_new();
	const struct agg_stack *s;
	size_t n;

	(void)state;
	assert_int_equal(aggregate_add(a, 5, NULL, 0, 10), 0);
	assert_int_equal(aggregate_add(a, 5, NULL, 0, 10), 0);
	s = aggregate_stacks(a, &n);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].nlocs, 0);
	assert_int_equal(s[0].samples, 2);
	assert_int_equal(s[0].weight, 20);
	aggregate_free(a);
}

static void test_thread_names(void **state)
{
	struct frame f = fr(0x401000, &map_exe, "x");
	struct aggregate *a = aggregate_new();
	const struct agg_thread *t;
	size_t n;

	(void)state;
	/* A name before any sample creates the record. */
	aggregate_set_thread_name(a, 10, "early");
	t = aggregate_thread(a, 10);
	assert_non_null(t);
	assert_string_equal(t->name, "early");
	assert_int_equal(t->samples, 0);

	/* A sample creates an unnamed record. */
	assert_int_equal(aggregate_add(a, 20, &f, 1, 1), 0);
	t = aggregate_thread(a, 20);
	assert_non_null(t);
	assert_string_equal(t->name, "");
	assert_int_equal(t->samples, 1);

	/* Latest name wins; long names are cut to comm's 15 characters. */
	aggregate_set_thread_name(a, 20, "first");
	aggregate_set_thread_name(a, 20, "a-very-long-thread-name");
	t = aggregate_thread(a, 20);
	assert_string_equal(t->name, "a-very-long-thr");
	assert_int_equal(aggregate_add(a, 10, &f, 1, 1), 0);
	assert_int_equal(aggregate_thread(a, 10)->samples, 1);
	assert_string_equal(aggregate_thread(a, 10)->name, "early");

	aggregate_threads(a, &n);
	assert_int_equal(n, 2);
	assert_null(aggregate_thread(a, 30));
	aggregate_free(a);
}

/*
 * 200,000 distinct stacks over 37 threads and 5,000 locations force every
 * table to grow many times; adding them all again must find each one.
 */
static void test_many_stacks(void **state)
{
	enum { NSTACKS = 200000, NADDR = 5000, DEPTH_MAX = 12 };
	static const char *names[] = { "f0", "f1", "f2", "f3", "f4", "f5", "f6" };
	struct aggregate *a = aggregate_new();
	struct frame f[DEPTH_MAX];
	static char roots[NSTACKS][16];
	const struct agg_stack *s;
	uint64_t total = 0, w;
	size_t n, i, round;
	unsigned d, depth;

	(void)state;
	for (round = 0; round < 2; round++) {
		uint64_t x = 88172645463325252ULL; /* xorshift: same sequence twice */

		for (i = 0; i < NSTACKS; i++) {
			depth = 2 + (unsigned)(i % (DEPTH_MAX - 1));
			for (d = 0; d < depth; d++) {
				uint64_t addr;

				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				addr = 0x401000 + (x % NADDR) * 16;
				f[d] = fr(addr, &map_exe, names[addr % 7]);
			}
			/* Make stack i unique: its root frame encodes i. */
			snprintf(roots[i], sizeof(roots[i]), "root%zu", i);
			f[depth - 1] = fr(0x7f0000000000 + i, &map_lib, roots[i]);
			w = 1 + i % 3;
			assert_int_equal(aggregate_add(a, (uint32_t)(1000 + i % 37), f,
						       depth, w), 0);
			total += w;
		}
		s = aggregate_stacks(a, &n);
		assert_int_equal(n, NSTACKS);
	}
	s = aggregate_stacks(a, &n);
	w = 0;
	for (i = 0; i < n; i++) {
		assert_int_equal(s[i].samples, 2);
		assert_int_equal(s[i].weight, 2 * (1 + i % 3));
		assert_int_equal(s[i].tid, 1000 + i % 37);
		assert_int_equal(s[i].nlocs, 2 + i % (DEPTH_MAX - 1));
		w += s[i].weight;
	}
	assert_int_equal(w, total);
	aggregate_locations(a, &n);
	assert_in_range(n, NSTACKS, NSTACKS + NADDR);
	aggregate_functions(a, &n);
	assert_int_equal(n, 7 + NSTACKS);
	aggregate_threads(a, &n);
	assert_int_equal(n, 37);
	assert_int_equal(aggregate_info(a)->samples, 2 * NSTACKS);
	aggregate_free(a);
}

/* Sum of samples and weights over every stack (what compaction must keep). */
static void totals(const struct aggregate *a, uint64_t *samples, uint64_t *weight)
{
	size_t n;
	const struct agg_stack *s = aggregate_stacks(a, &n);

	*samples = *weight = 0;
	for (size_t i = 0; i < n; i++) {
		*samples += s[i].samples;
		*weight += s[i].weight;
	}
}

/*
 * Threads that come and go (a pool renewed every few seconds): the
 * aggregate keeps one record per name once more than max_exited have
 * ended, their stacks merge, and every sample is still counted.
 */
static void test_fold_exited_threads(void **state)
{
	struct frame f[2] = { fr(0x401000, &map_exe, "work"), fr(0x401100, &map_exe, "main") };
	struct aggregate *a = aggregate_new();
	struct agg_limits lim;
	const struct agg_thread *t;
	uint64_t samples, weight;
	size_t n, groups = 0;

	(void)state;
	aggregate_get_limits(a, &lim);
	lim.max_exited = 4;
	aggregate_set_limits(a, &lim);
	for (uint32_t tid = 100; tid < 200; tid++) {
		assert_int_equal(aggregate_add(a, tid, f, 2, 10), 0);
		aggregate_set_thread_name(a, tid, tid % 2 ? "odd" : "even");
		if (tid < 190)
			aggregate_thread_exited(a, tid);
		assert_int_equal(aggregate_maintain(a, false, true), 0);
	}
	totals(a, &samples, &weight);
	assert_int_equal(samples, 100);
	assert_int_equal(weight, 1000);
	assert_int_equal(aggregate_info(a)->samples, 100);
	/* 10 live threads, at most max_exited exited ones unfolded, 2 groups. */
	t = aggregate_threads(a, &n);
	assert_in_range(n, 12, 12 + 4);
	for (size_t i = 0; i < n; i++) {
		if (!t[i].folded)
			continue;
		groups++;
		assert_true(t[i].tid >= AGG_TID_GROUP);
		assert_true(!strcmp(t[i].name, "odd") || !strcmp(t[i].name, "even"));
		assert_int_equal(t[i].samples, t[i].nthreads);
	}
	assert_int_equal(groups, 2);
	aggregate_stacks(a, &n);
	assert_in_range(n, 12, 16);
	assert_in_range(aggregate_info(a)->threads_folded, 90 - 4, 90);
	/* A forced rebuild of a rebuilt aggregate changes nothing. */
	assert_int_equal(aggregate_maintain(a, true, true), 0);
	totals(a, &samples, &weight);
	assert_int_equal(weight, 1000);
	aggregate_free(a);
}

/*
 * More distinct stacks than max_stacks: the rarest become (leaf,
 * [compacted]) then ([compacted]), the common ones stay whole, the sums
 * stay exact and the count of merged stacks is reported.
 */
static void test_stack_cap(void **state)
{
	enum { N = 2000 };
	static char names[N][16];
	struct aggregate *a = aggregate_new();
	struct agg_limits lim;
	struct frame f[3];
	const struct agg_stack *s;
	const struct agg_location *l;
	const struct agg_function *fn;
	uint64_t samples, weight, expect_w = 0;
	size_t n, nl, nf, whole = 0;

	(void)state;
	aggregate_get_limits(a, &lim);
	lim.max_stacks = 100;
	aggregate_set_limits(a, &lim);
	for (size_t i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "mid%zu", i);
		f[0] = fr(0x401000 + (i % 50) * 16, &map_exe, names[i % 50]);
		f[1] = fr(0x402000 + i * 16, &map_exe, names[i]);
		f[2] = fr(0x403000, &map_exe, "main");
		/* Stack 0 is hot: it must survive whole. */
		for (int k = 0; k < (i == 0 ? 500 : 1); k++) {
			assert_int_equal(aggregate_add(a, 1, f, 3, 2), 0);
			expect_w += 2;
		}
	}
	assert_int_equal(aggregate_maintain(a, false, true), 0);
	s = aggregate_stacks(a, &n);
	assert_true(n <= 100);
	l = aggregate_locations(a, &nl);
	fn = aggregate_functions(a, &nf);
	totals(a, &samples, &weight);
	assert_int_equal(samples, N - 1 + 500);
	assert_int_equal(weight, expect_w);
	assert_true(aggregate_info(a)->compacted >= N - 100);
	for (size_t i = 0; i < n; i++) {
		const char *last = fn[l[s[i].locs[s[i].nlocs - 1] - 1].function_id - 1].name;

		if (!strcmp(last, "main")) {
			whole++;
			assert_int_equal(s[i].nlocs, 3);
		} else {
			assert_string_equal(last, "[compacted]");
			assert_in_range(s[i].nlocs, 1, 2);
		}
	}
	assert_in_range(whole, 1, 50);
	assert_int_equal(find_stack(a, 1, s[0].locs, s[0].nlocs)->samples >= 500, 1);
	/* Functions no stack uses any more are gone. */
	assert_true(nf < 200);
	aggregate_free(a);
}

/* The address table is capped too: caller-only addresses go first. */
static void test_address_cap(void **state)
{
	struct aggregate *a = aggregate_new();
	struct agg_limits lim;
	struct frame f[2];
	const struct agg_address *ad;
	uint64_t leaf = 0;
	size_t n;

	(void)state;
	aggregate_get_limits(a, &lim);
	lim.max_addresses = 64;
	aggregate_set_limits(a, &lim);
	for (uint64_t i = 0; i < 1000; i++) {
		f[0] = fr(0x401000 + (i % 100) * 4, &map_exe, "leaf");
		f[1] = fr(0x480000 + i * 4, &map_exe, "caller");
		assert_int_equal(aggregate_add(a, 1, f, 2, 1), 0);
		if (i % 50 == 49)
			assert_int_equal(aggregate_maintain(a, false, true), 0);
	}
	assert_int_equal(aggregate_maintain(a, false, true), 0);
	ad = aggregate_addresses(a, &n);
	assert_true(n <= 64 + 50);
	for (size_t i = 0; i < n; i++)
		leaf += ad[i].leaf_samples;
	/* Every leaf sample is in the histogram or counted as dropped. */
	assert_int_equal(leaf + aggregate_info(a)->leaf_dropped, 1000);
	aggregate_stacks(a, &n);
	assert_int_equal(n, 1); /* one function each: one stack */
	aggregate_free(a);
}


/*
 * A line's samples on several instructions: one location, two addresses in
 * the histogram; the leaf parts give each address its count and keep every
 * stack's total (the instruction view and the pprof writer read them).
 */
static void test_leaf_parts(void **state)
{
	struct aggregate *a = aggregate_new();
	const struct agg_address *ad;
	const struct agg_stack *st;
	struct agg_leaf_part *p;
	uint64_t at[2] = { 0, 0 }, per_stack[2] = { 0, 0 };
	size_t np, na, ns, i;

	(void)state;
	assert_non_null(a);
	for (i = 0; i < 3; i++)
		agg_add_spec(a, 1, 10, "f@100 main@200");
	agg_add_spec(a, 1, 10, "f@104 main@200");
	agg_add_spec(a, 1, 10, "f@100 other@300");
	agg_add_spec(a, 1, 10, "f@100 other@300");
	agg_add_spec(a, 1, 7, "");
	st = aggregate_stacks(a, &ns);
	assert_int_equal(ns, 3); /* f;main, f;other and the empty stack */
	ad = aggregate_addresses(a, &na);
	assert_int_equal(aggregate_leaf_parts(a, &p, &np), 0);
	for (i = 0; i + 1 < np; i++)
		assert_true(p[i].stack <= p[i + 1].stack);
	for (i = 0; i < np; i++) {
		if (!st[p[i].stack].nlocs) {
			assert_int_equal(p[i].addr, UINT32_MAX);
			assert_int_equal(p[i].weights[0], 7);
			continue;
		}
		assert_true(p[i].addr < na);
		at[ad[p[i].addr].address == 0x104] += p[i].weights[0];
		per_stack[st[p[i].stack].locs[1] != st[0].locs[1]] += p[i].samples;
	}
	/* Per address exact: 5 samples at 0x100, 1 at 0x104 (10 each). */
	assert_int_equal(at[0], 50);
	assert_int_equal(at[1], 10);
	/* Per stack exact: 4 and 2 samples. */
	assert_int_equal(per_stack[0] + per_stack[1], 6);
	assert_true((per_stack[0] == 4 && per_stack[1] == 2) || (per_stack[0] == 2 && per_stack[1] == 4));
	free(p);
	aggregate_free(a);
}

/*
 * A one-sample stack is one part, whatever the number of addresses its
 * leaf line has: its weight goes where its sample went (a part per address,
 * each with a sliver of weight, made deep random recursion's profiles 20
 * times larger than their samples - minutes in go tool pprof).
 */
static void test_leaf_parts_one_sample(void **state)
{
	struct aggregate *a = aggregate_new();
	const struct agg_stack *st;
	struct agg_leaf_part *p;
	char spec[64];
	size_t np, ns, i, k;
	uint64_t w = 0, smp = 0;

	(void)state;
	assert_non_null(a);
	for (i = 0; i < 16; i++) {
		snprintf(spec, sizeof(spec), "f@%zx main@200", 0x100 + 4 * i);
		agg_add_spec(a, 1, 10, spec);
	}
	agg_add_spec(a, 1, 10, "f@108 other@300");
	st = aggregate_stacks(a, &ns);
	assert_int_equal(ns, 2);
	assert_int_equal(aggregate_leaf_parts(a, &p, &np), 0);
	for (k = 0; k < ns; k++) {
		size_t parts = 0;

		for (i = 0; i < np; i++) {
			if (p[i].stack != k)
				continue;
			parts++;
			assert_true(p[i].samples > 0);
			w += p[i].weights[0];
			smp += p[i].samples;
		}
		assert_true(parts <= st[k].samples);
	}
	assert_int_equal(smp, 17);
	assert_int_equal(w, 170);
	free(p);
	aggregate_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_free),
		cmocka_unit_test(test_dedup_per_tid),
		cmocka_unit_test(test_interning),
		cmocka_unit_test(test_unnamed_frame),
		cmocka_unit_test(test_empty_stack),
		cmocka_unit_test(test_thread_names),
		cmocka_unit_test(test_many_stacks),
		cmocka_unit_test(test_fold_exited_threads),
		cmocka_unit_test(test_stack_cap),
		cmocka_unit_test(test_address_cap),
		cmocka_unit_test(test_leaf_parts),
		cmocka_unit_test(test_leaf_parts_one_sample),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
