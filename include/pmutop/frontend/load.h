/*
 * load.h - `pmutop --load FILE` without a terminal: print a saved profile's
 * flat/cumulative table, as the batch recorder prints a live one.
 */
#ifndef PMUTOP_LOAD_H
#define PMUTOP_LOAD_H

struct pmutop_opts;

/*
 * Read o->load (pprof_read_file) and print its table on stdout (o->top_rows
 * rows; all when 0), a summary on stderr unless o->quiet. Returns the exit
 * status: 0, or 1 when the file cannot be read (the reason on stderr).
 * With o->dump, writes the profile there instead (dump.h), in o->format.
 */
int load_run(const struct pmutop_opts *o);

#endif
