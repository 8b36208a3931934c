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

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pmutop/frontend/cli_doc.h"
#include "pmutop/frontend/clickhouse.h"
#include "pmutop/frontend/cli_habits.h"
#include "pmutop/frontend/duration.h"
#include "pmutop/profile/aggregate.h"

#define DEFAULT_STACK_SIZE 16384
#define DEFAULT_MAX_DEPTH 512
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
	bool saw_g;             /* -g: say which unwinder answers it */
	bool threads;           /* --threads (py-spy) */
};

/* A one-line note for stderr (printed by main unless -q). */
static void note(struct cli_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct cli_ctx *c, const char *fmt, ...)
{
	va_list ap;

	if (c->o->nnotes == CLI_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(c->o->notes[c->o->nnotes++], sizeof(c->o->notes[0]), fmt, ap);
	va_end(ap);
}

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

static int h_rows(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	if (!strcmp(arg, "all")) {
		c->o->rows_all = true;
		c->o->top_rows = 0;
		return 0;
	}
	c->o->rows_all = false;
	return h_unsigned(c, opt, arg);
}

double cli_rows_min_cum(const struct pmutop_opts *o)
{
	return o->top_rows || o->rows_all ? 0 : CLI_ROWS_MIN_CUM;
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

/* -p PID or -p PID,PID,... (perf's syntax); repeated -p adds to the list. */
static int h_pid(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	const char *p = arg;

	do {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char one[32];
		uint64_t v;

		if (len == 0 || len >= sizeof(one)) {
			snprintf(c->err, c->errlen, "invalid pid list \"%s\" (expected PID or PID,PID,...)",
				 arg);
			return -EINVAL;
		}
		memcpy(one, p, len);
		one[len] = 0;
		if (opt_u64(c, opt, one, &v))
			return -EINVAL;
		if (c->o->npids == PMUTOP_MAX_PIDS) {
			snprintf(c->err, c->errlen, "too many pids for -p (at most %d)", PMUTOP_MAX_PIDS);
			return -EINVAL;
		}
		c->o->pids[c->o->npids++] = (pid_t)v;
		p = comma ? comma + 1 : NULL;
	} while (p);
	c->o->pid = c->o->pids[0];
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

/*
 * A duration option (duration.h: 500ms, 5s, 2m, 1h, or bare seconds) in
 * seconds within [min, max] (min excluded unless min_inclusive); the error
 * names the option, the value, the option's range and the accepted forms.
 */
static int opt_duration(struct cli_ctx *c, const char *what, const char *arg, double min,
			bool min_inclusive, double max, const char *range, double *out)
{
	double v;

	if (duration_parse(arg, &v) || v > max || (min_inclusive ? v < min : v <= min)) {
		snprintf(c->err, c->errlen, "invalid %s \"%s\" (expected %s, as " DURATION_FORMS ")",
			 what, arg, range);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int h_duration(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)opt;
	return opt_duration(c, "duration", arg, 0, false, 31536000,
			    "a duration more than 0 and at most 365 days", &c->o->duration);
}

static int h_dump_every(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)opt;
	return opt_duration(c, "--dump-every", arg, 1, true, 31536000,
			    "a duration from 1s to 365 days", &c->o->dump_every);
}

static int h_push(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	struct ch_url u;

	(void)opt;
	if (ch_url_parse(arg, &u, c->err, c->errlen))
		return -EINVAL;
	c->o->push = arg;
	return 0;
}

/* Columns of the samples table: not a --label key. */
static const char *const label_reserved[] = {
	"window_id", "ts", "start_ns", "duration_ns", "pid", "comm", "tid", "thread", "event",
	"unit", "stack_id", "samples", "value", "labels", "from", "to", NULL,
};

static int h_label(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t klen = eq ? (size_t)(eq - arg) : 0;

	(void)opt;
	if (c->o->nlabels == CLI_MAX_LABELS) {
		snprintf(c->err, c->errlen, "too many --label options (at most %d)", CLI_MAX_LABELS);
		return -EINVAL;
	}
	if (!eq || !klen || klen > 64 || strlen(eq + 1) > 256 || strchr(eq + 1, '=')) {
		snprintf(c->err, c->errlen, "invalid --label \"%.80s\" (expected KEY=VALUE with one "
			 "=, e.g. service=db; key up to 64 characters, value up to 256)", arg);
		return -EINVAL;
	}
	for (size_t i = 0; i < klen; i++)
		if (!isalnum((unsigned char)arg[i]) && arg[i] != '_') {
			snprintf(c->err, c->errlen, "invalid --label key \"%.*s\" (letters, digits "
				 "and _)", (int)klen, arg);
			return -EINVAL;
		}
	for (const char *v = eq + 1; *v; v++)
		if ((unsigned char)*v < 0x20 || *v == 0x7f) {
			snprintf(c->err, c->errlen, "invalid --label value for %.*s: no newlines or "
				 "control characters", (int)klen, arg);
			return -EINVAL;
		}
	for (size_t i = 0; label_reserved[i]; i++)
		if (strlen(label_reserved[i]) == klen && !strncmp(arg, label_reserved[i], klen)) {
			snprintf(c->err, c->errlen, "--label %s: that name is a column pmutop fills "
				 "itself (host may be set; pid, comm, tid, thread come from the target)",
				 label_reserved[i]);
			return -EINVAL;
		}
	for (size_t i = 0; i < c->o->nlabels; i++)
		if (!strncmp(c->o->labels[i], arg, klen + 1)) {
			snprintf(c->err, c->errlen, "--label %.*s given twice", (int)klen, arg);
			return -EINVAL;
		}
	c->o->labels[c->o->nlabels++] = arg;
	return 0;
}

static int h_refresh(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)opt;
	return opt_duration(c, "refresh interval", arg, 0.05, true, 3600,
			    "a duration from 50ms to 1h", &c->o->refresh);
}

static int h_debuginfo_wait(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)opt;
	return opt_duration(c, "debug info wait", arg, 0, true, 3600,
			    "a duration from 0 (no wait) to 1h", &c->o->debuginfo_wait);
}

/* A cap on ?seconds=, which takes whole seconds: so does the cap. */
static int h_http_max_seconds(struct cli_ctx *c, const struct cli_option *opt,
			      const char *arg)
{
	double v;

	(void)opt;
	if (opt_duration(c, "--http-max-seconds", arg, 1, true, 86400,
			 "whole seconds from 1s to 24h", &v))
		return -EINVAL;
	if (v != floor(v)) {
		snprintf(c->err, c->errlen, "invalid --http-max-seconds \"%s\" (expected whole "
			 "seconds from 1s to 24h, as 300, 5m or 1h: ?seconds= takes whole seconds)",
			 arg);
		return -EINVAL;
	}
	c->o->http_max_seconds = (unsigned)v;
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

/*
 * A size in bytes: a number with an optional unit, K/M/G (powers of 1024,
 * also KB/KiB, MB/MiB, GB/GiB), case-insensitive.
 */
static int h_max_memory(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	static const char *const units[][4] = {
		{ "", "b", NULL }, { "k", "kb", "kib", NULL }, { "m", "mb", "mib", NULL },
		{ "g", "gb", "gib", NULL },
	};
	unsigned long long v;
	char *end;
	int shift = -1;

	(void)opt;
	errno = 0;
	v = strtoull(arg, &end, 10);
	for (int u = 0; u < 4 && shift < 0 && end != arg && arg[0] != '-'; u++)
		for (int k = 0; k < 4 && units[u][k]; k++)
			if (!strcasecmp(end, units[u][k]))
				shift = 10 * u;
	if (shift < 0 || errno || v > (SIZE_MAX >> shift)) {
		snprintf(c->err, c->errlen, "invalid --max-memory \"%s\" (a size: 512M, 2G, 64MiB, "
			 "or bytes)", arg);
		return -EINVAL;
	}
	v <<= shift;
	if (v < AGG_MIN_MAX_MEMORY) {
		snprintf(c->err, c->errlen, "--max-memory \"%s\" is too small to hold a profile "
			 "(at least %uM)", arg, AGG_MIN_MAX_MEMORY >> 20);
		return -EINVAL;
	}
	c->o->max_memory = (size_t)v;
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

/* --format's names (py-spy's flamegraph and raw too), in the order errors list them. */
static const struct {
	const char *name;
	enum dump_format format;
} format_names[] = {
	{ "pprof", DUMP_PPROF }, { "folded", DUMP_FOLDED }, { "html", DUMP_HTML },
	{ "svg", DUMP_SVG }, { "speedscope", DUMP_SPEEDSCOPE },
	{ "collapsed", DUMP_FOLDED }, { "raw", DUMP_FOLDED }, { "flamegraph", DUMP_SVG },
};

const char *cli_format_name(enum dump_format f)
{
	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
		if (format_names[i].format == f)
			return format_names[i].name;
	return "pprof";
}

static int h_format(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)opt;
	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++) {
		if (!strcmp(arg, format_names[i].name)) {
			c->o->format = format_names[i].format;
			c->o->format_given = true;
			return 0;
		}
	}
	snprintf(c->err, c->errlen, "invalid format \"%s\" (expected pprof, folded, html, svg or "
		 "speedscope; py-spy's flamegraph and raw are svg and folded)", arg);
	return -EINVAL;
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

/* -t TID[,TID]: a comma list, each a thread id. */
static int h_tid(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	char buf[512], *save = NULL;
	uint64_t v;

	if (strlen(arg) >= sizeof(buf) || !*arg) {
		snprintf(c->err, c->errlen, "invalid tid list \"%.40s\" (expected TID[,TID...])", arg);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", arg);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (c->o->ntids == CLI_MAX_TIDS) {
			snprintf(c->err, c->errlen, "too many thread ids in -t (at most %d)", CLI_MAX_TIDS);
			return -EINVAL;
		}
		if (parse_u64("tid", t, opt->min, opt->max, &v, c->err, c->errlen))
			return -EINVAL;
		c->o->tids[c->o->ntids++] = (pid_t)v;
	}
	return 0;
}

static int h_threads(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)opt, (void)arg;
	c->threads = true;
	return 0;
}

/* perf's --call-graph dwarf[,SIZE] | fp | lbr. */
static int h_call_graph(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)opt;
	if (!strcmp(arg, "fp")) {
		c->o->unwind = UNWIND_ENGINE_FP;
	} else if (!strncmp(arg, "dwarf", 5) && (!arg[5] || arg[5] == ',')) {
		c->o->unwind = UNWIND_ENGINE_SNAPSHOT;
		if (arg[5] && h_stack_size(c, &(struct cli_option){ .name = "call-graph dwarf size",
			.off = offsetof(struct pmutop_opts, stack_size), .min = 64, .max = 65528 },
			arg + 6))
			return -EINVAL;
	} else if (!strcmp(arg, "lbr")) {
		snprintf(c->err, c->errlen, "--call-graph lbr: pmutop does not read the LBR; "
			 "use --call-graph dwarf (the default) or fp");
		return -EINVAL;
	} else {
		snprintf(c->err, c->errlen, "invalid --call-graph \"%s\" (expected dwarf[,BYTES] or fp, "
			 "as perf)", arg);
		return -EINVAL;
	}
	return 0;
}

static int h_g(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)opt, (void)arg;
	c->saw_g = true;
	return 0;
}

static int h_python(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)opt;
	if (!strcmp(arg, "on")) {
		c->o->python = PY_ON;
	} else if (!strcmp(arg, "off")) {
		c->o->python = PY_OFF;
	} else if (!strcmp(arg, "only")) {
		c->o->python = PY_ONLY;
	} else {
		snprintf(c->err, c->errlen, "invalid --python \"%s\" (expected on, off or only)", arg);
		return -EINVAL;
	}
	return 0;
}

static int h_native(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)c, (void)opt, (void)arg;
	return 0; /* what pmutop always does */
}

static int h_help(struct cli_ctx *c, const struct cli_option *opt, const char *arg)
{
	(void)opt, (void)arg;
	cli_print_help(c->out, c->o->verb);
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
#define ALL_BUT_DUMP (CLI_IN(CLI_VERB_NONE) | CLI_IN(CLI_VERB_RECORD) | CLI_IN(CLI_VERB_TOP))
#define SAMPLING ALL_BUT_DUMP
#define PLAIN CLI_IN(CLI_VERB_NONE)
#define PLAIN_RECORD (CLI_IN(CLI_VERB_NONE) | CLI_IN(CLI_VERB_RECORD))
#define PLAIN_TOP (CLI_IN(CLI_VERB_NONE) | CLI_IN(CLI_VERB_TOP))
#define PLAIN_DUMP (CLI_IN(CLI_VERB_NONE) | CLI_IN(CLI_VERB_DUMP))

/* Every option, in the order --help lists them within a group. */
static const struct cli_option opts_table[] = {
	{ .name = "pid", .short_name = 'p', .arg = "PID", .handle = h_pid, .min = 1,
	  .max = 4194304, .group = CLI_GROUP_TARGET, .complete = CLI_COMPLETE_PID,
	  .help = "profile the running process PID (all its threads, and the processes it "
		  "starts from now on; a thread id means its process, as in perf); PID,PID,... "
		  "profiles several" },
	{ .name = "all-cpus", .short_name = 'a', .handle = h_flag, .off = F(system_wide),
	  .group = CLI_GROUP_TARGET, .verbs = SAMPLING,
	  .help = "profile the whole machine: every process on every CPU (needs root, "
		  "CAP_PERFMON or kernel.perf_event_paranoid<=0); with a command, while it runs" },
	{ .name = "no-children", .handle = h_flag, .off = F(no_children),
	  .group = CLI_GROUP_TARGET, .verbs = SAMPLING | CLI_IN(CLI_VERB_DUMP),
	  .help = "profile only the target processes, not the processes they start (by "
		  "default children are followed through fork and exec; --stacks shows the "
		  "descendants too)" },
	{ .name = "subprocesses", .handle = h_flag, .off = F(subprocesses),
	  .group = CLI_GROUP_TARGET, .verbs = SAMPLING,
	  .help = "with -p, also attach to the descendants that already run (py-spy's flag)" },
	{ .name = "max-processes", .arg = "N", .handle = h_unsigned, .off = F(max_processes),
	  .min = 1, .max = 1000000, .group = CLI_GROUP_TARGET, .verbs = SAMPLING,
	  .help = "follow at most N processes at once (default 4096); more are counted as "
		  "not followed" },
	{ .name = "tid", .short_name = 't', .arg = "TID[,TID]", .handle = h_tid, .min = 1,
	  .max = 4194304, .group = CLI_GROUP_TARGET, .complete = CLI_COMPLETE_PID,
	  .verbs = SAMPLING,
	  .help = "only these threads (of one process), as perf -t: threads they create "
		  "later are not followed" },
	{ .name = "event", .short_name = 'e', .arg = "EVENT", .handle = h_event,
	  .group = CLI_GROUP_EVENTS, .complete = CLI_COMPLETE_EVENT, .verbs = SAMPLING,
	  .help = "event to sample on (default: cycles, or task-clock when this machine has no "
		  "hardware PMU); a comma list or repeated -e samples several at once; perf's "
		  "modifiers :u :k :h :G :H :p :pp :ppp :P" },
	{ .name = "period", .arg = "N", .handle = h_period, .min = 1, .max = 1ULL << 62,
	  .group = CLI_GROUP_EVENTS, .verbs = SAMPLING,
	  .help = "sample every N events (default: the event's preset; raised to what the "
		  "kernel can sample, with a warning)" },
	{ .name = "count", .short_name = 'c', .arg = "N", .handle = h_period, .min = 1,
	  .max = 1ULL << 62, .group = CLI_GROUP_EVENTS, .verbs = SAMPLING,
	  .help = "perf's name for --period" },
	{ .name = "freq", .short_name = 'F', .arg = "HZ", .handle = h_freq, .min = 1,
	  .max = 1000000, .group = CLI_GROUP_EVENTS, .verbs = SAMPLING,
	  .help = "sample at about HZ samples/s per thread instead (lowered to "
		  "kernel.perf_event_max_sample_rate, with a warning)" },
	{ .name = "rate", .short_name = 'r', .arg = "HZ", .handle = h_freq, .min = 1,
	  .max = 1000000, .group = CLI_GROUP_EVENTS, .verbs = SAMPLING,
	  .help = "py-spy's name for -F" },
	{ .name = "duration", .short_name = 'd', .arg = "DURATION", .handle = h_duration,
	  .group = CLI_GROUP_EVENTS, .verbs = SAMPLING,
	  .help = "stop after DURATION: 500ms, 5s, 2m, 1h, 1m30s, or a bare number of seconds "
		  "(default: until the target exits or SIGINT/SIGTERM)" },
	{ .name = "kernel", .handle = h_flag, .off = F(kernel), .group = CLI_GROUP_EVENTS,
	  .verbs = SAMPLING,
	  .help = "kernel frames, or an error saying why not (default: kernel frames where "
		  "allowed: root, CAP_PERFMON or perf_event_paranoid<=1)" },
	{ .name = "user-only", .handle = h_flag, .off = F(user_only), .group = CLI_GROUP_EVENTS,
	  .verbs = SAMPLING,
	  .help = "sample user mode only, no kernel frames (as -e EVENT:u)" },
	{ .name = "output", .short_name = 'o', .arg = "FILE", .handle = h_file, .off = F(dump),
	  .group = CLI_GROUP_OUTPUT, .complete = CLI_COMPLETE_FILE, .verbs = ALL_BUT_DUMP,
	  .help = "perf's and py-spy's name for --dump" },
	{ .name = "dump", .arg = "FILE", .handle = h_file, .off = F(dump),
	  .group = CLI_GROUP_OUTPUT, .complete = CLI_COMPLETE_FILE, .verbs = ALL_BUT_DUMP,
	  .help = "write the profile to FILE, in the format its name ends with: .pb.gz / .pprof "
		  "(gzip-compressed pprof; also a name without extension), .html (a flame graph "
		  "page), .folded (collapsed stacks); - is stdout (pprof unless --format says)" },
	{ .name = "dump-every", .arg = "DURATION", .handle = h_dump_every,
	  .group = CLI_GROUP_OUTPUT, .verbs = PLAIN_RECORD,
	  .help = "continuous profiling: one pprof profile per DURATION window (5m, 1h, "
		  "90s; a bare number is seconds; at least 1s) into the "
		  "directory --dump DIR/, named TARGET-PID-START.pb.gz (UTC window start); no "
		  "sample is lost or counted twice between windows" },
	{ .name = "keep", .arg = "N", .handle = h_unsigned, .off = F(keep), .min = 1,
	  .max = 1000000, .group = CLI_GROUP_OUTPUT, .verbs = PLAIN_RECORD,
	  .help = "with --dump-every: keep the N newest window profiles, remove older ones "
		  "(default: keep all)" },
	{ .name = "push", .arg = "URL", .handle = h_push, .group = CLI_GROUP_OUTPUT,
	  .verbs = PLAIN_RECORD,
	  .help = "fleet agent: insert every window (--dump-every SEC, or the whole run) into "
		  "ClickHouse, URL clickhouse://[USER[:PASS]@]HOST[:PORT]/DATABASE (HTTP, port "
		  "8123; or PMUTOP_CLICKHOUSE_USER/_PASSWORD); the schema is created when missing; "
		  "sent by a thread of its own, in order, again after a failure (README 'A fleet in "
		  "ClickHouse')" },
	{ .name = "label", .arg = "KEY=VALUE", .handle = h_label, .group = CLI_GROUP_OUTPUT,
	  .verbs = PLAIN_RECORD,
	  .help = "with --push: a label on every row (service=db, region=eu); repeatable; "
		  "host=NAME replaces the machine's name" },
	{ .name = "spool", .arg = "DIR", .handle = h_file, .off = F(spool),
	  .group = CLI_GROUP_OUTPUT, .complete = CLI_COMPLETE_FILE, .verbs = PLAIN_RECORD,
	  .help = "with --push: windows the server cannot take yet, beyond --push-queue, wait "
		  "in DIR (ours, mode 0700; one file per window) and are sent first when it answers, "
		  "also by a later run" },
	{ .name = "by", .arg = "LABEL", .handle = h_file, .off = F(by), .group = CLI_GROUP_VIEW,
	  .verbs = PLAIN_RECORD,
	  .help = "with --load clickhouse://...: the fleet's top view, one row per value of "
		  "LABEL (host, comm, thread, pid, or a --label key such as service): its share, "
		  "samples and hottest function" },
	{ .name = "push-queue", .arg = "N", .handle = h_unsigned, .off = F(push_queue), .min = 1,
	  .max = 100000, .group = CLI_GROUP_OUTPUT, .verbs = PLAIN_RECORD,
	  .help = "with --push: windows kept in memory while the server is down or slow "
		  "(default 16); beyond them --spool, else newer windows are dropped (counted)" },
	{ .name = "max-memory", .arg = "SIZE", .handle = h_max_memory,
	  .group = CLI_GROUP_OUTPUT, .verbs = SAMPLING,
	  .help = "memory budget of the profile being built (default 256M; K, M, G): nothing "
		  "is merged below it; over it, leaf address detail goes first, then exited "
		  "threads fold into their names, then cold subtrees become [N cold frames "
		  "pruned] under their caller - all counted in the summary" },
	{ .name = "dump-split", .handle = h_flag, .off = F(dump_split),
	  .group = CLI_GROUP_OUTPUT, .verbs = ALL_BUT_DUMP,
	  .help = "with several events: one file per event (FILE.pb.gz -> FILE.EVENT.pb.gz)" },
	{ .name = "format", .short_name = 'f', .arg = "FMT", .handle = h_format,
	  .group = CLI_GROUP_OUTPUT, .complete = CLI_COMPLETE_CHOICES,
	  .choices = "pprof folded html svg speedscope flamegraph raw", .verbs = ALL_BUT_DUMP,
	  .help = "what --dump writes, whatever its name: pprof, folded (collapsed stacks: "
		  "flamegraph.pl, inferno), html (a self-contained flame graph page), svg (a "
		  "flamegraph.pl-style SVG: click to zoom, Ctrl-F to search) or speedscope "
		  "(speedscope's JSON); py-spy's -f flamegraph and raw are svg and folded" },
	{ .name = "diff-base", .arg = "OLD", .handle = h_file, .off = F(diff_base),
	  .group = CLI_GROUP_OUTPUT, .complete = CLI_COMPLETE_FILE, .verbs = PLAIN_RECORD,
	  .help = "with an html --dump: a differential flame graph, widths from this profile, "
		  "red/blue by each frame's growth/shrink since the saved profile OLD (as "
		  "pprof -diff_base)" },
	{ .name = "folded-threads", .handle = h_flag, .off = F(folded_threads),
	  .group = CLI_GROUP_OUTPUT, .verbs = ALL_BUT_DUMP,
	  .help = "with --format folded: thread name as the root frame" },
	{ .name = "folded-processes", .handle = h_flag, .off = F(folded_processes),
	  .group = CLI_GROUP_OUTPUT, .verbs = ALL_BUT_DUMP,
	  .help = "with --format folded: the process (COMM-PID) as the root frame (above the "
		  "thread with --folded-threads)" },
	{ .name = "by-process", .handle = h_flag, .off = F(by_process), .group = CLI_GROUP_OUTPUT,
	  .verbs = PLAIN_RECORD,
	  .help = "the table starts with one row per process (pid, command, samples, share, and "
		  "IPC~/miss%~ with several events); printed anyway when several processes had "
		  "samples" },
	{ .name = "threads", .handle = h_threads, .group = CLI_GROUP_OUTPUT,
	  .verbs = ALL_BUT_DUMP,
	  .help = "py-spy's --threads: folded stacks get the thread as root frame (pprof "
		  "profiles always carry thread and tid labels)" },
	{ .name = "table-file", .arg = "FILE", .handle = h_file, .off = F(table_file),
	  .group = CLI_GROUP_OUTPUT, .complete = CLI_COMPLETE_FILE, .verbs = PLAIN_RECORD,
	  .help = "write the table to FILE (default: stdout when attached with -p, stderr when "
		  "running a command, so the command's own output stays as it is)" },
	{ .name = "rows", .arg = "N|all", .handle = h_rows, .off = F(top_rows), .min = 1,
	  .max = 1000000, .group = CLI_GROUP_OUTPUT, .verbs = PLAIN_RECORD,
	  .help = "rows of the table printed without --dump: the top N, or all (default: "
		  "functions under 0.5% of the total are hidden, as go tool pprof -top does, "
		  "with a line saying how many)" },
	{ .name = "quiet", .short_name = 'q', .handle = h_flag, .off = F(quiet),
	  .group = CLI_GROUP_OUTPUT,
	  .help = "no summary or notes on stderr" },
	{ .name = "top", .handle = h_flag, .off = F(top), .group = CLI_GROUP_VIEW,
	  .verbs = PLAIN,
	  .help = "the live view even with --dump (FILE is written on quit)" },
	{ .name = "no-tui", .handle = h_flag, .off = F(no_tui), .group = CLI_GROUP_VIEW,
	  .verbs = PLAIN_RECORD,
	  .help = "no live view: print the table at the end" },
	{ .name = "refresh", .arg = "DURATION", .handle = h_refresh, .group = CLI_GROUP_VIEW,
	  .verbs = PLAIN_TOP,
	  .help = "live view refresh interval: 500ms, 2s, or a bare number of seconds "
		  "(default 1s)" },
	{ .name = "load", .arg = "FILE", .handle = h_file, .off = F(load),
	  .group = CLI_GROUP_VIEW, .complete = CLI_COMPLETE_FILE, .verbs = PLAIN_TOP,
	  .help = "show a saved pprof profile (live view on a terminal, else the table)" },
	{ .name = "annotate", .arg = "FUNCTION", .handle = h_name, .off = F(annotate),
	  .group = CLI_GROUP_VIEW, .verbs = PLAIN_RECORD,
	  .help = "instead of the table, list FUNCTION's instructions with each recorded "
		  "event's share per instruction, source lines and CPI~ per basic block (with "
		  "--load, or at the end of a recording)" },
	{ .name = "debuginfo-wait", .arg = "DURATION", .handle = h_debuginfo_wait,
	  .group = CLI_GROUP_STACKS, .verbs = SAMPLING,
	  .help = "at the end, wait at most DURATION (500ms, 10s, 1m; a bare number is "
		  "seconds) for debug info still being read (a huge "
		  "debug file; default 10s, 2s in the live view; 0: not at all): what is not "
		  "read by then is written without file:line" },
	{ .name = "no-debuginfod", .handle = h_flag, .off = F(no_debuginfod),
	  .group = CLI_GROUP_STACKS,
	  .help = "never fetch debug files or binaries from the debuginfod servers named in "
		  "DEBUGINFOD_URLS (as if it were unset): names of stripped code stay addresses" },
	{ .name = "unwind", .arg = "ENGINE", .handle = h_unwind, .group = CLI_GROUP_STACKS,
	  .complete = CLI_COMPLETE_CHOICES, .choices = "snapshot ptrace fp", .verbs = SAMPLING,
	  .help = "how stacks are taken: snapshot (default; the kernel copies registers + "
		  "--stack-size bytes of stack, DWARF unwind), ptrace (stop the thread at each "
		  "sample and read it live; one tracer per process) or fp (the kernel's "
		  "frame-pointer walk: cheapest, needs -fno-omit-frame-pointer code)" },
	{ .name = "call-graph", .arg = "MODE", .handle = h_call_graph, .group = CLI_GROUP_STACKS,
	  .complete = CLI_COMPLETE_CHOICES, .choices = "dwarf fp", .verbs = SAMPLING,
	  .help = "perf's spelling: dwarf[,BYTES] = --unwind snapshot [--stack-size BYTES], "
		  "fp = --unwind fp" },
	{ .short_name = 'g', .handle = h_g, .group = CLI_GROUP_STACKS, .verbs = SAMPLING,
	  .help = "perf's -g: accepted (pmutop always records call stacks; --unwind says how)" },
	{ .name = "python", .arg = "MODE", .handle = h_python, .group = CLI_GROUP_STACKS,
	  .complete = CLI_COMPLETE_CHOICES, .choices = "on off only",
	  .verbs = SAMPLING | CLI_IN(CLI_VERB_DUMP),
	  .help = "Python frames of a CPython 3.11 target, read from its interpreter: on "
		  "(default; in place of the interpreter loop's frames, as py-spy --native), "
		  "only (Python frames alone, as py-spy) or off (native frames only)" },
	{ .name = "native", .short_name = 'n', .handle = h_native, .group = CLI_GROUP_STACKS,
	  .help = "py-spy's --native: accepted (pmutop always unwinds native frames)" },
	{ .name = "nonblocking", .handle = h_flag, .off = F(nonblocking),
	  .group = CLI_GROUP_STACKS, .verbs = SAMPLING,
	  .help = "py-spy's --nonblocking: never stop the target (the default --unwind "
		  "snapshot does not; refused with --unwind ptrace)" },
	{ .name = "stack-size", .arg = "BYTES", .handle = h_stack_size, .off = F(stack_size),
	  .min = 64, .max = 65528, .group = CLI_GROUP_STACKS, .verbs = SAMPLING,
	  .help = "user stack copied per sample (default " STR(DEFAULT_STACK_SIZE)
		  ", max 65528)" },
	{ .name = "max-depth", .arg = "N", .handle = h_unsigned, .off = F(max_depth), .min = 1,
	  .max = 4096, .group = CLI_GROUP_STACKS,
	  .help = "frames per stack at most (default " STR(DEFAULT_MAX_DEPTH) ")" },
	{ .name = "mmap-pages", .short_name = 'm', .arg = "N", .handle = h_mmap_pages,
	  .off = F(mmap_pages), .min = 1, .max = 65536, .group = CLI_GROUP_STACKS,
	  .verbs = SAMPLING,
	  .help = "ring buffer data pages per CPU, a power of 2 (default: 128, what a non-root "
		  "user may lock; as root 1024 with the stack copy, else 512, at most 64 MiB over all "
		  "CPUs)" },
	{ .name = "stacks", .handle = h_flag, .off = F(stacks), .group = CLI_GROUP_STACKS,
	  .verbs = PLAIN,
	  .help = "print the current stack of every thread of -p PID and of its descendants "
		  "(--no-children: PID's only) once and exit (ptrace; like py-spy dump / eu-stack; "
		  "= pmutop dump)" },
	{ .name = "json", .handle = h_flag, .off = F(json), .group = CLI_GROUP_STACKS,
	  .verbs = PLAIN_DUMP,
	  .help = "with --stacks: JSON instead of text" },
	{ .name = "http", .arg = "ADDR:PORT", .handle = h_http, .group = CLI_GROUP_HTTP,
	  .verbs = PLAIN,
	  .help = "serve /debug/pprof/profile?seconds=N&event=E&period=P for -p PID (Go's "
		  "endpoint; loopback unless ADDR says)" },
	{ .name = "http-max-seconds", .arg = "DURATION", .handle = h_http_max_seconds,
	  .group = CLI_GROUP_HTTP, .verbs = PLAIN,
	  .help = "longest profile a request may ask for, in whole seconds: 300, 5m, 1h "
		  "(default 300; ?seconds= itself is a plain number, as Go's)" },
	{ .name = "http-token", .arg = "TOKEN", .handle = h_word, .off = F(http_token),
	  .group = CLI_GROUP_HTTP, .verbs = PLAIN,
	  .help = "the token requests need (?token=TOKEN or Authorization: Bearer TOKEN): of "
		  "every request off loopback, on loopback of users other than root and "
		  "pmutop's own; a random one is made and printed otherwise; 'none' turns it "
		  "off" },
	{ .name = "http-allow-host", .arg = "NAME", .handle = h_word, .off = F(http_allow_host),
	  .group = CLI_GROUP_HTTP, .verbs = PLAIN,
	  .help = "also accept requests whose Host header is NAME (default: IP addresses, "
		  "localhost and this machine's name; others get 403, against DNS rebinding)" },
	{ .name = "list-events", .handle = h_flag, .off = F(list_events),
	  .group = CLI_GROUP_INFO, .verbs = PLAIN,
	  .help = "print the events usable on this machine and exit" },
	{ .name = "help", .short_name = 'h', .handle = h_help, .group = CLI_GROUP_INFO,
	  .help = "this text (pmutop VERB --help: that verb's)" },
	{ .name = "version", .short_name = 'V', .handle = h_version, .group = CLI_GROUP_INFO,
	  .help = "print the version and exit" },
	{ .name = "print-man", .handle = h_print_man, .group = CLI_GROUP_HIDDEN, .verbs = PLAIN,
	  .help = "print the man page pmutop.1 (the build installs it)" },
	{ .name = "print-completion", .handle = h_print_completion, .group = CLI_GROUP_HIDDEN,
	  .verbs = PLAIN,
	  .help = "print the bash completion script (the build installs it)" },
};

#undef F
#define NOPTS (sizeof(opts_table) / sizeof(opts_table[0]))

const struct cli_option *cli_option_at(size_t i)
{
	return i < NOPTS ? &opts_table[i] : NULL;
}

bool cli_option_in(const struct cli_option *opt, enum cli_verb verb)
{
	return !opt->verbs || (opt->verbs & CLI_IN(verb));
}

static const char *const verb_names[CLI_NVERBS] = {
	[CLI_VERB_NONE] = "", [CLI_VERB_RECORD] = "record", [CLI_VERB_TOP] = "top",
	[CLI_VERB_DUMP] = "dump",
};

const char *cli_verb_name(enum cli_verb verb)
{
	return verb < CLI_NVERBS ? verb_names[verb] : "";
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
	{ ".svg", DUMP_SVG }, { ".speedscope.json", DUMP_SPEEDSCOPE }, { ".json", DUMP_SPEEDSCOPE },
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
		 ".prof: pprof; .html: flame graph page; .svg: SVG flame graph; .folded, .collapsed: "
		 "folded stacks; .json: speedscope; or say which with --format "
		 "pprof|folded|html|svg|speedscope)", path, dot);
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
	if (o->format != DUMP_PPROF && !o->dump) {
		snprintf(err, errlen, "--format %s needs --dump FILE (the %s goes there)",
			 cli_format_name(o->format), o->format == DUMP_HTML ? "page" :
			 o->format == DUMP_FOLDED ? "folded stacks" : "file");
		return -EINVAL;
	}
	if (o->format != DUMP_PPROF && o->dump_split) {
		snprintf(err, errlen, o->format == DUMP_HTML ? "a flame graph page holds every event: "
			 "drop --dump-split" : "--format %s writes one file: drop --dump-split",
			 cli_format_name(o->format));
		return -EINVAL;
	}
	if (o->format != DUMP_PPROF && o->top) {
		snprintf(err, errlen, o->format == DUMP_HTML ? "the flame graph page is written by the "
			 "batch mode only: drop --top" : "--format %s is written by the batch mode "
			 "only: drop --top", cli_format_name(o->format));
		return -EINVAL;
	}
	if (o->diff_base && (!o->dump || o->format != DUMP_HTML)) {
		snprintf(err, errlen, "--diff-base makes a differential flame graph: give --dump "
			 "FILE.html (or --format html)");
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
	if (o->keep && !o->dump_every) {
		snprintf(err, errlen, "--keep applies to --dump-every");
		return -EINVAL;
	}
	if ((o->nlabels || o->spool || o->push_queue) && !o->push) {
		snprintf(err, errlen, "--label, --spool and --push-queue apply to --push");
		return -EINVAL;
	}
	if (o->push && (o->top || o->http || o->stacks)) {
		snprintf(err, errlen, "--push sends the windows of a batch run: --top, --http and "
			 "--stacks do not apply");
		return -EINVAL;
	}
	if (o->dump_every && !o->dump && o->push) {
		/* windows pushed only */
	} else if (o->dump_every && (!o->dump || !*o->dump || o->dump[strlen(o->dump) - 1] != '/')) {
		snprintf(err, errlen, "--dump-every writes one file per window: give --dump DIR/ "
			 "(a directory, with its trailing /)");
		return -EINVAL;
	}
	if (o->dump_every && (o->top || o->http || o->dump_split || o->format_given)) {
		snprintf(err, errlen, "--dump-every writes pprof window profiles in batch mode: "
			 "drop --top, --http, --dump-split and --format");
		return -EINVAL;
	}
	if (o->folded_processes && o->format != DUMP_FOLDED) {
		snprintf(err, errlen, "--folded-processes applies to --format folded");
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
	if (o->annotate && o->dump && o->format != DUMP_PPROF && o->format != DUMP_HTML) {
		snprintf(err, errlen, "--annotate prints a listing: drop --format %s",
			 cli_format_name(o->format));
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
		.debuginfo_wait = -1,
		.http_max_seconds = 300,
		.python = PY_ON,
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
	size_t ns = 0, nl = 0;

	shorts[ns++] = '+';
	for (size_t i = 0; i < NOPTS; i++) {
		const struct cli_option *opt = &opts_table[i];

		if (opt->name)
			long_opts[nl++] = (struct option){ opt->name,
				opt->arg ? required_argument : no_argument, NULL, 256 + (int)i };
		if (opt->short_name) {
			shorts[ns++] = opt->short_name;
			if (opt->arg)
				shorts[ns++] = ':';
		}
	}
	long_opts[nl] = (struct option){ NULL, 0, NULL, 0 };
	shorts[ns] = 0;
}

/* What the options mean together: conflicts, then the events. */
/* What the verbs and perf/py-spy habits mean in pmutop's own options. */
static int apply_habits(struct cli_ctx *c)
{
	struct pmutop_opts *o = c->o;

	switch (o->verb) {
	case CLI_VERB_RECORD:
		o->no_tui = true;
		break;
	case CLI_VERB_TOP:
		o->top = true;
		break;
	case CLI_VERB_DUMP:
		o->stacks = true;
		if (!o->pid) {
			snprintf(c->err, c->errlen, "pmutop dump needs -p PID (the process whose "
				 "threads' stacks to print)");
			return -EINVAL;
		}
		break;
	default:
		break;
	}
	if (c->threads && o->dump) {
		/* py-spy's --threads: what the output can show (pprof has thread labels anyway) */
		enum dump_format f = o->format;

		if (o->format_given || !cli_dump_format(o->dump, &f, c->err, c->errlen))
			o->folded_threads = f == DUMP_FOLDED;
		c->err[0] = 0;
	}
	if (o->nonblocking && o->unwind == UNWIND_ENGINE_PTRACE) {
		snprintf(c->err, c->errlen, "--nonblocking and --unwind ptrace are exclusive: ptrace "
			 "stops each thread at every sample (drop one)");
		return -EINVAL;
	}
	if (c->saw_g)
		note(c, "-g: pmutop always records call stacks; this run unwinds them %s",
		     o->unwind == UNWIND_ENGINE_FP ? "with the kernel's frame-pointer walk (--unwind fp)" :
		     o->unwind == UNWIND_ENGINE_PTRACE ? "by stopping each thread (--unwind ptrace)" :
		     "with DWARF CFI from a copy of the user stack (--unwind snapshot; "
		     "--call-graph fp for frame pointers)");
	if (o->ntids && o->cmd) {
		snprintf(c->err, c->errlen, "-t TID selects threads of a running process: give it "
			 "without a command");
		return -EINVAL;
	}
	return 0;
}

static int check_conflicts(struct cli_ctx *c)
{
	const struct pmutop_opts *o = c->o;
	char *err = c->err;
	size_t errlen = c->errlen;

	if (apply_habits(c))
		return -EINVAL;
	if (o->list_events)
		return parse_events(c->o, c->event_specs, c->nspecs, err, errlen);
	if (o->top && o->no_tui) {
		snprintf(err, errlen, "--top and --no-tui are exclusive: give one");
		return -EINVAL;
	}
	if (o->kernel && o->user_only) {
		snprintf(err, errlen, "--kernel and --user-only are exclusive: give one");
		return -EINVAL;
	}
	if (o->by && (!o->load || !ch_url_is(o->load) || o->dump || o->top || o->annotate)) {
		snprintf(err, errlen, "--by makes the fleet's per-label table of --load "
			 "clickhouse://...: give that, without --dump, --top or --annotate");
		return -EINVAL;
	}
	if (o->annotate && o->load && ch_url_is(o->load)) {
		snprintf(err, errlen, "--annotate needs a profile with addresses in files on this "
			 "machine; a ClickHouse slice has module offsets only: --dump it, or annotate a "
			 "host's own profile");
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
	if (o->system_wide && o->pid) {
		snprintf(err, errlen, "-a profiles every process already: drop -p");
		return -EINVAL;
	}
	if (!o->pid && !o->cmd && !o->ntids && !o->system_wide && o->http) {
		snprintf(err, errlen, "--http serves profiles of a running process: give -p PID "
			 "(e.g. pmutop --http %s -p $(pidof SERVER))", o->http);
		return -EINVAL;
	}
	if (!o->pid && !o->cmd && !o->ntids && !o->system_wide) {
		snprintf(err, errlen, "nothing to profile: give -p PID, -- COMMAND, -a or --load FILE "
			 "(see --help)");
		return -EINVAL;
	}
	if (o->subprocesses && !o->pid) {
		snprintf(err, errlen, "--subprocesses applies to -p PID (a command's children are "
			 "followed from their start)");
		return -EINVAL;
	}
	if (o->subprocesses && o->no_children) {
		snprintf(err, errlen, "--subprocesses and --no-children are exclusive: give one");
		return -EINVAL;
	}
	if (o->system_wide && (o->unwind == UNWIND_ENGINE_PTRACE || o->stacks || o->http)) {
		snprintf(err, errlen, "-a samples every CPU: --unwind=ptrace, --stacks and --http "
			 "need -p PID");
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

/* How an option is named in messages: "--name", or "-c" for a short-only row. */
static const char *option_label(const struct cli_option *opt, char *buf, size_t len)
{
	if (opt->name)
		snprintf(buf, len, "--%s", opt->name);
	else
		snprintf(buf, len, "-%c", opt->short_name);
	return buf;
}

/* getopt_long said '?': an unknown option, or one missing its argument. */
static int bad_option(struct cli_ctx *c, char **argv)
{
	const struct cli_option *opt = option_of(optopt);
	char label[64], shortopt[3] = { '-', (char)optopt, 0 };

	if (opt && opt->arg) {
		snprintf(c->err, c->errlen, "%s needs an argument (%s)",
			 optopt < 256 ? shortopt : option_label(opt, label, sizeof(label)), opt->arg);
		return -EINVAL;
	}
	cli_habits_unknown_option(optopt && optopt < 256 ? shortopt : argv[optind - 1], c->err,
				  c->errlen);
	return -EINVAL;
}

static enum cli_verb verb_of(const char *word)
{
	for (int v = CLI_VERB_NONE + 1; v < CLI_NVERBS; v++)
		if (!strcmp(word, verb_names[v]))
			return (enum cli_verb)v;
	return CLI_VERB_NONE;
}

int cli_parse(int argc, char **argv, struct pmutop_opts *o, FILE *out,
	      char *err, size_t errlen)
{
	struct cli_ctx ctx = { .o = o, .out = out, .err = err, .errlen = errlen };
	struct option long_opts[NOPTS + 1];
	char shorts[2 * NOPTS + 2], label[64];
	int c, r, skip = 0;

	getopt_tables(long_opts, shorts);
	cli_defaults(o);
	/* py-spy's verbs: "pmutop record ..." parses the rest as record's options. */
	if (argc > 1 && argv[1]) {
		if (!strcmp(argv[1], "help")) {
			/* "pmutop help [VERB]" as git and perf answer it */
			o->verb = argc > 2 && argv[2] ? verb_of(argv[2]) : CLI_VERB_NONE;
			cli_print_help(out, o->verb);
			return 1;
		}
		o->verb = verb_of(argv[1]);
		skip = o->verb != CLI_VERB_NONE;
	}
	optind = 0; /* full reset, so the parser can run more than once */
	opterr = 0;
	while ((c = getopt_long(argc - skip, argv + skip, shorts, long_opts, NULL)) != -1) {
		const struct cli_option *opt = c == '?' ? NULL : option_of(c);

		if (!opt)
			return bad_option(&ctx, argv + skip);
		if (!cli_option_in(opt, o->verb)) {
			if (c < 256)
				snprintf(label, sizeof(label), "-%c", c);
			snprintf(err, errlen, "%s does not apply to pmutop %s (see pmutop %s --help)",
				 c < 256 ? label : option_label(opt, label, sizeof(label)),
				 cli_verb_name(o->verb),
				 cli_verb_name(o->verb));
			return -EINVAL;
		}
		r = opt->handle(&ctx, opt, optarg);
		if (r)
			return r;
	}

	if (optind + skip < argc) {
		o->cmd = &argv[optind + skip];
		/* perf's other commands are answered, unless "--" said "launch this" */
		if (strcmp(argv[optind + skip - 1], "--") &&
		    cli_habits_command_word(o->cmd[0], err, errlen))
			return -EINVAL;
	}
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
	else if (o->load && o->by)
		*mode = MODE_LOAD_TABLE;
	else if (o->load)
		*mode = !o->annotate && (o->top || (stdout_tty && !o->no_tui && !o->dump))
			? MODE_LOAD_TOP : MODE_LOAD_TABLE;
	else if (o->top || (stdout_tty && !o->no_tui && !o->dump && !o->annotate))
		*mode = MODE_TOP;
	else
		*mode = MODE_RECORD;
	return 0;
}
