/*
 * cli_doc.c - --help, the man page and the bash completion, all printed from
 * the option table of cli.c (cli_option_at()).
 *
 * One table, three renderings: an option added to the table appears in all
 * of them, so they cannot drift from what the parser accepts. The build
 * writes build/pmutop.1 and build/pmutop.bash with `pmutop --print-man` and
 * `pmutop --print-completion`; `make install` installs both.
 */
#include "pmutop/frontend/cli_doc.h"

#include <string.h>

#include "pmutop/frontend/cli.h"
#include "pmutop/sample/events.h"

#define HELP_WIDTH 79  /* wrap --help at this column */
#define HELP_INDENT 25 /* option help starts here */

/* Per verb: usage lines (after "pmutop"), a description, examples. */
struct verb_doc {
	const char *usage[5];
	const char *description;
	struct { const char *cmd, *what; } examples[10];
};

static const struct verb_doc verb_docs[CLI_NVERBS] = {
	[CLI_VERB_NONE] = {
		.usage = { "-p PID [options]", "[options] -- COMMAND [ARGS...]",
			   "--load PROFILE.pb.gz", "record | top | dump [options] (see pmutop VERB --help)" },
		.description =
			"Sample every thread of a process on a hardware performance counter (or a "
			"software clock), unwind each sample's user stack remotely, and report where "
			"the events happen: in a live view when stdout is a terminal, as a pprof "
			"profile (--dump or -o), or as a flat/cumulative table at the end. "
			"py-spy's verbs work too: record (write a profile), top (the live view), dump "
			"(every thread's stack now). A first word that is not a verb is the command "
			"to launch; after -- it always is.",
		.examples = {
			{ "pmutop -p 1234 -e branchMisses", "live view of branch misses" },
			{ "pmutop -p 1234 --no-tui --duration 5", "table of 5 seconds" },
			{ "pmutop -p 1234 --dump-every 5m --dump dir/", "a profile every 5 minutes" },
			{ "pmutop -p 1234 --dump prof.pb.gz --top", "live view, profile on quit" },
			{ "pmutop --load prof.pb.gz", "browse a saved profile" },
			{ "pmutop -p 1234 -e cycles -o prof.pb.gz -d 10", "10 s pprof profile" },
			{ "pmutop -e cacheMisses -- ./my_program args", "launch and profile" },
			{ "pmutop dump -p 1234", "where is every thread now?" },
			{ "pmutop -p 1234 --unwind=fp --dump prof.pb.gz", "frame-pointer stacks" },
			{ "go tool pprof -top prof.pb.gz", "read a profile" },
		},
	},
	[CLI_VERB_RECORD] = {
		.usage = { "record -p PID [-o FILE] [options]",
			   "record [-o FILE] [options] -- COMMAND [ARGS...]" },
		.description =
			"Sample the process until it exits, --duration ends or SIGINT, and write the "
			"profile to -o FILE (pprof; FILE.html a flame graph page; FILE.folded folded "
			"stacks) or, without -o, "
			"print the table on stdout. Never the live view (py-spy record, perf record).",
		.examples = {
			{ "pmutop record -p 1234 -o prof.pb.gz -d 10", "10 s pprof profile" },
			{ "pmutop record -o flame.html -- ./my_program", "flame graph of a run" },
			{ "pmutop record -p 1234 -F 999 -g -o prof.pb.gz", "perf's spelling" },
		},
	},
	[CLI_VERB_TOP] = {
		.usage = { "top -p PID [options]", "top [options] -- COMMAND [ARGS...]" },
		.description =
			"The live view: functions by samples, refreshed every second (py-spy top, "
			"perf top). Needs a terminal; --dump FILE is written on quit.",
		.examples = {
			{ "pmutop top -p 1234", "live view of cycles (task-clock without a PMU)" },
			{ "pmutop top -e cacheMisses -- ./my_program", "launch and watch" },
		},
	},
	[CLI_VERB_DUMP] = {
		.usage = { "dump -p PID [--json]" },
		.description =
			"Print the current stack of every thread of PID once and exit (py-spy dump, "
			"eu-stack): each thread is stopped briefly with ptrace, read and resumed.",
		.examples = {
			{ "pmutop dump -p 1234", "every thread's stack" },
			{ "pmutop dump -p 1234 --json", "the same as JSON" },
		},
	},
};

static const char *const group_titles[CLI_NGROUPS] = {
	[CLI_GROUP_TARGET] = "Target",
	[CLI_GROUP_EVENTS] = "Events and duration",
	[CLI_GROUP_OUTPUT] = "Output",
	[CLI_GROUP_VIEW] = "Live view and saved profiles",
	[CLI_GROUP_STACKS] = "Stacks",
	[CLI_GROUP_HTTP] = "HTTP endpoint",
	[CLI_GROUP_INFO] = "Information",
	[CLI_GROUP_HIDDEN] = NULL,
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* "events" / "event" / "ns" after a preset period. */
static const char *event_unit(const struct pmu_event *ev)
{
	if (ev->offcpu)
		return "switch-out: each weighs its time off the CPU, in ns";
	if (!strcmp(ev->unit, "nanoseconds"))
		return "ns";
	return ev->preset_period == 1 ? "event" : "events";
}

/* Print text wrapped at HELP_WIDTH, continuation lines indented by indent. */
static void print_wrapped(FILE *out, const char *text, size_t col, size_t indent)
{
	const char *p = text;

	while (*p) {
		size_t word = strcspn(p, " ");

		if (col > indent && col + 1 + word > HELP_WIDTH) {
			fprintf(out, "\n%*s", (int)indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, word, out);
		col += word;
		p += word;
		while (*p == ' ')
			p++;
	}
	fputc('\n', out);
}

/* "  -p, --pid PID" / "      --load FILE" / "  -g": the left column of --help. */
static int option_left(const struct cli_option *opt, char *buf, size_t len)
{
	if (!opt->name)
		return snprintf(buf, len, "  -%c", opt->short_name);
	return snprintf(buf, len, "  %c%c%s--%s%s%s", opt->short_name ? '-' : ' ',
			opt->short_name ? opt->short_name : ' ', opt->short_name ? ", " : "  ",
			opt->name, opt->arg ? " " : "", opt->arg ? opt->arg : "");
}

void cli_print_help(FILE *out, enum cli_verb verb)
{
	const struct verb_doc *d = &verb_docs[verb < CLI_NVERBS ? verb : CLI_VERB_NONE];
	const struct cli_option *opt;

	for (size_t i = 0; i < ARRAY_SIZE(d->usage) && d->usage[i]; i++)
		fprintf(out, "%s pmutop %s\n", i ? "      " : "Usage:", d->usage[i]);
	fputc('\n', out);
	print_wrapped(out, d->description, 0, 0);
	for (int g = 0; g < CLI_NGROUPS; g++) {
		bool title = false;

		if (!group_titles[g])
			continue;
		for (size_t i = 0; (opt = cli_option_at(i)); i++) {
			char left[64];
			int n;

			if (opt->group != (enum cli_group)g || !cli_option_in(opt, verb))
				continue;
			if (!title)
				fprintf(out, "\n%s:\n", group_titles[g]);
			title = true;
			n = option_left(opt, left, sizeof(left));
			fputs(left, out);
			if (n + 1 >= HELP_INDENT)
				fprintf(out, "\n%*s", HELP_INDENT, "");
			else
				fprintf(out, "%*s", HELP_INDENT - n, "");
			print_wrapped(out, opt->help, HELP_INDENT, HELP_INDENT);
		}
	}
	if (verb != CLI_VERB_DUMP) {
		fprintf(out, "\nEvents (preset period in parentheses):\n");
		for (size_t i = 0; events_builtin(i); i++) {
			const struct pmu_event *ev = events_builtin(i);

			fprintf(out, "  %-26s (%llu %s)\n", ev->name,
				(unsigned long long)ev->preset_period, event_unit(ev));
		}
		fprintf(out, "  %-26s raw PMU event code (100000 events)\n", "rUUEE, r0xUUEE");
		fprintf(out, "  perf spellings are accepted too: cpu-cycles, cache-misses, "
			"branch-misses, ...\n");
	}
	fprintf(out, "\nExamples:\n");
	for (size_t i = 0; i < ARRAY_SIZE(d->examples) && d->examples[i].cmd; i++) {
		size_t n = strlen(d->examples[i].cmd);

		if (n + 2 < 51)
			fprintf(out, "  %-49s%s\n", d->examples[i].cmd, d->examples[i].what);
		else
			fprintf(out, "  %s\n  %-49s%s\n", d->examples[i].cmd, "", d->examples[i].what);
	}
	fprintf(out, "\nExit status: 0 done; 1 profiling failed (no such process, no permission, the\n"
		"kernel refused a counter, a file could not be written); 2 bad command line\n"
		"(including a kernel thread, or -t threads of different processes); 141 done,\n"
		"but stdout's or stderr's reader went away (output lost, the profile written).\n");
}

/* ---- the man page ---- */

/* Text for roff: backslashes and hyphens escaped, no line starting with '.'. */
static void roff(FILE *out, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", out);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", out);
		else if (*s == '-')
			fputs("\\-", out);
		else
			fputc(*s, out);
	}
}

/* ".TP" item of one option, with the verbs that take it when not all. */
static void man_option(FILE *out, const struct cli_option *opt)
{
	unsigned all = (1u << CLI_NVERBS) - 1;
	bool first = true;

	fputs(".TP\n", out);
	if (opt->short_name)
		fprintf(out, "\\fB\\-%c\\fR%s", opt->short_name, opt->name ? ", " : "");
	if (opt->name) {
		fputs("\\fB\\-\\-", out);
		roff(out, opt->name);
		fputs("\\fR", out);
	}
	if (opt->arg) {
		fputs(" \\fI", out);
		roff(out, opt->arg);
		fputs("\\fR", out);
	}
	fputc('\n', out);
	roff(out, opt->help);
	if (opt->verbs && (opt->verbs & all) != all) {
		fputs(" (taken by", out);
		for (int v = 0; v < CLI_NVERBS; v++) {
			if (!(opt->verbs & CLI_IN(v)))
				continue;
			fprintf(out, "%s pmutop%s%s", first ? "" : ",", v ? " " : "",
				cli_verb_name((enum cli_verb)v));
			first = false;
		}
		fputs(")", out);
	}
	fputc('\n', out);
}

void cli_print_man(FILE *out)
{
	const struct cli_option *opt;

	fprintf(out, ".\\\" Generated by `pmutop --print-man` from the option table "
		"(src/frontend/cli.c); do not edit.\n"
		".TH PMUTOP 1 \"\" \"pmutop %s\" \"User Commands\"\n"
		".SH NAME\npmutop \\- sample a process on hardware performance counters and "
		"show where the events happen\n.SH SYNOPSIS\n", PMUTOP_VERSION);
	for (int v = 0; v < CLI_NVERBS; v++) {
		for (size_t i = 0; i < ARRAY_SIZE(verb_docs[v].usage) && verb_docs[v].usage[i]; i++) {
			if (v == CLI_VERB_NONE && !strncmp(verb_docs[v].usage[i], "record |", 8))
				continue; /* the verbs have their own lines here */
			fputs(".B pmutop\n", out);
			roff(out, verb_docs[v].usage[i]);
			fputs("\n.br\n", out);
		}
	}
	fputs(".SH DESCRIPTION\n", out);
	roff(out, verb_docs[CLI_VERB_NONE].description);
	fputs("\n.SH COMMANDS\n", out);
	for (int v = CLI_VERB_NONE + 1; v < CLI_NVERBS; v++) {
		fputs(".TP\n.B pmutop ", out);
		roff(out, cli_verb_name((enum cli_verb)v));
		fputc('\n', out);
		roff(out, verb_docs[v].description);
		fputc('\n', out);
	}
	fputs(".SH OPTIONS\n", out);
	for (int g = 0; g < CLI_NGROUPS; g++) {
		if (!group_titles[g])
			continue;
		fputs(".SS ", out);
		roff(out, group_titles[g]);
		fputc('\n', out);
		for (size_t i = 0; (opt = cli_option_at(i)); i++)
			if (opt->group == (enum cli_group)g)
				man_option(out, opt);
	}
	fputs(".SH EVENTS\nPreset period in parentheses; see also \\fB\\-\\-list\\-events\\fR.\n", out);
	for (size_t i = 0; events_builtin(i); i++) {
		const struct pmu_event *ev = events_builtin(i);

		fputs(".TP\n.B ", out);
		roff(out, ev->name);
		fprintf(out, "\n(%llu %s)\n", (unsigned long long)ev->preset_period, event_unit(ev));
	}
	fputs(".TP\n.BR r \\fIUUEE\\fR, r0x\\fIUUEE\\fR\nraw PMU event code (100000 events)\n"
	      ".PP\nperf spellings are accepted too: cpu\\-cycles, cache\\-misses, "
	      "branch\\-misses, ...\n.SH EXAMPLES\n", out);
	for (int v = 0; v < CLI_NVERBS; v++) {
		const struct verb_doc *d = &verb_docs[v];

		for (size_t i = 0; i < ARRAY_SIZE(d->examples) && d->examples[i].cmd; i++) {
			fputs(".TP\n.B ", out);
			roff(out, d->examples[i].cmd);
			fputc('\n', out);
			roff(out, d->examples[i].what);
			fputc('\n', out);
		}
	}
	fputs(".SH EXIT STATUS\n0 on success (the profile was written or printed); 1 when "
	      "profiling failed (no such process, no permission, the kernel refused a counter, a "
	      "file could not be written); 2 for a bad command line (including a kernel thread, "
	      "or \\-t threads of different processes); 141 when all was done but the reader of "
	      "stdout or stderr went away, so some of pmutop's output was lost (the profile is "
	      "written, a launched command ended as usual).\n"
	      ".SH SEE ALSO\n.BR perf\\-record (1),\n.BR perf\\-top (1),\n"
	      ".BR py\\-spy (1),\n.B go tool pprof\n", out);
}

/* ---- bash completion ---- */

/* The words of every option whose argument completes as kind, "|"-joined. */
static void case_pattern(FILE *out, enum cli_complete kind, const char *choices)
{
	const struct cli_option *opt;
	bool first = true;

	for (size_t i = 0; (opt = cli_option_at(i)); i++) {
		if (opt->group == CLI_GROUP_HIDDEN || opt->complete != kind || !opt->arg)
			continue;
		if (kind == CLI_COMPLETE_CHOICES && strcmp(opt->choices, choices))
			continue;
		fprintf(out, "%s--%s", first ? "" : "|", opt->name);
		if (opt->short_name)
			fprintf(out, "|-%c", opt->short_name);
		first = false;
	}
}

/* Every visible option verb takes, space-separated. */
static void option_words(FILE *out, enum cli_verb verb)
{
	const struct cli_option *opt;
	bool first = true;

	for (size_t i = 0; (opt = cli_option_at(i)); i++) {
		if (opt->group == CLI_GROUP_HIDDEN || !cli_option_in(opt, verb))
			continue;
		if (opt->name)
			fprintf(out, "%s--%s", first ? "" : " ", opt->name);
		if (opt->short_name)
			fprintf(out, "%s-%c", first && !opt->name ? "" : " ", opt->short_name);
		first = false;
	}
	fputs(" --", out);
}

void cli_print_completion(FILE *out)
{
	const struct cli_option *opt;

	fprintf(out, "# bash completion for pmutop %s\n"
		"# Generated by `pmutop --print-completion` from the option table "
		"(src/frontend/cli.c); do not edit.\n"
		"_pmutop()\n{\n"
		"\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} i\n"
		"\t# after \"--\": the command to launch and its arguments\n"
		"\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
		"\t\tif [[ ${COMP_WORDS[i]} == -- ]]; then\n"
		"\t\t\tif ((i == COMP_CWORD - 1)); then\n"
		"\t\t\t\tCOMPREPLY=($(compgen -c -- \"$cur\"))\n"
		"\t\t\telse\n"
		"\t\t\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
		"\t\t\tfi\n"
		"\t\t\treturn\n"
		"\t\tfi\n"
		"\tdone\n"
		"\t# --opt=value: complete the value as for \"--opt value\"\n"
		"\tif [[ $cur == --*=* ]]; then\n"
		"\t\tprev=${cur%%%%=*}\n"
		"\t\tcur=${cur#*=}\n"
		"\telif [[ $cur == = && $prev == --* ]]; then\n"
		"\t\tcur=\n"
		"\telif [[ $prev == = ]] && ((COMP_CWORD >= 2)); then\n"
		"\t\tprev=${COMP_WORDS[COMP_CWORD-2]}\n"
		"\tfi\n"
		"\tcase $prev in\n", PMUTOP_VERSION);
	/* Event names: the named events, their perf spellings and cache events
	 * (events.c); a comma list completes its last element. */
	fputs("\t", out);
	case_pattern(out, CLI_COMPLETE_EVENT, NULL);
	fputs(")\n\t\tlocal events=\"", out);
	for (size_t i = 0; events_builtin(i); i++)
		fprintf(out, "%s%s", i ? " " : "", events_builtin(i)->name);
	for (size_t i = 0; events_alias(i); i++)
		fprintf(out, " %s", events_alias(i));
	fputs("\"\n"
	      "\t\tlocal head=\n"
	      "\t\t[[ $cur == *,* ]] && head=${cur%,*},\n"
	      "\t\tCOMPREPLY=($(compgen -P \"$head\" -W \"$events\" -- \"${cur##*,}\"))\n"
	      "\t\treturn;;\n\t", out);
	case_pattern(out, CLI_COMPLETE_PID, NULL);
	fputs(")\n\t\tCOMPREPLY=($(compgen -W \"$(cd /proc && echo [0-9]*)\" -- \"$cur\"))\n"
	      "\t\treturn;;\n\t", out);
	case_pattern(out, CLI_COMPLETE_FILE, NULL);
	fputs(")\n\t\tcompopt -o filenames 2>/dev/null\n"
	      "\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n\t\treturn;;\n", out);
	for (size_t i = 0; (opt = cli_option_at(i)); i++) {
		if (opt->group == CLI_GROUP_HIDDEN || opt->complete != CLI_COMPLETE_CHOICES)
			continue;
		fputs("\t", out);
		case_pattern(out, CLI_COMPLETE_CHOICES, opt->choices);
		fprintf(out, ")\n\t\tCOMPREPLY=($(compgen -W \"%s\" -- \"$cur\"))\n\t\treturn;;\n",
			opt->choices);
	}
	/* Options that take a value with nothing to offer: offer nothing. */
	fputs("\t", out);
	case_pattern(out, CLI_COMPLETE_NONE, NULL);
	fputs(")\n\t\treturn;;\n\tesac\n"
	      "\tif [[ $cur != -* ]]; then\n"
	      "\t\t# the first word: a verb, or the command to launch\n"
	      "\t\t((COMP_CWORD == 1)) && COMPREPLY=($(compgen -W \"", out);
	for (int v = CLI_VERB_NONE + 1; v < CLI_NVERBS; v++)
		fprintf(out, "%s%s", v > 1 ? " " : "", cli_verb_name((enum cli_verb)v));
	fputs("\" -- \"$cur\") $(compgen -c -- \"$cur\"))\n"
	      "\t\treturn\n\tfi\n"
	      "\tlocal opts\n\tcase ${COMP_WORDS[1]} in\n", out);
	for (int v = CLI_VERB_NONE + 1; v < CLI_NVERBS; v++) {
		fprintf(out, "\t%s) opts=\"", cli_verb_name((enum cli_verb)v));
		option_words(out, (enum cli_verb)v);
		fputs("\";;\n", out);
	}
	fputs("\t*) opts=\"", out);
	option_words(out, CLI_VERB_NONE);
	fputs("\";;\n\tesac\n"
	      "\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	      "}\n"
	      "complete -F _pmutop pmutop\n", out);
}
