/*
 * ring.c - framing the records of a perf_event ring buffer (see ring.h).
 */
#include "pmutop/sample/ring.h"

#include <linux/perf_event.h>
#include <string.h>

/* n bytes from ring position off (may wrap) into out. */
static void ring_copy(const struct ring *r, uint64_t off, void *out, size_t n)
{
	size_t first = (size_t)(r->size - off);

	if (first >= n) {
		memcpy(out, r->data + off, n);
	} else {
		memcpy(out, r->data + off, first);
		memcpy((uint8_t *)out + first, r->data, n - first);
	}
}

enum ring_step ring_next(const struct ring *r, uint64_t head, uint64_t tail,
			 const uint8_t **rec, size_t *len)
{
	struct perf_event_header h;
	uint64_t off;

	if (tail >= head)
		return RING_EMPTY;
	if (head - tail < sizeof(h))
		return RING_CORRUPT;
	off = tail & (r->size - 1);
	ring_copy(r, off, &h, sizeof(h));
	if (h.size < sizeof(h) || h.size > head - tail || h.size > r->size)
		return RING_CORRUPT;
	if (off + h.size <= r->size) {
		*rec = r->data + off;
	} else {
		if (h.size > r->scratch_size)
			return RING_CORRUPT;
		ring_copy(r, off, r->scratch, h.size);
		*rec = r->scratch;
	}
	*len = h.size;
	return RING_RECORD;
}
