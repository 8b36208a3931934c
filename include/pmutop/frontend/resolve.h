/*
 * resolve.h - what the parsed options name on this machine, checked before
 * anything is opened (perf's habits about targets and limits).
 *
 * cli_parse() is pure; this is its counterpart that reads /proc: a thread id
 * given to -p means its process, as in perf (one note says so); a kernel
 * thread is refused with the reason; -t's threads must belong to one
 * process, which becomes the target; -F above
 * kernel.perf_event_max_sample_rate is lowered to it and a --period too
 * short for the kernel to honour is raised, each with one note.
 */
#ifndef PMUTOP_RESOLVE_H
#define PMUTOP_RESOLVE_H

#include <stddef.h>

#include "pmutop/frontend/cli.h"

/*
 * Adjust *o as above, appending notes to o->notes. Returns 0, or -errno
 * with an actionable message in err (which pid, why, what to use instead).
 */
int resolve_target(struct pmutop_opts *o, char *err, size_t errlen);

/*
 * The smallest period the events of o can be sampled at without
 * interrupting more often than max_rate samples/s allow (exposed for tests):
 * 1e9/max_rate ns for clocks, 1000 events for hardware counters, 1 for
 * other software events.
 */
unsigned long long resolve_min_period(const struct pmutop_opts *o, long max_rate);

#endif
