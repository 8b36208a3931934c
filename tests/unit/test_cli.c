/*
 * test_cli.c - command-line parsing and event names: every option's happy
 * path, and every bad value rejected with the value quoted in the message.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli_args.h"

#include "pmutop/frontend/cli.h"
#include "pmutop/sample/events.h"


static void attach_with_all_options(void **state)
{
	struct pmutop_opts o;

	(void)state;
	assert_int_equal(parse(&o, "-p", "1234", "-e", "branchMisses", "--period", "5000",
			       "--duration", "2.5", "--dump", "out.pb.gz", "--stack-size", "8192",
			       "--max-depth", "64", "--mmap-pages", "64", "--kernel", "-q", NULL), 0);
	assert_int_equal(o.pid, 1234);
	assert_string_equal(o.event.name, "branchMisses");
	assert_int_equal(o.event.type, PERF_TYPE_HARDWARE);
	assert_int_equal(o.event.config, PERF_COUNT_HW_BRANCH_MISSES);
	assert_true(o.event_given);
	assert_int_equal(o.period, 5000);
	assert_true(o.duration > 2.49 && o.duration < 2.51);
	assert_string_equal(o.dump, "out.pb.gz");
	assert_int_equal(o.stack_size, 8192);
	assert_int_equal(o.max_depth, 64);
	assert_int_equal(o.mmap_pages, 64);
	assert_true(o.kernel);
	assert_true(o.quiet);
	assert_null(o.cmd);
}

static void launch_mode_keeps_command_args(void **state)
{
	struct pmutop_opts o;

	(void)state;
	assert_int_equal(parse(&o, "-e", "cacheMisses", "--", "./prog", "-x", "--y", NULL), 0);
	assert_non_null(o.cmd);
	assert_string_equal(o.cmd[0], "./prog");
	assert_string_equal(o.cmd[1], "-x");
	assert_string_equal(o.cmd[2], "--y");
	assert_null(o.cmd[3]);
	assert_int_equal(o.pid, 0);
	/* defaults */
	assert_int_equal(o.stack_size, 16384);
	assert_int_equal(o.max_depth, 512);
	assert_int_equal(o.period, 0);
}

static void default_event_is_cycles_not_given(void **state)
{
	struct pmutop_opts o;

	(void)state;
	assert_int_equal(parse(&o, "-p", "1", NULL), 0);
	assert_string_equal(o.event.name, "cycles");
	assert_false(o.event_given);
}

static void bad_values_are_rejected_with_the_value(void **state)
{
	struct pmutop_opts o;
	static const char *cases[][3] = {
		{ "--period", "0", "0" },
		{ "--period", "12abc", "12abc" },
		{ "--period", "-5", "-5" },
		{ "-p", "abc", "abc" },
		{ "-p", "0", "0" },
		{ "--duration", "soon", "soon" },
		{ "--duration", "-1", "-1" },
		{ "-F", "0", "0" },
		{ "--stack-size", "100000", "100000" },
		{ "--mmap-pages", "3", "3" },
		{ "--max-depth", "0", "0" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(parse(&o, "-p", "1", (char *)cases[i][0], (char *)cases[i][1], NULL),
				 -EINVAL);
		assert_non_null(strstr(cli_err, cases[i][2]));
	}
}

/* --max-memory: a size with K/M/G units; too small, negative or unknown units refused. */
static void max_memory_sizes(void **state)
{
	static const struct { const char *arg; size_t bytes; } ok[] = {
		{ "256M", 256u << 20 }, { "2g", 2ull << 30 }, { "64MiB", 64u << 20 },
		{ "4096k", 4u << 20 }, { "1048576", 1u << 20 }, { "1GB", 1ull << 30 },
	};
	static const char *bad[] = { "5q", "-1M", "0", "1000", "512K", "M", "", "1.5G",
				     "99999999999999999999G" };
	struct pmutop_opts o;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(parse(&o, "-p", "1", "--max-memory", ok[i].arg, NULL), 0);
		assert_int_equal(o.max_memory, ok[i].bytes);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(&o, "-p", "1", "--max-memory", bad[i], NULL), -EINVAL);
		assert_non_null(strstr(cli_err, "--max-memory"));
	}
	/* The accepted forms are named. */
	assert_int_equal(parse(&o, "-p", "1", "--max-memory", "5q", NULL), -EINVAL);
	assert_non_null(strstr(cli_err, "512M, 2G"));
	assert_int_equal(parse(&o, "-p", "1", "--max-memory", "100K", NULL), -EINVAL);
	assert_non_null(strstr(cli_err, "too small"));
}

static void conflicts_are_rejected(void **state)
{
	struct pmutop_opts o;

	(void)state;
	assert_int_equal(parse(&o, NULL), -EINVAL);
	assert_non_null(strstr(cli_err, "nothing to profile"));
	assert_int_equal(parse(&o, "-p", "1", "--", "ls", NULL), -EINVAL);
	assert_int_equal(parse(&o, "-p", "1", "--period", "10", "-F", "99", NULL), -EINVAL);
	assert_int_equal(parse(&o, "-p", "1", "--no-such-option", NULL), -EINVAL);
	assert_non_null(strstr(cli_err, "--no-such-option"));
	assert_int_equal(parse(&o, "-p", "1", "--dump", NULL), -EINVAL);
}

/* --dump-every needs a directory, --keep needs --dump-every (issue 23). */
static void dump_every_options(void **state)
{
	struct pmutop_opts o;

	(void)state;
	assert_int_equal(parse(&o, "-p", "1", "--dump-every", "60", "--keep", "5", "--dump", "d/",
			       NULL), 0);
	assert_true(o.dump_every == 60.0);
	assert_int_equal(o.keep, 5);
	assert_int_equal(parse(&o, "-p", "1", "--dump-every", "60", "--dump", "x.pb.gz", NULL),
			 -EINVAL);
	assert_non_null(strstr(cli_err, "DIR/"));
	assert_int_equal(parse(&o, "-p", "1", "--keep", "5", "--dump", "d/", NULL), -EINVAL);
	assert_non_null(strstr(cli_err, "--keep applies to --dump-every"));
	assert_int_equal(parse(&o, "-p", "1", "--dump-every", "0.5", "--dump", "d/", NULL), -EINVAL);
	assert_non_null(strstr(cli_err, "0.5"));
	assert_int_equal(parse(&o, "-p", "1", "--dump-every", "5", "--top", "--dump", "d/", NULL),
			 -EINVAL);
}

static void help_and_version_exit_early(void **state)
{
	struct pmutop_opts o;

	(void)state;
	assert_int_equal(parse(&o, "--help", NULL), 1);
	assert_int_equal(parse(&o, "--version", NULL), 1);
}

static void event_spellings(void **state)
{
	struct pmu_event ev;
	static const struct { const char *spell, *name; } same[] = {
		{ "cycles", "cycles" }, { "cpu-cycles", "cycles" },
		{ "instructions", "instructions" },
		{ "cacheMisses", "cacheMisses" }, { "cache-misses", "cacheMisses" },
		{ "cacheReferences", "cacheReferences" }, { "cache-references", "cacheReferences" },
		{ "branches", "branches" }, { "branch-instructions", "branches" },
		{ "branchMisses", "branchMisses" }, { "branch-misses", "branchMisses" },
		{ "cpu-clock", "cpu-clock" }, { "task-clock", "task-clock" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		assert_int_equal(events_parse(same[i].spell, &ev, cli_err, sizeof(cli_err)), 0);
		assert_string_equal(ev.name, same[i].name);
		assert_true(ev.preset_period > 0);
	}
	assert_int_equal(events_parse("task-clock", &ev, cli_err, sizeof(cli_err)), 0);
	assert_int_equal(ev.type, PERF_TYPE_SOFTWARE);
	assert_false(ev.hardware);
	assert_string_equal(ev.unit, "nanoseconds");
}

static void raw_events(void **state)
{
	struct pmu_event ev;

	(void)state;
	assert_int_equal(events_parse("r01c2", &ev, cli_err, sizeof(cli_err)), 0);
	assert_int_equal(ev.type, PERF_TYPE_RAW);
	assert_int_equal(ev.config, 0x1c2);
	assert_int_equal(events_parse("r0x1C2", &ev, cli_err, sizeof(cli_err)), 0);
	assert_int_equal(ev.config, 0x1c2);
	assert_string_equal(ev.name, "r1c2");
	assert_int_equal(events_parse("r", &ev, cli_err, sizeof(cli_err)), -EINVAL);
	assert_int_equal(events_parse("r0xZZ", &ev, cli_err, sizeof(cli_err)), -EINVAL);
}

static void unknown_events_suggest(void **state)
{
	struct pmu_event ev;

	(void)state;
	assert_int_equal(events_parse("cyles", &ev, cli_err, sizeof(cli_err)), -EINVAL);
	assert_non_null(strstr(cli_err, "did you mean \"cycles\""));
	assert_int_equal(events_parse("branchMises", &ev, cli_err, sizeof(cli_err)), -EINVAL);
	assert_non_null(strstr(cli_err, "branchMisses"));
	assert_int_equal(events_parse("nosuchevent", &ev, cli_err, sizeof(cli_err)), -EINVAL);
	assert_non_null(strstr(cli_err, "nosuchevent"));
	assert_int_equal(events_parse("", &ev, cli_err, sizeof(cli_err)), -EINVAL);
}

static void software_events_open_here(void **state)
{
	struct pmu_event ev;

	(void)state;
	/* task-clock is a software event: every Linux with perf events has it. */
	assert_int_equal(events_parse("task-clock", &ev, cli_err, sizeof(cli_err)), 0);
	assert_int_equal(events_probe(&ev, false), 0);
}

/* ---- live view options (--top, --no-tui, --refresh, --load) and modes ---- */

static void live_view_options(void **state)
{
	struct pmutop_opts o;

	(void)state;
	assert_int_equal(parse(&o, "-p", "1", NULL), 0);
	assert_false(o.top);
	assert_false(o.no_tui);
	assert_null(o.load);
	assert_true(o.refresh > 0.99 && o.refresh < 1.01);  /* default 1 s */

	assert_int_equal(parse(&o, "-p", "1", "--top", "--dump", "f.pb.gz", "--refresh", "0.5",
			       NULL), 0);
	assert_true(o.top);
	assert_true(o.refresh > 0.49 && o.refresh < 0.51);
	assert_int_equal(parse(&o, "-p", "1", "--no-tui", NULL), 0);
	assert_true(o.no_tui);
	assert_int_equal(parse(&o, "--load", "saved.pb.gz", NULL), 0);
	assert_string_equal(o.load, "saved.pb.gz");
	assert_int_equal(o.pid, 0);
	assert_null(o.cmd);
	assert_int_equal(parse(&o, "--load", "saved.pb.gz", "--no-tui", "--rows", "5", NULL), 0);
}

static void live_view_bad_values_and_conflicts(void **state)
{
	struct pmutop_opts o;
	static const char *bad_refresh[] = { "0", "-1", "0.01", "abc", "1q", "", "nan", "inf",
					     "3601" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad_refresh) / sizeof(bad_refresh[0]); i++) {
		assert_int_equal(parse(&o, "-p", "1", "--refresh", (char *)bad_refresh[i], NULL),
				 -EINVAL);
		assert_non_null(strstr(cli_err, "refresh"));
		assert_non_null(strstr(cli_err, bad_refresh[i]));
	}
	assert_int_equal(parse(&o, "-p", "1", "--top", "--no-tui", NULL), -EINVAL);
	assert_non_null(strstr(cli_err, "--top"));
	assert_int_equal(parse(&o, "--load", "", NULL), -EINVAL);
	assert_int_equal(parse(&o, "--load", "x.pb.gz", "-p", "1", NULL), -EINVAL);
	assert_non_null(strstr(cli_err, "--load"));
	assert_int_equal(parse(&o, "--load", "x.pb.gz", "--", "ls", NULL), -EINVAL);
	assert_int_equal(parse(&o, "--load", "x.pb.gz", "--dump", "y.pb.gz", "--top", NULL), -EINVAL);
	assert_non_null(strstr(cli_err, "--dump"));
	assert_int_equal(parse(&o, "--refresh", "1", NULL), -EINVAL);  /* nothing to profile */
	assert_non_null(strstr(cli_err, "--load FILE"));
}

static enum pmutop_mode mode_of(bool tty, ...)
{
	static char *argv[32];
	struct pmutop_opts o;
	enum pmutop_mode m = MODE_RECORD;
	va_list ap;
	int argc = 0;
	FILE *devnull = fopen("/dev/null", "w");

	argv[argc++] = "pmutop";
	va_start(ap, tty);
	for (char *a; (a = va_arg(ap, char *));)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	assert_int_equal(cli_parse(argc, argv, &o, devnull, cli_err, sizeof(cli_err)), 0);
	fclose(devnull);
	assert_int_equal(cli_mode(&o, tty, &m, cli_err, sizeof(cli_err)), 0);
	return m;
}

static void modes_like_py_spy(void **state)
{
	struct pmutop_opts o;
	enum pmutop_mode m;

	(void)state;
	/* On a terminal: the view; --dump records (progress line); --top does both. */
	assert_int_equal(mode_of(true, "-p", "1", NULL), MODE_TOP);
	assert_int_equal(mode_of(true, "-e", "task-clock", "--", "ls", NULL), MODE_TOP);
	assert_int_equal(mode_of(true, "-p", "1", "--dump", "f.pb.gz", NULL), MODE_RECORD);
	assert_int_equal(mode_of(true, "-p", "1", "--dump", "f.pb.gz", "--top", NULL), MODE_TOP);
	assert_int_equal(mode_of(true, "-p", "1", "--no-tui", NULL), MODE_RECORD);
	/* Not a terminal: the table at the end, as before. */
	assert_int_equal(mode_of(false, "-p", "1", NULL), MODE_RECORD);
	assert_int_equal(mode_of(false, "-p", "1", "--dump", "f.pb.gz", NULL), MODE_RECORD);
	/* --load: the view on a terminal, else the table. */
	assert_int_equal(mode_of(true, "--load", "f.pb.gz", NULL), MODE_LOAD_TOP);
	assert_int_equal(mode_of(true, "--load", "f.pb.gz", "--no-tui", NULL), MODE_LOAD_TABLE);
	assert_int_equal(mode_of(false, "--load", "f.pb.gz", NULL), MODE_LOAD_TABLE);
	/* --top without a terminal is an error that says why. */
	assert_int_equal(parse(&o, "-p", "1", "--top", NULL), 0);
	assert_int_equal(cli_mode(&o, false, &m, cli_err, sizeof(cli_err)), -EINVAL);
	assert_non_null(strstr(cli_err, "terminal"));
	assert_int_equal(parse(&o, "--load", "f.pb.gz", "--top", NULL), 0);
	assert_int_equal(cli_mode(&o, false, &m, cli_err, sizeof(cli_err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(attach_with_all_options),
		cmocka_unit_test(dump_every_options),
		cmocka_unit_test(launch_mode_keeps_command_args),
		cmocka_unit_test(default_event_is_cycles_not_given),
		cmocka_unit_test(bad_values_are_rejected_with_the_value),
		cmocka_unit_test(conflicts_are_rejected),
		cmocka_unit_test(help_and_version_exit_early),
		cmocka_unit_test(event_spellings),
		cmocka_unit_test(raw_events),
		cmocka_unit_test(unknown_events_suggest),
		cmocka_unit_test(software_events_open_here),
		cmocka_unit_test(live_view_options),
		cmocka_unit_test(live_view_bad_values_and_conflicts),
		cmocka_unit_test(modes_like_py_spy),
		cmocka_unit_test(max_memory_sizes),
	};
	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
