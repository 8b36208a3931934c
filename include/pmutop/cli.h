/*
 * cli.h - command-line options of pmutop.
 *
 * Parsing is a pure function of argv (no I/O besides --help/--version text
 * written to the given stream) so tests can feed it strings.
 */
#ifndef PMUTOP_CLI_H
#define PMUTOP_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "pmutop/events.h"

struct pmutop_opts {
	pid_t pid;               /* -p; 0 when launching a command */
	char **cmd;              /* argv after "--", NULL-terminated; NULL in attach mode */
	struct pmu_event event;  /* -e, parsed */
	bool event_given;        /* -e was given (no silent fallback then) */
	uint64_t period;         /* --period; 0 = event's preset */
	uint64_t freq;           /* -F HZ; 0 = use a period */
	double duration;         /* --duration seconds; 0 = until exit/signal */
	const char *dump;        /* --dump FILE; NULL = print the table */
	unsigned stack_size;     /* --stack-size bytes copied per sample */
	unsigned max_depth;      /* --max-depth frames */
	unsigned mmap_pages;     /* --mmap-pages per CPU buffer; 0 = auto */
	unsigned top_rows;       /* --rows in the text table; 0 = all */
	bool kernel;             /* --kernel: also sample kernel mode */
	bool quiet;              /* -q: no summary on stderr */
};

/* Values of the options before parsing. */
void cli_defaults(struct pmutop_opts *o);

/*
 * Parse argv into *o. Returns 0 to go on, 1 when --help/--version was
 * handled (text written to out; exit 0), or -EINVAL with err filled.
 */
int cli_parse(int argc, char **argv, struct pmutop_opts *o, FILE *out,
	      char *err, size_t errlen);

#endif
