/*
 * main.c - pmutop's entry point: parse the command line, pick the mode
 * (live view, batch record, saved profile), run, exit.
 *
 * SIGINT, SIGTERM and SIGHUP are blocked before anything else: a signal
 * that comes while pmutop starts stays pending until the session's
 * signalfd (or the live view, or the HTTP server) takes it, so it ends the
 * run with a summary and a profile instead of killing pmutop - and one
 * that comes while the profile is written waits until it is. Modes with
 * nothing to stop (printing a saved profile, listing events) unblock them.
 * SIGPIPE is ignored: a reader of stdout or stderr that goes away costs
 * pmutop's messages, never the profile (broken_pipe.h; exit status 141).
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "pmutop/frontend/broken_pipe.h"
#include "pmutop/frontend/cli.h"
#include "pmutop/sample/events.h"
#include "pmutop/frontend/http_server.h"
#include "pmutop/frontend/load.h"
#include "pmutop/frontend/record.h"
#include "pmutop/frontend/resolve.h"
#include "pmutop/frontend/stacks.h"
#include "tui.h"

/* Back to the mask pmutop was started with: the default reaction. */
static void unblock_stop_signals(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

int main(int argc, char **argv)
{
	struct pmutop_opts opts;
	enum pmutop_mode mode;
	sigset_t stop, old;
	char err[512];
	int rc;

	/*
	 * Large blocks (an aggregate's stack and address arrays, libdw's
	 * decompressed debug sections) get mappings of their own and go back
	 * to the kernel when freed. glibc's threshold otherwise slides up to
	 * the largest block freed, after which such blocks come from the heap
	 * and leave holes there that a long run's RSS keeps (issue 23).
	 */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop, &old);
	broken_pipe_ignore();

	rc = cli_parse(argc, argv, &opts, stdout, err, sizeof(err));
	if (rc > 0)
		return broken_pipe_exit_status(0);
	if (rc < 0) {
		fprintf(stderr, "pmutop: %s\n", err);
		return 2;
	}
	/*
	 * One switch for every fetcher: pmutop's (debuginfod.h) and the one
	 * built into libdwfl both read DEBUGINFOD_URLS. Still one thread here.
	 */
	if (opts.no_debuginfod)
		unsetenv("DEBUGINFOD_URLS");
	rc = resolve_target(&opts, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "pmutop: %s\n", err);
		return rc == -EINVAL ? 2 : 1;
	}
	for (unsigned i = 0; i < opts.nnotes && !opts.quiet; i++)
		fprintf(stderr, "pmutop: %s\n", opts.notes[i]);
	if (opts.list_events) {
		unblock_stop_signals(&old);
		events_list(stdout, opts.kernel);
		return broken_pipe_exit_status(0);
	}
	if (opts.stacks)
		return broken_pipe_exit_status(stacks_run(&opts));
	if (opts.http)
		return http_serve(&opts);
	/* The live view needs a terminal for keys (stdin) and the screen (stdout). */
	if (cli_mode(&opts, isatty(STDIN_FILENO) && isatty(STDOUT_FILENO), &mode, err,
		     sizeof(err))) {
		fprintf(stderr, "pmutop: %s\n", err);
		return 2;
	}
	switch (mode) {
	case MODE_TOP:
	case MODE_LOAD_TOP:
		/* TERM=dumb, unknown or tiny: the table, with a note saying why. */
		if (tui_terminal_check(err, sizeof(err))) {
			if (!opts.quiet)
				fprintf(stderr, "pmutop: no live view: %s; printing the table %s\n", err,
					mode == MODE_TOP ? "when sampling ends (Ctrl-C ends it)"
							 : "instead");
			if (mode != MODE_TOP)
				unblock_stop_signals(&old);
			return mode == MODE_TOP ? record_run(&opts)
						 : broken_pipe_exit_status(load_run(&opts));
		}
		opts.live_view = true; /* the terminal stays pmutop's (session.c) */
		return tui_run(&opts);
	case MODE_LOAD_TABLE:
		unblock_stop_signals(&old);
		return broken_pipe_exit_status(load_run(&opts));
	case MODE_RECORD:
	default:
		return record_run(&opts);
	}
}
