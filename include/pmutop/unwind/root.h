/*
 * root.h - whether a stack that ended by itself ended where a thread
 * starts (issue 31).
 *
 * An unwinder stops when it finds no caller: the CFI says the return
 * address is undefined (the outermost frame), a frame-pointer chain meets
 * a zero or a pointer that leads nowhere, libunwind's heuristics give up.
 * Only the first is a proof of the root; the kernel's frame-pointer chain
 * through code built without frame pointers stops anywhere, often on a
 * value that is not a return address at all ("[heap]+0xc3a5f", "0x5"),
 * and such stacks were counted as "reached root". So "reached root" is
 * decided from what the outermost frame is, whichever engine walked it.
 */
#ifndef PMUTOP_UNWIND_ROOT_H
#define PMUTOP_UNWIND_ROOT_H

#include <stdbool.h>
#include <stdint.h>

#include "pmutop/unwind/unwind.h"

struct maps;

/*
 * What the outermost frame of a stack that ended by itself is. addr is
 * its lookup address (the leaf IP, or a return address minus one);
 * cfi_root(arg, addr) (may be NULL) says whether the CFI marks the return
 * address at addr undefined. Returns:
 *   UNWIND_ROOT      a thread's first frame: the CFI says so; or its
 *                    function is a known thread entry by name (_start,
 *                    __libc_start_main, __libc_start_call_main, clone,
 *                    clone3, start_thread, _dl_start_user, ... and Go's
 *                    top frames: runtime.goexit, runtime.mstart,
 *                    runtime.rt0_go, TOPFRAME); or it is the function at
 *                    the ELF entry point of its file (a stripped _start);
 *   UNWIND_BAD_FRAME not code: no mapping, or one that is not executable
 *                    ([heap], [stack], data) - the walk followed a value
 *                    that was no return address;
 *   UNWIND_NO_ROOT   code, but not where a thread starts: the walk was
 *                    cut on the way (a frame without a frame pointer).
 * A kernel address (the kernel's own stack of a kernel thread) is
 * UNWIND_ROOT: the kernel's chain ends at its thread entry.
 */
enum unwind_outcome unwind_root_classify(const struct maps *maps, uint64_t addr,
					 bool (*cfi_root)(void *arg, uint64_t addr), void *arg);

/* Whether name is one of the thread entries above (C, C++, Go runtime). */
bool unwind_root_name(const char *name);

#endif
