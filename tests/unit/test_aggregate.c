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

	struct agg_path path = { 0 };
	const struct agg_stack *found = NULL;

	s = aggregate_stacks(a, &ns);
	for (i = 0; i < ns && !found; i++) {
		const uint32_t *p = aggregate_stack_path(a, &s[i], &path);

		assert_non_null(p);
		if (s[i].tid == tid && s[i].nlocs == n &&
		    (n == 0 || !memcmp(p, locs, n * sizeof(*locs))))
			found = &s[i];
	}
	agg_path_free(&path);
	return found;
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

/* The function name of location id in a. */
static const char *loc_name(const struct aggregate *a, uint32_t id)
{
	size_t nl, nf;
	const struct agg_location *l = aggregate_locations(a, &nl);
	const struct agg_function *fn = aggregate_functions(a, &nf);

	assert_true(id >= 1 && id <= nl);
	return fn[l[id - 1].function_id - 1].name;
}

/* Samples of the stacks that pass through a frame named `name` (cumulative). */
static uint64_t cum_of(const struct aggregate *a, const char *name)
{
	struct agg_path path = { 0 };
	const struct agg_stack *s;
	uint64_t sum = 0;
	size_t n;

	s = aggregate_stacks(a, &n);
	for (size_t i = 0; i < n; i++) {
		const uint32_t *p = aggregate_stack_path(a, &s[i], &path);

		for (uint32_t j = 0; j < s[i].nlocs; j++)
			if (!strcmp(loc_name(a, p[j]), name)) {
				sum += s[i].samples;
				break;
			}
	}
	agg_path_free(&path);
	return sum;
}

/*
 * Below the budget nothing is merged: threads that came and went keep their
 * own records, thousands of distinct stacks stay whole, every address keeps
 * its detail (the old fixed caps merged past 20,000 stacks and 64 exited
 * threads whatever the memory).
 */
static void test_nothing_merged_below_budget(void **state)
{
	enum { N = 30000 };
	static char names[N][16];
	struct aggregate *a = aggregate_new();
	struct frame f[3] = { fr(0, &map_exe, NULL), fr(0, &map_exe, NULL),
			      fr(0x403000, &map_exe, "main") };
	const struct agg_thread *t;
	uint64_t samples, weight;
	size_t n;

	(void)state;
	for (uint32_t i = 0; i < N; i++) {
		uint32_t tid = 100 + i % 300;

		snprintf(names[i], sizeof(names[i]), "mid%u", i);
		f[0] = fr(0x401000 + (i % 50) * 16, &map_exe, names[i % 50]);
		f[1] = fr(0x410000 + (uint64_t)i * 16, &map_exe, names[i]);
		assert_int_equal(aggregate_add(a, tid, f, 3, 1), 0);
		if (i % 300 == 299)
			for (uint32_t k = 100; k < 400; k++)
				aggregate_thread_exited(a, k);
		if (i % 1000 == 999)
			assert_int_equal(aggregate_maintain(a, false, true), 0);
	}
	assert_int_equal(aggregate_maintain(a, true, true), 0);
	aggregate_stacks(a, &n);
	assert_int_equal(n, N);
	totals(a, &samples, &weight);
	assert_int_equal(samples, N);
	assert_int_equal(aggregate_info(a)->pruned, 0);
	assert_int_equal(aggregate_info(a)->threads_folded, 0);
	assert_int_equal(aggregate_info(a)->leaf_dropped, 0);
	t = aggregate_threads(a, &n);
	assert_int_equal(n, 300);
	for (size_t i = 0; i < n; i++)
		assert_false(t[i].folded);
	/* A tree: 1 root + main + 50 leaves' callers... one node per new frame. */
	assert_int_equal(aggregate_nodes(a), 1 + 1 + N + N);
	assert_true(aggregate_bytes(a) < AGG_DEFAULT_MAX_MEMORY);
	aggregate_free(a);
}

/*
 * Deep recursion that makes a new stack with almost every sample costs one
 * tree node per frame it does not share, not a copy of the stack: 20,000
 * samples of 200-frame stacks that differ only near the leaf.
 */
static void test_deep_paths_share_prefix(void **state)
{
	enum { DEPTH = 200, N = 20000 };
	struct aggregate *a = aggregate_new();
	static struct frame f[DEPTH];
	static char names[64][16];
	uint64_t samples, weight;
	size_t n;

	(void)state;
	for (int k = 0; k < 64; k++)
		snprintf(names[k], sizeof(names[k]), "r%d", k);
	for (uint32_t i = 0; i < N; i++) {
		/* The outer 190 frames the same; the inner 10 spell i in base 4. */
		for (int d = 0; d < DEPTH; d++) {
			int k = d < 10 ? (int)((i >> (2 * d)) & 3) + 4 * d % 60 : d % 64;

			f[d] = fr(0x401000 + (uint64_t)k * 64 + (uint64_t)(d < 10) * 0x8000, &map_exe,
				  names[k]);
		}
		assert_int_equal(aggregate_add(a, 1, f, DEPTH, 1), 0);
	}
	totals(a, &samples, &weight);
	assert_int_equal(samples, N);
	aggregate_stacks(a, &n);
	/* At most 4^10 leaf paths; nodes: the shared 190 and the 10-level fan. */
	assert_true(aggregate_nodes(a) < 1 + 190 + 4 * N / 3 + 10);
	/* A record per stack would be 20,000 x 200 x 4 bytes = 16 MB of ids alone. */
	assert_true(aggregate_bytes(a) < 8u << 20);
	aggregate_free(a);
}

/*
 * Over the budget, cold subtrees are pruned into one "[N cold frames
 * pruned]" child of their kept caller: the hot path stays whole, every
 * kept frame's cumulative count stays exact, the totals stay exact, and
 * what was pruned is counted.
 */
static void test_prune_cold_subtrees(void **state)
{
	enum { N = 20000 };
	static char names[N][16];
	struct aggregate *a = aggregate_new();
	struct agg_limits lim;
	struct frame f[4];
	const struct agg_stack *s;
	struct agg_path path = { 0 };
	uint64_t samples, weight, main_cum, hot_cum, pruned_frames = 0;
	size_t n, before;

	(void)state;
	for (size_t i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "cold%zu", i);
		f[0] = fr(0x420000 + i * 16, &map_exe, names[i]);
		f[1] = fr(0x402000 + (i % 100) * 16, &map_exe, names[i % 100]);
		f[2] = fr(0x403000, &map_exe, "main");
		assert_int_equal(aggregate_add(a, 1 + (uint32_t)(i % 3), f, 3, 2), 0);
	}
	f[0] = fr(0x404000, &map_exe, "hot_leaf");
	f[1] = fr(0x405000, &map_exe, "hot_mid");
	f[2] = fr(0x403000, &map_exe, "main");
	for (int k = 0; k < 5000; k++)
		assert_int_equal(aggregate_add(a, 1, f, 3, 2), 0);
	main_cum = cum_of(a, "main");
	hot_cum = cum_of(a, "hot_mid");
	before = aggregate_bytes(a);
	aggregate_get_limits(a, &lim);
	lim.max_memory = before / 3;
	aggregate_set_limits(a, &lim);
	assert_int_equal(aggregate_maintain(a, false, true), 0);
	/* Under the budget now, or on its way (the next rebuild goes further). */
	for (int k = 0; k < 4 && aggregate_bytes(a) > lim.max_memory; k++)
		assert_int_equal(aggregate_maintain(a, false, true), 0);
	assert_true(aggregate_bytes(a) <= lim.max_memory);
	totals(a, &samples, &weight);
	assert_int_equal(samples, N + 5000);
	assert_int_equal(weight, 2 * (N + 5000));
	assert_int_equal(cum_of(a, "main"), main_cum);
	assert_int_equal(cum_of(a, "hot_mid"), hot_cum);
	assert_int_equal(cum_of(a, "hot_leaf"), 5000);
	assert_true(aggregate_info(a)->pruned > 0);
	assert_true(aggregate_info(a)->pruned_samples > 0);
	assert_true(aggregate_info(a)->compactions >= 1);
	/* Every pruned frame is named by a "[N cold frames pruned]" node. */
	s = aggregate_stacks(a, &n);
	for (size_t i = 0; i < n; i++) {
		const uint32_t *p = aggregate_stack_path(a, &s[i], &path);
		const char *leaf = loc_name(a, p[0]);
		unsigned long k;

		assert_string_equal(loc_name(a, p[s[i].nlocs - 1]), "main");
		if (sscanf(leaf, "[%lu cold frame", &k) == 1 && s[i].tid == 1)
			pruned_frames += k;
	}
	agg_path_free(&path);
	assert_true(pruned_frames > 0);
	aggregate_free(a);
}

/*
 * The order of what goes: with a budget just under the aggregate's size,
 * caller-only address detail is all that goes - threads stay unfolded,
 * nothing is pruned.
 */
static void test_budget_addresses_first(void **state)
{
	struct aggregate *a = aggregate_new();
	struct agg_limits lim;
	struct frame f[2];
	size_t n, na;

	(void)state;
	for (uint64_t i = 0; i < 40000; i++) {
		f[0] = fr(0x401000 + (i % 100) * 4, &map_exe, "leaf");
		f[1] = fr(0x480000 + i * 4, &map_exe, "caller");
		assert_int_equal(aggregate_add(a, 1 + (uint32_t)(i % 4), f, 2, 1), 0);
	}
	aggregate_thread_exited(a, 2);
	aggregate_addresses(a, &na);
	assert_int_equal(na, 40100);
	aggregate_get_limits(a, &lim);
	lim.max_memory = aggregate_bytes(a) - 1;
	aggregate_set_limits(a, &lim);
	assert_int_equal(aggregate_maintain(a, false, true), 0);
	aggregate_addresses(a, &na);
	assert_int_equal(na, 100); /* the leaves */
	assert_int_equal(aggregate_info(a)->leaf_dropped, 0);
	assert_int_equal(aggregate_info(a)->threads_folded, 0);
	assert_int_equal(aggregate_info(a)->pruned, 0);
	aggregate_stacks(a, &n);
	assert_int_equal(n, 4);
	aggregate_free(a);
}

/*
 * A budget a quarter of the size: everything that can go goes - address
 * detail, exited threads into one record per name, then the tree down to
 * what fits - and every sample is still counted.
 */
static void test_budget_tiny(void **state)
{
	enum { N = 5000 };
	static char names[N][16];
	struct aggregate *a = aggregate_new();
	struct agg_limits lim;
	struct frame f[3];
	const struct agg_thread *t;
	uint64_t samples, weight;
	size_t n, groups = 0;

	(void)state;
	for (uint32_t i = 0; i < N; i++) {
		uint32_t tid = 100 + i % 100;

		snprintf(names[i], sizeof(names[i]), "f%u", i);
		f[0] = fr(0x420000 + (uint64_t)i * 16, &map_exe, names[i]);
		f[1] = fr(0x402000 + (i % 10) * 16, &map_exe, names[i % 10]);
		f[2] = fr(0x403000, &map_exe, "main");
		assert_int_equal(aggregate_add(a, tid, f, 3, 10), 0);
		aggregate_set_thread_name(a, tid, tid % 2 ? "odd" : "even");
	}
	for (uint32_t tid = 100; tid < 190; tid++)
		aggregate_thread_exited(a, tid);
	aggregate_get_limits(a, &lim);
	lim.max_memory = aggregate_bytes(a) / 4;
	aggregate_set_limits(a, &lim);
	for (int k = 0; k < 3; k++)
		assert_int_equal(aggregate_maintain(a, false, true), 0);
	totals(a, &samples, &weight);
	assert_int_equal(samples, N);
	assert_int_equal(weight, 10 * N);
	assert_int_equal(cum_of(a, "main"), N);
	assert_true(aggregate_info(a)->pruned > 0);
	assert_true(aggregate_info(a)->leaf_dropped > 0);
	assert_int_equal(aggregate_info(a)->threads_folded, 90);
	t = aggregate_threads(a, &n);
	for (size_t i = 0; i < n; i++)
		if (t[i].folded) {
			groups++;
			assert_true(t[i].tid >= AGG_TID_GROUP);
			assert_true(!strcmp(t[i].name, "odd") || !strcmp(t[i].name, "even"));
		}
	assert_int_equal(groups, 2);
	assert_int_equal(n, 10 + 2);
	/* A forced rebuild of a rebuilt aggregate keeps every count. */
	assert_int_equal(aggregate_maintain(a, true, true), 0);
	totals(a, &samples, &weight);
	assert_int_equal(weight, 10 * N);
	aggregate_free(a);
}

/* The caller of a stack's leaf. */
static uint32_t second_loc(const struct aggregate *a, const struct agg_stack *s)
{
	struct agg_path path = { 0 };
	const uint32_t *p = aggregate_stack_path(a, s, &path);
	uint32_t id;

	assert_true(s->nlocs >= 2);
	id = p[1];
	agg_path_free(&path);
	return id;
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
		per_stack[!strcmp(loc_name(a, second_loc(a, &st[p[i].stack])), "other")] += p[i].samples;
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
		cmocka_unit_test(test_nothing_merged_below_budget),
		cmocka_unit_test(test_deep_paths_share_prefix),
		cmocka_unit_test(test_prune_cold_subtrees),
		cmocka_unit_test(test_budget_addresses_first),
		cmocka_unit_test(test_budget_tiny),
		cmocka_unit_test(test_leaf_parts),
		cmocka_unit_test(test_leaf_parts_one_sample),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
