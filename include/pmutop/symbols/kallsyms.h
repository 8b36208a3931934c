/*
 * kallsyms.h - names for kernel code: /proc/kallsyms (modules included).
 *
 * Kernel frames come from PERF_SAMPLE_CALLCHAIN's kernel part as absolute
 * kernel addresses; they are named here from the kernel's own symbol table,
 * the way perf names them from [kernel.kallsyms]. The table is read once, at
 * the start of a session (reading it takes ~0.2 s, too long for the sampling
 * loop), sorted, and searched per frame.
 *
 * Each frame also gets a mapping, so the pprof output has one mapping for
 * the kernel image ("[kernel.kallsyms]", with the kernel's GNU build-id from
 * /sys/kernel/notes) and one per module ("[ext4]"); `go tool pprof` shows
 * them like any other mapping.
 *
 * When the kernel hides its addresses (kernel.kptr_restrict, or
 * perf_event_paranoid > 1 without CAP_SYSLOG), /proc/kallsyms lists every
 * symbol at address 0: that is detected, nothing is named from it, and every
 * kernel frame becomes one "[kernel]" frame (kallsyms_restricted() says so,
 * for the note the front end prints).
 */
#ifndef PMUTOP_KALLSYMS_H
#define PMUTOP_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct frame;
struct mapping;
struct kallsyms;

/* Whether addr is in the kernel half of the address space (x86_64, arm64). */
static inline bool kallsyms_is_kernel_addr(uint64_t addr)
{
	return addr >= 0xffff800000000000ULL;
}

/*
 * Read a kallsyms file (path NULL: /proc/kallsyms) and, when reading the real
 * one, the kernel's build-id. Returns NULL with a message in err when the
 * file cannot be read or on ENOMEM; a file whose addresses are all zero
 * gives a restricted table, not an error.
 */
struct kallsyms *kallsyms_load(const char *path, char *err, size_t errlen);
/* NULL is a no-op; every name and mapping handed out dies. */
void kallsyms_free(struct kallsyms *ks);

/* The addresses were hidden (all zero): kernel frames are "[kernel]". */
bool kallsyms_restricted(const struct kallsyms *ks);
/* Text symbols loaded (0 when restricted). */
size_t kallsyms_count(const struct kallsyms *ks);

/*
 * The text symbol containing addr: its name and offset, and the module it
 * belongs to (NULL for the kernel image). NULL when addr is outside every
 * symbol or the table is restricted.
 */
const char *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr, uint64_t *off,
			    const char **module);

/*
 * Name n kernel addresses (leaf first; callers at addr - 1, as
 * symbolize_stack does for user code) into frames: function, offset and the
 * mapping of the kernel image or module. A restricted table gives every
 * frame the name "[kernel]". Frames' strings and mappings live until
 * kallsyms_free().
 */
void kallsyms_symbolize(const struct kallsyms *ks, const uint64_t *ips, unsigned n,
			struct frame *out);

#endif
