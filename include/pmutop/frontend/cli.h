/*
 * cli.h - command-line options of pmutop.
 *
 * Every option is one row of a table (struct cli_option): its long and short
 * names, its argument, the handler that stores it, its help text and group.
 * getopt_long's tables, --help, the man page (pmutop.1) and the bash
 * completion are all produced from those rows (cli_doc.h), so they cannot
 * drift apart. Parsing is a pure function of argv (no I/O besides the
 * --help/--version/--print-* text written to the given stream) so tests can
 * feed it strings.
 */
#ifndef PMUTOP_CLI_H
#define PMUTOP_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "pmutop/sample/events.h"
#include "pmutop/symbols/pymerge.h"

/* What --dump writes (--format). */
enum dump_format {
	DUMP_PPROF = 0,  /* gzip-compressed pprof (the default) */
	DUMP_FOLDED,     /* collapsed stacks for flame graphs (folded.h) */
	DUMP_HTML,       /* a self-contained flame graph page (flamegraph.h) */
	DUMP_SVG,        /* an SVG flame graph as flamegraph.pl draws it (svg.h) */
	DUMP_SPEEDSCOPE, /* speedscope's JSON (speedscope.h) */
};

/* How a sample's call stack is obtained (--unwind=). */
enum unwind_engine {
	UNWIND_ENGINE_SNAPSHOT = 0, /* kernel copies regs + user stack; DWARF unwind */
	UNWIND_ENGINE_PTRACE,       /* interrupt the thread, read it live (ptrace_engine.h) */
	UNWIND_ENGINE_FP,           /* the kernel's frame-pointer callchain */
};

/* py-spy's verbs: the first word of the command line (see cli_parse()). */
enum cli_verb {
	CLI_VERB_NONE = 0,  /* no verb: options, then maybe a command to launch */
	CLI_VERB_RECORD,    /* pmutop record: write a profile (-o FILE), no live view */
	CLI_VERB_TOP,       /* pmutop top: the live view */
	CLI_VERB_DUMP,      /* pmutop dump: every thread's stack now (--stacks) */
	CLI_NVERBS,
};

/* Bit of a verb in struct cli_option.verbs. */
#define CLI_IN(verb) (1u << (verb))

#define CLI_MAX_NOTES 4
/* Most processes -p takes (a list, or with --subprocesses their descendants). */
#define PMUTOP_MAX_PIDS 1024
#define CLI_MAX_TIDS 64
/* Most --label KEY=VALUE options. */
#define CLI_MAX_LABELS 16

struct kallsyms;

struct pmutop_opts {
	enum cli_verb verb;      /* the first word, CLI_VERB_NONE when none */
	pid_t pid;               /* -p; 0 when launching a command */
	pid_t pids[PMUTOP_MAX_PIDS]; /* -p PID,PID,...: every target process (pid is the first) */
	size_t npids;            /* entries in pids (0: pid alone, or launching) */
	bool no_children;        /* --no-children: don't follow child processes */
	bool subprocesses;       /* --subprocesses: -p also attaches existing descendants */
	bool system_wide;        /* -a: every process on every CPU */
	unsigned max_processes;  /* --max-processes: processes kept at once; 0 = default */
	const char *table_file;  /* --table-file FILE: the table there, not on stdout/stderr */
	bool live_view;          /* set by main: the live view owns the terminal */
	char **cmd;              /* argv after "--", NULL-terminated; NULL in attach mode */
	struct pmu_event event;  /* -e, parsed: the first event (events[0]) */
	struct pmu_event events[PMUTOP_MAX_EVENTS]; /* every -e, in order */
	size_t nevents;          /* >= 1 after a successful parse */
	bool list_events;        /* --list-events: print usable events, exit */
	bool dump_split;         /* --dump-split: one pprof file per event */
	bool event_given;        /* -e was given (no silent fallback then) */
	uint64_t period;         /* --period; 0 = event's preset */
	uint64_t period_asked;   /* the --period resolve raised for a default event the
	                            session may yet replace by a clock (0: none): the
	                            session's note names the event that got it */
	uint64_t freq;           /* -F HZ; 0 = use a period */
	double duration;         /* --duration seconds; 0 = until exit/signal */
	const char *dump;        /* --dump FILE; NULL = print the table */
	double dump_every;       /* --dump-every SEC: one profile per window into --dump DIR/ */
	unsigned keep;           /* --keep N window profiles (oldest removed); 0 = all */
	const char *push;        /* --push clickhouse://...: every window into ClickHouse (push.h) */
	const char *labels[CLI_MAX_LABELS]; /* --label KEY=VALUE, checked */
	size_t nlabels;
	const char *by;          /* --by LABEL: --load clickhouse:// per label value */
	const char *spool;       /* --spool DIR: windows the server could not take yet */
	unsigned push_queue;     /* --push-queue N windows in memory; 0 = default (16) */
	size_t max_memory;       /* --max-memory: the profile's memory budget in bytes; 0 = default */
	unsigned stack_size;     /* --stack-size bytes copied per sample */
	bool stack_size_given;   /* --stack-size was given (else pmutop may lower it to fit) */
	unsigned max_depth;      /* --max-depth frames */
	unsigned mmap_pages;     /* --mmap-pages per CPU buffer; 0 = auto */
	unsigned top_rows;       /* --rows N in the text table; 0: not given */
	bool rows_all;           /* --rows all: every row; neither: rows under 0.5% of the
	                            total hidden, as go tool pprof -top (CLI_ROWS_MIN_CUM) */
	bool kernel;             /* --kernel: kernel frames or an error (default: where allowed) */
	bool user_only;          /* --user-only: never kernel mode */
	bool quiet;              /* -q: no summary on stderr */
	enum unwind_engine unwind; /* --unwind=snapshot|ptrace|fp */
	enum py_mode python;     /* --python=on|off|only (symbols/pymerge.h) */
	bool stacks;             /* --stacks: print every thread's stack once and exit */
	bool json;               /* --json: --stacks output as JSON */
	bool top;                /* --top: the live view even with --dump */
	bool no_tui;             /* --no-tui: never the live view */
	double refresh;          /* --refresh SEC: live view interval (default 1) */
	double debuginfo_wait;   /* --debuginfo-wait SEC: the end's wait for debug info still
	                            being read; < 0: the default (10 s, live view 2 s) */
	const char *load;        /* --load FILE: show a saved pprof profile */
	const char *annotate;    /* --annotate FUNC: its instruction listing instead of the table */
	enum dump_format format; /* --format pprof|folded|html|svg|speedscope, else from --dump's extension */
	bool format_given;       /* --format was given (the extension is not consulted) */
	bool dump_ext_unknown;   /* --dump's extension names no format (dump_check() decides) */
	const char *diff_base;   /* --diff-base OLD: a differential flame graph against it */
	bool folded_threads;     /* --folded-threads: thread name as the root frame */
	bool folded_processes;   /* --folded-processes: COMM-PID as the root frame */
	bool by_process;         /* --by-process: the per-process table before the functions */
	const char *http;        /* --http ADDR:PORT: serve profiles on request (http_server.h) */
	unsigned http_max_seconds; /* --http-max-seconds: cap on ?seconds= (default 300) */
	/* Not an option: kernel symbols loaded once by the caller and only
	 * read by sessions (--http: ~0.1-1 s less per request); NULL: each
	 * session reads /proc/kallsyms itself. */
	const struct kallsyms *kallsyms;
	const char *http_token;  /* --http-token T|none: required of every request (see http_server.c) */
	const char *http_allow_host; /* --http-allow-host NAME: a Host header name to accept */
	pid_t tids[CLI_MAX_TIDS]; /* -t TID[,TID]: only these threads of -p's process */
	size_t ntids;            /* 0 = every thread */
	bool nonblocking;        /* --nonblocking: never stop the target (no ptrace) */
	bool no_debuginfod;      /* --no-debuginfod: main unsets DEBUGINFOD_URLS */
	/* One-line notes for stderr (unless -q): how a perf/py-spy habit was taken. */
	char notes[CLI_MAX_NOTES][256];
	unsigned nnotes;
};

/* What pmutop does with the parsed options (see cli_mode()). */
enum pmutop_mode {
	MODE_RECORD,      /* sample, then write --dump or print the table */
	MODE_TOP,         /* sample under the live view */
	MODE_LOAD_TOP,    /* the live view on a saved profile (--load) */
	MODE_LOAD_TABLE,  /* print a saved profile's table (--load, no terminal) */
};

/* Sections of --help and of the man page, in the order they are printed. */
enum cli_group {
	CLI_GROUP_TARGET,   /* what to profile */
	CLI_GROUP_EVENTS,   /* what to sample on, how often, for how long */
	CLI_GROUP_OUTPUT,   /* where the profile goes */
	CLI_GROUP_VIEW,     /* the live view and saved profiles */
	CLI_GROUP_STACKS,   /* how stacks are taken */
	CLI_GROUP_HTTP,     /* the pprof HTTP endpoint */
	CLI_GROUP_INFO,     /* help, version, event list */
	CLI_GROUP_HIDDEN,   /* build-time generators: not in --help or the man page */
	CLI_NGROUPS,
};

/* What the bash completion offers for an option's argument. */
enum cli_complete {
	CLI_COMPLETE_NONE,     /* a number or free text: nothing to offer */
	CLI_COMPLETE_FILE,     /* a path */
	CLI_COMPLETE_PID,      /* a process id (/proc) */
	CLI_COMPLETE_EVENT,    /* an event name, comma lists too */
	CLI_COMPLETE_CHOICES,  /* one of the words in .choices */
};

struct cli_ctx;  /* parser state handed to the handlers (cli.c) */

/* One command-line option: the single source of parsing and documentation. */
struct cli_option {
	const char *name;      /* long name without "--"; NULL for a short-only habit (-g) */
	char short_name;       /* single-letter alias, 0 = none */
	const char *arg;       /* placeholder of the argument ("PID"), NULL = a flag */
	/* Store arg; 0 = go on, 1 = done (text printed, exit 0), -EINVAL. */
	int (*handle)(struct cli_ctx *c, const struct cli_option *opt, const char *arg);
	size_t off;            /* field of pmutop_opts set by the generic handlers */
	uint64_t min, max;     /* range checked by the numeric generic handlers */
	const char *help;      /* one paragraph, wrapped when printed */
	enum cli_group group;
	enum cli_complete complete;
	const char *choices;   /* space-separated words for CLI_COMPLETE_CHOICES */
	unsigned verbs;        /* CLI_IN() bits of the verbs that take it; 0 = all */
};

/* The i-th option of the table, NULL past the end. */
const struct cli_option *cli_option_at(size_t i);

/*
 * The format --dump FILE gets from its name: .pb.gz/.pprof/.prof/.pb/.gz
 * pprof, .html/.htm the flame graph page, .folded/.collapsed folded stacks
 * (case-insensitive); "-" and names without an extension pprof. Returns 0,
 * or -EINVAL with err listing the formats for any other extension.
 */
int cli_dump_format(const char *path, enum dump_format *fmt, char *err, size_t errlen);

/* The share of the total a function's cum needs to be a row of the default table. */
#define CLI_ROWS_MIN_CUM 0.005

/* The min_cum of top_table_print() for o's --rows: 0 when --rows N or all was given. */
double cli_rows_min_cum(const struct pmutop_opts *o);

/* --format's name of f ("pprof", "folded", "html", "svg", "speedscope"). */
const char *cli_format_name(enum dump_format f);
/* Whether verb takes opt. */
bool cli_option_in(const struct cli_option *opt, enum cli_verb verb);

/* "record", "top", "dump"; "" for CLI_VERB_NONE. */
const char *cli_verb_name(enum cli_verb verb);

/* Values of the options before parsing. */
void cli_defaults(struct pmutop_opts *o);

/*
 * Parse argv into *o. A first word that is a verb (record, top, dump) is the
 * verb and only that verb's options are taken; a word perf users type for
 * something else (stat, report, ...) is answered with a pointer unless it
 * follows "--"; any other word starts the command to launch. Returns 0 to go on, 1 when --help/--version (or a
 * --print-man/--print-completion generator) was handled (text written to
 * out; exit 0), or -EINVAL with err filled.
 */
int cli_parse(int argc, char **argv, struct pmutop_opts *o, FILE *out,
	      char *err, size_t errlen);

/*
 * Choose the mode, like py-spy's top/record: the live view when stdout is a
 * terminal and there is no --dump, or when --top asks for it; the text
 * table when stdout is not a terminal or --no-tui. Returns 0, or -EINVAL
 * with err filled when --top is given but stdout is not a terminal.
 */
int cli_mode(const struct pmutop_opts *o, bool stdout_tty, enum pmutop_mode *mode,
	     char *err, size_t errlen);

#endif
