/*
 * test_callchain.c - the fp engine: PERF_SAMPLE_CALLCHAIN records decode
 * into perf_sample.callchain, and callchain_ips() turns them into frames,
 * leaf first, without the PERF_CONTEXT_* markers, bounded by max.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pmutop/unwind/callchain.h"
#include "pmutop/sample/perf_record.h"

#define FP_SAMPLE_TYPE                                                          \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

struct buf {
	uint8_t b[2048];
	size_t n;
};

static void put64(struct buf *b, uint64_t v)
{
	memcpy(b->b + b->n, &v, 8);
	b->n += 8;
}

/* A sample record with the given callchain entries. */
static void build(struct buf *b, const uint64_t *chain, uint64_t nr)
{
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER };

	memset(b, 0, sizeof(*b));
	b->n = sizeof(h);
	put64(b, 0x401234);                 /* IP */
	put64(b, (uint64_t)11 << 32 | 10);  /* pid 10, tid 11 */
	put64(b, 5555);                     /* TIME */
	put64(b, 0);                        /* CPU, res */
	put64(b, 100000);                   /* PERIOD */
	put64(b, nr);
	for (uint64_t i = 0; i < nr; i++)
		put64(b, chain[i]);
	h.size = (uint16_t)b->n;
	memcpy(b->b, &h, sizeof(h));
}

static void decodes_and_drops_markers(void **state)
{
	const uint64_t chain[] = { PERF_CONTEXT_USER, 0x401234, 0x401500, 0x7f0000001000 };
	struct buf b;
	struct perf_rec r;
	uint64_t ips[8];
	enum unwind_outcome o;
	unsigned n;

	(void)state;
	build(&b, chain, 4);
	assert_int_equal(perf_record_decode(b.b, b.n, FP_SAMPLE_TYPE, 0, &r), 0);
	assert_int_equal(r.sample.nr_callchain, 4);
	assert_non_null(r.sample.callchain);
	assert_int_equal(r.sample.period, 100000);
	assert_int_equal(r.sample.abi, 0);
	n = callchain_ips(&r.sample, ips, 8, &o);
	assert_int_equal(n, 3);
	assert_int_equal(ips[0], 0x401234);
	assert_int_equal(ips[1], 0x401500);
	assert_int_equal(ips[2], 0x7f0000001000);
	assert_int_equal(o, UNWIND_ROOT);
}

static void kernel_then_user(void **state)
{
	const uint64_t chain[] = { PERF_CONTEXT_KERNEL, 0xffffffff81000010ULL, PERF_CONTEXT_USER,
				   0x401234, 0x401500 };
	struct buf b;
	struct perf_rec r;
	uint64_t ips[8];
	enum unwind_outcome o;

	(void)state;
	build(&b, chain, 5);
	assert_int_equal(perf_record_decode(b.b, b.n, FP_SAMPLE_TYPE, 0, &r), 0);
	assert_int_equal(callchain_ips(&r.sample, ips, 8, &o), 3);
	assert_int_equal(ips[0], 0xffffffff81000010ULL);
	assert_int_equal(ips[1], 0x401234);
}

/* The kernel part alone, for stacking on a user stack unwound from registers. */
static void kernel_part_only(void **state)
{
	const uint64_t chain[] = { PERF_CONTEXT_KERNEL, 0xffffffff81000010ULL, 0xffffffff81000200ULL,
				   0xffffffff81000300ULL, PERF_CONTEXT_USER, 0x401234 };
	struct buf b;
	struct perf_rec r;
	uint64_t ips[8];

	(void)state;
	build(&b, chain, 6);
	assert_int_equal(perf_record_decode(b.b, b.n, FP_SAMPLE_TYPE, 0, &r), 0);
	assert_int_equal(callchain_kernel_ips(&r.sample, ips, 8), 3);
	assert_true(ips[0] == 0xffffffff81000010ULL && ips[2] == 0xffffffff81000300ULL);
	assert_int_equal(callchain_kernel_ips(&r.sample, ips, 2), 2);
	/* A user-mode sample without a callchain: nothing; kernel mode: the IP. */
	r.sample.callchain = NULL;
	r.sample.nr_callchain = 0;
	assert_int_equal(callchain_kernel_ips(&r.sample, ips, 8), 0);
	r.sample.misc = PERF_RECORD_MISC_KERNEL;
	r.sample.ip = 0xffffffff81000042ULL;
	assert_int_equal(callchain_kernel_ips(&r.sample, ips, 8), 1);
	assert_true(ips[0] == 0xffffffff81000042ULL);
}

static void bounded_by_max_and_zero(void **state)
{
	const uint64_t chain[] = { PERF_CONTEXT_USER, 1, 2, 3, 4, 0, 5 };
	struct buf b;
	struct perf_rec r;
	uint64_t ips[8];
	enum unwind_outcome o;

	(void)state;
	build(&b, chain, 7);
	assert_int_equal(perf_record_decode(b.b, b.n, FP_SAMPLE_TYPE, 0, &r), 0);
	assert_int_equal(callchain_ips(&r.sample, ips, 2, &o), 2);
	assert_int_equal(o, UNWIND_MAX_DEPTH);
	/* A zero ends the chain (garbage past the outermost frame). */
	assert_int_equal(callchain_ips(&r.sample, ips, 8, &o), 4);
	assert_int_equal(o, UNWIND_ROOT);
	assert_int_equal(callchain_ips(&r.sample, ips, 0, &o), 0);
}

static void empty_chain_keeps_ip(void **state)
{
	const uint64_t chain[] = { PERF_CONTEXT_USER };
	struct buf b;
	struct perf_rec r;
	uint64_t ips[4];
	enum unwind_outcome o;

	(void)state;
	build(&b, chain, 1);
	assert_int_equal(perf_record_decode(b.b, b.n, FP_SAMPLE_TYPE, 0, &r), 0);
	assert_int_equal(callchain_ips(&r.sample, ips, 4, &o), 1);
	assert_int_equal(ips[0], 0x401234);
	assert_int_equal(o, UNWIND_NO_REGS);
	build(&b, NULL, 0);
	assert_int_equal(perf_record_decode(b.b, b.n, FP_SAMPLE_TYPE, 0, &r), 0);
	assert_null(r.sample.callchain);
	assert_int_equal(callchain_ips(&r.sample, ips, 4, &o), 1);
}

static void oversized_nr_rejected(void **state)
{
	const uint64_t chain[] = { PERF_CONTEXT_USER, 1, 2 };
	struct buf b;
	struct perf_rec r;

	(void)state;
	build(&b, chain, 3);
	/* nr claims more entries than the record holds. */
	memcpy(b.b + sizeof(struct perf_event_header) + 40, &(uint64_t){ 1000 }, 8);
	assert_int_equal(perf_record_decode(b.b, b.n, FP_SAMPLE_TYPE, 0, &r), -EINVAL);
	/* Truncated in the middle of the chain. */
	build(&b, chain, 3);
	for (size_t len = sizeof(struct perf_event_header) + 48; len < b.n; len++) {
		struct perf_event_header h;
		memcpy(&h, b.b, sizeof(h));
		h.size = (uint16_t)len;
		memcpy(b.b, &h, sizeof(h));
		assert_int_equal(perf_record_decode(b.b, len, FP_SAMPLE_TYPE, 0, &r), -EINVAL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decodes_and_drops_markers),
		cmocka_unit_test(kernel_then_user),
		cmocka_unit_test(kernel_part_only),
		cmocka_unit_test(bounded_by_max_and_zero),
		cmocka_unit_test(empty_chain_keeps_ip),
		cmocka_unit_test(oversized_nr_rejected),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
