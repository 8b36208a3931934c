/*
 * test_ratios.c - unit tests of the derived per-function ratios: which
 * pairs a run's event names allow (pmutop's names, perf's spellings,
 * modifiers, privilege levels that must agree), and the values and text
 * for ordinary counts and a zero denominator.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "pmutop/profile/ratios.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void canonical_names(void **state)
{
	const char *names[] = { "cycles", "instructions", "cacheReferences", "cacheMisses",
				"branches", "branchMisses" };
	struct ratio r[RATIOS_MAX];

	(void)state;
	assert_int_equal(ratios_find(names, N(names), r), 3);
	assert_string_equal(r[0].label, "IPC~");
	assert_int_equal(r[0].num, 1);
	assert_int_equal(r[0].den, 0);
	assert_false(r[0].percent);
	assert_string_equal(r[1].label, "miss%~");
	assert_int_equal(r[1].num, 3);
	assert_int_equal(r[1].den, 2);
	assert_true(r[1].percent);
	assert_string_equal(r[2].label, "br-miss%~");
	assert_int_equal(r[2].num, 5);
	assert_int_equal(r[2].den, 4);
	assert_true(r[2].percent);
}

static void perf_spellings_and_order(void **state)
{
	/* Any order; perf's names; case does not matter. */
	const char *names[] = { "branch-misses", "cpu-cycles", "Instructions",
				"branch-instructions", "cache-misses", "cache-references" };
	struct ratio r[RATIOS_MAX];

	(void)state;
	assert_int_equal(ratios_find(names, N(names), r), 3);
	assert_string_equal(r[0].label, "IPC~");
	assert_int_equal(r[0].num, 2);
	assert_int_equal(r[0].den, 1);
	assert_string_equal(r[1].label, "miss%~");
	assert_int_equal(r[1].num, 4);
	assert_int_equal(r[1].den, 5);
	assert_string_equal(r[2].label, "br-miss%~");
	assert_int_equal(r[2].num, 0);
	assert_int_equal(r[2].den, 3);
}

static void modifiers(void **state)
{
	struct ratio r[RATIOS_MAX];

	(void)state;
	/* A modifier group is ignored for matching ... */
	{
		const char *names[] = { "cycles:u", "instructions:upp" };

		assert_int_equal(ratios_find(names, N(names), r), 1);
		assert_int_equal(r[0].num, 1);
		assert_int_equal(r[0].den, 0);
	}
	/* ... precision alone changes nothing that is counted ... */
	{
		const char *names[] = { "cpu-cycles:pp", "instructions" };

		assert_int_equal(ratios_find(names, N(names), r), 1);
	}
	/* ... :uk is both levels, like no modifier ... */
	{
		const char *names[] = { "cycles:uk", "instructions" };

		assert_int_equal(ratios_find(names, N(names), r), 1);
	}
	/* ... but user-only instructions over all cycles is no IPC. */
	{
		const char *names[] = { "cycles", "instructions:u" };

		assert_int_equal(ratios_find(names, N(names), r), 0);
	}
	{
		const char *names[] = { "cycles:k", "instructions:u" };

		assert_int_equal(ratios_find(names, N(names), r), 0);
	}
	/* With several candidates, the pair whose levels agree. */
	{
		const char *names[] = { "cycles", "instructions:u", "cycles:u" };

		assert_int_equal(ratios_find(names, N(names), r), 1);
		assert_int_equal(r[0].num, 1);
		assert_int_equal(r[0].den, 2);
	}
	/* The first matching event of each kind. */
	{
		const char *names[] = { "instructions", "cycles", "instructions", "cycles" };

		assert_int_equal(ratios_find(names, N(names), r), 1);
		assert_int_equal(r[0].num, 0);
		assert_int_equal(r[0].den, 1);
	}
}

static void no_pairs(void **state)
{
	const char *sw[] = { "task-clock", "cpu-clock", "page-faults" };
	const char *half[] = { "instructions", "cacheMisses", "branchMisses" };
	const char *lookalikes[] = { "ref-cycles", "instructions", "stalled-cycles-frontend",
				     "L1-dcache-load-misses", "LLC-loads", "INST_RETIRED:ANY_P",
				     "branch-load-misses", "branch-loads" };
	const char *with_null[] = { NULL, "cycles", NULL, "instructions" };
	struct ratio r[RATIOS_MAX];

	(void)state;
	assert_int_equal(ratios_find(sw, N(sw), r), 0);
	assert_int_equal(ratios_find(half, N(half), r), 0);
	assert_int_equal(ratios_find(lookalikes, N(lookalikes), r), 0);
	assert_int_equal(ratios_find(sw, 0, r), 0);
	assert_int_equal(ratios_find(with_null, N(with_null), r), 1);
	assert_int_equal(r[0].num, 3);
	assert_int_equal(r[0].den, 1);
}

static void values(void **state)
{
	const char *names[] = { "cycles", "instructions", "cacheReferences", "cacheMisses" };
	struct ratio r[RATIOS_MAX];
	char b[32];
	double v;
	uint64_t flat[] = { 2000000, 3000000, 400000, 50000 };
	uint64_t none[] = { 0, 3000000, 0, 10000 };
	uint64_t big[] = { 1, 5000000, 10, 2000 };

	(void)state;
	assert_int_equal(ratios_find(names, N(names), r), 2);
	assert_true(ratio_value(&r[0], flat, &v));
	assert_true(v > 1.4999 && v < 1.5001);
	assert_string_equal(ratio_format(&r[0], flat, b, sizeof(b)), "1.50");
	assert_true(ratio_value(&r[1], flat, &v));
	assert_true(v > 12.4999 && v < 12.5001);
	assert_string_equal(ratio_format(&r[1], flat, b, sizeof(b)), "12.5%");

	/* Nothing to divide by: "-", not 0 or inf. */
	assert_false(ratio_value(&r[0], none, &v));
	assert_true(v == 0);
	assert_string_equal(ratio_format(&r[0], none, b, sizeof(b)), "-");
	assert_string_equal(ratio_format(&r[1], none, b, sizeof(b)), "-");

	/* Large values drop their decimals. */
	assert_string_equal(ratio_format(&r[0], big, b, sizeof(b)), "5000000");
	assert_string_equal(ratio_format(&r[1], big, b, sizeof(b)), "20000%");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(canonical_names),
		cmocka_unit_test(perf_spellings_and_order),
		cmocka_unit_test(modifiers),
		cmocka_unit_test(no_pairs),
		cmocka_unit_test(values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
