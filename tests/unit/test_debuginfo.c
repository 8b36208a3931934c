/*
 * test_debuginfo.c - DWARF lookups on this very test binary (built with -g):
 * file:line of a function, the inline chain of an always_inline callee
 * (innermost first, caller's line at the call site), per-address caching,
 * and the aggregate's deferred resolution into pprof-style lines[].
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pmutop/profile/aggregate.h"
#include "pmutop/symbols/debuginfo.h"
#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"
#include "pmutop/symbols/symbolize.h"

static volatile uint64_t sink;

static inline __attribute__((always_inline)) void inlined_leaf(void)
{
	sink++; /* MARK_LEAF */
}

__attribute__((noinline, used)) static void outer_fn(void)
{
	inlined_leaf(); /* MARK_CALL */
	__asm__ volatile("" ::: "memory");
}

/* The line of this file holding marker. */
static int line_of(const char *marker)
{
	FILE *f = fopen(__FILE__, "r");
	char buf[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f)) {
		n++;
		if (strstr(buf, marker) && !strstr(buf, "line_of"))
			break;
	}
	fclose(f);
	return n;
}

struct fixture {
	struct module_cache *mc;
	struct maps *maps;
	struct debuginfo *dbg;
	struct dwarf_loader *loader; /* tests that set one; freed after dbg */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->mc = module_cache_new();
	f->maps = maps_new(getpid(), f->mc);
	/* The maps only hand the reader to their mappings; its owner frees it. */
	f->dbg = debuginfo_new(getpid(), true);
	maps_set_symbol_sources(f->maps, f->dbg, NULL);
	assert_int_equal(maps_load_proc(f->maps), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	maps_free(f->maps);
	debuginfo_free(f->dbg);
	dwarf_loader_free(f->loader);
	module_cache_free(f->mc);
	free(f);
	return 0;
}

static void test_function_line(void **state)
{
	struct fixture *f = *state;
	uintptr_t pc = (uintptr_t)&outer_fn;
	const struct mapping *map = maps_find(f->maps, pc);
	const struct src_line *l, *again;
	unsigned n;

	outer_fn();
	assert_non_null(map);
	assert_non_null(map->dbg);
	assert_true(debuginfo_prepare(map->dbg, map));
	n = debuginfo_lookup(map->dbg, map, pc, &l);
	if (n == 0)
		skip(); /* built without -g */
	assert_string_equal(l[n - 1].func, "outer_fn");
	assert_non_null(l[n - 1].file);
	assert_non_null(strstr(l[n - 1].file, "test_debuginfo.c"));
	assert_true(l[n - 1].decl_line > 0);
	/* Cached: the same array comes back. */
	assert_int_equal(debuginfo_lookup(map->dbg, map, pc, &again), n);
	assert_ptr_equal(again, l);
}

static void test_inline_chain(void **state)
{
	struct fixture *f = *state;
	uintptr_t start = (uintptr_t)&outer_fn;
	const struct mapping *map = maps_find(f->maps, start);
	int leaf_line = line_of("MARK_LEAF"), call_line = line_of("MARK_CALL");
	bool found = false;

	assert_non_null(map);
	/* Some byte of outer_fn is the inlined sink++. */
	for (uintptr_t pc = start; pc < start + 64 && !found; pc++) {
		const struct src_line *l;
		unsigned n = debuginfo_lookup(map->dbg, map, pc, &l);

		if (n == 2 && l[0].func && !strcmp(l[0].func, "inlined_leaf") &&
		    (int)l[0].line == leaf_line) {
			assert_string_equal(l[1].func, "outer_fn");
			assert_int_equal(l[1].line, call_line);
			found = true;
		}
	}
	if (!found)
		skip(); /* the compiler laid the code out otherwise */
}

/*
 * debuginfo_trim() empties the address cache past its cap and closes idle
 * DWARF readers; a later lookup reopens the reader from the kept
 * descriptors and answers the same, and strings handed out before stay
 * valid (they are the debuginfo's, not libdw's).
 */
static void test_trim(void **state)
{
	struct fixture *f = *state;
	uintptr_t pc = (uintptr_t)&outer_fn;
	const struct mapping *map = maps_find(f->maps, pc);
	const struct src_line *l;
	struct debuginfo_stats st;
	const char *func, *file;
	uint32_t line;
	unsigned n;

	assert_non_null(map);
	n = debuginfo_lookup(map->dbg, map, pc, &l);
	if (n == 0)
		skip(); /* built without -g */
	func = l[n - 1].func;
	file = l[n - 1].file;
	line = l[n - 1].line;
	for (uintptr_t a = pc + 1; a < pc + 8; a++)
		debuginfo_lookup(map->dbg, map, a, &l);
	debuginfo_set_limits(map->dbg, 4, 0, 0);
	debuginfo_trim(map->dbg);
	debuginfo_get_stats(map->dbg, &st);
	assert_int_equal(st.cleared, 1);
	assert_true(st.dropped >= 5);
	assert_true(st.closed >= 1);
	assert_int_equal(st.reopened, 0);
	n = debuginfo_lookup(map->dbg, map, pc, &l);
	debuginfo_get_stats(map->dbg, &st);
	assert_int_equal(st.reopened, 1);
	assert_true(n > 0);
	assert_string_equal(l[n - 1].func, func);
	assert_string_equal(l[n - 1].file, file);
	assert_int_equal(l[n - 1].line, line);
	/* The same interned strings: what the aggregate may still hold. */
	assert_ptr_equal(l[n - 1].func, func);
	assert_ptr_equal(l[n - 1].file, file);
}

static void test_aggregate_lines(void **state)
{
	struct fixture *f = *state;
	uintptr_t pc = (uintptr_t)&outer_fn;
	struct aggregate *a = aggregate_new();
	const struct agg_location *loc;
	const struct agg_function *fn;
	const struct agg_mapping *am;
	struct frame fr;
	size_t nl, nf, nm;

	symbolize_stack(f->maps, (const uint64_t[]){ pc }, 1, &fr);
	assert_int_equal(aggregate_add(a, 1, &fr, 1, 1), 0);
	loc = aggregate_locations(a, &nl);
	assert_int_equal(loc[0].nlines, 0); /* deferred */
	assert_int_equal(aggregate_resolve_lines(a, NULL, NULL), 0);
	loc = aggregate_locations(a, &nl);
	fn = aggregate_functions(a, &nf);
	am = aggregate_mappings(a, &nm);
	if (loc[0].nlines == 0)
		skip();
	assert_int_equal(loc[0].function_id, loc[0].lines[0].function_id);
	assert_string_equal(fn[loc[0].lines[loc[0].nlines - 1].function_id - 1].name, "outer_fn");
	assert_true(loc[0].lines[loc[0].nlines - 1].line > 0);
	assert_true(am[0].has_functions && am[0].has_filenames && am[0].has_line_numbers);
	aggregate_free(a);
}

/*
 * Issue 23: a location merged into another (a new address whose lines turn
 * out to be a known location's, as every dlopen of a reloaded library
 * brings) does not rebuild the aggregate by itself until a quarter of the
 * locations are merged - rebuilding for each copied every stack once a
 * second - and a forced rebuild still merges it, with every sample kept.
 */
static void test_merge_waits(void **state)
{
	static struct mapping plain = {
		.id = 1000, .key = 1000, .start = 0x400000, .end = 0x500000,
		.exec = true, .path = "/usr/bin/plain",
	};
	static char names[40][16];
	struct fixture *f = *state;
	uintptr_t pc = (uintptr_t)&outer_fn, twin = 0;
	struct aggregate *a = aggregate_new();
	const struct mapping *map = maps_find(f->maps, pc);
	const struct src_line *l;
	const struct agg_stack *st;
	struct frame fr[2];
	uint32_t line;
	uint64_t gen, samples = 0;
	size_t n, nl;
	unsigned k;

	assert_non_null(map);
	k = debuginfo_lookup(map->dbg, map, pc, &l);
	if (k == 0)
		skip(); /* built without -g */
	line = l[0].line;
	/* Another address of outer_fn with the same lines: it merges into pc's. */
	for (uintptr_t x = pc + 1; x < pc + 16 && !twin; x++)
		if (debuginfo_lookup(map->dbg, map, x, &l) == k && l[0].line == line)
			twin = x;
	if (!twin)
		skip();
	/* 40 locations without debug info, so one merge is a small part. */
	for (size_t i = 0; i < 40; i++) {
		snprintf(names[i], sizeof(names[i]), "plain%zu", i);
		fr[0] = (struct frame){ .addr = 0x401000 + i * 16, .map = &plain, .func = names[i] };
		assert_int_equal(aggregate_add(a, 1, fr, 1, 1), 0);
	}
	symbolize_stack(f->maps, (const uint64_t[]){ pc }, 1, &fr[0]);
	fr[1] = (struct frame){ .addr = 0x401000, .map = &plain, .func = names[0] };
	assert_int_equal(aggregate_add(a, 1, fr, 2, 1), 0);
	assert_int_equal(aggregate_maintain(a, false, true), 0); /* lines, a rebuild for none */
	gen = aggregate_generation(a);
	symbolize_stack(f->maps, (const uint64_t[]){ twin }, 1, &fr[0]);
	assert_int_equal(aggregate_add(a, 1, fr, 2, 1), 0);
	aggregate_locations(a, &nl);
	assert_int_equal(nl, 42);
	assert_int_equal(aggregate_maintain(a, false, true), 0);
	assert_int_equal(aggregate_generation(a), gen); /* 1 merged of 42: no rebuild */
	assert_int_equal(aggregate_maintain(a, true, true), 0);
	assert_true(aggregate_generation(a) > gen);
	aggregate_locations(a, &nl);
	assert_int_equal(nl, 41); /* twin's location merged into pc's */
	st = aggregate_stacks(a, &n);
	assert_int_equal(n, 41); /* both 2-frame stacks are one */
	for (size_t i = 0; i < n; i++)
		samples += st[i].samples;
	assert_int_equal(samples, 42);
	aggregate_free(a);
}

static const struct mapping *wanted_map;

static bool want_map(const struct mapping *m)
{
	return m == wanted_map;
}

/*
 * aggregate_resolve_lines_of() looks up only the pending locations of the
 * mappings asked for (a module about to be evicted); the rest stay pending.
 */
static void test_aggregate_lines_of(void **state)
{
	struct fixture *f = *state;
	uintptr_t pc = (uintptr_t)&outer_fn;
	struct aggregate *a = aggregate_new();
	const struct agg_location *loc;
	struct frame fr;
	size_t nl;

	symbolize_stack(f->maps, (const uint64_t[]){ pc }, 1, &fr);
	assert_int_equal(aggregate_add(a, 1, &fr, 1, 1), 0);
	if (aggregate_pending_lines(a) == 0)
		skip(); /* built without -g */
	assert_ptr_equal(aggregate_pending_mapping(a, 0), fr.map);
	assert_null(aggregate_pending_mapping(a, 1));
	wanted_map = NULL; /* another mapping's */
	assert_int_equal(aggregate_resolve_lines_of(a, want_map), 0);
	assert_int_equal(aggregate_pending_lines(a), 1);
	loc = aggregate_locations(a, &nl);
	assert_int_equal(loc[0].nlines, 0);
	wanted_map = fr.map;
	assert_int_equal(aggregate_resolve_lines_of(a, want_map), 0);
	assert_int_equal(aggregate_pending_lines(a), 0);
	loc = aggregate_locations(a, &nl);
	assert_true(loc[0].nlines > 0);
	aggregate_free(a);
}


static bool always(void *arg)
{
	(void)arg;
	return true;
}

/*
 * With a loader (issue 17) the DWARF loads on its thread: until the load is
 * done the module is busy and the session's thread waits for nothing;
 * dwarf_loader_wait() is bounded by its time and its stop callback; once
 * the load is handed over, lookups answer as without a loader.
 */
static void test_loader_handover(void **state)
{
	struct fixture *f = *state;
	uintptr_t pc = (uintptr_t)&outer_fn;
	const struct mapping *map = maps_find(f->maps, pc);
	struct debuginfo *plain = debuginfo_new(getpid(), true);
	const struct src_line *l, *want;
	unsigned n, nwant;

	assert_non_null(map);
	assert_non_null(plain);
	nwant = debuginfo_lookup(plain, map, pc, &want);
	if (nwant == 0)
		skip(); /* built without -g */
	f->loader = dwarf_loader_new();
	assert_non_null(f->loader);
	debuginfo_set_loader(f->dbg, f->loader);
	dwarf_loader_hold(f->loader, true);
	assert_true(debuginfo_busy(f->dbg, map, pc)); /* starts the load: held */
	assert_int_equal(dwarf_loader_pending(f->loader), 1);
	assert_int_equal(dwarf_loader_wait(f->loader, 100, NULL, NULL), -ETIMEDOUT);
	assert_int_equal(dwarf_loader_wait(f->loader, 0, always, NULL), -EINTR);
	assert_true(debuginfo_busy(f->dbg, map, pc)); /* still in flight */
	dwarf_loader_hold(f->loader, false);
	assert_int_equal(dwarf_loader_wait(f->loader, 0, NULL, NULL), 0);
	assert_int_equal(dwarf_loader_pending(f->loader), 0);
	assert_false(debuginfo_busy(f->dbg, map, pc)); /* taken */
	n = debuginfo_lookup(f->dbg, map, pc, &l);
	assert_int_equal(n, nwant);
	assert_string_equal(l[n - 1].func, want[nwant - 1].func);
	assert_string_equal(l[n - 1].file, want[nwant - 1].file);
	assert_int_equal(l[n - 1].line, want[nwant - 1].line);
	/* Looked up: never busy again, and no second load. */
	assert_false(debuginfo_busy(f->dbg, map, pc));
	assert_int_equal(dwarf_loader_pending(f->loader), 0);
	debuginfo_free(plain);
}

/*
 * Lookups run on the loader too (issue 17): once the module is loaded, an
 * address not looked up yet is busy - its lookup queued, the session's
 * thread never inside libdw - and those asked while the job waits in the
 * queue join it. The answers, taken by debuginfo_busy(),
 * are those of a debuginfo without a loader. A debuginfo freed while its
 * lookups are queued or running leaves nothing behind (ASan).
 */
static void test_loader_lookups(void **state)
{
	struct fixture *f = *state;
	uintptr_t start = (uintptr_t)&outer_fn, pc;
	const struct mapping *map = maps_find(f->maps, start);
	struct debuginfo *plain = debuginfo_new(getpid(), true), *other;
	const struct src_line *l, *want;
	unsigned n, nwant, asked = 0;

	assert_non_null(map);
	assert_non_null(plain);
	if (debuginfo_lookup(plain, map, start, &want) == 0) {
		debuginfo_free(plain);
		skip(); /* built without -g */
	}
	f->loader = dwarf_loader_new();
	assert_non_null(f->loader);
	debuginfo_set_loader(f->dbg, f->loader);
	/* Load the module (and look up start). */
	assert_true(debuginfo_busy(f->dbg, map, start));
	assert_int_equal(dwarf_loader_wait(f->loader, 0, NULL, NULL), 0);
	assert_false(debuginfo_busy(f->dbg, map, start));
	/* Held: the first address starts a job, the next ones join it or wait for the next. */
	dwarf_loader_hold(f->loader, true);
	for (pc = start + 1; pc < start + 16; pc++) {
		assert_true(debuginfo_busy(f->dbg, map, pc));
		asked++;
	}
	assert_int_equal(dwarf_loader_pending(f->loader), 1);
	assert_true(debuginfo_busy(f->dbg, map, start + 1)); /* asked: still busy */
	assert_int_equal(dwarf_loader_pending(f->loader), 1);
	dwarf_loader_hold(f->loader, false);
	/* Taken, and what was left over (slices) asked again, until all are in. */
	for (int round = 0; round < 100; round++) {
		bool busy = false;

		assert_int_equal(dwarf_loader_wait(f->loader, 0, NULL, NULL), 0);
		for (pc = start + 1; pc < start + 1 + asked; pc++)
			busy |= debuginfo_busy(f->dbg, map, pc);
		if (!busy)
			break;
	}
	for (pc = start + 1; pc < start + 1 + asked; pc++) {
		assert_false(debuginfo_busy(f->dbg, map, pc));
		nwant = debuginfo_lookup(plain, map, pc, &want);
		n = debuginfo_lookup(f->dbg, map, pc, &l);
		assert_int_equal(n, nwant);
		for (unsigned i = 0; i < n; i++) {
			assert_int_equal(l[i].line, want[i].line);
			if (want[i].func)
				assert_string_equal(l[i].func, want[i].func);
			if (want[i].file)
				assert_string_equal(l[i].file, want[i].file);
		}
	}
	assert_int_equal(dwarf_loader_pending(f->loader), 0);

	/* Freed with its load and lookups queued behind a held job. */
	other = debuginfo_new(getpid(), true);
	assert_non_null(other);
	debuginfo_set_loader(other, f->loader);
	dwarf_loader_hold(f->loader, true);
	assert_true(debuginfo_busy(other, map, start));
	assert_true(debuginfo_busy(other, map, start + 1));
	debuginfo_free(other);
	assert_int_equal(dwarf_loader_pending(f->loader), 0);
	dwarf_loader_hold(f->loader, false);
	assert_int_equal(dwarf_loader_wait(f->loader, 0, NULL, NULL), 0);
	debuginfo_free(plain);
}

/*
 * A module evicted (debuginfo_forget_module) or a debuginfo freed while
 * its load runs or waits in the queue: the load no longer counts, the
 * worker frees what it built (ASan: no leak, no use after free), and the
 * module mapped again loads afresh. A loader freed while its thread is
 * held inside a load returns at once; the thread frees it.
 */
static void test_loader_cancel(void **state)
{
	struct fixture *f = *state;
	uintptr_t pc = (uintptr_t)&outer_fn;
	const struct mapping *map = maps_find(f->maps, pc);
	struct debuginfo *other = debuginfo_new(getpid(), true);
	struct dwarf_loader *l2;
	const struct src_line *l;

	assert_non_null(map);
	assert_non_null(other);
	f->loader = dwarf_loader_new();
	assert_non_null(f->loader);
	debuginfo_set_loader(f->dbg, f->loader);
	debuginfo_set_loader(other, f->loader);
	dwarf_loader_hold(f->loader, true);
	if (!debuginfo_busy(f->dbg, map, pc)) { /* running (held) */
		debuginfo_free(other);
		skip(); /* no DWARF to load */
	}
	assert_true(debuginfo_busy(other, map, pc)); /* queued behind it */
	assert_int_equal(dwarf_loader_pending(f->loader), 2);
	debuginfo_forget_module(f->dbg, map->mod); /* cancels the running one */
	assert_int_equal(dwarf_loader_pending(f->loader), 1);
	debuginfo_free(other); /* cancels the queued one */
	assert_int_equal(dwarf_loader_pending(f->loader), 0);
	assert_int_equal(dwarf_loader_wait(f->loader, 0, NULL, NULL), 0);
	/* Mapped again: a new load, behind the two cancelled ones (FIFO). */
	assert_true(debuginfo_busy(f->dbg, map, pc));
	dwarf_loader_hold(f->loader, false);
	assert_int_equal(dwarf_loader_wait(f->loader, 0, NULL, NULL), 0);
	assert_false(debuginfo_busy(f->dbg, map, pc));
	assert_true(debuginfo_lookup(f->dbg, map, pc, &l) > 0);

	/* Freed while held inside a load. */
	l2 = dwarf_loader_new();
	assert_non_null(l2);
	other = debuginfo_new(getpid(), true);
	assert_non_null(other);
	debuginfo_set_loader(other, l2);
	dwarf_loader_hold(l2, true);
	assert_true(debuginfo_busy(other, map, pc));
	debuginfo_free(other);
	dwarf_loader_free(l2); /* returns with the thread held: it finishes, frees l2 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_function_line),
		cmocka_unit_test(test_inline_chain),
		cmocka_unit_test(test_aggregate_lines),
		cmocka_unit_test(test_aggregate_lines_of),
		cmocka_unit_test(test_trim),
		cmocka_unit_test(test_merge_waits),
		cmocka_unit_test_setup_teardown(test_loader_handover, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loader_lookups, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loader_cancel, setup, teardown),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
