/*
 * broken_pipe.c - SIGPIPE ignored, lost output told by the exit status
 * (see broken_pipe.h for why).
 *
 * Whether output was lost is read off the streams at the end: stdio sets a
 * stream's error flag on a failed write, and poll() on the write end of a
 * pipe whose readers are all gone reports POLLERR (a socket: POLLHUP or
 * POLLERR). A write error on a stream whose reader is still there (a full
 * disk under `2>log`) is not a broken pipe and is left to the writers that
 * check their own writes.
 */
#include "pmutop/frontend/broken_pipe.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

void broken_pipe_ignore(void)
{
	signal(SIGPIPE, SIG_IGN);
}

void broken_pipe_restore_default(void)
{
	signal(SIGPIPE, SIG_DFL);
}

static bool reader_gone(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

bool broken_pipe_output_lost(void)
{
	fflush(stdout);
	return (ferror(stdout) && reader_gone(STDOUT_FILENO)) ||
	       (ferror(stderr) && reader_gone(STDERR_FILENO));
}

int broken_pipe_exit_status(int rc)
{
	return rc == 0 && broken_pipe_output_lost() ? PMUTOP_EXIT_BROKEN_PIPE : rc;
}
