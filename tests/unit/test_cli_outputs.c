/*
 * test_cli_outputs.c - the command-line options of the ecosystem outputs:
 * --format, the format --dump's extension picks, --diff-base,
 * --folded-threads, --http, --http-max-seconds, and their conflicts with
 * the rest (each refused with a message naming the option).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "pmutop/frontend/cli.h"

static int parse(struct pmutop_opts *o, char *err, size_t errlen, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;

	argv[argc++] = "pmutop";
	va_start(ap, errlen);
	for (char *a; (a = va_arg(ap, char *));)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	err[0] = '\0';
	return cli_parse(argc, argv, o, stdout, err, errlen);
}

static void test_defaults(void **state)
{
	struct pmutop_opts o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, sizeof(err), "-p", "1", NULL), 0);
	assert_int_equal(o.format, DUMP_PPROF);
	assert_false(o.folded_threads);
	assert_null(o.http);
	assert_int_equal(o.http_max_seconds, 300);
}

static void test_format(void **state)
{
	struct pmutop_opts o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, sizeof(err), "-p", "1", "--format", "folded", "--dump", "x",
			       "--folded-threads", NULL), 0);
	assert_int_equal(o.format, DUMP_FOLDED);
	assert_true(o.folded_threads);
	assert_int_equal(parse(&o, err, sizeof(err), "-p", "1", "--format", "pprof", "--dump", "x",
			       NULL), 0);
	assert_int_equal(o.format, DUMP_PPROF);

	assert_int_equal(parse(&o, err, sizeof(err), "-p", "1", "--format", "svg", "--dump", "x",
			       NULL), 0);
	assert_int_equal(o.format, DUMP_SVG);
	assert_int_equal(parse(&o, err, sizeof(err), "-p", "1", "--format", "speedscope", "--dump",
			       "x", NULL), 0);
	assert_int_equal(o.format, DUMP_SPEEDSCOPE);
	assert_int_equal(parse(&o, err, sizeof(err), "-p", "1", "--format", "gif", "--dump", "x",
			       NULL), -EINVAL);
	assert_non_null(strstr(err, "invalid format \"gif\""));
	assert_non_null(strstr(err, "pprof, folded, html, svg or speedscope"));
	assert_int_equal(parse(&o, err, sizeof(err), "-p", "1", "--format", "svg", NULL), -EINVAL);
	assert_non_null(strstr(err, "--format svg needs --dump"));
	assert_int_equal(parse(&o, err, sizeof(err), "-p", "1", "--format", "folded", NULL), -EINVAL);
	assert_non_null(strstr(err, "--format folded needs --dump"));
	assert_int_equal(parse(&o, err, sizeof(err), "-p", "1", "--folded-threads", "--dump", "x",
			       NULL), -EINVAL);
	assert_non_null(strstr(err, "--folded-threads"));
	assert_int_equal(parse(&o, err, sizeof(err), "-p", "1", "--format", "folded", "--dump", "x",
			       "--top", NULL), -EINVAL);
	assert_non_null(strstr(err, "--top"));
}

static void test_http(void **state)
{
	struct pmutop_opts o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, sizeof(err), "--http", "127.0.0.1:6060", "-p", "42",
			       "--http-max-seconds", "60", "-e", "task-clock", NULL), 0);
	assert_string_equal(o.http, "127.0.0.1:6060");
	assert_int_equal(o.http_max_seconds, 60);
	assert_int_equal(o.pid, 42);

	assert_int_equal(parse(&o, err, sizeof(err), "--http", ":6060", "--", "true", NULL), -EINVAL);
	assert_non_null(strstr(err, "give -p PID"));
	assert_int_equal(parse(&o, err, sizeof(err), "--http", ":6060", "-p", "1", "--dump", "x",
			       NULL), -EINVAL);
	assert_non_null(strstr(err, "?seconds=N"));
	assert_int_equal(parse(&o, err, sizeof(err), "--http", ":6060", "-p", "1", "--duration", "5",
			       NULL), -EINVAL);
	assert_int_equal(parse(&o, err, sizeof(err), "--http", "", "-p", "1", NULL), -EINVAL);
	assert_int_equal(parse(&o, err, sizeof(err), "--http", ":1", "-p", "1",
			       "--http-max-seconds", "0", NULL), -EINVAL);
	assert_non_null(strstr(err, "--http-max-seconds \"0\""));
}

/* --dump's extension picks the format; an unknown one is an error listing them. */
static void test_dump_extension(void **state)
{
	static const struct { const char *path; int format; } ok[] = {
		{ "p.pb.gz", DUMP_PPROF }, { "cpu.pprof", DUMP_PPROF }, { "cpu.prof", DUMP_PPROF },
		{ "x", DUMP_PPROF }, { "dir.d/profile", DUMP_PPROF }, { "-", DUMP_PPROF },
		{ "flame.html", DUMP_HTML }, { "F.HTM", DUMP_HTML }, { "s.folded", DUMP_FOLDED },
		{ "s.collapsed", DUMP_FOLDED }, { "./.hidden", DUMP_PPROF },
		{ "flame.svg", DUMP_SVG }, { "p.speedscope.json", DUMP_SPEEDSCOPE },
		{ "p.json", DUMP_SPEEDSCOPE },
	};
	struct pmutop_opts o;
	char err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(parse(&o, err, sizeof(err), "-p", "1", "--dump", ok[i].path, NULL), 0);
		assert_int_equal(o.format, ok[i].format);
	}
	/* Unknown: parsed, flagged for dump_check() (which lets FIFOs and devices through). */
	assert_int_equal(parse(&o, err, sizeof(err), "-p", "1", "--dump", "flame.xyz", NULL), 0);
	assert_true(o.dump_ext_unknown);
	{
		enum dump_format f;

		assert_int_equal(cli_dump_format("flame.xyz", &f, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "unknown extension \".xyz\""));
		assert_non_null(strstr(err, ".html"));
		assert_non_null(strstr(err, ".svg"));
		assert_non_null(strstr(err, "--format pprof|folded|html|svg|speedscope"));
	}
	/* --format wins over the name. */
	assert_int_equal(parse(&o, err, sizeof(err), "-p", "1", "--format", "html", "--dump",
			       "page.svg", NULL), 0);
	assert_int_equal(o.format, DUMP_HTML);
	assert_int_equal(parse(&o, err, sizeof(err), "-p", "1", "--format", "pprof", "--dump",
			       "p.html", NULL), 0);
	assert_int_equal(o.format, DUMP_PPROF);
	assert_int_equal(parse(&o, err, sizeof(err), "-p", "1", "--format", "html", NULL), -EINVAL);
	assert_non_null(strstr(err, "--format html needs --dump"));
	assert_int_equal(parse(&o, err, sizeof(err), "-p", "1", "--dump", "f.html", "--dump-split",
			       NULL), -EINVAL);
	assert_int_equal(parse(&o, err, sizeof(err), "-p", "1", "--dump", "f.html", "--top", NULL),
			 -EINVAL);
	/* --load converts a saved profile. */
	assert_int_equal(parse(&o, err, sizeof(err), "--load", "a.pb.gz", "--dump", "f.html", NULL), 0);
	assert_int_equal(o.format, DUMP_HTML);
	assert_int_equal(parse(&o, err, sizeof(err), "--load", "a.pb.gz", "--dump", "f.gif", NULL), 0);
	assert_true(o.dump_ext_unknown);
}

static void test_diff_base(void **state)
{
	struct pmutop_opts o;
	char err[512];

	(void)state;
	assert_int_equal(parse(&o, err, sizeof(err), "--load", "new.pb.gz", "--dump", "d.html",
			       "--diff-base", "old.pb.gz", NULL), 0);
	assert_string_equal(o.diff_base, "old.pb.gz");
	assert_int_equal(parse(&o, err, sizeof(err), "-p", "1", "--dump", "d.pb.gz",
			       "--diff-base", "old.pb.gz", NULL), -EINVAL);
	assert_non_null(strstr(err, "--diff-base"));
	assert_int_equal(parse(&o, err, sizeof(err), "-p", "1", "--diff-base", "old.pb.gz", NULL),
			 -EINVAL);
	assert_int_equal(parse(&o, err, sizeof(err), "-p", "1", "--dump", "d.html",
			       "--diff-base", "", NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_http),
		cmocka_unit_test(test_dump_extension),
		cmocka_unit_test(test_diff_base),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
