/*
 * test_ch_rows.c - a window as ClickHouse rows (ch_rows.h): the JSON is
 * escaped (quotes, backslashes, newlines in names and labels), a stack's
 * id is the same in two aggregates that hold the same frames (other tids,
 * other windows, other load order) and differs when a frame differs, a
 * stack or mapping is written once across windows sharing a seen set and
 * again after ch_seen_clear; folded thread groups (tid 0) stay apart in
 * the table's key by their names; the DDL statements are idempotent.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/ch_rows.h"

/* An aggregate of two stacks: main -> "we\"ird\nname" and main -> leaf, on tid. */
static struct aggregate *make(uint32_t tid, const char *leafname, bool reverse)
{
	struct aggregate *a = aggregate_new();
	uint32_t m, fmain, fw, fl, lmain, lw, ll;
	uint64_t w1[1] = { 3000 }, w2[1] = { 5000 };

	assert_non_null(a);
	assert_int_equal(aggregate_import_mapping(a, 0x400000, 0x500000, 0, "/usr/bin/app",
						  "abcd", true, &m), 0);
	assert_int_equal(aggregate_import_function(a, "main", "/usr/bin/app", &fmain), 0);
	assert_int_equal(aggregate_import_function(a, "we\"ird\nname\\", "/usr/bin/app", &fw), 0);
	assert_int_equal(aggregate_import_function(a, leafname, "/usr/bin/app", &fl), 0);
	assert_int_equal(aggregate_import_location(a, m, 0x401000, fmain, &lmain), 0);
	assert_int_equal(aggregate_import_location(a, m, 0x402000, fw, &lw), 0);
	assert_int_equal(aggregate_import_location(a, m, 0x403000, fl, &ll), 0);
	{
		uint32_t s1[2] = { lw, lmain }, s2[2] = { ll, lmain };

		if (reverse) {
			assert_int_equal(aggregate_import_stack(a, tid, s2, 2, 5, w2, 1), 0);
			assert_int_equal(aggregate_import_stack(a, tid, s1, 2, 3, w1, 1), 0);
		} else {
			assert_int_equal(aggregate_import_stack(a, tid, s1, 2, 3, w1, 1), 0);
			assert_int_equal(aggregate_import_stack(a, tid, s2, 2, 5, w2, 1), 0);
		}
	}
	aggregate_set_thread_name(a, tid, "work\ter");
	aggregate_set_thread_process(a, tid, 77, "app");
	aggregate_info(a)->start_ns = 1700000000123456789ULL;
	aggregate_info(a)->duration_ns = 1000000000ULL;
	return a;
}

static const char *keys[] = { "service" }, *values[] = { "d\"b" };
static const struct ch_labels labels = { .host = "h\\1", .n = 1, .keys = keys, .values = values };

/* The stack ids in b's samples, sorted, in ids[] (at most 8). */
static size_t sample_stack_ids(const struct ch_batch *b, uint64_t *ids)
{
	size_t n = 0;

	for (const char *p = b->samples.p; p && (p = strstr(p, "\"stack_id\":")); p++) {
		uint64_t v = strtoull(p + 11, NULL, 10);
		size_t i = n++;

		assert_true(n <= 8);
		while (i > 0 && ids[i - 1] > v) {
			ids[i] = ids[i - 1];
			i--;
		}
		ids[i] = v;
	}
	return n;
}

static void escapes_and_labels(void **state)
{
	struct aggregate *a = make(5, "leaf", false);
	struct ch_batch b;

	(void)state;
	assert_int_equal(ch_rows_encode(a, 42, &labels, NULL, &b), 0);
	assert_non_null(strstr(b.stacks.p, "\"we\\\"ird\\u000aname\\\\\""));
	assert_non_null(strstr(b.samples.p, "\"host\":\"h\\\\1\""));
	assert_non_null(strstr(b.samples.p, "\"thread\":\"work\\u0009er\""));
	assert_non_null(strstr(b.samples.p, "\"labels.key\":[\"service\"],\"labels.value\":[\"d\\\"b\"]"));
	assert_non_null(strstr(b.samples.p, "\"window_id\":42,\"ts\":1700000000,\"start_ns\":1700000000123456789,\"duration_ns\":1000000000"));
	assert_non_null(strstr(b.samples.p, "\"pid\":77,\"comm\":\"app\",\"tid\":5"));
	assert_non_null(strstr(b.samples.p, "\"samples\":5,\"value\":5000}"));
	assert_non_null(strstr(b.mappings.p, "\"file\":\"/usr/bin/app\",\"build_id\":\"abcd\""));
	/* module-relative addresses, leaf first */
	assert_non_null(strstr(b.stacks.p, "\"frames.address\":[8192,4096]"));
	assert_int_equal(b.samples_total, 8);
	/* no raw control byte anywhere: one row per line */
	for (const char *p = b.stacks.p; *p; p++)
		assert_true(*p == '\n' || (unsigned char)*p >= 0x20);
	ch_batch_free(&b);
	aggregate_free(a);
}

static void ids_are_stable(void **state)
{
	struct aggregate *a = make(5, "leaf", false), *b = make(9, "leaf", true),
			 *c = make(5, "other", false);
	struct ch_batch x, y, z;
	uint64_t ix[8], iy[8], iz[8];

	(void)state;
	assert_int_equal(ch_rows_encode(a, 1, &labels, NULL, &x), 0);
	assert_int_equal(ch_rows_encode(b, 2, &labels, NULL, &y), 0);
	assert_int_equal(ch_rows_encode(c, 3, &labels, NULL, &z), 0);
	assert_int_equal(sample_stack_ids(&x, ix), 2);
	assert_int_equal(sample_stack_ids(&y, iy), 2);
	assert_int_equal(sample_stack_ids(&z, iz), 2);
	assert_memory_equal(ix, iy, sizeof(uint64_t) * 2);
	/* one stack differs in its leaf: one id in common */
	assert_true((ix[0] == iz[0]) + (ix[0] == iz[1]) + (ix[1] == iz[0]) + (ix[1] == iz[1]) == 1);
	ch_batch_free(&x);
	ch_batch_free(&y);
	ch_batch_free(&z);
	aggregate_free(a);
	aggregate_free(b);
	aggregate_free(c);
}

static void written_once(void **state)
{
	struct aggregate *a = make(5, "leaf", false), *c = make(5, "other", false);
	struct ch_seen *seen = ch_seen_new();
	struct ch_batch w1, w2, w3;

	(void)state;
	assert_non_null(seen);
	assert_int_equal(ch_rows_encode(a, 1, &labels, seen, &w1), 0);
	assert_int_equal(ch_rows_encode(c, 2, &labels, seen, &w2), 0);
	assert_true(w1.mappings.len > 0);
	assert_int_equal(w2.mappings.len, 0);
	/* only the new stack ("other") in the second window */
	assert_non_null(strstr(w2.stacks.p, "\"other\""));
	assert_null(strstr(w2.stacks.p, "we\\\"ird"));
	assert_non_null(strchr(w2.stacks.p, '\n'));
	assert_ptr_equal(strchr(w2.stacks.p, '\n') + 1, w2.stacks.p + w2.stacks.len);
	assert_int_equal(w2.samples_total, 8);
	ch_seen_clear(seen);
	assert_int_equal(ch_rows_encode(a, 3, &labels, seen, &w3), 0);
	assert_true(w3.mappings.len > 0 && w3.stacks.len == w1.stacks.len);
	ch_batch_free(&w1);
	ch_batch_free(&w2);
	ch_batch_free(&w3);
	ch_seen_free(seen);
	ch_seen_free(NULL);
	aggregate_free(a);
	aggregate_free(c);
}

/*
 * Exited threads folded by name are records with tids from AGG_TID_GROUP
 * up; their rows say tid 0, so the table's key must tell them apart by the
 * thread name (a ReplacingMergeTree keeps one row per key).
 */
static void folded_groups_stay_apart(void **state)
{
	struct aggregate *a = make(AGG_TID_GROUP + 1, "leaf", false);
	uint32_t locs[1] = { 3 };
	uint64_t w[1] = { 7000 };
	struct ch_batch b;
	int end;
	char *sql;

	(void)state;
	assert_int_equal(aggregate_import_stack(a, AGG_TID_GROUP + 2, locs, 1, 7, w, 1), 0);
	aggregate_set_thread_name(a, AGG_TID_GROUP + 2, "pool");
	assert_int_equal(ch_rows_encode(a, 9, &labels, NULL, &b), 0);
	assert_non_null(strstr(b.samples.p, "\"tid\":0,\"thread\":\"work\\u0009er\""));
	assert_non_null(strstr(b.samples.p, "\"tid\":0,\"thread\":\"pool\""));
	sql = ch_rows_ddl("db", 1, &end);
	assert_non_null(sql);
	assert_non_null(strstr(sql, CH_T_SAMPLES));
	assert_non_null(strstr(sql, "ORDER BY (host, ts, window_id, event, stack_id, pid, tid, thread)"));
	free(sql);
	ch_batch_free(&b);
	aggregate_free(a);
}

static void ddl(void **state)
{
	int end = 0;
	unsigned i;

	(void)state;
	for (i = 0;; i++) {
		char *s = ch_rows_ddl("fleet", i, &end);

		if (!s)
			break;
		assert_true(strstr(s, "IF NOT EXISTS") || strstr(s, "WHERE (SELECT count()"));
		assert_non_null(strstr(s, "fleet"));
		free(s);
	}
	assert_true(end);
	assert_true(i >= 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(escapes_and_labels),
		cmocka_unit_test(ids_are_stable),
		cmocka_unit_test(written_once),
		cmocka_unit_test(folded_groups_stay_apart),
		cmocka_unit_test(ddl),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
