/*
 * ring.h - framing the records of a perf_event ring buffer.
 *
 * The kernel writes variable-size records (perf_event_header first) into a
 * power-of-two data area and advances data_head; the reader advances
 * data_tail. A record may wrap around the end of the area, its header too.
 * This is the one place that frames them, apart from the mmap and the
 * atomics (sampler.c), so that what a corrupt header does is decided here
 * and tested without a kernel: a header whose size is below the header's
 * own, beyond what the kernel has written, or beyond the scratch space is
 * corrupt, and nothing after it can be framed.
 */
#ifndef PMUTOP_RING_H
#define PMUTOP_RING_H

#include <stddef.h>
#include <stdint.h>

struct ring {
	const uint8_t *data;   /* the data area */
	uint64_t size;         /* its size, a power of two */
	uint8_t *scratch;      /* where a wrapped record is made contiguous */
	size_t scratch_size;   /* >= 65535 holds any record */
};

enum ring_step {
	RING_EMPTY,            /* tail has reached head */
	RING_RECORD,           /* *rec, *len: the record at tail */
	RING_CORRUPT,          /* the header at tail cannot be framed */
};

/*
 * The record at position tail of the ring (head: the kernel's data_head,
 * read with acquire order). RING_RECORD sets *rec (in the ring, or in the
 * scratch space if it wraps) and *len (its size: the caller's next tail is
 * tail + *len). On RING_CORRUPT the caller gives the whole unread part back
 * (tail = head) and counts it: there is no way to find the next record.
 */
enum ring_step ring_next(const struct ring *r, uint64_t head, uint64_t tail,
			 const uint8_t **rec, size_t *len);

#endif
