/*
 * record.h - one profiling session: attach or launch, sample until the
 * target exits / --duration / a signal, then write the profile.
 *
 * This is where the pipeline is wired together:
 *   sampler → unwinder → symbolizer → aggregator → {pprof writer, table}
 */
#ifndef PMUTOP_RECORD_H
#define PMUTOP_RECORD_H

#include <stddef.h>
#include <stdio.h>

struct pmutop_opts;

/*
 * Run the session described by opts. Prints errors and the summary itself;
 * returns the process exit status (0 when a profile was produced).
 */
int record_run(const struct pmutop_opts *opts);

struct aggregate;
struct session;

/*
 * The summary of a stopped session on out: how it stopped, samples, events,
 * threads, CPUs, lost and throttled, the memory budget, processes, off-CPU,
 * the lost-samples warning, the unwinder's outcomes and the symbol notes.
 * The batch mode and the live view's exit both print it, so they agree.
 */
void record_print_summary(const struct session *s, FILE *out);

/*
 * Threads with samples in a (a folded group of exited threads counts its
 * threads): the one count the summary and --load print.
 */
size_t record_threads(const struct aggregate *a);

#endif
