/*
 * cli_habits.c - answers for what perf and py-spy users type and pmutop does
 * not take (cli_habits.h).
 *
 * Two tables of one-line answers: options of perf record/top and py-spy
 * that pmutop has no option for, and perf's commands other than record and
 * top. A typo of one of pmutop's own options gets the nearest option of the
 * table in cli.c, by the same edit distance events use for their names.
 */
#include "pmutop/frontend/cli_habits.h"

#include <stdio.h>
#include <string.h>

#include "pmutop/frontend/cli.h"
#include "pmutop/sample/events.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Options of perf and py-spy that pmutop does not take, and what to use. */
static const struct { const char *opt, *answer; } foreign_opts[] = {
	{ "-C", "perf's -C limits sampling to some CPUs; pmutop follows the target's threads on "
		"every CPU (no per-CPU filter)" },
	{ "--cpu", "perf's --cpu limits sampling to some CPUs; pmutop follows the target's "
		   "threads on every CPU (no per-CPU filter)" },
	{ "-K", "perf top's -K hides kernel functions; pmutop shows user functions only unless "
		"--kernel or -e EVENT:k" },
	{ "-U", "perf top's -U hides user functions; to see only kernel functions sample "
		"-e EVENT:k" },
	{ "--idle", "py-spy's --idle keeps samples of idle threads; pmutop samples where threads "
		    "wait with -e offcpu (off-CPU time), -e task-clock,offcpu for both (README 'Off-CPU time')" },
	{ "-i", "py-spy's -i (--idle) keeps samples of idle threads; pmutop samples where threads "
		"wait with -e offcpu (off-CPU time), -e task-clock,offcpu for both (README 'Off-CPU time')" },
	{ "-s", "py-spy's -s is --subprocesses here (with -p: also the descendants that already "
		"run; children started later are followed by default)" },
	{ "--gil", "py-spy's --gil is Python-only; pmutop samples native code on a counter" },
	{ "--function", "pmutop's table and pprof profiles are per function already (py-spy's "
			"--function merges lines): go tool pprof -top FILE" },
	{ "-v", "pmutop has no verbose mode: its summary goes to stderr (-q hides it), and "
		"--list-events shows what this machine supports" },
	{ "--verbose", "pmutop has no verbose mode: its summary goes to stderr (-q hides it), "
		       "and --list-events shows what this machine supports" },
	{ "--no-inherit", "perf's --no-inherit: pmutop -t TID samples only the threads given "
			  "(no inheritance); --no-children keeps new threads but not new "
			  "processes" },
	{ "--stdio", "pmutop prints its table on stdout when stdout is not a terminal, or with "
		     "--no-tui (pmutop record)" },
	{ "--frequency", "did you mean -F HZ / --freq HZ (samples per second per thread, as perf)?" },
	{ "-l", "events this machine supports: --list-events" },
	{ "--list", "events this machine supports: --list-events" },
};

/* perf's commands other than record/top, and where pmutop's answer is. */
static const struct { const char *word, *answer; } perf_words[] = {
	{ "stat", "\"stat\" is perf's counting command: pmutop samples where events happen "
		  "(pmutop -e EVENT -p PID); for totals use perf stat" },
	{ "report", "pmutop prints its report when recording ends; for a saved profile: "
		    "pmutop --load FILE, or go tool pprof -top FILE" },
	{ "annotate", "per-line costs of a saved profile: go tool pprof -list FUNCTION FILE" },
	{ "script", "stacks as text: pmutop record -o FILE.folded (one line per stack, what perf "
		    "script | stackcollapse-perf.pl gives)" },
	{ "list", "events this machine supports: pmutop --list-events" },
	{ "diff", "compare saved profiles: go tool pprof -top -diff_base=OLD.pb.gz NEW.pb.gz" },
	{ "version", "pmutop -V" },
	{ "trace", NULL }, { "sched", NULL }, { "lock", NULL }, { "mem", NULL },
	{ "c2c", NULL }, { "kmem", NULL }, { "kvm", NULL }, { "timechart", NULL },
	{ "probe", NULL }, { "ftrace", NULL }, { "inject", NULL }, { "archive", NULL },
	{ "buildid-list", NULL }, { "evlist", NULL }, { "kallsyms", NULL },
};

/* The nearest of pmutop's long options to name (no dashes), or NULL. */
static const char *nearest_option(const char *name)
{
	const struct cli_option *opt, *best = NULL;
	size_t best_d = (size_t)-1;

	for (size_t i = 0; (opt = cli_option_at(i)); i++) {
		size_t d;

		if (!opt->name || opt->group == CLI_GROUP_HIDDEN)
			continue;
		d = events_name_distance(name, opt->name);
		if (d < best_d)
			best_d = d, best = opt;
	}
	/* A typo, not another word: at most 2 edits and fewer than a third of it. */
	if (best && best_d <= 2 && best_d * 3 <= strlen(name))
		return best->name;
	return NULL;
}

void cli_habits_unknown_option(const char *opt, char *err, size_t errlen)
{
	char name[64];
	const char *near;

	snprintf(name, sizeof(name), "%.*s", (int)strcspn(opt, "="), opt);
	for (size_t i = 0; i < ARRAY_SIZE(foreign_opts); i++) {
		if (!strcmp(name, foreign_opts[i].opt)) {
			snprintf(err, errlen, "unknown option \"%s\": %s", name, foreign_opts[i].answer);
			return;
		}
	}
	near = !strncmp(name, "--", 2) ? nearest_option(name + 2) :
	       name[0] == '-' && name[1] && name[2] ? nearest_option(name + 1) : NULL;
	if (near)
		snprintf(err, errlen, "unknown option \"%s\"; did you mean --%s? (see --help)",
			 name, near);
	else
		snprintf(err, errlen, "unknown option \"%s\" (see --help)", name);
}

bool cli_habits_command_word(const char *word, char *err, size_t errlen)
{
	for (size_t i = 0; i < ARRAY_SIZE(perf_words); i++) {
		if (strcmp(word, perf_words[i].word))
			continue;
		if (perf_words[i].answer)
			snprintf(err, errlen, "%s (to launch a program named %s: pmutop -- %s ...)",
				 perf_words[i].answer, word, word);
		else
			snprintf(err, errlen, "\"%s\" is a perf command pmutop does not have; its verbs "
				 "are record, top and dump (see pmutop --help); to launch a program "
				 "named %s: pmutop -- %s ...", word, word, word);
		return true;
	}
	return false;
}
