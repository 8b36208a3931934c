/*
 * test_table.c - unit tests of the flat/cum function table: values on a
 * hand-built aggregate (recursion counted once per stack in cum), sort
 * orders, the thread filter, and the text output against what
 * `go tool pprof -top` prints for the same profile.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmutop/aggregate.h"
#include "pmutop/symbolize.h"
#include "table.h"

static void add(struct aggregate *a, uint32_t tid, uint64_t weight, const char *spec)
{
	/* spec: "name@addr name@addr ...", leaf first */
	struct frame f[16];
	char buf[256], *save = NULL, *tok;
	unsigned n = 0;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *at = strchr(tok, '@');

		assert_non_null(at);
		*at = 0;
		f[n].addr = strtoull(at + 1, NULL, 16);
		f[n].map = NULL;
		f[n].func = strdup(tok);
		f[n].func_off = 0;
		n++;
	}
	assert_int_equal(aggregate_add(a, tid, f, n, weight), 0);
	while (n--)
		free((char *)f[n].func);
}

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
	add(a, 1, 10, "a@20 main@10");
	add(a, 1, 20, "b@30 a@21 main@11");
	add(a, 2, 30, "rec@40 rec@41 rec@42 main@12");
	add(a, 2, 5, "main@10");
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
	top_table_print(t, f, max_rows, unit);
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

	add(a, 1, 999, "big@1");
	add(a, 1, 1, "tiny@2");
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
	add(a, 1, 1500000000, "slow@1");
	add(a, 1, 2500000, "quick@2");
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
