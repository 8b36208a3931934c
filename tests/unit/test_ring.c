/*
 * test_ring.c - framing perf ring-buffer records (ring.c): records that
 * fit, records and headers that wrap around the end of the data area, and
 * corrupt headers (size 0, below the header's own size, beyond what the
 * kernel wrote, larger than the area), which must stop the framing at once
 * rather than loop or read out of bounds. sampler.c's drain loop gives the
 * unread part back and counts it on RING_CORRUPT.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <linux/perf_event.h>

#include "pmutop/sample/ring.h"

#define SIZE 64

static uint8_t area[SIZE];
static uint8_t scratch[65536];

/* Write a record of `size` bytes (header + a byte pattern) at position pos. */
static void put(uint64_t pos, uint16_t size, uint32_t type, uint8_t fill)
{
	uint8_t rec[256];
	struct perf_event_header h = { .type = type, .misc = 0, .size = size };

	memset(rec, fill, sizeof(rec));
	memcpy(rec, &h, sizeof(h));
	for (unsigned i = 0; i < size; i++)
		area[(pos + i) & (SIZE - 1)] = rec[i];
}

static struct ring ring(void)
{
	struct ring r = { .data = area, .size = SIZE, .scratch = scratch,
			  .scratch_size = sizeof(scratch) };
	return r;
}

/* Frame every record in [tail, head); returns the count, *corrupt set if it stopped on one. */
static unsigned drain(uint64_t head, uint64_t tail, int *corrupt, uint32_t *types)
{
	struct ring r = ring();
	unsigned n = 0;

	*corrupt = 0;
	for (;;) {
		const uint8_t *rec;
		size_t len;
		enum ring_step st = ring_next(&r, head, tail, &rec, &len);
		struct perf_event_header h;

		if (st == RING_EMPTY)
			break;
		if (st == RING_CORRUPT) {
			*corrupt = 1;
			break;
		}
		memcpy(&h, rec, sizeof(h));
		assert_int_equal(h.size, len);
		/* The body is contiguous and intact, wrapped or not. */
		for (size_t i = sizeof(h); i < len; i++)
			assert_int_equal(rec[i], (uint8_t)(0xa0 + n));
		types[n++] = h.type;
		tail += len;
	}
	return n;
}

static void records_that_fit(void **state)
{
	uint32_t t[8];
	int corrupt;

	(void)state;
	put(0, 16, 1, 0xa0);
	put(16, 24, 2, 0xa1);
	assert_int_equal(drain(40, 0, &corrupt, t), 2);
	assert_false(corrupt);
	assert_int_equal(t[0], 1);
	assert_int_equal(t[1], 2);
	/* Nothing new: empty. */
	assert_int_equal(drain(40, 40, &corrupt, t), 0);
	assert_false(corrupt);
}

static void body_and_header_wrap(void **state)
{
	uint32_t t[8];
	int corrupt;

	(void)state;
	/* Positions grow forever; the area is indexed modulo 64. */
	put(48, 24, 3, 0xa0);            /* body wraps: 48..71 */
	put(72, 16, 4, 0xa1);            /* 72..87 */
	assert_int_equal(drain(88, 48, &corrupt, t), 2);
	assert_false(corrupt);
	put(124, 20, 5, 0xa0);           /* the header itself wraps: 124..143 */
	assert_int_equal(drain(144, 124, &corrupt, t), 1);
	assert_false(corrupt);
	assert_int_equal(t[0], 5);
}

static void corrupt_headers_stop(void **state)
{
	uint32_t t[8];
	int corrupt;

	(void)state;
	put(0, 16, 1, 0xa0);
	put(16, 0, 9, 0xa1);             /* size 0: would loop forever */
	assert_int_equal(drain(48, 0, &corrupt, t), 1);
	assert_true(corrupt);
	put(16, 4, 9, 0xa1);             /* smaller than a header */
	assert_int_equal(drain(48, 0, &corrupt, t), 1);
	assert_true(corrupt);
	put(16, 40, 9, 0xa1);            /* beyond what the kernel wrote (head 48) */
	assert_int_equal(drain(48, 0, &corrupt, t), 1);
	assert_true(corrupt);
	/* Larger than the whole area, though head says it is all written. */
	put(0, 200, 9, 0xa0);
	assert_int_equal(drain(1000, 0, &corrupt, t), 0);
	assert_true(corrupt);
	/* Fewer bytes written than a header. */
	put(0, 16, 1, 0xa0);
	assert_int_equal(drain(20, 0, &corrupt, t), 1);
	assert_true(corrupt);
}

/* Random bytes never make the framing read out of bounds or loop (ASan/UBSan watch). */
static void garbage_never_loops(void **state)
{
	uint32_t seed = 12345, t[SIZE];

	(void)state;
	for (int round = 0; round < 20000; round++) {
		struct ring r = ring();
		uint64_t tail = seed % 4096, head = tail + (seed >> 8) % 200;
		unsigned steps = 0;

		for (unsigned i = 0; i < SIZE; i++) {
			seed = seed * 1103515245u + 12345u;
			area[i] = (uint8_t)(seed >> 16);
		}
		for (;;) {
			const uint8_t *rec;
			size_t len;
			enum ring_step st = ring_next(&r, head, tail, &rec, &len);

			if (st != RING_RECORD)
				break;
			assert_true(len >= sizeof(struct perf_event_header));
			assert_true(len <= head - tail);
			t[steps % SIZE] = rec[len - 1];  /* touch the last byte */
			tail += len;
			assert_true(++steps <= 200);
		}
	}
	(void)t;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(records_that_fit),
		cmocka_unit_test(body_and_header_wrap),
		cmocka_unit_test(corrupt_headers_stop),
		cmocka_unit_test(garbage_never_loops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
