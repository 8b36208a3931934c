/*
 * unwind_fast.h - the unwinder's fast path: cached per-address CFI rules
 * applied straight to the sample's stack copy.
 *
 * libunwind re-derives its register state at every step and pays for
 * locking around its cache; on a 120-frame stack that is most of pmutop's
 * CPU. On x86_64 nearly every frame's rule is "CFA = RSP or RBP + n, return
 * address at CFA-8, RBP unchanged or saved at CFA+m". This path asks libdw
 * once per code address for that rule, caches it, and then walks a stack
 * with one hash lookup and two loads per frame. Anything else (signal
 * frames, DWARF expressions, other registers) makes it give up on the
 * sample so that libunwind — the reference — unwinds it instead.
 */
#ifndef PMUTOP_UNWIND_FAST_H
#define PMUTOP_UNWIND_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "pmutop/unwind/unwind.h"

struct maps;
struct perf_sample;
struct fast_unwinder;

struct fast_unwinder *fast_unwinder_new(struct maps *maps);
void fast_unwinder_free(struct fast_unwinder *f);

/* Forget every cached rule (exec, new code mapped). */
void fast_unwinder_flush(struct fast_unwinder *f);

/*
 * Close the CFI readers opened on mod (they point into its libelf handle),
 * before the module cache evicts it (module_cache_evict). Rules stay: they
 * hold no pointers, and the process no longer maps mod.
 */
struct module;
void fast_unwinder_forget_module(struct fast_unwinder *f, const struct module *mod);

/*
 * Walk s's stack. On success returns the number of frames in ips (leaf
 * first, as unwinder_unwind) and sets *outcome; returns 0 when this path
 * cannot do the sample (the caller then uses libunwind).
 */
unsigned fast_unwind(struct fast_unwinder *f, const struct perf_sample *s, uint64_t *ips,
		     unsigned max, enum unwind_outcome *outcome);

/*
 * Whether the last successful walk used a rule from .debug_frame (Go
 * binaries): libunwind here reads only .eh_frame, so it is no reference
 * for such a stack.
 */
bool fast_unwind_used_debug_frame(const struct fast_unwinder *f);

/*
 * Whether the code at addr (the leaf IP, or a return address minus one)
 * is the outermost frame of its stack by the cached rules (CFI says the
 * return address is undefined; Go's goexit/mstart). arg: the fast_unwinder.
 */
bool fast_unwind_is_root(void *arg, uint64_t addr);

/* Rules cached and samples given up on, for the summary. */
void fast_unwinder_stats(const struct fast_unwinder *f, uint64_t *rules, uint64_t *fallbacks);

#endif
