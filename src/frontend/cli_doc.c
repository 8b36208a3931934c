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

static const char *const usage_lines[] = {
	"-p PID [options]",
	"[options] -- COMMAND [ARGS...]",
	"--load PROFILE.pb.gz",
	"--stacks -p PID [--json]",
};

static const char description[] =
	"Sample every thread of a process on a hardware performance counter (or a "
	"software clock), unwind each sample's user stack remotely, and report where "
	"the events happen: in a live view when stdout is a terminal, as a pprof "
	"profile (--dump), or as a flat/cumulative table at the end.";

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

static const struct { const char *cmd, *what; } examples[] = {
	{ "pmutop -p 1234 -e branchMisses", "live view of branch misses" },
	{ "pmutop -p 1234 --no-tui --duration 5", "table of 5 seconds" },
	{ "pmutop -p 1234 --dump prof.pb.gz --top", "live view, profile on quit" },
	{ "pmutop --load prof.pb.gz", "browse a saved profile" },
	{ "pmutop -p 1234 -e cycles --dump prof.pb.gz --duration 10", "10 s pprof profile" },
	{ "pmutop -e cacheMisses -- ./my_program args", "launch and profile" },
	{ "pmutop --stacks -p 1234", "where is every thread now?" },
	{ "pmutop -p 1234 --unwind=fp --dump prof.pb.gz", "frame-pointer stacks" },
	{ "go tool pprof -top prof.pb.gz", "read a profile" },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* "events" / "event" / "ns" after a preset period. */
static const char *event_unit(const struct pmu_event *ev)
{
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

void cli_print_help(FILE *out)
{
	const struct cli_option *opt;

	for (size_t i = 0; i < ARRAY_SIZE(usage_lines); i++)
		fprintf(out, "%s pmutop %s\n", i ? "      " : "Usage:", usage_lines[i]);
	fputc('\n', out);
	print_wrapped(out, description, 0, 0);
	for (int g = 0; g < CLI_NGROUPS; g++) {
		if (!group_titles[g])
			continue;
		fprintf(out, "\n%s:\n", group_titles[g]);
		for (size_t i = 0; (opt = cli_option_at(i)); i++) {
			char left[64];
			int n;

			if (opt->group != (enum cli_group)g)
				continue;
			n = snprintf(left, sizeof(left), "  %c%c%s--%s%s%s",
				     opt->short_name ? '-' : ' ',
				     opt->short_name ? opt->short_name : ' ',
				     opt->short_name ? ", " : "  ", opt->name,
				     opt->arg ? " " : "", opt->arg ? opt->arg : "");
			fputs(left, out);
			if (n + 1 >= HELP_INDENT) {
				fprintf(out, "\n%*s", HELP_INDENT, "");
			} else {
				fprintf(out, "%*s", HELP_INDENT - n, "");
			}
			print_wrapped(out, opt->help, HELP_INDENT, HELP_INDENT);
		}
	}
	fprintf(out, "\nEvents (preset period in parentheses):\n");
	for (size_t i = 0; events_builtin(i); i++) {
		const struct pmu_event *ev = events_builtin(i);

		fprintf(out, "  %-26s (%llu %s)\n", ev->name,
			(unsigned long long)ev->preset_period, event_unit(ev));
	}
	fprintf(out, "  %-26s raw PMU event code (100000 events)\n", "rUUEE, r0xUUEE");
	fprintf(out, "  perf spellings are accepted too: cpu-cycles, cache-misses, branch-misses, ...\n"
		"\nExamples:\n");
	for (size_t i = 0; i < ARRAY_SIZE(examples); i++) {
		size_t n = strlen(examples[i].cmd);

		if (n + 2 < 51)
			fprintf(out, "  %-49s%s\n", examples[i].cmd, examples[i].what);
		else
			fprintf(out, "  %s\n  %-49s%s\n", examples[i].cmd, "", examples[i].what);
	}
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

void cli_print_man(FILE *out)
{
	const struct cli_option *opt;

	fprintf(out, ".\\\" Generated by `pmutop --print-man` from the option table "
		"(src/frontend/cli.c); do not edit.\n"
		".TH PMUTOP 1 \"\" \"pmutop %s\" \"User Commands\"\n"
		".SH NAME\npmutop \\- sample a process on hardware performance counters and "
		"show where the events happen\n.SH SYNOPSIS\n", PMUTOP_VERSION);
	for (size_t i = 0; i < ARRAY_SIZE(usage_lines); i++) {
		fputs(".B pmutop\n", out);
		roff(out, usage_lines[i]);
		fputs("\n.br\n", out);
	}
	fputs(".SH DESCRIPTION\n", out);
	roff(out, description);
	fputs("\n.SH OPTIONS\n", out);
	for (int g = 0; g < CLI_NGROUPS; g++) {
		if (!group_titles[g])
			continue;
		fputs(".SS ", out);
		roff(out, group_titles[g]);
		fputc('\n', out);
		for (size_t i = 0; (opt = cli_option_at(i)); i++) {
			if (opt->group != (enum cli_group)g)
				continue;
			fputs(".TP\n", out);
			if (opt->short_name)
				fprintf(out, "\\fB\\-%c\\fR, ", opt->short_name);
			fputs("\\fB\\-\\-", out);
			roff(out, opt->name);
			fputs("\\fR", out);
			if (opt->arg) {
				fputs(" \\fI", out);
				roff(out, opt->arg);
				fputs("\\fR", out);
			}
			fputc('\n', out);
			roff(out, opt->help);
			fputc('\n', out);
		}
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
	for (size_t i = 0; i < ARRAY_SIZE(examples); i++) {
		fputs(".TP\n.B ", out);
		roff(out, examples[i].cmd);
		fputc('\n', out);
		roff(out, examples[i].what);
		fputc('\n', out);
	}
	fputs(".SH EXIT STATUS\n0 on success (the profile was written or printed), 1 when "
	      "profiling failed, 2 for a command-line error.\n"
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
	      "\tif [[ $cur == -* ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"", out);
	for (size_t i = 0, first = 1; (opt = cli_option_at(i)); i++) {
		if (opt->group == CLI_GROUP_HIDDEN)
			continue;
		fprintf(out, "%s--%s", first ? "" : " ", opt->name);
		if (opt->short_name)
			fprintf(out, " -%c", opt->short_name);
		first = 0;
	}
	fputs(" --\" -- \"$cur\"))\n"
	      "\tfi\n"
	      "}\n"
	      "complete -F _pmutop pmutop\n", out);
}
