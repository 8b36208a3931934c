/*
 * gostack.c - continue a CFI walk on the kernel's frame-pointer callchain
 * past Go's stack switches (see gostack.h for why).
 *
 * The splice point is a return address both walks produced, in Go code:
 * the CFI walk is exact up to there (it knows frameless leaves and C
 * frames), the kernel's chain is exact beyond it (it followed the frame
 * pointer from the system stack back onto the goroutine stack at the
 * interrupt). Frames in C code are never spliced on: without frame
 * pointers the kernel's chain through them is guesswork.
 */
#include "pmutop/unwind/gostack.h"

#include <linux/perf_event.h>
#include <stdio.h>

#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"
#include "pmutop/sample/perf_record.h"

unsigned gostack_kernel_max_stack(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "r");
	unsigned v = 127;

	if (f) {
		if (fscanf(f, "%u", &v) != 1 || v == 0)
			v = 127;
		fclose(f);
	}
	return v;
}

unsigned gostack_user_chain(const struct perf_sample *s, unsigned max_stack,
			    const uint64_t **out, int *truncated)
{
	uint64_t i, start = 0, nr = s->callchain ? s->nr_callchain : 0;
	unsigned n = 0, entries = 0;

	*out = NULL;
	*truncated = 0;
	/* The user part follows the last PERF_CONTEXT_USER marker. */
	for (i = 0; i < nr; i++) {
		if (s->callchain[i] == (uint64_t)PERF_CONTEXT_USER)
			start = i + 1;
		else if (s->callchain[i] < (uint64_t)PERF_CONTEXT_MAX)
			entries++;
	}
	if (!start)
		return 0;
	for (i = start; i < nr; i++) {
		if (s->callchain[i] >= (uint64_t)PERF_CONTEXT_MAX || s->callchain[i] == 0)
			break;
		n++;
	}
	*out = n ? s->callchain + start : NULL;
	/* The kernel counts kernel and user entries against one limit. */
	*truncated = entries >= max_stack;
	return n;
}

static int is_go_code(const struct maps *maps, uint64_t addr)
{
	const struct mapping *m = maps_find(maps, addr);

	return m && module_is_go(m->mod);
}

unsigned gostack_splice(const struct maps *maps, const struct perf_sample *s,
			unsigned max_stack, uint64_t *ips, unsigned n, unsigned max,
			enum unwind_outcome *outcome, bool *spliced,
			bool (*is_root)(void *arg, uint64_t addr), void *arg)
{
	const uint64_t *kc;
	int truncated;
	unsigned nk = gostack_user_chain(s, max_stack, &kc, &truncated);
	unsigned j, t;

	if (nk < 2 || n == 0)
		return n;
	/*
	 * A complete walk ending outside Go code (C programs) or at a Go
	 * stack's first function: nothing to continue.
	 */
	if (*outcome == UNWIND_ROOT &&
	    (!is_go_code(maps, ips[n - 1]) || is_root(arg, n > 1 ? ips[n - 1] - 1 : ips[0])))
		return n;
	/*
	 * The deepest walk frame in Go code that the chain also has. The leaf
	 * (j = 0) only matches the chain's first entry, the same IP.
	 */
	for (j = n; j-- > 0;) {
		unsigned tail_cfi, tail_kc;

		if (!is_go_code(maps, ips[j]))
			continue;
		if (j == 0) {
			t = kc[0] == ips[0] ? 0 : nk;
		} else {
			for (t = 1; t < nk && kc[t] != ips[j]; t++)
				;
		}
		if (t == nk)
			continue;
		tail_cfi = n - 1 - j;
		tail_kc = nk - 1 - t;
		if (!(tail_kc > tail_cfi || (*outcome != UNWIND_ROOT && tail_kc > 0)))
			return n;
		n = j + 1;
		*outcome = UNWIND_ROOT;
		for (t++; t < nk; t++) {
			if (n == max) {
				*outcome = UNWIND_MAX_DEPTH;
				break;
			}
			ips[n++] = kc[t];
			if (is_root(arg, kc[t] - 1))
				break;
		}
		if (t == nk && truncated)
			*outcome = UNWIND_MAX_DEPTH;
		*spliced = true;
		return n;
	}
	return n;
}
