/*
 * stacks.h - `pmutop --stacks -p PID`: the current call stack of every
 * thread, printed once (text or JSON), like `py-spy dump` or `eu-stack`.
 *
 * Each thread in turn is seized, interrupted, read (registers, stack) and
 * unwound while stopped, then detached at once, so no thread is stopped for
 * longer than its own unwind and the others keep running meanwhile.
 */
#ifndef PMUTOP_STACKS_H
#define PMUTOP_STACKS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct pmutop_opts;

/*
 * Print the stacks of opts->pid to stdout (opts->json: as JSON). Errors go
 * to stderr. Returns the exit status: 0, 1 on failure (no such process,
 * another tracer, permissions), 128+signal when SIGINT/SIGTERM/SIGHUP
 * interrupted it (every thread detached first).
 */
int stacks_run(const struct pmutop_opts *opts);

#endif
