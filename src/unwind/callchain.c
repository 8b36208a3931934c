/*
 * callchain.c - frames from the kernel's frame-pointer callchain (see
 * callchain.h). The kernel writes PERF_CONTEXT_KERNEL / PERF_CONTEXT_USER
 * markers (values >= PERF_CONTEXT_MAX as unsigned) before each part; the
 * first user entry is the user IP itself, the others return addresses.
 */
#include "pmutop/unwind/callchain.h"

#include <linux/perf_event.h>
#include <stdbool.h>

#include "pmutop/sample/perf_record.h"

unsigned callchain_ips(const struct perf_sample *s, uint64_t *ips, unsigned max,
		       enum unwind_outcome *outcome)
{
	unsigned n = 0;
	uint64_t i;

	if (!max)
		return 0;
	for (i = 0; s->callchain && i < s->nr_callchain; i++) {
		uint64_t a = s->callchain[i];

		if (a >= (uint64_t)PERF_CONTEXT_MAX)
			continue; /* a context marker, not an address */
		if (a == 0)
			break;
		if (n == max) {
			*outcome = UNWIND_MAX_DEPTH;
			return n;
		}
		ips[n++] = a;
	}
	if (!n) {
		ips[n++] = s->ip;
		*outcome = UNWIND_NO_REGS;
		return n;
	}
	*outcome = UNWIND_ROOT;
	return n;
}

unsigned callchain_kernel_ips(const struct perf_sample *s, uint64_t *ips, unsigned max)
{
	bool in_kernel = false;
	unsigned n = 0;

	if (!max)
		return 0;
	if (!s->callchain) {
		if ((s->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
			ips[n++] = s->ip;
		return n;
	}
	for (uint64_t i = 0; i < s->nr_callchain && n < max; i++) {
		uint64_t a = s->callchain[i];

		if (a >= (uint64_t)PERF_CONTEXT_MAX) {
			in_kernel = a == (uint64_t)PERF_CONTEXT_KERNEL;
			continue;
		}
		if (in_kernel && a)
			ips[n++] = a;
	}
	return n;
}
