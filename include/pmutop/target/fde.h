/*
 * fde.h - function ranges from the unwind tables: the FDEs of .eh_frame
 * (found through .eh_frame_hdr's sorted table) and .debug_frame, decoded
 * directly from their bytes.
 *
 * Why not libdw: code without a symbol (a stripped compiler's static
 * functions) is named and grouped by the FDE around each address, on the
 * sampling path. libdw only answers with the CFI *row* at an address, so
 * finding an FDE's extent took one dwarf_cfi_addrframe() per row, each
 * running the FDE's instructions from its start: quadratic in the size of
 * a function, and two thirds of pmutop's CPU on a parallel build of C
 * files (issue 31; the ring buffers overflowed). An FDE says its own range
 * (initial location, address range): reading those two fields is all a
 * lookup needs. With .eh_frame_hdr (every linked object GNU ld or lld
 * makes) a lookup is a binary search in the table plus one FDE header,
 * and nothing is built; without it, the sections are walked once into a
 * sorted index.
 *
 * All input is untrusted: every read is bounds-checked against the span
 * it was given; a corrupt table gives fewer ranges, never a crash.
 */
#ifndef PMUTOP_TARGET_FDE_H
#define PMUTOP_TARGET_FDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of a section (or of the segment holding it) and the address of data[0]. */
struct fde_span {
	const uint8_t *data;
	size_t len;
	uint64_t vaddr;    /* ELF vaddr of data[0] (.eh_frame's pc-relative pointers) */
	bool eh;           /* .eh_frame (CIE id 0, relative CIE pointers) or .debug_frame */
};

/*
 * The FDE whose header starts at byte off of s: its range [*start, *end)
 * in ELF vaddrs. 0, or -ENOENT (not an FDE: a CIE, a terminator, out of
 * bounds, an encoding this reader does not know) and -EINVAL (truncated).
 * *next (may be NULL) gets the offset of the entry after it, also on
 * -ENOENT for a CIE (0 when the walk cannot go on).
 */
int fde_decode(const struct fde_span *s, uint64_t off, uint64_t *start, uint64_t *end,
	       uint64_t *next);

/*
 * .eh_frame_hdr (hdr.vaddr its address): whether its search table is one
 * this reader can search (sorted, 4-byte entries relative to the header,
 * as every linker writes it), and where .eh_frame starts.
 */
bool fde_hdr_usable(const struct fde_span *hdr, uint64_t *eh_frame_vaddr);

/*
 * The table entry for vaddr: the initial location of the last FDE at or
 * below it and that FDE's address. 0, or -ENOENT (below the first, or an
 * unusable table).
 */
int fde_hdr_lookup(const struct fde_span *hdr, uint64_t vaddr, uint64_t *fde_start,
		   uint64_t *fde_vaddr);

/*
 * A sorted index of every FDE in n sections (walked once): for objects
 * without .eh_frame_hdr and for .debug_frame. Where two FDEs overlap, the
 * one from the earlier section wins (pass .eh_frame first). NULL only on
 * ENOMEM; an object without FDEs gives an empty index.
 */
struct fde_index;
struct fde_index *fde_index_build(const struct fde_span *secs, unsigned n);
void fde_index_free(struct fde_index *ix);
/* The range containing vaddr: 0, or -ENOENT. NULL ix finds nothing. */
int fde_index_find(const struct fde_index *ix, uint64_t vaddr, uint64_t *start, uint64_t *end);
/* How many ranges ix holds (0 for NULL). */
size_t fde_index_count(const struct fde_index *ix);

#endif
