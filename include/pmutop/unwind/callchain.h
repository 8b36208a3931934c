/*
 * callchain.h - the `fp` unwinding engine: a sample's stack is the callchain
 * the kernel walked itself (PERF_SAMPLE_CALLCHAIN, frame pointers), so
 * pmutop only has to drop the PERF_CONTEXT_* markers.
 */
#ifndef PMUTOP_CALLCHAIN_H
#define PMUTOP_CALLCHAIN_H

#include <stdint.h>

#include "pmutop/unwind/unwind.h"

struct perf_sample;

/*
 * Copy the sample's callchain into ips (leaf first, at most max entries),
 * skipping context markers and stopping at a zero address. Kernel frames
 * (with --kernel) come before user frames, as the kernel wrote them.
 * *outcome: UNWIND_NO_REGS when there is no callchain (then ips[0] is the
 * sample IP), UNWIND_MAX_DEPTH when max was reached, else UNWIND_ROOT (the
 * frame-pointer chain ended). Returns the number of frames.
 */
unsigned callchain_ips(const struct perf_sample *s, uint64_t *ips, unsigned max,
		       enum unwind_outcome *outcome);

/*
 * The kernel part of the sample's callchain (the entries after
 * PERF_CONTEXT_KERNEL, leaf first, at most max), for stacking on top of a
 * user stack unwound from the sample's registers. A kernel-mode sample
 * without a callchain gives its IP alone; a user-mode one gives 0 frames.
 */
unsigned callchain_kernel_ips(const struct perf_sample *s, uint64_t *ips, unsigned max);

#endif
