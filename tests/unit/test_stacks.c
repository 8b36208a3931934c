/*
 * test_stacks.c - what `--stacks` and `--unwind` add to the command line,
 * and the JSON string writer of `--stacks --json` (quotes, control
 * characters, and bytes that are not UTF-8, which JSON text cannot carry).
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

#include "cli_args.h"

#include "pmutop/frontend/cli.h"
#include "pmutop/frontend/stacks.h"
#include "pmutop/profile/json.h"


static void unwind_engines(void **state)
{
	struct pmutop_opts o;

	(void)state;
	assert_int_equal(parse(&o, "-p", "1", NULL), 0);
	assert_int_equal(o.unwind, UNWIND_ENGINE_SNAPSHOT);
	assert_int_equal(parse(&o, "-p", "1", "--unwind=ptrace", NULL), 0);
	assert_int_equal(o.unwind, UNWIND_ENGINE_PTRACE);
	assert_int_equal(parse(&o, "-p", "1", "--unwind", "fp", NULL), 0);
	assert_int_equal(o.unwind, UNWIND_ENGINE_FP);
	assert_int_equal(parse(&o, "--unwind=snapshot", "--", "true", NULL), 0);
	assert_int_equal(o.unwind, UNWIND_ENGINE_SNAPSHOT);
	assert_int_equal(parse(&o, "-p", "1", "--unwind=lbr", NULL), -EINVAL);
	assert_non_null(strstr(cli_err, "\"lbr\""));
}

static void stacks_options(void **state)
{
	struct pmutop_opts o;

	(void)state;
	assert_int_equal(parse(&o, "--stacks", "-p", "42", NULL), 0);
	assert_true(o.stacks);
	assert_false(o.json);
	assert_int_equal(o.pid, 42);
	assert_int_equal(parse(&o, "--stacks", "--json", "-p", "42", NULL), 0);
	assert_true(o.json);
	/* --json alone, --stacks with a command or with sampling outputs: refused. */
	assert_int_equal(parse(&o, "--json", "-p", "42", NULL), -EINVAL);
	assert_non_null(strstr(cli_err, "--stacks"));
	assert_int_equal(parse(&o, "--stacks", "--", "true", NULL), -EINVAL);
	assert_int_equal(parse(&o, "--stacks", "-p", "42", "--dump", "x.pb.gz", NULL), -EINVAL);
	assert_int_equal(parse(&o, "--stacks", "-p", "42", "--duration", "3", NULL), -EINVAL);
	assert_int_equal(parse(&o, "--stacks", NULL), -EINVAL);
}

/* json_write_string(s) as a malloc'd string. */
static char *json(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	json_write_string(f, s);
	fclose(f);
	return buf;
}

static void json_escapes(void **state)
{
	struct { const char *in, *out; } cases[] = {
		{ "plain", "\"plain\"" },
		{ "", "\"\"" },
		{ NULL, "\"\"" },
		{ "a\"b\\c", "\"a\\\"b\\\\c\"" },
		{ "tab\there\nnl\r", "\"tab\\there\\nnl\\r\"" },
		{ "\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"" },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82\"" },
		/* Not UTF-8: a lone continuation byte, a truncated sequence, an
		 * overlong '/', a surrogate: each bad byte becomes U+FFFD. */
		{ "a\x80z", "\"a\\ufffdz\"" },
		{ "\xc3", "\"\\ufffd\"" },
		{ "\xc0\xaf", "\"\\ufffd\\ufffd\"" },
		{ "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"" },
		{ "std::vector<int>::push_back(int&&)", "\"std::vector<int>::push_back(int&&)\"" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = json(cases[i].in);
		assert_string_equal(got, cases[i].out);
		free(got);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unwind_engines),
		cmocka_unit_test(stacks_options),
		cmocka_unit_test(json_escapes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
