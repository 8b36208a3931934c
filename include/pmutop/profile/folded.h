/*
 * folded.h - the aggregate as collapsed ("folded") stacks: one line per
 * distinct stack, frames root first separated by ';', then a space and the
 * stack's weight in events. This is what FlameGraph's flamegraph.pl,
 * inferno and speedscope import:
 *
 *   main;run;compute;hot 123456
 *
 * Inlined frames (when debug info named them) are separate frames, caller
 * before callee, as pprof shows them.
 */
#ifndef PMUTOP_FOLDED_H
#define PMUTOP_FOLDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct aggregate;

/* Root frames above each stack (bits of `roots` below; 0: none). */
#define FOLDED_ROOT_THREAD  1u   /* the thread's name (tid-N when it has none) */
#define FOLDED_ROOT_PROCESS 2u   /* the process: COMM-PID (stackcollapse-perf --pid's
                                    spelling), "[unknown process]" when not known;
                                    above the thread when both are asked */

/* One folded line: the frames root first, ';'-separated, and its weight. */
struct folded_line {
	char *text;
	uint64_t weight;
};

/*
 * The folded lines themselves, sorted by text and merged, without a zero
 * weight, into a malloc'd array *out of *n lines (folded_lines_free frees
 * it): what the SVG and speedscope writers draw from. Returns 0 or -ENOMEM.
 */
int folded_lines(const struct aggregate *a, unsigned roots, struct folded_line **out,
		 size_t *n);
void folded_lines_free(struct folded_line *v, size_t n);

/*
 * Write the folded lines to out, sorted by stack text; stacks that fold to
 * the same text (the same frames on different threads) are summed. roots
 * puts the process and/or the thread name as the root frames (true, as
 * older callers pass it, is FOLDED_ROOT_THREAD). Returns 0, -ENOMEM or
 * -EIO (a write error on out).
 */
int folded_write_stream(const struct aggregate *a, unsigned roots, FILE *out);

/*
 * Write the folded lines to path atomically (temp file, fsync, rename). On
 * error returns -errno with a message naming path in err; path is untouched.
 */
int folded_write(const struct aggregate *a, unsigned roots, const char *path,
		 char *err, size_t errlen);

/*
 * Append name to the line being built in buf[*len..cap) as one folded frame:
 * ';' becomes ':' and control characters (newlines) become '?', since both
 * would break the format. Returns 0 or -ENOSPC (then *len is unchanged).
 */
int folded_append_frame(char *buf, size_t cap, size_t *len, const char *name);

#endif
