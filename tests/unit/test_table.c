/*
 * test_table.c - unit tests of the flat/cum function table: values on a
 * hand-built aggregate (recursion counted once per stack in cum), sort
 * orders, the thread filter, and the text output against what
 * `go tool pprof -top` prints for the same profile; multi-event tables
 * (every event's flat/cum estimate, the multiplexing scale, the key event,
 * explicit per-stack weights) and their extra text columns with ratios.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>

#include <cmocka.h>

#include "agg_spec.h"

#include "pmutop/profile/aggregate.h"
#include "pmutop/symbols/symbolize.h"
#include "pmutop/profile/table.h"

/*
 * tid 1:  a <- main                    10
 * tid 1:  b <- a <- main               20
 * tid 2:  rec <- rec <- rec <- main    30
 * tid 2:  main                          5
 */
static struct aggregate *sample(void)
{
	struct aggregate *a = aggregate_new();

	assert_non_null(a);
	agg_add_spec(a, 1, 10, "a@20 main@10");
	agg_add_spec(a, 1, 20, "b@30 a@21 main@11");
	agg_add_spec(a, 2, 30, "rec@40 rec@41 rec@42 main@12");
	agg_add_spec(a, 2, 5, "main@10");
	return a;
}

static const struct top_row *row(const struct top_table *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->nrows; i++)
		if (!strcmp(t->rows[i].name, name))
			return &t->rows[i];
	fail_msg("no row %s", name);
	return NULL;
}

static char *print(const struct top_table *t, size_t max_rows, const char *unit)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	top_table_print(t, f, max_rows, 0, unit);
	fclose(f);
	return buf;
}

static void test_values(void **state)
{
	struct aggregate *a = sample();
	struct top_table t;

	(void)state;
	assert_int_equal(top_table_build(a, 0, TOP_SORT_FLAT, &t), 0);
	assert_int_equal(t.total, 65);
	assert_int_equal(t.nrows, 4);
	assert_int_equal(row(&t, "main")->flat, 5);
	assert_int_equal(row(&t, "main")->cum, 65);
	assert_int_equal(row(&t, "a")->flat, 10);
	assert_int_equal(row(&t, "a")->cum, 30);
	assert_int_equal(row(&t, "b")->flat, 20);
	assert_int_equal(row(&t, "b")->cum, 20);
	/* Three frames of rec on one stack count once. */
	assert_int_equal(row(&t, "rec")->flat, 30);
	assert_int_equal(row(&t, "rec")->cum, 30);
	assert_string_equal(t.rows[0].name, "rec");
	assert_string_equal(t.rows[1].name, "b");
	assert_string_equal(t.rows[2].name, "a");
	assert_string_equal(t.rows[3].name, "main");
	assert_string_equal(row(&t, "main")->file, "");
	top_table_free(&t);
	assert_null(t.rows);
	top_table_free(&t);
	top_table_free(NULL);
	aggregate_free(a);
}

static void test_sort_cum_ties_by_name(void **state)
{
	struct aggregate *a = sample();
	struct top_table t;

	(void)state;
	assert_int_equal(top_table_build(a, 0, TOP_SORT_CUM, &t), 0);
	assert_int_equal(t.nrows, 4);
	assert_string_equal(t.rows[0].name, "main");
	assert_string_equal(t.rows[1].name, "a");   /* cum 30, before "rec" */
	assert_string_equal(t.rows[2].name, "rec");
	assert_string_equal(t.rows[3].name, "b");
	top_table_free(&t);
	aggregate_free(a);
}

static void test_tid_filter(void **state)
{
	struct aggregate *a = sample();
	struct top_table t;

	(void)state;
	assert_int_equal(top_table_build(a, 1, TOP_SORT_FLAT, &t), 0);
	assert_int_equal(t.total, 30);
	assert_int_equal(t.nrows, 3);
	assert_string_equal(t.rows[0].name, "b");
	assert_string_equal(t.rows[1].name, "a");
	assert_string_equal(t.rows[2].name, "main");
	assert_int_equal(t.rows[2].flat, 0);
	assert_int_equal(t.rows[2].cum, 30);
	top_table_free(&t);

	assert_int_equal(top_table_build(a, 99, TOP_SORT_FLAT, &t), 0);
	assert_int_equal(t.total, 0);
	assert_int_equal(t.nrows, 0);
	top_table_free(&t);
	aggregate_free(a);
}

static void test_print_flat(void **state)
{
	struct aggregate *a = sample();
	struct top_table t;
	char *out;

	(void)state;
	assert_int_equal(top_table_build(a, 0, TOP_SORT_FLAT, &t), 0);
	out = print(&t, 0, "count");
	assert_string_equal(out,
		"Showing nodes accounting for 65, 100% of 65 total\n"
		"      flat  flat%   sum%        cum   cum%\n"
		"        30 46.15% 46.15%         30 46.15%  rec\n"
		"        20 30.77% 76.92%         20 30.77%  b\n"
		"        10 15.38% 92.31%         30 46.15%  a\n"
		"         5  7.69%   100%         65   100%  main\n");
	free(out);

	out = print(&t, 2, NULL);
	assert_string_equal(out,
		"Showing nodes accounting for 50, 76.92% of 65 total\n"
		"Showing top 2 nodes out of 4\n"
		"      flat  flat%   sum%        cum   cum%\n"
		"        30 46.15% 46.15%         30 46.15%  rec\n"
		"        20 30.77% 76.92%         20 30.77%  b\n");
	free(out);

	/* pprof appends units it does not know. */
	out = print(&t, 1, "cycles");
	assert_string_equal(out,
		"Showing nodes accounting for 30cycles, 46.15% of 65cycles total\n"
		"Showing top 1 nodes out of 4\n"
		"      flat  flat%   sum%        cum   cum%\n"
		"  30cycles 46.15% 46.15%   30cycles 46.15%  rec\n");
	free(out);
	top_table_free(&t);
	aggregate_free(a);
}

static void test_print_cum(void **state)
{
	struct aggregate *a = sample();
	struct top_table t;
	char *out;

	(void)state;
	assert_int_equal(top_table_build(a, 0, TOP_SORT_CUM, &t), 0);
	out = print(&t, 0, "count");
	assert_string_equal(out,
		"Showing nodes accounting for 65, 100% of 65 total\n"
		"      flat  flat%   sum%        cum   cum%\n"
		"         5  7.69%  7.69%         65   100%  main\n"
		"        10 15.38% 23.08%         30 46.15%  a\n"
		"        30 46.15% 69.23%         30 46.15%  rec\n"
		"        20 30.77%   100%         20 30.77%  b\n");
	free(out);
	top_table_free(&t);
	aggregate_free(a);
}

static void test_print_small_and_empty(void **state)
{
	struct aggregate *a = aggregate_new();
	struct top_table t;
	char *out;

	(void)state;
	assert_int_equal(top_table_build(a, 0, TOP_SORT_FLAT, &t), 0);
	out = print(&t, 0, "count");
	assert_string_equal(out,
		"Showing nodes accounting for 0, 0% of 0 total\n"
		"      flat  flat%   sum%        cum   cum%\n");
	free(out);
	top_table_free(&t);

	agg_add_spec(a, 1, 999, "big@1");
	agg_add_spec(a, 1, 1, "tiny@2");
	assert_int_equal(top_table_build(a, 0, TOP_SORT_FLAT, &t), 0);
	out = print(&t, 0, "count");
	assert_string_equal(out,
		"Showing nodes accounting for 1000, 100% of 1000 total\n"
		"      flat  flat%   sum%        cum   cum%\n"
		"       999 99.90% 99.90%        999 99.90%  big\n"
		"         1   0.1%   100%          1   0.1%  tiny\n");
	free(out);
	top_table_free(&t);
	aggregate_free(a);
}

/* Time units are scaled as pprof does (unit of the smallest value shown). */
static void test_print_nanoseconds(void **state)
{
	struct aggregate *a = aggregate_new();
	struct top_table t;
	char *out;

	(void)state;
	agg_add_spec(a, 1, 1500000000, "slow@1");
	agg_add_spec(a, 1, 2500000, "quick@2");
	assert_int_equal(top_table_build(a, 0, TOP_SORT_FLAT, &t), 0);
	out = print(&t, 0, "nanoseconds");
	assert_string_equal(out,
		"Showing nodes accounting for 1502.50ms, 100% of 1502.50ms total\n"
		"      flat  flat%   sum%        cum   cum%\n"
		"    1500ms 99.83% 99.83%     1500ms 99.83%  slow\n"
		"    2.50ms  0.17%   100%     2.50ms  0.17%  quick\n");
	free(out);
	top_table_free(&t);
	aggregate_free(a);
}

/*
 * Events cycles, instructions, branches, branchMisses:
 *   stack 0, tid 1: hot <- main     1000  2000  400  40
 *   stack 1, tid 1: cold <- main     500   250  100   0
 *   stack 2, tid 1: main               0   100    0   0
 *   stack 3, tid 2: hot <- main      300   300    0   0
 */
static struct aggregate *multi(void)
{
	static const char *const names[] = { "cycles", "instructions", "branches",
					      "branchMisses" };
	struct aggregate *a = aggregate_new();
	struct agg_info *info;
	unsigned k;

	assert_non_null(a);
	info = aggregate_info(a);
	info->nevents = 4;
	for (k = 0; k < 4; k++) {
		info->events[k].name = names[k];
		info->events[k].unit = "count";
		info->events[k].scale = 1.0;
	}
	info->event = names[0];
	info->event_unit = "count";
	agg_add_spec_ev(a, 1, 0, 1000, "hot@20 main@10");
	agg_add_spec_ev(a, 1, 1, 2000, "hot@20 main@10");
	agg_add_spec_ev(a, 1, 2, 400, "hot@20 main@10");
	agg_add_spec_ev(a, 1, 3, 40, "hot@20 main@10");
	agg_add_spec_ev(a, 1, 0, 500, "cold@30 main@11");
	agg_add_spec_ev(a, 1, 1, 250, "cold@30 main@11");
	agg_add_spec_ev(a, 1, 2, 100, "cold@30 main@11");
	agg_add_spec_ev(a, 1, 1, 100, "main@10");
	agg_add_spec_ev(a, 2, 0, 300, "hot@20 main@10");
	agg_add_spec_ev(a, 2, 1, 300, "hot@20 main@10");
	return a;
}

static void test_multi_values(void **state)
{
	struct aggregate *a = multi();
	struct top_table t;
	const struct top_row *r;

	(void)state;
	assert_int_equal(top_table_build(a, 0, TOP_SORT_FLAT, &t), 0);
	assert_int_equal(t.nevents, 4);
	assert_int_equal(t.key, 0);
	assert_string_equal(t.ev_name[1], "instructions");
	assert_string_equal(t.ev_unit[3], "count");
	assert_int_equal(t.total, 1800);
	assert_int_equal(t.ev_total[0], 1800);
	assert_int_equal(t.ev_total[1], 2650);
	assert_int_equal(t.ev_total[2], 500);
	assert_int_equal(t.ev_total[3], 40);
	assert_int_equal(t.nrows, 3);
	assert_string_equal(t.rows[0].name, "hot");
	assert_string_equal(t.rows[1].name, "cold");
	assert_string_equal(t.rows[2].name, "main");
	r = row(&t, "hot");
	assert_int_equal(r->flat, 1300);
	assert_int_equal(r->cum, 1300);
	assert_int_equal(r->ev_flat[0], 1300);
	assert_int_equal(r->ev_flat[1], 2300);
	assert_int_equal(r->ev_flat[2], 400);
	assert_int_equal(r->ev_flat[3], 40);
	r = row(&t, "main");
	assert_int_equal(r->flat, 0);
	assert_int_equal(r->cum, 1800);
	assert_int_equal(r->ev_flat[1], 100);
	assert_int_equal(r->ev_cum[1], 2650);
	assert_int_equal(r->ev_cum[3], 40);
	top_table_free(&t);

	/* One thread. */
	assert_int_equal(top_table_build(a, 2, TOP_SORT_FLAT, &t), 0);
	assert_int_equal(t.total, 300);
	assert_int_equal(t.ev_total[1], 300);
	assert_int_equal(t.nrows, 2);
	assert_int_equal(row(&t, "hot")->ev_flat[1], 300);
	top_table_free(&t);
	aggregate_free(a);
}

/* Multiplexed events are scaled per stack, as the pprof writer does. */
static void test_multi_scale(void **state)
{
	struct aggregate *a = multi();
	struct agg_info *info = aggregate_info(a);
	struct top_table t;

	(void)state;
	info->events[0].scale = 1.5;
	info->events[1].scale = 2.0;
	info->events[2].scale = 0.5;  /* below 1: never scaled down */
	assert_int_equal(top_table_build(a, 0, TOP_SORT_FLAT, &t), 0);
	assert_int_equal(t.total, 2700);
	assert_int_equal(row(&t, "hot")->flat, 1950);     /* 1500 + 450 */
	assert_int_equal(row(&t, "hot")->ev_flat[1], 4600);
	assert_int_equal(row(&t, "hot")->ev_flat[2], 400);
	assert_int_equal(row(&t, "main")->cum, 2700);
	top_table_free(&t);
	assert_true(top_table_scale(a, 1) == 2.0);
	assert_true(top_table_scale(a, 2) == 1.0);
	assert_true(top_table_scale(a, 7) == 1.0);

	/* A single-event table is never scaled (as before several events existed). */
	info->nevents = 1;
	assert_true(top_table_scale(a, 0) == 1.0);
	assert_int_equal(top_table_build(a, 0, TOP_SORT_FLAT, &t), 0);
	assert_int_equal(t.nevents, 0);
	assert_int_equal(t.total, 1800);
	assert_int_equal(row(&t, "hot")->flat, 1300);
	assert_int_equal(row(&t, "hot")->ev_flat[1], 0);
	top_table_free(&t);
	aggregate_free(a);
}

static void test_multi_weights_and_key(void **state)
{
	struct aggregate *a = multi();
	struct top_table t;
	/* The "last interval": only stacks 1 and 3 moved; stack 2 is all zero. */
	uint64_t w[4 * 4] = {
		0, 0, 0, 0,
		50, 10, 20, 5,
		0, 0, 0, 0,
		30, 60, 0, 0,
	};

	(void)state;
	assert_int_equal(top_table_build_events(a, 0, TOP_SORT_FLAT, 1, w, 4, 4, &t), 0);
	assert_int_equal(t.key, 1);
	assert_int_equal(t.total, 70);
	assert_int_equal(t.ev_total[0], 80);
	assert_int_equal(t.nrows, 3);
	assert_string_equal(t.rows[0].name, "hot");   /* 60 instructions */
	assert_string_equal(t.rows[1].name, "cold");  /* 10 */
	assert_int_equal(row(&t, "hot")->flat, 60);
	assert_int_equal(row(&t, "hot")->ev_flat[0], 30);
	assert_int_equal(row(&t, "cold")->ev_flat[3], 5);
	assert_int_equal(row(&t, "main")->flat, 0);
	assert_int_equal(row(&t, "main")->cum, 70);
	top_table_free(&t);

	/* Fewer weights than stacks: the rest are left out. */
	assert_int_equal(top_table_build_events(a, 0, TOP_SORT_CUM, 0, w, 2, 4, &t), 0);
	assert_int_equal(t.total, 50);
	assert_int_equal(t.nrows, 2);
	assert_string_equal(t.rows[0].name, "cold");
	assert_string_equal(t.rows[1].name, "main");
	top_table_free(&t);

	/* The weights are taken as given: no scaling on top. */
	aggregate_info(a)->events[1].scale = 3.0;
	assert_int_equal(top_table_build_events(a, 0, TOP_SORT_FLAT, 1, w, 4, 4, &t), 0);
	assert_int_equal(t.total, 70);
	top_table_free(&t);

	assert_int_equal(top_table_build_events(a, 0, TOP_SORT_FLAT, 4, w, 4, 4, &t), -EINVAL);
	assert_int_equal(top_table_build_events(a, 0, TOP_SORT_FLAT, 0, w, 4, 1, &t), -EINVAL);
	assert_int_equal(top_table_build_events(a, 0, TOP_SORT_FLAT, 0, w, 4, 9, &t), -EINVAL);
	assert_null(t.rows);
	top_table_free(&t);
	aggregate_free(a);
}

static void test_multi_print(void **state)
{
	struct aggregate *a = multi();
	struct top_table t;
	char *out;

	(void)state;
	assert_int_equal(top_table_build(a, 0, TOP_SORT_FLAT, &t), 0);
	out = print(&t, 0, "count");
	assert_string_equal(out,
		"Showing nodes accounting for 1800, 100% of 1800 total\n"
		"Events: cycles (flat, cum); instructions, branches, branchMisses (flat); "
		"sampled counts are estimates (samples x period)\n"
		"Ratios (~) of the flat estimates: IPC~ = instructions/cycles, "
		"br-miss%~ = branchMisses/branches\n"
		"      flat  flat%   sum%        cum   cum% instructions   branches branchMisses"
		"     IPC~ br-miss%~\n"
		"      1300 72.22% 72.22%       1300 72.22%         2300        400           40"
		"     1.77     10.0%  hot\n"
		"       500 27.78%   100%        500 27.78%          250        100            0"
		"     0.50      0.0%  cold\n"
		"         0     0%   100%       1800   100%          100          0            0"
		"        -         -  main\n");
	free(out);
	top_table_free(&t);
	aggregate_free(a);
}

/* Other events keep their own units; no ratio: no ratio line. */
static void test_multi_print_units(void **state)
{
	struct aggregate *a = aggregate_new();
	struct agg_info *info = aggregate_info(a);
	struct top_table t;
	char *out;

	(void)state;
	info->nevents = 2;
	info->events[0].name = "task-clock";
	info->events[0].unit = "nanoseconds";
	info->events[1].name = "page-faults";
	info->events[1].unit = "count";
	agg_add_spec_ev(a, 1, 0, 1500000000, "slow@1");
	agg_add_spec_ev(a, 1, 1, 7, "slow@1");
	agg_add_spec_ev(a, 1, 0, 2500000, "quick@2");
	agg_add_spec_ev(a, 1, 1, 3, "faulty@3");
	assert_int_equal(top_table_build(a, 0, TOP_SORT_FLAT, &t), 0);
	out = print(&t, 2, "nanoseconds");
	assert_string_equal(out,
		"Showing nodes accounting for 1502.50ms, 100% of 1502.50ms total\n"
		"Showing top 2 nodes out of 3\n"
		"Events: task-clock (flat, cum); page-faults (flat); "
		"sampled counts are estimates (samples x period)\n"
		"      flat  flat%   sum%        cum   cum% page-faults\n"
		"    1500ms 99.83% 99.83%     1500ms 99.83%           7  slow\n"
		"    2.50ms  0.17%   100%     2.50ms  0.17%           0  quick\n");
	free(out);
	top_table_free(&t);
	aggregate_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_sort_cum_ties_by_name),
		cmocka_unit_test(test_tid_filter),
		cmocka_unit_test(test_print_flat),
		cmocka_unit_test(test_print_cum),
		cmocka_unit_test(test_print_small_and_empty),
		cmocka_unit_test(test_print_nanoseconds),
		cmocka_unit_test(test_multi_values),
		cmocka_unit_test(test_multi_scale),
		cmocka_unit_test(test_multi_weights_and_key),
		cmocka_unit_test(test_multi_print),
		cmocka_unit_test(test_multi_print_units),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
