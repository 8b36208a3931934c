/*
 * test_ui_model.c - the live view's model without a terminal: sorting by
 * flat and cum, the substring filter, the per-thread restriction, "since
 * start" vs "last interval" (per-stack deltas between ticks), a reset, the
 * selection following its function, scrolling, callers/callees with their
 * weights, the thread list, and the number formats; with several events,
 * every event's estimates per row in both windows, `e` switching the shown
 * event without losing the windows, and the multiplexing scale.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agg_spec.h"

#include "model.h"
#include "pmutop/profile/aggregate.h"
#include "pmutop/symbols/symbolize.h"

/*
 * tid 1 "alpha":  a <- main                    10
 * tid 1:          b <- a <- main               20
 * tid 2 "beta":   rec <- rec <- rec <- main    30
 * tid 2:          main                          5
 */
static struct aggregate *sample(void)
{
	struct aggregate *a = aggregate_new();

	assert_non_null(a);
	agg_add_spec(a, 1, 10, "a@20 main@10");
	agg_add_spec(a, 1, 20, "b@30 a@21 main@11");
	agg_add_spec(a, 2, 30, "rec@40 rec@41 rec@42 main@12");
	agg_add_spec(a, 2, 5, "main@10");
	aggregate_set_thread_name(a, 1, "alpha");
	aggregate_set_thread_name(a, 2, "beta");
	return a;
}

/* Row names in order, space separated. */
static const char *names(const struct model *m)
{
	static char buf[512];
	size_t i, o = 0;

	buf[0] = 0;
	for (i = 0; i < model_nrows(m); i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s", i ? " " : "",
				      model_row(m, i)->name);
	return buf;
}

static const struct top_row *row(const struct model *m, const char *name)
{
	size_t i;

	for (i = 0; i < model_nrows(m); i++)
		if (!strcmp(model_row(m, i)->name, name))
			return model_row(m, i);
	return NULL;
}

static uint32_t fid(const struct aggregate *a, const char *name)
{
	const struct agg_function *f;
	size_t n, i;

	f = aggregate_functions(a, &n);
	for (i = 0; i < n; i++)
		if (!strcmp(f[i].name, name))
			return f[i].id;
	fail_msg("no function %s", name);
	return 0;
}

static void empty_before_first_tick(void **state)
{
	struct model *m = model_new();

	(void)state;
	assert_non_null(m);
	assert_false(model_has_data(m));
	assert_int_equal(model_nrows(m), 0);
	assert_int_equal(model_total(m), 0);
	assert_int_equal(model_selected_function(m), 0);
	model_move(m, 5);
	model_end(m);
	assert_int_equal(model_selected(m), 0);
	assert_int_equal(model_scroll(m, 10), 0);
	assert_int_equal(model_set_filter(m, "x"), 0);
	model_free(m);
	model_free(NULL);
}

static void sort_flat_and_cum(void **state)
{
	struct aggregate *a = sample();
	struct model *m = model_new();

	(void)state;
	assert_int_equal(model_tick(m, a), 0);
	assert_true(model_has_data(m));
	assert_int_equal(model_total(m), 65);
	assert_string_equal(names(m), "rec b a main");
	assert_int_equal(row(m, "a")->flat, 10);
	assert_int_equal(row(m, "a")->cum, 30);
	assert_int_equal(row(m, "rec")->cum, 30); /* recursion counted once per stack */
	/* sum% column: running flat */
	assert_int_equal(model_sum(m, 0), 30);
	assert_int_equal(model_sum(m, 1), 50);
	assert_int_equal(model_sum(m, 3), 65);

	assert_int_equal(model_set_sort(m, TOP_SORT_CUM), 0);
	assert_int_equal(model_sort(m), TOP_SORT_CUM);
	assert_string_equal(names(m), "main a rec b"); /* a and rec tie at 30: by name */
	assert_int_equal(model_set_sort(m, TOP_SORT_FLAT), 0);
	assert_string_equal(names(m), "rec b a main");
	model_free(m);
	aggregate_free(a);
}

static void filter_by_substring(void **state)
{
	struct aggregate *a = sample();
	struct model *m = model_new();

	(void)state;
	model_tick(m, a);
	assert_int_equal(model_set_filter(m, "A"), 0); /* case-insensitive */
	assert_string_equal(model_filter(m), "A");
	assert_string_equal(names(m), "a main");
	/* The 100% stays the whole window; sum% runs over the shown rows. */
	assert_int_equal(model_total(m), 65);
	assert_int_equal(model_sum(m, 0), 10);
	assert_int_equal(model_sum(m, 1), 15);
	assert_int_equal(model_nfunctions(m), 4);
	assert_int_equal(model_set_filter(m, "nothing"), 0);
	assert_int_equal(model_nrows(m), 0);
	assert_null(model_row(m, 0));
	assert_int_equal(model_set_filter(m, ""), 0);
	assert_string_equal(model_filter(m), "");
	assert_int_equal(model_nrows(m), 4);
	assert_int_equal(model_set_filter(m, NULL), 0);
	assert_int_equal(model_nrows(m), 4);
	model_free(m);
	aggregate_free(a);
}

static void restrict_to_thread(void **state)
{
	struct aggregate *a = sample();
	struct model *m = model_new();

	(void)state;
	model_tick(m, a);
	assert_int_equal(model_set_thread(m, 2), 0);
	assert_int_equal(model_thread(m), 2);
	assert_int_equal(model_total(m), 35);
	assert_string_equal(names(m), "rec main");
	assert_int_equal(row(m, "main")->flat, 5);
	assert_int_equal(row(m, "main")->cum, 35);
	assert_int_equal(model_set_thread(m, 1), 0);
	assert_string_equal(names(m), "b a main");
	assert_int_equal(model_set_thread(m, 99), 0);
	assert_int_equal(model_nrows(m), 0);
	assert_int_equal(model_set_thread(m, 0), 0);
	assert_int_equal(model_total(m), 65);
	model_free(m);
	aggregate_free(a);
}

static void interval_deltas(void **state)
{
	struct aggregate *a = sample();
	struct model *m = model_new();

	(void)state;
	model_tick(m, a);
	assert_int_equal(model_set_window(m, MODEL_INTERVAL), 0);
	/* First tick: the interval is everything so far. */
	assert_int_equal(model_total(m), 65);

	/* More of an existing stack, and a new stack. */
	agg_add_spec(a, 1, 7, "b@30 a@21 main@11");
	agg_add_spec(a, 2, 3, "c@50 main@12");
	/* Not ticked yet: the view still shows the last copy, whatever the window. */
	assert_int_equal(model_total(m), 65);
	assert_int_equal(model_set_window(m, MODEL_SINCE_START), 0);
	assert_int_equal(model_total(m), 65);
	assert_null(row(m, "c"));

	model_tick(m, a);
	assert_int_equal(model_total(m), 75);
	assert_int_equal(model_set_window(m, MODEL_INTERVAL), 0);
	assert_int_equal(model_window(m), MODEL_INTERVAL);
	assert_int_equal(model_total(m), 10);
	assert_string_equal(names(m), "b c a main");
	assert_int_equal(row(m, "b")->flat, 7);
	assert_int_equal(row(m, "a")->cum, 7);
	assert_int_equal(row(m, "main")->cum, 10);
	assert_null(row(m, "rec")); /* nothing new there */
	/* The interval by thread: deltas are per stack, so any thread works. */
	assert_int_equal(model_set_thread(m, 2), 0);
	assert_string_equal(names(m), "c main");
	assert_int_equal(model_set_thread(m, 0), 0);

	/* A quiet interval is empty. */
	model_tick(m, a);
	assert_int_equal(model_total(m), 0);
	assert_int_equal(model_nrows(m), 0);
	model_free(m);
	aggregate_free(a);
}

static void reset_and_new_aggregate(void **state)
{
	struct aggregate *a = sample(), *b = aggregate_new();
	struct model *m = model_new();

	(void)state;
	model_tick(m, a);
	model_set_window(m, MODEL_INTERVAL);
	model_reset(m);
	assert_false(model_has_data(m));
	assert_int_equal(model_nrows(m), 0);
	aggregate_free(a); /* what session_reset() does after model_reset() */

	agg_add_spec(b, 3, 4, "x@1 main@2");
	model_tick(m, b);
	assert_int_equal(model_total(m), 4); /* a fresh start, not a delta against a */
	assert_string_equal(names(m), "x main");
	/* Settings survive the reset. */
	assert_int_equal(model_window(m), MODEL_INTERVAL);

	/* Another aggregate without model_reset(): detected, starts afresh too. */
	{
		struct aggregate *c = aggregate_new();

		agg_add_spec(c, 3, 2, "y@1");
		model_tick(m, c);
		assert_int_equal(model_total(m), 2);
		assert_string_equal(names(m), "y");
		model_reset(m);
		aggregate_free(c);
	}
	model_free(m);
	aggregate_free(b);
}

static void selection_follows_function(void **state)
{
	struct aggregate *a = sample();
	struct model *m = model_new();

	(void)state;
	model_tick(m, a);
	assert_string_equal(names(m), "rec b a main");
	assert_int_equal(model_selected(m), 0);
	assert_int_equal(model_selected_function(m), fid(a, "rec"));

	/* Untouched, the top row stays selected while the order changes. */
	agg_add_spec(a, 1, 100, "main@10");
	model_tick(m, a);
	assert_string_equal(names(m), "main rec b a");
	assert_int_equal(model_selected(m), 0);

	/* Moved, the selection follows its function. */
	model_move(m, 2);
	assert_int_equal(model_selected_function(m), fid(a, "b"));
	agg_add_spec(a, 1, 200, "a@20 main@10");
	model_tick(m, a);
	assert_string_equal(names(m), "a main rec b");
	assert_int_equal(model_selected(m), 3);
	assert_int_equal(model_selected_function(m), fid(a, "b"));

	/* Filtered out: the selection stays in range. */
	model_set_filter(m, "main");
	assert_int_equal(model_selected(m), 0);
	model_set_filter(m, NULL);

	/* Clamped moves. */
	model_move(m, -100);
	assert_int_equal(model_selected(m), 0);
	model_move(m, 100);
	assert_int_equal(model_selected(m), 3);
	model_home(m);
	assert_int_equal(model_selected(m), 0);
	model_end(m);
	assert_int_equal(model_selected(m), 3);
	model_free(m);
	aggregate_free(a);
}

static void scrolling_keeps_selection_visible(void **state)
{
	struct aggregate *a = aggregate_new();
	struct model *m = model_new();
	char spec[32];
	int i;

	(void)state;
	for (i = 0; i < 50; i++) {
		snprintf(spec, sizeof(spec), "f%02d@%x", i, 0x100 + i);
		agg_add_spec(a, 1, (uint64_t)(100 - i), spec);
	}
	model_tick(m, a);
	assert_int_equal(model_nrows(m), 50);
	assert_int_equal(model_scroll(m, 10), 0);
	model_move(m, 9);
	assert_int_equal(model_scroll(m, 10), 0);
	model_move(m, 1);
	assert_int_equal(model_scroll(m, 10), 1);
	model_end(m);
	assert_int_equal(model_scroll(m, 10), 40);
	model_move(m, -15);
	assert_int_equal(model_selected(m), 34);
	assert_int_equal(model_scroll(m, 10), 34);
	/* A taller window shows more, never empty space under rows that exist. */
	assert_int_equal(model_scroll(m, 30), 20);
	model_home(m);
	assert_int_equal(model_scroll(m, 10), 0);
	/* Fewer rows than lines. */
	model_set_filter(m, "f4");
	assert_int_equal(model_scroll(m, 10), 0);
	model_free(m);
	aggregate_free(a);
}

static const struct model_edge *edge(const struct model_edge *e, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(e[i].name, name))
			return &e[i];
	return NULL;
}

static void callers_and_callees(void **state)
{
	struct aggregate *a = sample();
	struct model *m = model_new();
	struct model_edges e;

	(void)state;
	model_tick(m, a);

	assert_int_equal(model_edges(m, fid(a, "a"), &e), 0);
	assert_string_equal(e.name, "a");
	assert_int_equal(e.flat, 10);
	assert_int_equal(e.cum, 30);
	assert_int_equal(e.total, 65);
	assert_int_equal(e.ncallers, 1);
	assert_string_equal(e.callers[0].name, "main");
	assert_int_equal(e.callers[0].weight, 30);
	assert_int_equal(e.ncallees, 2);
	/* Heaviest first: b (20), then a itself as the leaf (10). */
	assert_string_equal(e.callees[0].name, "b");
	assert_int_equal(e.callees[0].weight, 20);
	assert_string_equal(e.callees[1].name, "(self)");
	assert_int_equal(e.callees[1].function_id, 0);
	assert_int_equal(e.callees[1].weight, 10);
	model_edges_free(&e);

	/* main is the root: its caller is "(root)"; rec's recursion counts once. */
	assert_int_equal(model_edges(m, fid(a, "main"), &e), 0);
	assert_int_equal(e.cum, 65);
	assert_int_equal(e.ncallers, 1);
	assert_string_equal(e.callers[0].name, "(root)");
	assert_int_equal(e.callers[0].weight, 65);
	assert_int_equal(edge(e.callees, e.ncallees, "rec")->weight, 30);
	assert_int_equal(edge(e.callees, e.ncallees, "a")->weight, 30);
	assert_int_equal(edge(e.callees, e.ncallees, "(self)")->weight, 5);
	model_edges_free(&e);

	assert_int_equal(model_edges(m, fid(a, "rec"), &e), 0);
	assert_int_equal(e.cum, 30);
	assert_int_equal(edge(e.callers, e.ncallers, "rec")->weight, 30);
	assert_int_equal(edge(e.callers, e.ncallers, "main")->weight, 30);
	assert_int_equal(edge(e.callees, e.ncallees, "rec")->weight, 30);
	assert_int_equal(edge(e.callees, e.ncallees, "(self)")->weight, 30);
	model_edges_free(&e);

	/* Restricted to thread 2, a has no samples. */
	model_set_thread(m, 2);
	assert_int_equal(model_edges(m, fid(a, "a"), &e), -ENOENT);
	assert_null(e.callers);
	model_set_thread(m, 0);

	/* In the interval window only the new samples count. */
	agg_add_spec(a, 1, 4, "b@30 a@21 main@11");
	model_tick(m, a);
	model_set_window(m, MODEL_INTERVAL);
	assert_int_equal(model_edges(m, fid(a, "a"), &e), 0);
	assert_int_equal(e.cum, 4);
	assert_int_equal(e.total, 4);
	assert_int_equal(e.ncallees, 1);
	assert_string_equal(e.callees[0].name, "b");
	model_edges_free(&e);

	assert_int_equal(model_edges(m, 0, &e), -ENOENT);
	assert_int_equal(model_edges(m, 999, &e), -ENOENT);
	model_edges_free(&e);
	model_edges_free(NULL);
	model_free(m);
	aggregate_free(a);
}

static void thread_list(void **state)
{
	struct aggregate *a = sample();
	struct model *m = model_new();
	struct model_thread *t;
	size_t n;

	(void)state;
	const struct model_thread known[] = { { .tid = 2, .name = "beta" }, { .tid = 9, .name = "sleeper" } };

	assert_int_equal(model_threads(m, NULL, 0, &t, &n), 0);
	assert_int_equal(n, 0); /* no tick yet, nothing known */
	free(t);
	/* Known threads are listed before any tick, with no samples. */
	assert_int_equal(model_threads(m, known, 2, &t, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(t[0].tid, 2);
	assert_int_equal(t[0].samples, 0);
	assert_string_equal(t[1].name, "sleeper");
	free(t);
	aggregate_set_thread_name(a, 7, "idle"); /* named, never sampled: listed too */
	model_tick(m, a);
	assert_int_equal(model_threads(m, known, 2, &t, &n), 0);
	assert_int_equal(n, 4);
	/* Heaviest first: beta has 35 events, alpha 30; then by tid, samples or not. */
	assert_int_equal(t[0].tid, 2);
	assert_string_equal(t[0].name, "beta");
	assert_int_equal(t[0].samples, 2);
	assert_int_equal(t[0].weight, 35);
	assert_int_equal(t[1].tid, 1);
	assert_string_equal(t[1].name, "alpha");
	assert_int_equal(t[1].weight, 30);
	assert_int_equal(t[1].samples, 2);
	assert_int_equal(t[2].tid, 7);
	assert_string_equal(t[2].name, "idle");
	assert_int_equal(t[2].samples, 0);
	assert_int_equal(t[3].tid, 9);
	assert_string_equal(t[3].name, "sleeper");
	assert_int_equal(t[3].weight, 0);
	free(t);

	/* Samples and weights follow the window: the interval has one new sample. */
	agg_add_spec(a, 1, 50, "a@20 main@10");
	model_tick(m, a);
	model_set_window(m, MODEL_INTERVAL);
	assert_int_equal(model_threads(m, NULL, 0, &t, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(t[0].tid, 1);
	assert_int_equal(t[0].weight, 50);
	assert_int_equal(t[0].samples, 1);
	assert_int_equal(t[1].weight, 0);
	assert_int_equal(t[1].samples, 0);
	free(t);
	/* Since start again: all three of alpha's samples. */
	model_set_window(m, MODEL_SINCE_START);
	assert_int_equal(model_threads(m, NULL, 0, &t, &n), 0);
	assert_int_equal(t[0].tid, 1);
	assert_int_equal(t[0].samples, 3);
	assert_int_equal(t[0].weight, 80);
	free(t);
	model_free(m);
	aggregate_free(a);
}

/*
 * aggregate_maintain() rebuilt the aggregate (stack indices and strings
 * change): the model says it is stale, the next tick re-reads it, keeps the
 * since-start totals, and the interval starts afresh instead of counting
 * every stack as new.
 */
static void rebuilt_aggregate(void **state)
{
	struct aggregate *a = sample();
	struct model *m = model_new();
	uint64_t since_start;

	(void)state;
	assert_false(model_stale(m, a)); /* nothing held yet */
	assert_int_equal(model_tick(m, a), 0);
	agg_add_spec(a, 1, 7, "a@20 main@10");
	assert_int_equal(model_tick(m, a), 0);
	since_start = model_total(m);
	assert_int_equal(since_start, 72);
	assert_false(model_stale(m, a));
	assert_int_equal(aggregate_maintain(a, true, false), 0);
	assert_true(model_stale(m, a));
	assert_int_equal(model_tick(m, a), 0);
	assert_false(model_stale(m, a));
	assert_int_equal(model_total(m), since_start);
	assert_int_equal(model_set_window(m, MODEL_INTERVAL), 0);
	assert_int_equal(model_total(m), 0);
	/* New samples after the rebuild are the next interval. */
	agg_add_spec(a, 2, 5, "main@12");
	assert_int_equal(model_tick(m, a), 0);
	assert_int_equal(model_total(m), 5);
	model_free(m);
	aggregate_free(a);
}

static void formats(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(model_fmt_value(0, "count", b, sizeof(b)), "0");
	assert_string_equal(model_fmt_value(9999, "count", b, sizeof(b)), "9999");
	assert_string_equal(model_fmt_value(12345, "count", b, sizeof(b)), "12.3k");
	assert_string_equal(model_fmt_value(999600, "count", b, sizeof(b)), "1.00M");
	assert_string_equal(model_fmt_value(2500000000ULL, "count", b, sizeof(b)), "2.50G");
	assert_string_equal(model_fmt_value(123456789012345ULL, "count", b, sizeof(b)), "123T");
	assert_string_equal(model_fmt_value(250, "nanoseconds", b, sizeof(b)), "250ns");
	assert_string_equal(model_fmt_value(250000, "nanoseconds", b, sizeof(b)), "250us");
	assert_string_equal(model_fmt_value(45600000, "nanoseconds", b, sizeof(b)), "45.6ms");
	assert_string_equal(model_fmt_value(1230000000, "nanoseconds", b, sizeof(b)), "1.23s");
	assert_string_equal(model_fmt_value(4000000000000ULL, "nanoseconds", b, sizeof(b)), "4000s");
	assert_string_equal(model_fmt_value(512, "bytes", b, sizeof(b)), "512B");
	assert_string_equal(model_fmt_value(1805247, "bytes", b, sizeof(b)), "1.72MB");
	assert_string_equal(model_fmt_value(1023 * 1024 + 1000, "bytes", b, sizeof(b)), "1.00MB");
	assert_true(strlen(model_fmt_value(UINT64_MAX, "bytes", b, sizeof(b))) <= 8);
	assert_true(strlen(model_fmt_value(UINT64_MAX, "count", b, sizeof(b))) <= 8);
	assert_true(strlen(model_fmt_value(UINT64_MAX, "nanoseconds", b, sizeof(b))) <= 8);
	assert_string_equal(model_fmt_percent(1, 8, b, sizeof(b)), " 12.5%");
	assert_string_equal(model_fmt_percent(8, 8, b, sizeof(b)), "100.0%");
	assert_string_equal(model_fmt_percent(1, 0, b, sizeof(b)), "  0.0%");
	assert_string_equal(model_basename("/usr/lib/libc.so.6"), "libc.so.6");
	assert_string_equal(model_basename("shares"), "shares");
	assert_string_equal(model_basename(""), "");
	assert_string_equal(model_basename(NULL), "");
}

/*
 * Events cycles, instructions, branches, branchMisses:
 *   tid 1: hot <- main     1000  2000  400  40
 *   tid 1: cold <- main     500   250  100   0
 *   tid 1: main               0   100    0   0
 *   tid 2: hot <- main      300   300    0   0
 */
static struct aggregate *multi(void)
{
	static const char *const evn[] = { "cycles", "instructions", "branches", "branchMisses" };
	static const uint64_t w[4][4] = {
		{ 1000, 2000, 400, 40 }, { 500, 250, 100, 0 }, { 0, 100, 0, 0 }, { 300, 300, 0, 0 },
	};
	static const char *const spec[4] = { "hot@20 main@10", "cold@30 main@11", "main@10",
					     "hot@20 main@10" };
	struct aggregate *a = aggregate_new();
	struct agg_info *info;
	unsigned i, k;

	assert_non_null(a);
	info = aggregate_info(a);
	info->nevents = 4;
	for (k = 0; k < 4; k++) {
		info->events[k].name = evn[k];
		info->events[k].unit = "count";
		info->events[k].scale = 1.0;
	}
	for (i = 0; i < 4; i++)
		for (k = 0; k < 4; k++)
			if (w[i][k])
				agg_add_spec_ev(a, i == 3 ? 2 : 1, k, w[i][k], spec[i]);
	return a;
}

static void multi_event_rows(void **state)
{
	struct aggregate *a = multi(), *single = sample();
	struct model *m = model_new();
	const struct top_row *r;

	(void)state;
	model_tick(m, single);
	assert_int_equal(model_nevents(m), 1);
	assert_int_equal(row(m, "a")->ev_flat[0], 0);  /* single event: not filled */
	model_reset(m);

	assert_int_equal(model_tick(m, a), 0);
	assert_int_equal(model_nevents(m), 4);
	assert_int_equal(model_total(m), 1800);
	assert_string_equal(names(m), "hot cold main");
	r = row(m, "hot");
	assert_int_equal(r->flat, 1300);
	assert_int_equal(r->ev_flat[1], 2300);
	assert_int_equal(r->ev_flat[3], 40);
	r = row(m, "main");
	assert_int_equal(r->ev_flat[1], 100);
	assert_int_equal(r->ev_cum[1], 2650);
	assert_int_equal(r->ev_cum[2], 500);

	/* `e`: instructions is the shown event at once, no tick needed. */
	assert_int_equal(model_set_event(m, 1), 0);
	assert_true(model_has_data(m));
	assert_int_equal(model_event(m), 1);
	assert_int_equal(model_total(m), 2650);
	assert_string_equal(names(m), "hot cold main");
	assert_int_equal(row(m, "cold")->flat, 250);
	assert_int_equal(row(m, "cold")->ev_flat[0], 500);
	assert_int_equal(model_sum(m, 1), 2550);
	/* Sorted by the shown event: by branches, main (flat 0) is last; by cum, first. */
	assert_int_equal(model_set_event(m, 2), 0);
	assert_int_equal(model_set_sort(m, TOP_SORT_CUM), 0);
	assert_string_equal(names(m), "main hot cold");
	assert_int_equal(model_set_sort(m, TOP_SORT_FLAT), 0);
	assert_string_equal(names(m), "hot cold main");
	model_free(m);
	aggregate_free(a);
	aggregate_free(single);
}

static void multi_event_interval(void **state)
{
	struct aggregate *a = multi();
	struct model *m = model_new();

	(void)state;
	model_tick(m, a);
	agg_add_spec_ev(a, 1, 1, 70, "cold@30 main@11");   /* instructions only */
	agg_add_spec_ev(a, 1, 3, 9, "hot@20 main@10");     /* branch misses only */
	agg_add_spec_ev(a, 2, 0, 20, "new@40 main@10");    /* a new stack, cycles only */
	model_tick(m, a);
	assert_int_equal(model_set_window(m, MODEL_INTERVAL), 0);
	/* Rows of every event that moved; the shown one (cycles) decides the order. */
	assert_int_equal(model_total(m), 20);
	assert_string_equal(names(m), "new cold hot main");
	assert_int_equal(row(m, "cold")->ev_flat[1], 70);
	assert_int_equal(row(m, "hot")->ev_flat[3], 9);
	assert_int_equal(row(m, "hot")->ev_flat[0], 0);
	assert_int_equal(row(m, "main")->ev_cum[1], 70);
	/* Switching the event keeps the interval. */
	assert_int_equal(model_set_event(m, 1), 0);
	assert_int_equal(model_window(m), MODEL_INTERVAL);
	assert_int_equal(model_total(m), 70);
	assert_string_equal(model_row(m, 0)->name, "cold");
	assert_int_equal(model_set_window(m, MODEL_SINCE_START), 0);
	assert_int_equal(model_total(m), 2720);

	/* Callers and threads are of the shown event too. */
	{
		struct model_edges e;
		struct model_thread *t;
		size_t n;

		assert_int_equal(model_edges(m, fid(a, "main"), &e), 0);
		assert_int_equal(e.cum, 2720);
		assert_int_equal(e.flat, 100);
		assert_int_equal(edge(e.callees, e.ncallees, "hot")->weight, 2300);
		model_edges_free(&e);
		assert_int_equal(model_threads(m, NULL, 0, &t, &n), 0);
		assert_int_equal(n, 2);
		assert_int_equal(t[0].tid, 1);
		assert_int_equal(t[0].weight, 2420);
		assert_int_equal(t[1].weight, 300);
		free(t);
	}
	model_free(m);
	aggregate_free(a);
}

static void multi_event_scale_and_bounds(void **state)
{
	struct aggregate *a = multi();
	struct model *m = model_new();

	(void)state;
	model_tick(m, a);
	/* Multiplexing found at the end: the next rebuild shows estimates. */
	aggregate_info(a)->events[0].scale = 2.0;
	model_tick(m, a);
	assert_int_equal(model_total(m), 3600);
	assert_int_equal(row(m, "hot")->flat, 2600);
	assert_int_equal(row(m, "hot")->ev_flat[1], 2300);
	assert_int_equal(model_set_window(m, MODEL_INTERVAL), 0);
	assert_int_equal(model_total(m), 0);
	assert_int_equal(model_set_window(m, MODEL_SINCE_START), 0);
	{
		struct model_edges e;

		assert_int_equal(model_edges(m, fid(a, "hot"), &e), 0);
		assert_int_equal(e.flat, 2600);
		model_edges_free(&e);
	}

	/* An event the run does not have: empty until a tick, then zero rows. */
	assert_int_equal(model_set_event(m, 5), 0);
	assert_int_equal(model_nevents(m), 1);
	assert_int_equal(model_nrows(m), 0);
	model_tick(m, a);
	assert_int_equal(model_total(m), 0);
	assert_int_equal(model_set_event(m, PMUTOP_MAX_EVENTS), -EINVAL);
	/* Back to a real one: every event again from the next tick. */
	assert_int_equal(model_set_event(m, 0), 0);
	model_tick(m, a);
	assert_int_equal(model_nevents(m), 4);
	assert_int_equal(model_total(m), 3600);
	model_free(m);
	aggregate_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_before_first_tick),
		cmocka_unit_test(sort_flat_and_cum),
		cmocka_unit_test(filter_by_substring),
		cmocka_unit_test(restrict_to_thread),
		cmocka_unit_test(interval_deltas),
		cmocka_unit_test(reset_and_new_aggregate),
		cmocka_unit_test(selection_follows_function),
		cmocka_unit_test(scrolling_keeps_selection_visible),
		cmocka_unit_test(callers_and_callees),
		cmocka_unit_test(thread_list),
		cmocka_unit_test(formats),
		cmocka_unit_test(multi_event_rows),
		cmocka_unit_test(multi_event_interval),
		cmocka_unit_test(multi_event_scale_and_bounds),
		cmocka_unit_test(rebuilt_aggregate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
