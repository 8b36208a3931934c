/*
 * record.h - one profiling session: attach or launch, sample until the
 * target exits / --duration / a signal, then write the profile.
 *
 * This is where the pipeline is wired together:
 *   sampler → unwinder → symbolizer → aggregator → {pprof writer, table}
 */
#ifndef PMUTOP_RECORD_H
#define PMUTOP_RECORD_H

struct pmutop_opts;

/*
 * Run the session described by opts. Prints errors and the summary itself;
 * returns the process exit status (0 when a profile was produced).
 */
int record_run(const struct pmutop_opts *opts);

#endif
