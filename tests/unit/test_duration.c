/*
 * test_duration.c - the duration parser (duration.h) and every duration
 * option through it: the forms users type (500ms, 5s, 2m, 1h, 1m30s, bare
 * seconds) give the right seconds, and nonsense units, signs, zero and
 * negative durations are refused with the value and the accepted forms in
 * the message (issue 31).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli_args.h"

#include "pmutop/frontend/cli.h"
#include "pmutop/frontend/duration.h"

static void assert_seconds(const char *s, double want)
{
	double v = -1;

	if (duration_parse(s, &v) != 0)
		fail_msg("\"%s\" refused", s);
	if (v < want - 1e-9 || v > want + 1e-9)
		fail_msg("\"%s\" = %.9g s, expected %.9g", s, v, want);
}

static void forms_users_type(void **state)
{
	(void)state;
	assert_seconds("500ms", 0.5);
	assert_seconds("5s", 5);
	assert_seconds("2m", 120);
	assert_seconds("1h", 3600);
	assert_seconds("1.5m", 90);
	assert_seconds(".5s", 0.5);
	assert_seconds("2.s", 2);
	assert_seconds("1m30s", 90);
	assert_seconds("1h30m", 5400);
	assert_seconds("1h2m3s4ms", 3723.004);
	assert_seconds("0s", 0);
	assert_seconds("0", 0);
	/* A bare number is seconds, fractions included, as pmutop always took. */
	assert_seconds("10", 10);
	assert_seconds("2.5", 2.5);
	assert_seconds("0.05", 0.05);
	assert_seconds("007", 7);
}

static void nonsense_is_refused(void **state)
{
	static const char *bad[] = {
		"", "5q", "5 s", " 5s", "5s ", "-5s", "-1", "+5", "s", "ms", ".", ".s", "5.5.5",
		"1e3", "0x10", "inf", "nan", "5S", "5sec", "5min", "1m30", "30 1m", "5ss", "1d",
		"5s-", "1h-1m",
	};
	double v = 42;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (duration_parse(bad[i], &v) != -EINVAL)
			fail_msg("\"%s\" accepted as %.9g s", bad[i], v);
		assert_true(v == 42); /* untouched */
	}
	assert_int_equal(duration_parse(NULL, &v), -EINVAL);
	/* A number past any double: not finite, refused, not inf seconds. */
	{
		char huge[400];

		memset(huge, '9', sizeof(huge) - 2);
		huge[sizeof(huge) - 2] = 's';
		huge[sizeof(huge) - 1] = 0;
		assert_int_equal(duration_parse(huge, &v), -EINVAL);
	}
}

/* Each duration option takes the forms and stores seconds. */
static void every_option_takes_units(void **state)
{
	struct pmutop_opts o;

	(void)state;
	assert_int_equal(parse(&o, "-p", "1", "--duration", "500ms", NULL), 0);
	assert_true(o.duration > 0.499 && o.duration < 0.501);
	assert_int_equal(parse(&o, "-p", "1", "-d", "2m", NULL), 0);
	assert_true(o.duration > 119.9 && o.duration < 120.1);
	assert_int_equal(parse(&o, "-p", "1", "--duration", "2.5", NULL), 0);
	assert_true(o.duration > 2.49 && o.duration < 2.51);
	assert_int_equal(parse(&o, "-p", "1", "--dump-every", "5s", "--dump", "d/", NULL), 0);
	assert_true(o.dump_every > 4.99 && o.dump_every < 5.01);
	assert_int_equal(parse(&o, "-p", "1", "--dump-every", "1h", "--dump", "d/", NULL), 0);
	assert_true(o.dump_every > 3599.9 && o.dump_every < 3600.1);
	assert_int_equal(parse(&o, "-p", "1", "--refresh", "500ms", NULL), 0);
	assert_true(o.refresh > 0.499 && o.refresh < 0.501);
	assert_int_equal(parse(&o, "-p", "1", "--debuginfo-wait", "30s", NULL), 0);
	assert_true(o.debuginfo_wait > 29.9 && o.debuginfo_wait < 30.1);
	assert_int_equal(parse(&o, "-p", "1", "--debuginfo-wait", "0", NULL), 0); /* no wait */
	assert_true(o.debuginfo_wait == 0);
	assert_int_equal(parse(&o, "-p", "1", "--http", "127.0.0.1:0", "--http-max-seconds", "5m",
			       NULL), 0);
	assert_int_equal(o.http_max_seconds, 300);
	assert_int_equal(parse(&o, "-p", "1", "--http", "127.0.0.1:0", "--http-max-seconds", "45",
			       NULL), 0);
	assert_int_equal(o.http_max_seconds, 45);
	/* py-spy's verb and spelling */
	assert_int_equal(parse(&o, "record", "-p", "1", "-d", "1m", "-o", "x.pb.gz", NULL), 0);
	assert_true(o.duration > 59.9 && o.duration < 60.1);
}

/* Bad values: refused, the message names the value and the accepted forms. */
static void every_option_refuses_with_the_forms(void **state)
{
	static const char *const opts[][2] = {
		{ "--duration", "" }, { "--dump-every", "--dump" }, { "--refresh", "" },
		{ "--debuginfo-wait", "" }, { "--http-max-seconds", "--http" },
	};
	static const char *const bad[] = { "5q", "-5s", "-1", "abc", "5 s", "" };
	struct pmutop_opts o;
	char msg[600];

	(void)state;
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		for (size_t j = 0; j < sizeof(bad) / sizeof(bad[0]); j++) {
			int rc;

			if (!strcmp(opts[i][1], "--dump"))
				rc = parse(&o, "-p", "1", opts[i][0], bad[j], "--dump", "d/", NULL);
			else if (!strcmp(opts[i][1], "--http"))
				rc = parse(&o, "-p", "1", "--http", "127.0.0.1:0", opts[i][0], bad[j],
					   NULL);
			else
				rc = parse(&o, "-p", "1", opts[i][0], bad[j], NULL);
			snprintf(msg, sizeof(msg), "%s \"%s\": %s", opts[i][0], bad[j], cli_err);
			if (rc != -EINVAL || !strstr(cli_err, "500ms, 5s, 2m, 1h") ||
			    !strstr(cli_err, "bare number of seconds"))
				fail_msg("%s (rc %d)", msg, rc);
			{
				char quoted[64];

				snprintf(quoted, sizeof(quoted), "\"%s\"", bad[j]);
				if (!strstr(cli_err, quoted))
					fail_msg("value not quoted: %s", msg);
			}
		}
	}
	/* Zero where the option needs more than zero. */
	assert_int_equal(parse(&o, "-p", "1", "--duration", "0", NULL), -EINVAL);
	assert_non_null(strstr(cli_err, "more than 0"));
	assert_int_equal(parse(&o, "-p", "1", "--duration", "0s", NULL), -EINVAL);
	assert_int_equal(parse(&o, "-p", "1", "--duration", "0ms", NULL), -EINVAL);
	assert_int_equal(parse(&o, "-p", "1", "--dump-every", "0", "--dump", "d/", NULL), -EINVAL);
	assert_int_equal(parse(&o, "-p", "1", "--dump-every", "500ms", "--dump", "d/", NULL),
			 -EINVAL);
	assert_non_null(strstr(cli_err, "from 1s"));
	assert_int_equal(parse(&o, "-p", "1", "--refresh", "0", NULL), -EINVAL);
	assert_int_equal(parse(&o, "-p", "1", "--refresh", "2h", NULL), -EINVAL);
	assert_int_equal(parse(&o, "-p", "1", "--duration", "366h1m", NULL), 0);
	assert_int_equal(parse(&o, "-p", "1", "--duration", "9000h", NULL), -EINVAL);
	assert_int_equal(parse(&o, "-p", "1", "--http", "127.0.0.1:0", "--http-max-seconds",
			       "1500ms", NULL), -EINVAL);
	assert_non_null(strstr(cli_err, "whole seconds"));
	assert_int_equal(parse(&o, "-p", "1", "--http", "127.0.0.1:0", "--http-max-seconds", "0",
			       NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(forms_users_type),
		cmocka_unit_test(nonsense_is_refused),
		cmocka_unit_test(every_option_takes_units),
		cmocka_unit_test(every_option_refuses_with_the_forms),
	};
	return cmocka_run_group_tests_name("duration", tests, NULL, NULL);
}
