/*
 * test_cli_table.c - the option table (cli.h) is the single source of the
 * parser, --help, the man page and the bash completion: every row is well
 * formed, names are unique, and every visible option appears in all three
 * renderings and is recognised by the parser.
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
#include "pmutop/frontend/cli_doc.h"
#include "pmutop/sample/events.h"

/* What fn prints, as a malloc'd string. */
static char *render(void (*fn)(FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f);
	fclose(f);
	return buf;
}

static enum cli_verb help_verb;
static void help_of_verb(FILE *f)
{
	cli_print_help(f, help_verb);
}

static void rows_are_well_formed_and_unique(void **state)
{
	const struct cli_option *a, *b;
	size_t n = 0;

	(void)state;
	for (size_t i = 0; (a = cli_option_at(i)); i++, n++) {
		assert_true(a->name || a->short_name);
		assert_true(!a->name || strlen(a->name) > 1);
		assert_non_null(a->handle);
		assert_non_null(a->help);
		assert_true(a->group < CLI_NGROUPS);
		/* completion of an argument needs an argument */
		if (!a->arg)
			assert_int_equal(a->complete, CLI_COMPLETE_NONE);
		if (a->complete == CLI_COMPLETE_CHOICES)
			assert_non_null(a->choices);
		for (size_t j = 0; j < i; j++) {
			b = cli_option_at(j);
			if (a->name && b->name)
				assert_string_not_equal(a->name, b->name);
			if (a->short_name)
				assert_int_not_equal(a->short_name, b->short_name);
		}
	}
	assert_true(n >= 25);
	assert_null(cli_option_at(n));
}

/* "--name" as a whole word in text (not a prefix of a longer option). */
static int has_option(const char *text, const char *dashes, const char *name)
{
	char word[80];
	size_t wl;

	snprintf(word, sizeof(word), "%s%s", dashes, name);
	wl = strlen(word);
	for (const char *p = text; (p = strstr(p, word)); p += wl) {
		char next = p[wl];
		if (!(next == '-' || (next >= 'a' && next <= 'z')))
			return 1;
	}
	return 0;
}

/* Whether --help has opt in its left column ("  -p, --pid PID", "      --load FILE"). */
static int listed(const char *help, const struct cli_option *opt)
{
	char left[80];

	if (!opt->name)
		snprintf(left, sizeof(left), "\n  -%c ", opt->short_name);
	else if (opt->short_name)
		snprintf(left, sizeof(left), "\n  -%c, --%s%s", opt->short_name, opt->name,
			 opt->arg ? " " : "");
	else
		snprintf(left, sizeof(left), "\n      --%s%s", opt->name, opt->arg ? " " : "");
	if (opt->arg) {
		size_t l = strlen(left);
		snprintf(left + l, sizeof(left) - l, "%s", opt->arg);
	}
	return strstr(help, left) != NULL;
}

static void every_visible_option_is_documented_everywhere(void **state)
{
	char *help = render(help_of_verb);
	char *man = render(cli_print_man);
	char *comp = render(cli_print_completion);
	const struct cli_option *opt;

	(void)state;
	for (size_t i = 0; (opt = cli_option_at(i)); i++) {
		int hidden = opt->group == CLI_GROUP_HIDDEN;
		char roff_name[80], *r = roff_name;

		assert_int_equal(listed(help, opt), !hidden);

		for (const char *p = opt->name ? opt->name : ""; *p; p++) {
			if (*p == '-')
				*r++ = '\\';
			*r++ = *p;
		}
		*r = 0;
		/* (the generators' own names appear in the generated files' comments) */
		if (!hidden && opt->name) {
			assert_true(has_option(man, "\\-\\-", roff_name));
			assert_true(has_option(comp, "--", opt->name));
		}
		if (!hidden && opt->short_name) {
			char s[3] = { '-', opt->short_name, 0 };
			char m[4] = { '\\', '-', opt->short_name, 0 };
			assert_non_null(strstr(help, s));
			assert_non_null(strstr(man, m));
			assert_non_null(strstr(comp, s));
		}
		if (opt->complete == CLI_COMPLETE_CHOICES)
			assert_non_null(strstr(comp, opt->choices));
	}
	/* event names reach the completion, the man page and --help */
	assert_non_null(strstr(comp, "branchMisses"));
	assert_non_null(strstr(comp, "cache-misses"));
	assert_non_null(strstr(man, "task\\-clock"));
	assert_non_null(strstr(help, "task-clock"));
	/* the man page is roff: the title line, and no raw hyphen in an option name */
	assert_non_null(strstr(man, ".TH PMUTOP 1"));
	assert_null(strstr(man, "\\fB--"));
	free(help);
	free(man);
	free(comp);
}

/* Each verb's --help lists exactly the options that verb takes. */
static void verb_help_lists_its_options(void **state)
{
	const struct cli_option *opt;

	(void)state;
	for (int v = 0; v < CLI_NVERBS; v++) {
		char *help;

		help_verb = (enum cli_verb)v;
		help = render(help_of_verb);
		if (v)
			assert_non_null(strstr(help, cli_verb_name(help_verb)));
		for (size_t i = 0; (opt = cli_option_at(i)); i++) {
			if (opt->group == CLI_GROUP_HIDDEN)
				continue;
			if (listed(help, opt) != cli_option_in(opt, help_verb))
				fail_msg("pmutop %s --help and the table disagree on --%s",
					 cli_verb_name(help_verb), opt->name ? opt->name : "-g");
		}
		free(help);
	}
	help_verb = CLI_VERB_NONE;
}

static void every_option_is_recognised_by_the_parser(void **state)
{
	const struct cli_option *opt;
	struct pmutop_opts o;

	(void)state;
	for (size_t i = 0; (opt = cli_option_at(i)); i++) {
		char name[64];

		snprintf(name, sizeof(name), "--%s", opt->name ? opt->name : "help");
		/* with a value that is valid for no option: parsed, maybe rejected, never unknown */
		parse(&o, "-p", "1", name, opt->arg ? "1" : NULL, NULL);
		assert_null(strstr(cli_err, "unknown option"));
		if (opt->short_name) {
			char s[3] = { '-', opt->short_name, 0 };
			parse(&o, "-p", "1", s, opt->arg ? "1" : NULL, NULL);
			assert_null(strstr(cli_err, "unknown option"));
		}
	}
}

/* The completion offers the builtin names and these spellings: all must parse. */
static void every_completed_event_name_parses(void **state)
{
	struct pmu_event ev;
	const char *name;
	char err[256];

	(void)state;
	for (size_t i = 0; events_builtin(i); i++)
		assert_int_equal(events_parse(events_builtin(i)->name, &ev, err, sizeof(err)), 0);
	for (size_t i = 0; (name = events_alias(i)); i++) {
		if (events_parse(name, &ev, err, sizeof(err)))
			fail_msg("\"%s\" is offered but rejected: %s", name, err);
	}
}

static void version_short_and_long(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	char *argv[] = { "pmutop", "-V", NULL };
	struct pmutop_opts o;
	char err[128];

	(void)state;
	assert_int_equal(cli_parse(2, argv, &o, f, err, sizeof(err)), 1);
	fclose(f);
	assert_non_null(strstr(buf, "pmutop " PMUTOP_VERSION));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rows_are_well_formed_and_unique),
		cmocka_unit_test(every_visible_option_is_documented_everywhere),
		cmocka_unit_test(verb_help_lists_its_options),
		cmocka_unit_test(every_option_is_recognised_by_the_parser),
		cmocka_unit_test(every_completed_event_name_parses),
		cmocka_unit_test(version_short_and_long),
	};
	return cmocka_run_group_tests_name("cli_table", tests, NULL, NULL);
}
