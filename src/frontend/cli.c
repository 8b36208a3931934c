/*
 * cli.c - parse pmutop's command line into struct pmutop_opts.
 *
 * The options are one table (opts_table below): each row names the option,
 * its argument, the handler that stores it and its help text. getopt_long's
 * arrays are built from the rows at parse time, and cli_doc.c prints --help,
 * the man page and the bash completion from the same rows. Every numeric
 * option is parsed with strtoull/strtod plus a range check and rejected with
 * the offending text quoted; conflicts are checked in one place at the end.
 * Nothing here touches the target.
 */
#include "pmutop/frontend/cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pmutop/frontend/cli_doc.h"

#define DEFAULT_STACK_SIZE 16384
#define DEFAULT_MAX_DEPTH 128
#define DEFAULT_REFRESH 1.0
#define STR_(x) #x
#define STR(x) STR_(x)

/* What the handlers see while argv is parsed. */
struct cli_ctx {
	struct pmutop_opts *o;
	FILE *out;
	char *err;
	size_t errlen;
	const char *event_specs[PMUTOP_MAX_EVENTS];
	size_t nspecs;
	bool have_period;
};

#define OPT_FIELD(c, opt, type) ((type *)((char *)(c)->o + (opt)->off))

static int parse_u64(const char *what, const char *s, uint64_t min, uint64_t max,
		     uint64_t *out, char *err, size_t errlen)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (!s || !*s || *s == '-' || *s == '+')
		goto bad;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		goto bad;
	if (v < min || v > max) {
		snprintf(err, errlen, "%s \"%s\" out of range (%llu..%llu)", what, s,
			 (unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	*out = v;
	return 0;
bad:
	snprintf(err, errlen, "invalid %s \"%s\" (expected a whole number)", what, s ? s : "");
	return -EINVAL;
}

/* "stack-size" -> "stack size": how errors name a numeric option. */
static int opt_u64(struct cli_ctx *c, const struct cli_option *opt, const char *arg,
		   uint64_t *v)
{
	char what[32];

	snprintf(what, sizeof(what), "%s", opt->name);
	for (char *p = what; *p; p++)
		if (*p == '-')
			*p = ' ';
	return parse_u64(what, arg, opt->min, opt->max, v, c->err, c->errlen);
}

/* ---- generic handlers: the row's .off names the field ---- */

static int h_flag(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)arg;
	*OPT_FIELD(c, opt, bool) = true;
	return 0;
}

static int h_unsigned(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	uint64_t v;

	if (opt_u64(c, opt, arg, &v))
		return -EINVAL;
	*OPT_FIELD(c, opt, unsigned) = (unsigned)v;
	return 0;
}

static int h_file(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	if (!*arg) {
		snprintf(c->err, c->errlen, "--%s needs a file name", opt->name);
		return -EINVAL;
	}
	*OPT_FIELD(c, opt, const char *) = arg;
	return 0;
}

static int h_name(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	if (!*arg) {
		snprintf(c->err, c->errlen, "--%s needs a function name (as the table shows it)",
			 opt->name);
		return -EINVAL;
	}
	*OPT_FIELD(c, opt, const char *) = arg;
	return 0;
}

static int h_word(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	if (!*arg) {
		snprintf(c->err, c->errlen, "--%s needs a value", opt->name);
		return -EINVAL;
	}
	*OPT_FIELD(c, opt, const char *) = arg;
	return 0;
}

/* ---- handlers of one option each ---- */

static int h_pid(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	uint64_t v;

	if (opt_u64(c, opt, arg, &v))
		return -EINVAL;
	c->o->pid = (pid_t)v;
	return 0;
}

static int h_event(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)opt;
	if (c->nspecs == PMUTOP_MAX_EVENTS) {
		snprintf(c->err, c->errlen, "too many -e options (at most %d events)",
			 PMUTOP_MAX_EVENTS);
		return -EINVAL;
	}
	c->event_specs[c->nspecs++] = arg;
	c->o->event_given = true;
	return 0;
}

static int h_period(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	if (opt_u64(c, opt, arg, &c->o->period))
		return -EINVAL;
	c->have_period = true;
	return 0;
}

static int h_freq(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	return opt_u64(c, opt, arg, &c->o->freq);
}

/* Seconds as a decimal in (min, max]; what names it in the error. */
static int parse_seconds(const char *arg, double min, bool min_inclusive, double max,
			 double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || *end || end == arg || !isfinite(v) || v > max ||
	    (min_inclusive ? v < min : v <= min))
		return -EINVAL;
	*out = v;
	return 0;
}

static int h_duration(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)opt;
	if (parse_seconds(arg, 0, false, 31536000, &c->o->duration)) {
		snprintf(c->err, c->errlen, "invalid duration \"%s\" (expected seconds > 0, e.g. 10 or 2.5)",
			 arg);
		return -EINVAL;
	}
	return 0;
}

static int h_refresh(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)opt;
	if (parse_seconds(arg, 0.05, true, 3600, &c->o->refresh)) {
		snprintf(c->err, c->errlen, "invalid refresh interval \"%s\" "
			 "(expected seconds from 0.05 to 3600, e.g. 1 or 0.5)", arg);
		return -EINVAL;
	}
	return 0;
}

static int h_stack_size(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	if (h_unsigned(c, opt, arg))
		return -EINVAL;
	c->o->stack_size &= ~7u; /* the kernel takes a multiple of 8 (at most 65528) */
	c->o->stack_size_given = true;
	return 0;
}

static int h_mmap_pages(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	unsigned v;

	if (h_unsigned(c, opt, arg))
		return -EINVAL;
	v = c->o->mmap_pages;
	if (v & (v - 1)) {
		snprintf(c->err, c->errlen, "invalid mmap pages \"%s\" (must be a power of 2)", arg);
		return -EINVAL;
	}
	return 0;
}

static int h_format(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)opt;
	if (!strcmp(arg, "pprof")) {
		c->o->format = DUMP_PPROF;
	} else if (!strcmp(arg, "folded") || !strcmp(arg, "collapsed")) {
		c->o->format = DUMP_FOLDED;
	} else if (!strcmp(arg, "html")) {
		c->o->format = DUMP_HTML;
	} else {
		snprintf(c->err, c->errlen, "invalid format \"%s\" (expected pprof, folded or html)",
			 arg);
		return -EINVAL;
	}
	c->o->format_given = true;
	return 0;
}

static int h_http(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)opt;
	if (!*arg) {
		snprintf(c->err, c->errlen, "--http needs an address, e.g. 127.0.0.1:6060");
		return -EINVAL;
	}
	c->o->http = arg;
	return 0;
}

static int h_unwind(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)opt;
	if (!strcmp(arg, "snapshot") || !strcmp(arg, "dwarf")) {
		c->o->unwind = UNWIND_ENGINE_SNAPSHOT;
	} else if (!strcmp(arg, "ptrace")) {
		c->o->unwind = UNWIND_ENGINE_PTRACE;
	} else if (!strcmp(arg, "fp")) {
		c->o->unwind = UNWIND_ENGINE_FP;
	} else {
		snprintf(c->err, c->errlen, "invalid unwind engine \"%s\" (expected snapshot, "
			 "ptrace or fp)", arg);
		return -EINVAL;
	}
	return 0;
}

static int h_help(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)opt, (void)arg;
	cli_print_help(c->out);
	return 1;
}

static int h_version(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)opt, (void)arg;
	fprintf(c->out, "pmutop %s\n", PMUTOP_VERSION);
	return 1;
}

static int h_print_man(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)opt, (void)arg;
	cli_print_man(c->out);
	return 1;
}

static int h_print_completion(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)opt, (void)arg;
	cli_print_completion(c->out);
	return 1;
}

#define F(field) offsetof(struct pmutop_opts, field)

/* Every option, in the order --help lists them within a group. */
static const struct cli_option opts_table[] = {
	{ "pid", 'p', "PID", h_pid, 0, 1, 4194304,
	  "profile the running process PID (all its threads)",
	  CLI_GROUP_TARGET, CLI_COMPLETE_PID, NULL },
	{ "event", 'e', "EVENT", h_event, 0, 0, 0,
	  "event to sample on (default: cycles, or task-clock when this machine has no "
	  "hardware PMU); a comma list or repeated -e samples several at once",
	  CLI_GROUP_EVENTS, CLI_COMPLETE_EVENT, NULL },
	{ "period", 0, "N", h_period, 0, 1, 1ULL << 62,
	  "sample every N events (default: the event's preset)",
	  CLI_GROUP_EVENTS, CLI_COMPLETE_NONE, NULL },
	{ "freq", 'F', "HZ", h_freq, 0, 1, 1000000,
	  "sample at about HZ samples/s per thread instead",
	  CLI_GROUP_EVENTS, CLI_COMPLETE_NONE, NULL },
	{ "duration", 0, "SEC", h_duration, 0, 0, 0,
	  "stop after SEC seconds (default: until the target exits or SIGINT/SIGTERM)",
	  CLI_GROUP_EVENTS, CLI_COMPLETE_NONE, NULL },
	{ "kernel", 0, NULL, h_flag, F(kernel), 0, 0,
	  "also sample in kernel mode (needs perf_event_paranoid<=1)",
	  CLI_GROUP_EVENTS, CLI_COMPLETE_NONE, NULL },
	{ "dump", 0, "FILE", h_file, F(dump), 0, 0,
	  "write the profile to FILE, in the format its name ends with: .pb.gz / .pprof "
	  "(gzip-compressed pprof; also a name without extension), .html (a flame graph "
	  "page), .folded (collapsed stacks); - is stdout (pprof unless --format says)",
	  CLI_GROUP_OUTPUT, CLI_COMPLETE_FILE, NULL },
	{ "dump-split", 0, NULL, h_flag, F(dump_split), 0, 0,
	  "with several events: one file per event (FILE.pb.gz -> FILE.EVENT.pb.gz)",
	  CLI_GROUP_OUTPUT, CLI_COMPLETE_NONE, NULL },
	{ "format", 0, "FMT", h_format, 0, 0, 0,
	  "what --dump writes, whatever its name: pprof, folded (collapsed stacks: "
	  "flamegraph.pl, inferno, speedscope) or html (a self-contained flame graph page)",
	  CLI_GROUP_OUTPUT, CLI_COMPLETE_CHOICES, "pprof folded html" },
	{ "diff-base", 0, "OLD", h_file, F(diff_base), 0, 0,
	  "with an html --dump: a differential flame graph, widths from this profile, "
	  "red/blue by each frame's growth/shrink since the saved profile OLD (as "
	  "pprof -diff_base)",
	  CLI_GROUP_OUTPUT, CLI_COMPLETE_FILE, NULL },
	{ "folded-threads", 0, NULL, h_flag, F(folded_threads), 0, 0,
	  "with --format folded: thread name as the root frame",
	  CLI_GROUP_OUTPUT, CLI_COMPLETE_NONE, NULL },
	{ "rows", 0, "N", h_unsigned, F(top_rows), 1, 1000000,
	  "rows of the table printed without --dump (default: all)",
	  CLI_GROUP_OUTPUT, CLI_COMPLETE_NONE, NULL },
	{ "quiet", 'q', NULL, h_flag, F(quiet), 0, 0,
	  "no summary on stderr",
	  CLI_GROUP_OUTPUT, CLI_COMPLETE_NONE, NULL },
	{ "top", 0, NULL, h_flag, F(top), 0, 0,
	  "the live view even with --dump (FILE is written on quit)",
	  CLI_GROUP_VIEW, CLI_COMPLETE_NONE, NULL },
	{ "no-tui", 0, NULL, h_flag, F(no_tui), 0, 0,
	  "no live view: print the table at the end",
	  CLI_GROUP_VIEW, CLI_COMPLETE_NONE, NULL },
	{ "refresh", 0, "SEC", h_refresh, 0, 0, 0,
	  "live view refresh interval (default 1)",
	  CLI_GROUP_VIEW, CLI_COMPLETE_NONE, NULL },
	{ "load", 0, "FILE", h_file, F(load), 0, 0,
	  "show a saved pprof profile (live view on a terminal, else the table)",
	  CLI_GROUP_VIEW, CLI_COMPLETE_FILE, NULL },
	{ "annotate", 0, "FUNCTION", h_name, F(annotate), 0, 0,
	  "instead of the table, list FUNCTION's instructions with each recorded event's "
	  "share per instruction, source lines and CPI~ per basic block (with --load, or at "
	  "the end of a recording)",
	  CLI_GROUP_VIEW, CLI_COMPLETE_NONE, NULL },
	{ "unwind", 0, "ENGINE", h_unwind, 0, 0, 0,
	  "how stacks are taken: snapshot (default; the kernel copies registers + "
	  "--stack-size bytes of stack, DWARF unwind), ptrace (stop the thread at each "
	  "sample and read it live; one tracer per process) or fp (the kernel's "
	  "frame-pointer walk: cheapest, needs -fno-omit-frame-pointer code)",
	  CLI_GROUP_STACKS, CLI_COMPLETE_CHOICES, "snapshot ptrace fp" },
	{ "stack-size", 0, "BYTES", h_stack_size, F(stack_size), 64, 65528,
	  "user stack copied per sample (default " STR(DEFAULT_STACK_SIZE) ", max 65528)",
	  CLI_GROUP_STACKS, CLI_COMPLETE_NONE, NULL },
	{ "max-depth", 0, "N", h_unsigned, F(max_depth), 1, 4096,
	  "frames per stack at most (default " STR(DEFAULT_MAX_DEPTH) ")",
	  CLI_GROUP_STACKS, CLI_COMPLETE_NONE, NULL },
	{ "mmap-pages", 0, "N", h_mmap_pages, F(mmap_pages), 1, 65536,
	  "ring buffer data pages per CPU, a power of 2 (default: 128, what a non-root "
	  "user may lock; 512 as root)",
	  CLI_GROUP_STACKS, CLI_COMPLETE_NONE, NULL },
	{ "stacks", 0, NULL, h_flag, F(stacks), 0, 0,
	  "print the current stack of every thread of -p PID once and exit (ptrace; like "
	  "py-spy dump / eu-stack)",
	  CLI_GROUP_STACKS, CLI_COMPLETE_NONE, NULL },
	{ "json", 0, NULL, h_flag, F(json), 0, 0,
	  "with --stacks: JSON instead of text",
	  CLI_GROUP_STACKS, CLI_COMPLETE_NONE, NULL },
	{ "http", 0, "ADDR:PORT", h_http, 0, 0, 0,
	  "serve /debug/pprof/profile?seconds=N&event=E&period=P for -p PID (Go's "
	  "endpoint; loopback unless ADDR says)",
	  CLI_GROUP_HTTP, CLI_COMPLETE_NONE, NULL },
	{ "http-max-seconds", 0, "N", h_unsigned, F(http_max_seconds), 1, 86400,
	  "longest profile a request may ask for (default 300)",
	  CLI_GROUP_HTTP, CLI_COMPLETE_NONE, NULL },
	{ "http-token", 0, "TOKEN", h_word, F(http_token), 0, 0,
	  "require ?token=TOKEN (or Authorization: Bearer TOKEN) of every request; a random "
	  "one is made when ADDR is not loopback; 'none' turns it off",
	  CLI_GROUP_HTTP, CLI_COMPLETE_NONE, NULL },
	{ "http-allow-host", 0, "NAME", h_word, F(http_allow_host), 0, 0,
	  "also accept requests whose Host header is NAME (default: IP addresses, localhost "
	  "and this machine's name; others get 403, against DNS rebinding)",
	  CLI_GROUP_HTTP, CLI_COMPLETE_NONE, NULL },
	{ "list-events", 0, NULL, h_flag, F(list_events), 0, 0,
	  "print the events usable on this machine and exit",
	  CLI_GROUP_INFO, CLI_COMPLETE_NONE, NULL },
	{ "help", 'h', NULL, h_help, 0, 0, 0,
	  "this text",
	  CLI_GROUP_INFO, CLI_COMPLETE_NONE, NULL },
	{ "version", 'V', NULL, h_version, 0, 0, 0,
	  "print the version and exit",
	  CLI_GROUP_INFO, CLI_COMPLETE_NONE, NULL },
	{ "print-man", 0, NULL, h_print_man, 0, 0, 0,
	  "print the man page pmutop.1 (the build installs it)",
	  CLI_GROUP_HIDDEN, CLI_COMPLETE_NONE, NULL },
	{ "print-completion", 0, NULL, h_print_completion, 0, 0, 0,
	  "print the bash completion script (the build installs it)",
	  CLI_GROUP_HIDDEN, CLI_COMPLETE_NONE, NULL },
};

#undef F
#define NOPTS (sizeof(opts_table) / sizeof(opts_table[0]))

const struct cli_option *cli_option_at(size_t i)
{
	return i < NOPTS ? &opts_table[i] : NULL;
}

/* Formats by the end of --dump's file name; the first match wins. */
static const struct {
	const char *ext;
	enum dump_format format;
} dump_exts[] = {
	{ ".pb.gz", DUMP_PPROF }, { ".pprof", DUMP_PPROF }, { ".prof", DUMP_PPROF },
	{ ".pb", DUMP_PPROF }, { ".gz", DUMP_PPROF },
	{ ".html", DUMP_HTML }, { ".htm", DUMP_HTML },
	{ ".folded", DUMP_FOLDED }, { ".collapsed", DUMP_FOLDED },
};

int cli_dump_format(const char *path, enum dump_format *fmt, char *err, size_t errlen)
{
	const char *base = strrchr(path, '/'), *dot;
	size_t plen = strlen(path);

	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(dump_exts) / sizeof(dump_exts[0]); i++) {
		size_t el = strlen(dump_exts[i].ext);

		if (plen > el && path + plen - el > base &&
		    !strcasecmp(path + plen - el, dump_exts[i].ext)) {
			*fmt = dump_exts[i].format;
			return 0;
		}
	}
	dot = strrchr(base, '.');
	if (!strcmp(path, "-") || !dot || dot == base) {
		*fmt = DUMP_PPROF; /* stdout, "profile", ".hidden": the default format */
		return 0;
	}
	snprintf(err, errlen, "--dump \"%s\": unknown extension \"%s\" (formats: .pb.gz, .pprof, "
		 ".prof: pprof; .html: flame graph page; .folded, .collapsed: folded stacks; or "
		 "say which with --format pprof|folded|html)", path, dot);
	return -EINVAL;
}

/* Conflicts of --format, --folded-threads and --http with the rest. */
static int cli_check_outputs(struct pmutop_opts *o, char *err, size_t errlen)
{
	/* An unknown extension is refused by dump_check(), unless the path is a FIFO or device. */
	if (o->dump && !o->format_given && cli_dump_format(o->dump, &o->format, err, errlen)) {
		o->format = DUMP_PPROF;
		o->dump_ext_unknown = true;
		err[0] = '\0';
	}
	if (o->format == DUMP_HTML && !o->dump) {
		snprintf(err, errlen, "--format html needs --dump FILE (the page goes there)");
		return -EINVAL;
	}
	if (o->format == DUMP_HTML && o->dump_split) {
		snprintf(err, errlen, "a flame graph page holds every event: drop --dump-split");
		return -EINVAL;
	}
	if (o->format == DUMP_HTML && o->top) {
		snprintf(err, errlen, "the flame graph page is written by the batch mode only: "
			 "drop --top");
		return -EINVAL;
	}
	if (o->diff_base && (!o->dump || o->format != DUMP_HTML)) {
		snprintf(err, errlen, "--diff-base makes a differential flame graph: give --dump "
			 "FILE.html (or --format html)");
		return -EINVAL;
	}
	if (o->format == DUMP_FOLDED && !o->dump) {
		snprintf(err, errlen, "--format folded needs --dump FILE (the folded stacks go there)");
		return -EINVAL;
	}
	if (o->format == DUMP_FOLDED && o->dump_split) {
		snprintf(err, errlen, "--format folded writes one file: drop --dump-split");
		return -EINVAL;
	}
	if (o->format == DUMP_FOLDED && o->top) {
		snprintf(err, errlen, "--format folded is written by the batch mode only: drop --top");
		return -EINVAL;
	}
	if (o->dump && !strcmp(o->dump, "-") && o->dump_split) {
		snprintf(err, errlen, "--dump - writes one stream to stdout: drop --dump-split "
			 "(or give a file name)");
		return -EINVAL;
	}
	if (o->dump && !strcmp(o->dump, "-") && o->top) {
		snprintf(err, errlen, "--dump - writes to stdout, which the live view needs: "
			 "drop --top (or give a file name)");
		return -EINVAL;
	}
	if (o->folded_threads && o->format != DUMP_FOLDED) {
		snprintf(err, errlen, "--folded-threads applies to --format folded");
		return -EINVAL;
	}
	if ((o->http_token || o->http_allow_host) && !o->http) {
		snprintf(err, errlen, "--http-token and --http-allow-host apply to --http");
		return -EINVAL;
	}
	if (o->http && (o->cmd || !o->pid)) {
		snprintf(err, errlen, "--http serves profiles of a running process: give -p PID, "
			 "not a command");
		return -EINVAL;
	}
	if (o->annotate && (o->http || o->stacks || o->top)) {
		snprintf(err, errlen, "--annotate prints one function's listing: --http, --stacks "
			 "and --top do not apply (in the live view, press a on a row)");
		return -EINVAL;
	}
	if (o->annotate && o->dump && o->format == DUMP_FOLDED) {
		snprintf(err, errlen, "--annotate prints a listing: drop --format folded");
		return -EINVAL;
	}
	if (o->http && (o->dump || o->top || o->duration > 0)) {
		snprintf(err, errlen, "--http answers each request with its own profile: "
			 "--dump, --top and --duration do not apply (use ?seconds=N)");
		return -EINVAL;
	}
	return 0;
}

/* Every -e (each may be a comma list) into o->events; "cycles" when none. */
static int parse_events(struct pmutop_opts *o, const char **specs, size_t nspecs,
			char *err, size_t errlen)
{
	o->nevents = 0;
	if (!nspecs && events_parse_list("cycles", o->events, PMUTOP_MAX_EVENTS, &o->nevents,
					 err, errlen))
		return -EINVAL;
	for (size_t i = 0; i < nspecs; i++)
		if (events_parse_list(specs[i], o->events, PMUTOP_MAX_EVENTS, &o->nevents, err, errlen))
			return -EINVAL;
	o->event = o->events[0];
	return 0;
}

void cli_defaults(struct pmutop_opts *o)
{
	*o = (struct pmutop_opts){
		.stack_size = DEFAULT_STACK_SIZE,
		.max_depth = DEFAULT_MAX_DEPTH,
		.refresh = DEFAULT_REFRESH,
		.http_max_seconds = 300,
	};
}

/* The row getopt_long answered with val (a short letter or 256 + index). */
static const struct cli_option *option_of(int val)
{
	if (val >= 256 && (size_t)(val - 256) < NOPTS)
		return &opts_table[val - 256];
	for (size_t i = 0; val > 0 && i < NOPTS; i++)
		if (opts_table[i].short_name == val)
			return &opts_table[i];
	return NULL;
}

/* getopt_long's arrays, from the table: "+" stops at the first command word. */
static void getopt_tables(struct option *long_opts, char *shorts)
{
	size_t ns = 0;

	shorts[ns++] = '+';
	for (size_t i = 0; i < NOPTS; i++) {
		const struct cli_option *opt = &opts_table[i];

		long_opts[i] = (struct option){ opt->name,
			opt->arg ? required_argument : no_argument, NULL, 256 + (int)i };
		if (opt->short_name) {
			shorts[ns++] = opt->short_name;
			if (opt->arg)
				shorts[ns++] = ':';
		}
	}
	long_opts[NOPTS] = (struct option){ NULL, 0, NULL, 0 };
	shorts[ns] = 0;
}

/* What the options mean together: conflicts, then the events. */
static int check_conflicts(struct cli_ctx *c)
{
	const struct pmutop_opts *o = c->o;
	char *err = c->err;
	size_t errlen = c->errlen;

	if (o->list_events)
		return parse_events(c->o, c->event_specs, c->nspecs, err, errlen);
	if (o->top && o->no_tui) {
		snprintf(err, errlen, "--top and --no-tui are exclusive: give one");
		return -EINVAL;
	}
	if (o->load) {
		if (o->pid || o->cmd) {
			snprintf(err, errlen, "--load shows a saved profile: give it without -p PID or a command");
			return -EINVAL;
		}
		if (o->dump && (o->top || o->dump_split)) {
			snprintf(err, errlen, "--load with --dump writes the saved profile in --dump's "
				 "format: --top and --dump-split do not apply");
			return -EINVAL;
		}
		if (cli_check_outputs(c->o, err, errlen))
			return -EINVAL;
		return parse_events(c->o, c->event_specs, c->nspecs, err, errlen);
	}
	if (o->pid && o->cmd) {
		snprintf(err, errlen, "give either -p PID or a command after --, not both");
		return -EINVAL;
	}
	if (!o->pid && !o->cmd) {
		snprintf(err, errlen, "nothing to profile: give -p PID, -- COMMAND or --load FILE (see --help)");
		return -EINVAL;
	}
	if (c->have_period && o->freq) {
		snprintf(err, errlen, "--period and -F are exclusive: give one");
		return -EINVAL;
	}
	if (o->json && !o->stacks) {
		snprintf(err, errlen, "--json applies to --stacks");
		return -EINVAL;
	}
	if (o->stacks && (o->cmd || o->dump || o->top || o->http || o->duration > 0)) {
		snprintf(err, errlen, "--stacks prints the stacks of -p PID once and exits: a command, "
			 "--dump, --top, --http and --duration do not apply");
		return -EINVAL;
	}
	if (o->dump_split && !o->dump) {
		snprintf(err, errlen, "--dump-split needs --dump FILE (files are FILE with the event "
			 "name added before the extension)");
		return -EINVAL;
	}
	if (cli_check_outputs(c->o, err, errlen))
		return -EINVAL;
	return parse_events(c->o, c->event_specs, c->nspecs, err, errlen);
}

int cli_parse(int argc, char **argv, struct pmutop_opts *o, FILE *out,
	      char *err, size_t errlen)
{
	struct cli_ctx ctx = { .o = o, .out = out, .err = err, .errlen = errlen };
	struct option long_opts[NOPTS + 1];
	char shorts[2 * NOPTS + 2];
	int c, r;

	getopt_tables(long_opts, shorts);
	cli_defaults(o);
	optind = 0; /* full reset, so the parser can run more than once */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, long_opts, NULL)) != -1) {
		const struct cli_option *opt = c == '?' ? NULL : option_of(c);

		if (!opt) {
			if (optopt && optopt < 256)
				snprintf(err, errlen, "unknown or incomplete option '-%c' (see --help)", optopt);
			else
				snprintf(err, errlen, "unknown or incomplete option \"%s\" (see --help)",
					 argv[optind - 1]);
			return -EINVAL;
		}
		r = opt->handle(&ctx, opt, optarg);
		if (r)
			return r;
	}

	if (optind < argc)
		o->cmd = &argv[optind];
	return check_conflicts(&ctx);
}

int cli_mode(const struct pmutop_opts *o, bool stdout_tty, enum pmutop_mode *mode,
	     char *err, size_t errlen)
{
	if (o->top && !stdout_tty) {
		snprintf(err, errlen, "--top needs a terminal, but stdout is not one "
			 "(drop --top to get the table, or run pmutop in a terminal)");
		return -EINVAL;
	}
	if (o->stacks || o->http)
		*mode = MODE_RECORD;  /* one-shot and server modes: never the live view */
	else if (o->load)
		*mode = !o->annotate && (o->top || (stdout_tty && !o->no_tui && !o->dump))
			? MODE_LOAD_TOP : MODE_LOAD_TABLE;
	else if (o->top || (stdout_tty && !o->no_tui && !o->dump && !o->annotate))
		*mode = MODE_TOP;
	else
		*mode = MODE_RECORD;
	return 0;
}
