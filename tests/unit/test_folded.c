/*
 * test_folded.c - unit tests of the collapsed-stack writer: root-first
 * frame order, stacks of different threads merged (or split by thread
 * name with --folded-threads), deterministic sorted output, and frame names
 * that would break the format (';', newlines) made safe. Also the C++/Rust
 * demangler wrapper the aggregator uses for names.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "agg_spec.h"

#include "pmutop/profile/aggregate.h"
#include "pmutop/symbols/demangle.h"
#include "pmutop/profile/folded.h"
#include "pmutop/symbols/symbolize.h"

static char *folded(const struct aggregate *a, bool threads)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(folded_write_stream(a, threads, f), 0);
	fclose(f);
	return buf;
}

static struct aggregate *sample(void)
{
	struct aggregate *a = aggregate_new();

	assert_non_null(a);
	aggregate_set_thread_name(a, 1, "main");
	aggregate_set_thread_name(a, 2, "worker");
	aggregate_set_thread_name(a, 3, "worker");
	agg_add_spec(a, 1, 10, "a@20 main@10");
	agg_add_spec(a, 1, 20, "b@30 a@21 main@11");
	agg_add_spec(a, 2, 30, "b@30 a@21 main@11");
	agg_add_spec(a, 3, 5, "b@30 a@21 main@11");
	agg_add_spec(a, 2, 7, "main@10");
	return a;
}

static void test_merged(void **state)
{
	struct aggregate *a = sample();
	char *out = folded(a, false);

	(void)state;
	assert_string_equal(out,
			    "main 7\n"
			    "main;a 10\n"
			    "main;a;b 55\n");
	free(out);
	aggregate_free(a);
}

static void test_threads(void **state)
{
	struct aggregate *a = sample();
	char *out = folded(a, true);

	(void)state;
	/* Same-named threads fold together: a pool is one tower. */
	assert_string_equal(out,
			    "main;main;a 10\n"
			    "main;main;a;b 20\n"
			    "worker;main 7\n"
			    "worker;main;a;b 35\n");
	free(out);
	aggregate_free(a);
}

static void test_unnamed_thread_and_empty_stack(void **state)
{
	struct aggregate *a = aggregate_new();
	char *out;

	(void)state;
	assert_non_null(a);
	assert_int_equal(aggregate_add(a, 42, NULL, 0, 3), 0);
	out = folded(a, true);
	assert_string_equal(out, "tid-42;[no stack] 3\n");
	free(out);
	out = folded(a, false);
	assert_string_equal(out, "[no stack] 3\n");
	free(out);
	aggregate_free(a);
}

static void test_sanitize(void **state)
{
	struct aggregate *a = aggregate_new();
	char *out, buf[16];
	size_t len = 0;

	(void)state;
	assert_non_null(a);
	agg_add_spec(a, 1, 1, "odd;name\nx@10 main@5");
	out = folded(a, false);
	assert_string_equal(out, "main;odd:name?x 1\n");
	free(out);
	aggregate_free(a);

	/* Too long for the buffer: -ENOSPC, nothing appended. */
	assert_int_equal(folded_append_frame(buf, sizeof(buf), &len, "abc"), 0);
	assert_int_equal(folded_append_frame(buf, sizeof(buf), &len, "0123456789abcdef"), -ENOSPC);
	assert_int_equal(len, 3);
	assert_string_equal(buf, "abc");
	assert_int_equal(folded_append_frame(buf, sizeof(buf), &len, ""), 0);
	assert_string_equal(buf, "abc;[unknown]");
}

static void test_write_file(void **state)
{
	struct aggregate *a = sample();
	char path[] = "/tmp/pmutop-folded-XXXXXX", err[256], line[128];
	int fd = mkstemp(path);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(folded_write(a, false, path, err, sizeof(err)), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line, "main 7\n");
	fclose(f);
	unlink(path);
	assert_true(folded_write(a, false, "/nonexistent-dir/x.folded", err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "/nonexistent-dir/x.folded"));
	aggregate_free(a);
}

/* The aggregator shows demangled names and keeps the raw one. */
static void test_demangled_names(void **state)
{
	struct aggregate *a = aggregate_new();
	const struct agg_function *fn;
	char *d;
	size_t n;

	(void)state;
	d = demangle("_ZN2ns3Cls6methodEi");
	assert_non_null(d);
	assert_string_equal(d, "ns::Cls::method(int)");
	free(d);
	d = demangle("_ZN4core3fmt5write17h0123456789abcdefE"); /* Rust legacy */
	assert_non_null(d);
	assert_string_equal(d, "core::fmt::write");
	free(d);
	d = demangle("_RNvCs1234_7mycrate3foo");                 /* Rust v0 */
	assert_non_null(d);
	assert_string_equal(d, "mycrate::foo");
	free(d);
	assert_null(demangle("main"));
	assert_null(demangle("main.main"));                     /* Go */
	assert_null(demangle("_Zgarbage"));
	assert_null(demangle(NULL));

	assert_non_null(a);
	agg_add_spec(a, 1, 1, "_ZN2ns3Cls6methodEi@10 main@5");
	fn = aggregate_functions(a, &n);
	assert_int_equal(n, 2);
	assert_string_equal(fn[0].name, "ns::Cls::method(int)");
	assert_string_equal(fn[0].system_name, "_ZN2ns3Cls6methodEi");
	assert_string_equal(fn[1].name, "main");
	assert_null(fn[1].system_name);
	aggregate_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merged),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_unnamed_thread_and_empty_stack),
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_write_file),
		cmocka_unit_test(test_demangled_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
