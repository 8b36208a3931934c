/*
 * unwind.h - remote stack unwinding of one sample.
 *
 * Registers come from the sample; memory from the kernel's stack copy first,
 * then from the module's own file image (code, unwind tables), and last from
 * the live target with process_vm_readv. libunwind's remote API does the
 * DWARF CFI work (with its global cache on); where a frame has no unwind
 * info it falls back to the frame-pointer chain.
 */
#ifndef PMUTOP_UNWIND_H
#define PMUTOP_UNWIND_H

#include <stdint.h>

struct maps;
struct perf_sample;

/*
 * Why a walk ended; counted per sample and reported. UNWIND_ROOT only when
 * the outermost frame is where a thread starts (root.h decides, for every
 * engine).
 */
enum unwind_outcome {
	UNWIND_ROOT = 0,     /* reached the thread's outermost frame */
	UNWIND_STACK_CUT,    /* ran past the stack copy and the live read failed */
	UNWIND_NO_INFO,      /* a frame had no unwind info and no frame pointer */
	UNWIND_BAD_FRAME,    /* a step produced an impossible frame (loop, garbage) */
	UNWIND_MAX_DEPTH,    /* --max-depth reached */
	UNWIND_NO_REGS,      /* sample carried no user registers (kernel thread, ...) */
	/*
	 * The walk ended by itself, but its outermost frame is code where no
	 * thread starts (root.h): a caller was lost on the way (a frame-pointer
	 * chain through code built without them). Walks that end on a value
	 * that is not code at all are UNWIND_BAD_FRAME.
	 */
	UNWIND_NO_ROOT,
	UNWIND_NOUTCOMES
};

const char *unwind_outcome_name(enum unwind_outcome o);

struct unwinder;

/* An unwinder for the target described by maps. NULL on failure. */
struct unwinder *unwinder_new(struct maps *maps);
void unwinder_free(struct unwinder *u);

/*
 * The maps changed in a way that can invalidate cached unwind rules (exec,
 * munmap+mmap at the same address). Cheap; call on exec.
 */
void unwinder_flush(struct unwinder *u);

/*
 * mod is about to be evicted from the module cache (module_cache_evict):
 * drop what was derived from it (the fast path's CFI readers). NULL u is a
 * no-op.
 */
struct module;
void unwinder_forget_module(struct unwinder *u, const struct module *mod);

/*
 * Walk the user stack of sample s. Writes up to max return addresses into
 * ips, leaf first: ips[0] is the user IP (the sample IP, or for a sample in
 * kernel mode the user IP the kernel was entered from), the others are
 * return addresses (callers should look up ip-1 for them). Kernel frames
 * are not included (callchain_kernel_ips() has them). Returns the number of
 * frames (0 for a kernel-mode sample without user registers) and sets
 * *outcome.
 */
unsigned unwinder_unwind(struct unwinder *u, const struct perf_sample *s,
			 uint64_t *ips, unsigned max, enum unwind_outcome *outcome);

/*
 * The outcome of the kernel's frame-pointer callchain of s (--unwind=fp):
 * ips[0..n) as callchain_ips() returned them (kernel part first) with
 * *outcome UNWIND_ROOT, its claim that the chain ended by itself. Returns
 * UNWIND_MAX_DEPTH when the kernel stopped at its own depth limit
 * (kernel.perf_event_max_stack), else what root.h makes of the last frame
 * (UNWIND_ROOT, UNWIND_NO_ROOT, UNWIND_BAD_FRAME), with the CFI rules u
 * caches. Walks by unwinder_unwind() are classified the same way inside it.
 */
enum unwind_outcome unwinder_callchain_outcome(struct unwinder *u, const struct perf_sample *s,
					       const uint64_t *ips, unsigned n);

/*
 * Which path unwound the samples: the cached-rule fast path or libunwind
 * (the reference, used for whatever the fast path does not model). With
 * PMUTOP_UNWIND_VERIFY=1 in the environment every fast-path sample is also
 * unwound by libunwind and differences are counted (libunwind's result is
 * kept) — except stacks that needed .debug_frame, which only the fast path
 * reads; PMUTOP_UNWIND=libunwind turns the fast path off.
 */
struct unwind_stats {
	uint64_t fast, slow;
	uint64_t verified, mismatches;
	uint64_t ref_short;  /* libunwind stopped early where the fast path reached the root */
	uint64_t go_spliced; /* continued on the kernel's frame-pointer chain (gostack.h) */
};
void unwinder_get_stats(const struct unwinder *u, struct unwind_stats *st);

#endif
