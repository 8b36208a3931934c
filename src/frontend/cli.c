/*
 * cli.c - parse pmutop's command line into struct pmutop_opts.
 *
 * Every numeric option is parsed with strtoull/strtod plus a range check and
 * rejected with the offending text quoted; conflicts are checked in one
 * place at the end. Nothing here touches the target.
 */
#include "pmutop/frontend/cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_STACK_SIZE 16384
#define DEFAULT_MAX_DEPTH 128
#define DEFAULT_REFRESH 1.0

enum {
	OPT_PERIOD = 256,
	OPT_DURATION,
	OPT_DUMP,
	OPT_STACK_SIZE,
	OPT_MAX_DEPTH,
	OPT_MMAP_PAGES,
	OPT_KERNEL,
	OPT_ROWS,
	OPT_VERSION,
	OPT_LIST_EVENTS,
	OPT_DUMP_SPLIT,
	OPT_TOP,
	OPT_NO_TUI,
	OPT_REFRESH,
	OPT_LOAD,
	OPT_FORMAT,
	OPT_FOLDED_THREADS,
	OPT_HTTP,
	OPT_HTTP_MAX_SECONDS,
	OPT_UNWIND,
	OPT_STACKS,
	OPT_JSON,
};

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "event", required_argument, NULL, 'e' },
	{ "period", required_argument, NULL, OPT_PERIOD },
	{ "freq", required_argument, NULL, 'F' },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "dump", required_argument, NULL, OPT_DUMP },
	{ "stack-size", required_argument, NULL, OPT_STACK_SIZE },
	{ "max-depth", required_argument, NULL, OPT_MAX_DEPTH },
	{ "mmap-pages", required_argument, NULL, OPT_MMAP_PAGES },
	{ "rows", required_argument, NULL, OPT_ROWS },
	{ "kernel", no_argument, NULL, OPT_KERNEL },
	{ "quiet", no_argument, NULL, 'q' },
	{ "top", no_argument, NULL, OPT_TOP },
	{ "no-tui", no_argument, NULL, OPT_NO_TUI },
	{ "refresh", required_argument, NULL, OPT_REFRESH },
	{ "load", required_argument, NULL, OPT_LOAD },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "folded-threads", no_argument, NULL, OPT_FOLDED_THREADS },
	{ "http", required_argument, NULL, OPT_HTTP },
	{ "http-max-seconds", required_argument, NULL, OPT_HTTP_MAX_SECONDS },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ "stacks", no_argument, NULL, OPT_STACKS },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "list-events", no_argument, NULL, OPT_LIST_EVENTS },
	{ "dump-split", no_argument, NULL, OPT_DUMP_SPLIT },
	{ NULL, 0, NULL, 0 },
};

static void print_help(FILE *out)
{
	fprintf(out,
"Usage: pmutop -p PID [options]\n"
"       pmutop [options] -- COMMAND [ARGS...]\n"
"       pmutop --load PROFILE.pb.gz\n"
"\n"
"Sample every thread of a process on a hardware performance counter (or a\n"
"software clock), unwind each sample's user stack remotely, and report where\n"
"the events happen: in a live view when stdout is a terminal, as a pprof\n"
"profile (--dump), or as a flat/cumulative table at the end.\n"
"\n"
"Options:\n"
"  -p, --pid PID          profile the running process PID (all its threads)\n"
"  -e, --event EVENT      event to sample on (default: cycles, or task-clock\n"
"                         when this machine has no hardware PMU); a comma\n"
"                         list or repeated -e samples several at once\n"
"      --list-events      print the events usable on this machine and exit\n"
"      --period N         sample every N events (default: the event's preset)\n"
"  -F, --freq HZ          sample at about HZ samples/s per thread instead\n"
"      --duration SEC     stop after SEC seconds (default: until the target\n"
"                         exits or SIGINT/SIGTERM)\n"
"      --dump FILE        write a gzip-compressed pprof profile to FILE\n"
"      --dump-split       with several events: one file per event\n"
"                         (FILE.pb.gz -> FILE.EVENT.pb.gz)\n"
"      --stack-size BYTES user stack copied per sample (default %d, max 65528)\n"
"      --max-depth N      frames per stack at most (default %d)\n"
"      --mmap-pages N     ring buffer data pages per CPU, a power of 2\n"
"                         (default: 128, what a non-root user may lock; 512 as root)\n"
"      --rows N           rows of the table printed without --dump (default: all)\n"
"      --kernel           also sample in kernel mode (needs perf_event_paranoid<=1)\n"
"      --unwind ENGINE    how stacks are taken: snapshot (default; the kernel\n"
"                         copies registers + --stack-size bytes of stack, DWARF\n"
"                         unwind), ptrace (stop the thread at each sample and\n"
"                         read it live; one tracer per process) or fp (the\n"
"                         kernel's frame-pointer walk: cheapest, needs -fno-omit-\n"
"                         frame-pointer code)\n"
"      --stacks           print the current stack of every thread of -p PID once\n"
"                         and exit (ptrace; like py-spy dump / eu-stack)\n"
"      --json             with --stacks: JSON instead of text\n"
"  -q, --quiet            no summary on stderr\n"
"      --top              the live view even with --dump (FILE is written on quit)\n"
"      --no-tui           no live view: print the table at the end\n"
"      --refresh SEC      live view refresh interval (default 1)\n"
"      --load FILE        show a saved pprof profile (live view on a terminal,\n"
"                         else the table)\n"
"      --format FMT       what --dump writes: pprof (default) or folded\n"
"                         (collapsed stacks: flamegraph.pl, inferno, speedscope)\n"
"      --folded-threads   with --format folded: thread name as the root frame\n"
"      --http ADDR:PORT   serve /debug/pprof/profile?seconds=N&event=E&period=P\n"
"                         for -p PID (Go's endpoint; loopback unless ADDR says)\n"
"      --http-max-seconds N  longest profile a request may ask for (default 300)\n"
"  -h, --help             this text\n"
"      --version          version\n"
"\n"
"Events (preset period in parentheses):\n",
		DEFAULT_STACK_SIZE, DEFAULT_MAX_DEPTH);
	for (size_t i = 0; events_builtin(i); i++) {
		const struct pmu_event *ev = events_builtin(i);
		fprintf(out, "  %-26s (%llu %s)\n", ev->name,
			(unsigned long long)ev->preset_period,
			ev->hardware ? "events" : (strcmp(ev->unit, "nanoseconds") ? "events" : "ns"));
	}
	fprintf(out,
"  rUUEE, r0xUUEE             raw PMU event code (100000)\n"
"  perf spellings are accepted too: cpu-cycles, cache-misses, branch-misses, ...\n"
"\n"
"Examples:\n"
"  pmutop -p 1234 -e branchMisses                   live view of branch misses\n"
"  pmutop -p 1234 --no-tui --duration 5             table of 5 seconds\n"
"  pmutop -p 1234 --dump prof.pb.gz --top           live view, profile on quit\n"
"  pmutop --load prof.pb.gz                         browse a saved profile\n"
"  pmutop -p 1234 -e cycles --dump prof.pb.gz --duration 10\n"
"  pmutop -e cacheMisses -- ./my_program args       launch and profile\n"
"  pmutop --stacks -p 1234                          where is every thread now?\n"
"  pmutop -p 1234 --unwind=fp --dump prof.pb.gz     frame-pointer stacks\n"
"  go tool pprof -top prof.pb.gz                    read a profile\n");
}

/* Conflicts of --format, --folded-threads and --http with the rest. */
static int cli_check_outputs(const struct pmutop_opts *o, char *err, size_t errlen)
{
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
	if (o->folded_threads && o->format != DUMP_FOLDED) {
		snprintf(err, errlen, "--folded-threads applies to --format folded");
		return -EINVAL;
	}
	if (o->http && (o->cmd || !o->pid)) {
		snprintf(err, errlen, "--http serves profiles of a running process: give -p PID, "
			 "not a command");
		return -EINVAL;
	}
	if (o->http && (o->dump || o->top || o->duration > 0)) {
		snprintf(err, errlen, "--http answers each request with its own profile: "
			 "--dump, --top and --duration do not apply (use ?seconds=N)");
		return -EINVAL;
	}
	return 0;
}

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

int cli_parse(int argc, char **argv, struct pmutop_opts *o, FILE *out,
	      char *err, size_t errlen)
{
	const char *event_specs[PMUTOP_MAX_EVENTS];
	size_t nspecs = 0;
	bool have_period = false;
	uint64_t v;
	int c;

	cli_defaults(o);
	optind = 0; /* full reset, so the parser can run more than once */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+p:e:F:qh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_u64("pid", optarg, 1, 4194304, &v, err, errlen))
				return -EINVAL;
			o->pid = (pid_t)v;
			break;
		case 'e':
			if (nspecs == PMUTOP_MAX_EVENTS) {
				snprintf(err, errlen, "too many -e options (at most %d events)",
					 PMUTOP_MAX_EVENTS);
				return -EINVAL;
			}
			event_specs[nspecs++] = optarg;
			o->event_given = true;
			break;
		case OPT_LIST_EVENTS:
			o->list_events = true;
			break;
		case OPT_DUMP_SPLIT:
			o->dump_split = true;
			break;
		case OPT_PERIOD:
			if (parse_u64("period", optarg, 1, (1ULL << 62), &o->period, err, errlen))
				return -EINVAL;
			have_period = true;
			break;
		case 'F':
			if (parse_u64("frequency", optarg, 1, 1000000, &o->freq, err, errlen))
				return -EINVAL;
			break;
		case OPT_DURATION: {
			char *end;
			errno = 0;
			o->duration = strtod(optarg, &end);
			if (errno || *end || end == optarg || !isfinite(o->duration) ||
			    o->duration <= 0 || o->duration > 31536000) {
				snprintf(err, errlen, "invalid duration \"%s\" (expected seconds > 0, e.g. 10 or 2.5)",
					 optarg);
				return -EINVAL;
			}
			break;
		}
		case OPT_DUMP:
			if (!*optarg) {
				snprintf(err, errlen, "--dump needs a file name");
				return -EINVAL;
			}
			o->dump = optarg;
			break;
		case OPT_STACK_SIZE:
			/* The kernel takes at most 65528 bytes and a multiple of 8. */
			if (parse_u64("stack size", optarg, 64, 65528, &v, err, errlen))
				return -EINVAL;
			o->stack_size = (unsigned)(v & ~7ULL);
			break;
		case OPT_MAX_DEPTH:
			if (parse_u64("max depth", optarg, 1, 4096, &v, err, errlen))
				return -EINVAL;
			o->max_depth = (unsigned)v;
			break;
		case OPT_MMAP_PAGES:
			if (parse_u64("mmap pages", optarg, 1, 65536, &v, err, errlen))
				return -EINVAL;
			if (v & (v - 1)) {
				snprintf(err, errlen, "invalid mmap pages \"%s\" (must be a power of 2)", optarg);
				return -EINVAL;
			}
			o->mmap_pages = (unsigned)v;
			break;
		case OPT_ROWS:
			if (parse_u64("rows", optarg, 1, 1000000, &v, err, errlen))
				return -EINVAL;
			o->top_rows = (unsigned)v;
			break;
		case OPT_KERNEL:
			o->kernel = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case OPT_TOP:
			o->top = true;
			break;
		case OPT_NO_TUI:
			o->no_tui = true;
			break;
		case OPT_REFRESH: {
			char *end;
			errno = 0;
			o->refresh = strtod(optarg, &end);
			if (errno || *end || end == optarg || !isfinite(o->refresh) ||
			    o->refresh < 0.05 || o->refresh > 3600) {
				snprintf(err, errlen, "invalid refresh interval \"%s\" "
					 "(expected seconds from 0.05 to 3600, e.g. 1 or 0.5)", optarg);
				return -EINVAL;
			}
			break;
		}
		case OPT_LOAD:
			if (!*optarg) {
				snprintf(err, errlen, "--load needs a file name");
				return -EINVAL;
			}
			o->load = optarg;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "pprof")) {
				o->format = DUMP_PPROF;
			} else if (!strcmp(optarg, "folded") || !strcmp(optarg, "collapsed")) {
				o->format = DUMP_FOLDED;
			} else {
				snprintf(err, errlen, "invalid format \"%s\" (expected pprof or folded)", optarg);
				return -EINVAL;
			}
			break;
		case OPT_FOLDED_THREADS:
			o->folded_threads = true;
			break;
		case OPT_HTTP:
			if (!*optarg) {
				snprintf(err, errlen, "--http needs an address, e.g. 127.0.0.1:6060");
				return -EINVAL;
			}
			o->http = optarg;
			break;
		case OPT_HTTP_MAX_SECONDS:
			if (parse_u64("http max seconds", optarg, 1, 86400, &v, err, errlen))
				return -EINVAL;
			o->http_max_seconds = (unsigned)v;
			break;
		case OPT_UNWIND:
			if (!strcmp(optarg, "snapshot") || !strcmp(optarg, "dwarf")) {
				o->unwind = UNWIND_ENGINE_SNAPSHOT;
			} else if (!strcmp(optarg, "ptrace")) {
				o->unwind = UNWIND_ENGINE_PTRACE;
			} else if (!strcmp(optarg, "fp")) {
				o->unwind = UNWIND_ENGINE_FP;
			} else {
				snprintf(err, errlen, "invalid unwind engine \"%s\" (expected snapshot, "
					 "ptrace or fp)", optarg);
				return -EINVAL;
			}
			break;
		case OPT_STACKS:
			o->stacks = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case 'h':
			print_help(out);
			return 1;
		case OPT_VERSION:
			fprintf(out, "pmutop %s\n", PMUTOP_VERSION);
			return 1;
		case '?':
		default:
			if (optopt && optopt < 256)
				snprintf(err, errlen, "unknown or incomplete option '-%c' (see --help)", optopt);
			else
				snprintf(err, errlen, "unknown or incomplete option \"%s\" (see --help)",
					 argv[optind - 1]);
			return -EINVAL;
		}
	}

	if (optind < argc)
		o->cmd = &argv[optind];

	if (o->list_events)
		return parse_events(o, event_specs, nspecs, err, errlen);
	if (o->top && o->no_tui) {
		snprintf(err, errlen, "--top and --no-tui are exclusive: give one");
		return -EINVAL;
	}
	if (o->load) {
		if (o->pid || o->cmd) {
			snprintf(err, errlen, "--load shows a saved profile: give it without -p PID or a command");
			return -EINVAL;
		}
		if (o->dump) {
			snprintf(err, errlen, "--load shows a saved profile: --dump does not apply "
				 "(press w in the view to write a copy)");
			return -EINVAL;
		}
		return parse_events(o, event_specs, nspecs, err, errlen);
	}
	if (o->pid && o->cmd) {
		snprintf(err, errlen, "give either -p PID or a command after --, not both");
		return -EINVAL;
	}
	if (!o->pid && !o->cmd) {
		snprintf(err, errlen, "nothing to profile: give -p PID, -- COMMAND or --load FILE (see --help)");
		return -EINVAL;
	}
	if (have_period && o->freq) {
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
	if (cli_check_outputs(o, err, errlen))
		return -EINVAL;
	return parse_events(o, event_specs, nspecs, err, errlen);
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
		*mode = o->top || (stdout_tty && !o->no_tui) ? MODE_LOAD_TOP : MODE_LOAD_TABLE;
	else if (o->top || (stdout_tty && !o->no_tui && !o->dump))
		*mode = MODE_TOP;
	else
		*mode = MODE_RECORD;
	return 0;
}
