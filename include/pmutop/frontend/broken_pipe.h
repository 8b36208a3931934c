/*
 * broken_pipe.h - pmutop outlives the reader of its stdout or stderr.
 *
 * `pmutop --dump F -- CMD 2>&1 | head -1`: once head has its line, the next
 * message pmutop writes would raise SIGPIPE, and its default action killed
 * pmutop on the spot - F never written, the launched command left to run.
 * pmutop ignores SIGPIPE instead (a write then fails with EPIPE and is
 * dropped), finishes the run as asked, and says with its exit status that
 * output was lost: 141 (128 + SIGPIPE, what a shell shows for a writer whose
 * reader left) when nothing else failed.
 */
#ifndef PMUTOP_BROKEN_PIPE_H
#define PMUTOP_BROKEN_PIPE_H

#include <stdbool.h>

/* The exit status for "done, but stdout or stderr's reader went away". */
#define PMUTOP_EXIT_BROKEN_PIPE 141

/*
 * Ignore SIGPIPE for the whole process (first thing in main). A command
 * pmutop launches must get the default back before its exec (an ignored
 * signal stays ignored across exec): see broken_pipe_restore_default().
 */
void broken_pipe_ignore(void);

/* In a child before exec: SIGPIPE's default action again. */
void broken_pipe_restore_default(void);

/*
 * After the last write: true when a write to stdout or stderr failed and
 * that stream is a pipe (or socket) whose reader is gone. Flushes stdout.
 */
bool broken_pipe_output_lost(void);

/*
 * The exit status to return: rc itself unless rc is 0 (success) and output
 * was lost (broken_pipe_output_lost()), then PMUTOP_EXIT_BROKEN_PIPE.
 */
int broken_pipe_exit_status(int rc);

#endif
