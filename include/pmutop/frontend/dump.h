/*
 * dump.h - write a finished profile where --dump says, in the format its
 * name (or --format) chose: gzip-compressed pprof (one file, or one per
 * event with --dump-split), folded stacks, the flame graph page (a
 * differential one with --diff-base), an SVG flame graph or speedscope JSON. The batch recorder (record.c) and
 * --load (load.c) both end here, so a saved profile converts to any format
 * a live one is written in.
 */
#ifndef PMUTOP_DUMP_H
#define PMUTOP_DUMP_H

#include <stddef.h>
#include <stdio.h>

struct aggregate;
struct pmutop_opts;

/*
 * Before any work: does o->dump's name say its format (an unknown extension
 * is refused with the list of formats, except on a FIFO or device, which get
 * pprof), can it be written, and does o->diff_base read as a profile?
 * Returns 0, or -errno with the file and the reason in err.
 */
int dump_check(const struct pmutop_opts *o, char *err, size_t errlen);

/*
 * Write a to o->dump in o->format ("-": stdout). title heads a flame graph
 * page (the command line, or the loaded file). Prints what it wrote on log
 * unless o->quiet, errors on stderr. Returns 0, or 1 when a file could not
 * be written.
 */
int dump_write(const struct pmutop_opts *o, const struct aggregate *a, const char *title,
	       FILE *log);

#endif
