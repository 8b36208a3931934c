/*
 * load.h - `pmutop --load FILE` without a terminal: print a saved profile's
 * flat/cumulative table, as the batch recorder prints a live one.
 */
#ifndef PMUTOP_LOAD_H
#define PMUTOP_LOAD_H

#include <stdbool.h>
#include <stddef.h>

struct aggregate;
struct pmutop_opts;

/*
 * Read src into a new aggregate: a pprof file (pprof_read_file), or a
 * clickhouse:// URL (ch_load_read; a line saying what ClickHouse merged
 * on stderr unless quiet). 0 or -errno with the reason in err.
 */
int load_profile(const char *src, bool quiet, struct aggregate **a, char *err, size_t errlen);

/*
 * Read o->load (pprof_read_file) and print its table on stdout (o->top_rows
 * rows; all when 0), a summary on stderr unless o->quiet. Returns the exit
 * status: 0, or 1 when the file cannot be read (the reason on stderr).
 * With o->dump, writes the profile there instead (dump.h), in o->format.
 */
int load_run(const struct pmutop_opts *o);

#endif
