/*
 * gostack.h - Go stacks across Go's stack switches, from the kernel's
 * frame-pointer callchain.
 *
 * Go code runs on goroutine stacks and switches to the thread's system
 * stack (g0) in runtime.systemstack, runtime.mcall and runtime.morestack,
 * and to a signal stack in runtime.sigtramp. DWARF CFI (or its absence in a
 * stripped binary) cannot follow those switches: the walk ends on g0 at the
 * switch, or in garbage. Go on amd64 always keeps frame pointers, and the
 * switches leave the frame-pointer register alone, so the chain the kernel
 * walked at the interrupt (PERF_SAMPLE_CALLCHAIN, user part) crosses them
 * exactly, while the thread runs on. The CFI walk stays right for the
 * frames it produced (a frameless Go leaf's caller, C and cgo frames); the
 * kernel's chain continues the stack from the last Go return address both
 * agree on.
 */
#ifndef PMUTOP_GOSTACK_H
#define PMUTOP_GOSTACK_H

#include <stdbool.h>
#include <stdint.h>

#include "pmutop/unwind/unwind.h"

struct maps;
struct perf_sample;

/*
 * The user part of s's callchain (the kernel's frame-pointer walk): up to
 * max addresses into out, leaf first. *truncated is set when the kernel
 * stopped at its depth limit (kernel.perf_event_max_stack = max_stack)
 * rather than at the end of the chain. Returns the count (0: none).
 */
unsigned gostack_user_chain(const struct perf_sample *s, unsigned max_stack,
			    const uint64_t **out, int *truncated);

/*
 * ips[0..n) is a CFI walk of s ending with *outcome. Where its last frame
 * in Go code (a module_is_go() module) is also in the kernel's chain and
 * the chain goes on beyond it (further than the walk does, or at all when
 * the walk did not reach the root), replace the walk's remaining frames with the
 * chain's. Returns the new frame count (<= max) and updates *outcome:
 * UNWIND_ROOT when the chain ended by itself, UNWIND_MAX_DEPTH when max or
 * the kernel's limit cut it; *spliced tells whether it did. Without a
 * callchain it changes nothing. is_root(arg, addr) says whether the code at
 * addr (a return address minus one, or the leaf IP) starts a stack
 * (runtime.goexit, runtime.mstart): the walk and the chain stop there, as
 * Go's own traceback does, since what the frame pointer holds beyond is
 * left over from the thread's creation.
 */
unsigned gostack_splice(const struct maps *maps, const struct perf_sample *s,
			unsigned max_stack, uint64_t *ips, unsigned n, unsigned max,
			enum unwind_outcome *outcome, bool *spliced,
			bool (*is_root)(void *arg, uint64_t addr), void *arg);

/* kernel.perf_event_max_stack (the kernel's callchain depth limit), 127 if unreadable. */
unsigned gostack_kernel_max_stack(void);

#endif
