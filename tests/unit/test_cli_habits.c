/*
 * test_cli_habits.c - what perf and py-spy users type (issue 22): py-spy's
 * verbs, perf's record/top options, perf's other commands answered instead
 * of launched, options pmutop has no equivalent for answered with the
 * nearest one, and typos with "did you mean".
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

#define expect_error(o, needle, ...)                                           \
	do {                                                                   \
		if (parse(o, __VA_ARGS__, NULL) != -EINVAL)                    \
			fail_msg("accepted: %s", #__VA_ARGS__);                \
		if (!strstr(cli_err, needle))                                  \
			fail_msg("%s: \"%s\" lacks \"%s\"", #__VA_ARGS__,      \
				 cli_err, needle);                             \
	} while (0)

static void py_spy_verbs(void **state)
{
	struct pmutop_opts o;
	enum pmutop_mode m;

	(void)state;
	assert_int_equal(parse(&o, "record", "-p", "42", "-o", "prof.pb.gz", "--rate", "99",
			       "-d", "5", "--native", "--nonblocking", NULL), 0);
	assert_int_equal(o.verb, CLI_VERB_RECORD);
	assert_int_equal(o.pid, 42);
	assert_string_equal(o.dump, "prof.pb.gz");
	assert_int_equal(o.format, DUMP_PPROF);
	assert_int_equal(o.freq, 99);
	assert_true(o.duration > 4.9 && o.duration < 5.1);
	/* record never opens the live view, even on a terminal */
	assert_int_equal(cli_mode(&o, true, &m, cli_err, sizeof(cli_err)), 0);
	assert_int_equal(m, MODE_RECORD);
	/* without -o: the table */
	assert_int_equal(parse(&o, "record", "--", "./prog", "x", NULL), 0);
	assert_null(o.dump);
	assert_string_equal(o.cmd[0], "./prog");
	/* top is the live view; dump is --stacks */
	assert_int_equal(parse(&o, "top", "--pid", "7", NULL), 0);
	assert_int_equal(cli_mode(&o, true, &m, cli_err, sizeof(cli_err)), 0);
	assert_int_equal(m, MODE_TOP);
	assert_int_equal(cli_mode(&o, false, &m, cli_err, sizeof(cli_err)), -EINVAL);
	assert_non_null(strstr(cli_err, "terminal"));
	assert_int_equal(parse(&o, "dump", "-p", "7", "--json", NULL), 0);
	assert_true(o.stacks);
	assert_true(o.json);
	/* a verb without what it needs, or with another verb's options */
	expect_error(&o, "pmutop dump needs -p PID", "dump");
	expect_error(&o, "nothing to profile", "record");
	expect_error(&o, "--http does not apply to pmutop record", "record", "--http", ":1", "-p", "1");
	expect_error(&o, "-e does not apply", "dump", "-p", "1", "-e", "cycles");
	expect_error(&o, "--event does not apply", "dump", "-p", "1", "--event", "cycles");
	/* each verb has its own --help */
	assert_int_equal(parse(&o, "record", "--help", NULL), 1);
	assert_int_equal(parse(&o, "help", "dump", NULL), 1);
	/* "--" always launches: a program named like a verb is reachable */
	assert_int_equal(parse(&o, "--", "top", "-b", NULL), 0);
	assert_int_equal(o.verb, CLI_VERB_NONE);
	assert_string_equal(o.cmd[0], "top");
	/* any other first word is still the command */
	assert_int_equal(parse(&o, "./prog", "--pid", "1", NULL), 0);
	assert_string_equal(o.cmd[1], "--pid");
}

static void perf_words_are_answered(void **state)
{
	struct pmutop_opts o;

	(void)state;
	expect_error(&o, "perf stat", "stat", "-p", "1");
	expect_error(&o, "pmutop -- stat", "stat", "-p", "1");
	expect_error(&o, "--load FILE", "report");
	expect_error(&o, "--list-events", "list");
	expect_error(&o, "go tool pprof -list", "annotate");
	expect_error(&o, "verbs are record, top and dump", "trace", "-p", "1");
	/* after options, the first word too */
	expect_error(&o, "perf stat", "-e", "cycles", "stat", "ls");
	/* but after "--" it is launched */
	assert_int_equal(parse(&o, "--", "stat", "-p", "1", NULL), 0);
	assert_string_equal(o.cmd[0], "stat");
}

static void perf_options(void **state)
{
	struct pmutop_opts o;

	(void)state;
	assert_int_equal(parse(&o, "-p", "1", "-c", "5000", "-o", "out.folded", "-g", "-m", "64",
			       NULL), 0);
	assert_int_equal(o.period, 5000);
	assert_string_equal(o.dump, "out.folded");
	assert_int_equal(o.format, DUMP_FOLDED);  /* from the extension */
	assert_int_equal(o.mmap_pages, 64);
	assert_int_equal(o.nnotes, 1);            /* -g says which unwinder answers */
	assert_non_null(strstr(o.notes[0], "-g"));
	assert_non_null(strstr(o.notes[0], "--unwind snapshot"));
	/* --format beats the extension */
	assert_int_equal(parse(&o, "-p", "1", "-o", "x.folded", "--format", "pprof", NULL), 0);
	assert_int_equal(o.format, DUMP_PPROF);
	/* an extension no format has: refused before sampling (dump_check), not here */
	assert_int_equal(parse(&o, "-p", "1", "-o", "flame.xyz", NULL), 0);
	assert_true(o.dump_ext_unknown);
	/* py-spy's -o x.svg, -f speedscope, --format flamegraph */
	assert_int_equal(parse(&o, "-p", "1", "-o", "flame.svg", NULL), 0);
	assert_int_equal(o.format, DUMP_SVG);
	assert_int_equal(parse(&o, "-p", "1", "-o", "p.json", "-f", "speedscope", NULL), 0);
	assert_int_equal(o.format, DUMP_SPEEDSCOPE);
	assert_int_equal(parse(&o, "-p", "1", "-o", "p", "--format", "flamegraph", NULL), 0);
	assert_int_equal(o.format, DUMP_SVG);
	expect_error(&o, "svg or speedscope", "-p", "1", "-o", "p", "-f", "chrometrace");
	assert_int_equal(parse(&o, "-p", "1", "-o", "flame.html", NULL), 0);
	assert_int_equal(o.format, DUMP_HTML);
	/* --call-graph */
	assert_int_equal(parse(&o, "-p", "1", "--call-graph", "fp", NULL), 0);
	assert_int_equal(o.unwind, UNWIND_ENGINE_FP);
	assert_int_equal(parse(&o, "-p", "1", "--call-graph", "dwarf,8192", NULL), 0);
	assert_int_equal(o.unwind, UNWIND_ENGINE_SNAPSHOT);
	assert_int_equal(o.stack_size, 8192);
	assert_int_equal(parse(&o, "-p", "1", "--call-graph=dwarf", NULL), 0);
	expect_error(&o, "LBR", "-p", "1", "--call-graph", "lbr");
	expect_error(&o, "\"xyz\"", "-p", "1", "--call-graph", "xyz");
	/* -t TID[,TID] */
	assert_int_equal(parse(&o, "-t", "12,13", NULL), 0);
	assert_int_equal(o.ntids, 2);
	assert_int_equal(o.tids[0], 12);
	assert_int_equal(o.tids[1], 13);
	assert_int_equal(o.pid, 0);              /* the process is found from the tid */
	expect_error(&o, "\"x\"", "-t", "12,x");
	expect_error(&o, "without a command", "-t", "12", "--", "ls");
	/* py-spy's --threads: thread roots in folded stacks */
	assert_int_equal(parse(&o, "-p", "1", "-o", "a.folded", "--threads", NULL), 0);
	assert_true(o.folded_threads);
	expect_error(&o, "--nonblocking and --unwind ptrace", "-p", "1", "--nonblocking",
		     "--unwind", "ptrace");
	/* -q silences notes: main prints them unless quiet */
	assert_int_equal(parse(&o, "-p", "1", "-g", "-q", NULL), 0);
	assert_true(o.quiet);
}

static void foreign_options_point_to_ours(void **state)
{
	struct pmutop_opts o;

	(void)state;
	expect_error(&o, "--subprocesses", "-s", "-p", "1");
	expect_error(&o, "-e EVENT:k", "-K", "-p", "1");
	expect_error(&o, "-e EVENT:k", "-U", "-p", "1");
	expect_error(&o, "-e offcpu", "--idle", "-p", "1");
	expect_error(&o, "did you mean --duration?", "-p", "1", "--durtion", "5");
	expect_error(&o, "did you mean --duration?", "-p", "1", "--durations=5");
	expect_error(&o, "did you mean --event?", "-p", "1", "--events", "cycles");
	expect_error(&o, "did you mean --period?", "-p", "1", "--perod", "5");
	expect_error(&o, "-F HZ", "-p", "1", "--frequency", "99");
	/* nothing near: no made-up suggestion */
	expect_error(&o, "unknown option \"--zzzzzz\" (see --help)", "-p", "1", "--zzzzzz");
	/* an option missing its argument says which argument */
	expect_error(&o, "--dump needs an argument (FILE)", "-p", "1", "--dump");
	expect_error(&o, "-e needs an argument (EVENT)", "-p", "1", "-e");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(py_spy_verbs),
		cmocka_unit_test(perf_words_are_answered),
		cmocka_unit_test(perf_options),
		cmocka_unit_test(foreign_options_point_to_ours),
	};
	return cmocka_run_group_tests_name("cli_habits", tests, NULL, NULL);
}
