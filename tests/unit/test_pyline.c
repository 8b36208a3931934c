/*
 * test_pyline.c - CPython 3.11's location table decoder (target/pyline.c)
 * against the interpreter itself, and on corrupt tables.
 *
 * Truth: tests/unit/data/py311_lines.txt, written by Debian's python3.11
 * (tests/unit/gen_py311_lines.py): for real code objects - every shape of
 * statement, a 300-line jump (long form entries), comprehensions,
 * generators, coroutines, json.decoder and dis - the table and the line
 * co_lines() gives every code unit. Each unit's line must come out the
 * same. Corrupt tables (every truncation, every byte flipped, random
 * bytes) must give a line or -EINVAL, never a read outside the table (the
 * copies are exactly sized heap blocks: check-asan catches a stray read).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmutop/target/pyline.h"

#define DATA "tests/unit/data/py311_lines.txt"

struct code {
	char name[256];
	int first;
	size_t nbytes, tablen;
	uint8_t *tab;
	int *lines;
};

static int hexval(int c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

/* Next "code" + "lines" pair of f; false at the end. */
static bool read_code(FILE *f, struct code *c)
{
	static char buf[1 << 20];
	char *p, *hex;
	size_t i;

	if (!fgets(buf, sizeof(buf), f))
		return false;
	assert_true(strncmp(buf, "code ", 5) == 0);
	hex = malloc(strlen(buf));
	assert_non_null(hex);
	assert_int_equal(sscanf(buf, "code %255s %d %zu %s", c->name, &c->first, &c->nbytes, hex), 4);
	c->tablen = strlen(hex) / 2;
	c->tab = malloc(c->tablen ? c->tablen : 1);
	assert_non_null(c->tab);
	for (i = 0; i < c->tablen; i++)
		c->tab[i] = (uint8_t)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
	free(hex);
	assert_non_null(fgets(buf, sizeof(buf), f));
	assert_true(strncmp(buf, "lines", 5) == 0);
	c->lines = calloc(c->nbytes / 2 + 1, sizeof(int));
	assert_non_null(c->lines);
	p = buf + 5;
	for (i = 0; i < c->nbytes / 2; i++)
		c->lines[i] = (int)strtol(p, &p, 10);
	return true;
}

static void test_real_tables(void **state)
{
	FILE *f = fopen(DATA, "r");
	struct code c;
	size_t ncodes = 0, nunits = 0, nolines = 0, far = 0;

	(void)state;
	assert_non_null(f);
	while (read_code(f, &c)) {
		for (size_t u = 0; u < c.nbytes / 2; u++) {
			int line = -7;

			if (pyline_addr2line(c.tab, c.tablen, c.first, (int)(2 * u), &line)) {
				fail_msg("%s: unit %zu: table refused", c.name, u);
			}
			if (line != c.lines[u])
				fail_msg("%s: unit %zu: line %d, CPython says %d", c.name, u, line,
					 c.lines[u]);
			nolines += line == -1;
			far += line > c.first + 200;
			nunits++;
		}
		/* Past the end: an error, as the table ends there. */
		int line = -7;
		assert_int_equal(pyline_addr2line(c.tab, c.tablen, c.first, (int)c.nbytes, &line),
				 -EINVAL);
		assert_int_equal(line, -7);
		/* Before the start: co_firstlineno, as CPython answers. */
		assert_int_equal(pyline_addr2line(c.tab, c.tablen, c.first, -2, &line), 0);
		assert_int_equal(line, c.first);
		free(c.tab);
		free(c.lines);
		ncodes++;
	}
	fclose(f);
	print_message("%zu code objects, %zu code units, %zu without a line, %zu far (long form)\n",
		      ncodes, nunits, nolines, far);
	/* The data has every kind of entry the checks lean on. */
	assert_true(ncodes >= 50);
	assert_true(nolines > 0);
	assert_true(far > 0);
}

/* Every truncation and every single-byte change of every real table. */
static void test_corrupt_tables(void **state)
{
	FILE *f = fopen(DATA, "r");
	struct code c;
	size_t refused = 0, tried = 0;

	(void)state;
	assert_non_null(f);
	while (read_code(f, &c)) {
		for (size_t cut = 0; cut < c.tablen; cut++) {
			uint8_t *t = malloc(cut ? cut : 1);
			int line;

			assert_non_null(t);
			memcpy(t, c.tab, cut);
			for (size_t u = 0; u < c.nbytes / 2; u += 7) {
				int r = pyline_addr2line(t, cut, c.first, (int)(2 * u), &line);

				assert_true(r == 0 || r == -EINVAL);
				refused += r != 0;
				tried++;
			}
			free(t);
		}
		for (size_t k = 0; k < c.tablen && k < 64; k++) {
			uint8_t *t = malloc(c.tablen);
			int line;

			assert_non_null(t);
			memcpy(t, c.tab, c.tablen);
			t[k] ^= (uint8_t)(0x80 | (k * 37));
			for (size_t u = 0; u < c.nbytes / 2; u += 5) {
				int r = pyline_addr2line(t, c.tablen, c.first, (int)(2 * u), &line);

				assert_true(r == 0 || r == -EINVAL);
				tried++;
			}
			free(t);
		}
		free(c.tab);
		free(c.lines);
	}
	fclose(f);
	/* Cut tables end before the later units: those must be refused. */
	assert_true(refused > 0);
	print_message("%zu lookups on corrupt tables, %zu refused\n", tried, refused);
}

static void test_random_and_edges(void **state)
{
	uint8_t t[64];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int line;

	(void)state;
	for (int round = 0; round < 20000; round++) {
		size_t n = (size_t)(round % 64);
		uint8_t *h = malloc(n ? n : 1);

		assert_non_null(h);
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			h[i] = (uint8_t)x;
		}
		int r = pyline_addr2line(h, n, 1, (int)(x % 200) & ~1, &line);
		assert_true(r == 0 || r == -EINVAL);
		free(h);
	}
	/* Empty table: nothing is covered. */
	assert_int_equal(pyline_addr2line(t, 0, 5, 0, &line), -EINVAL);
	/* A varint that never ends. */
	t[0] = 0x80 | 13 << 3;
	memset(t + 1, 0x7f, 20);
	assert_int_equal(pyline_addr2line(t, 21, 5, 0, &line), -EINVAL);
	/* Huge deltas cannot overflow the line. */
	for (int i = 0; i < 12; i++) {
		t[4 * i] = 0x80 | 13 << 3;
		t[4 * i + 1] = 0x7e;
		t[4 * i + 2] = 0x7f;
		t[4 * i + 3] = 0x3f;
	}
	int r = pyline_addr2line(t, 48, 5, 22, &line);
	assert_true(r == 0 || r == -EINVAL);
	assert_int_equal(pyline_addr2line(t, 48, 0x7ffffff0, 22, &line), -EINVAL);
	/* One short entry: first line, two units; no-location entry: -1. */
	t[0] = 0x80 | 1;
	t[1] = 0;
	t[2] = 0x80 | 15 << 3;
	assert_int_equal(pyline_addr2line(t, 3, 9, 2, &line), 0);
	assert_int_equal(line, 9);
	assert_int_equal(pyline_addr2line(t, 3, 9, 4, &line), 0);
	assert_int_equal(line, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_tables),
		cmocka_unit_test(test_corrupt_tables),
		cmocka_unit_test(test_random_and_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
