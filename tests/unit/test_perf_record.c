/*
 * test_perf_record.c - decoding perf ring-buffer records: fields land where
 * the kernel's layout puts them, and short or inconsistent records are
 * rejected instead of read past their end.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmutop/sample/perf_record.h"

struct buf {
	uint8_t b[4096];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}

static void put32x2(struct buf *b, uint32_t x, uint32_t y)
{
	uint32_t v[2] = { x, y };
	put(b, v, 8);
}

static void finish(struct buf *b, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = (uint16_t)b->n };
	memcpy(b->b, &h, sizeof(h));
}

static void build_sample(struct buf *b, uint64_t stack_size, uint64_t dyn)
{
	memset(b, 0, sizeof(*b));
	b->n = sizeof(struct perf_event_header);
	put64(b, 0x401000);           /* IP */
	put32x2(b, 100, 101);         /* pid, tid */
	put64(b, 123456789);          /* TIME */
	put32x2(b, 1, 0);             /* CPU */
	put64(b, 250000);             /* PERIOD */
	put64(b, PERF_SAMPLE_REGS_ABI_64);
	for (int i = 0; i < PMUTOP_NREGS; i++)
		put64(b, 0x1000 + (uint64_t)i);
	put64(b, stack_size);
	for (uint64_t i = 0; i < stack_size; i++) {
		uint8_t c = (uint8_t)i;
		put(b, &c, 1);
	}
	if (stack_size)
		put64(b, dyn);
	finish(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
}

static void sample_fields(void **state)
{
	struct buf b;
	struct perf_rec r;

	(void)state;
	build_sample(&b, 64, 40);
	assert_int_equal(perf_record_decode(b.b, b.n, PMUTOP_SAMPLE_TYPE_BASE, PMUTOP_REGS_MASK, &r), 0);
	assert_int_equal(r.kind, PREC_SAMPLE);
	assert_int_equal(r.sample.ip, 0x401000);
	assert_int_equal(r.sample.pid, 100);
	assert_int_equal(r.sample.tid, 101);
	assert_int_equal(r.sample.time, 123456789);
	assert_int_equal(r.sample.cpu, 1);
	assert_int_equal(r.sample.period, 250000);
	assert_int_equal(r.sample.abi, PERF_SAMPLE_REGS_ABI_64);
	assert_int_equal(r.sample.regs[0], 0x1000);
	assert_int_equal(r.sample.regs[PMUTOP_NREGS - 1], 0x1000 + PMUTOP_NREGS - 1);
	/* dyn_size says how much of the copy is real. */
	assert_int_equal(r.sample.stack_size, 40);
	assert_int_equal(r.sample.stack[39], 39);
}

static void dyn_size_never_exceeds_copy(void **state)
{
	struct buf b;
	struct perf_rec r;

	(void)state;
	build_sample(&b, 32, 1000000);
	assert_int_equal(perf_record_decode(b.b, b.n, PMUTOP_SAMPLE_TYPE_BASE, PMUTOP_REGS_MASK, &r), 0);
	assert_int_equal(r.sample.stack_size, 32);
	build_sample(&b, 0, 0);
	assert_int_equal(perf_record_decode(b.b, b.n, PMUTOP_SAMPLE_TYPE_BASE, PMUTOP_REGS_MASK, &r), 0);
	assert_null(r.sample.stack);
}

static void truncated_records_rejected(void **state)
{
	struct buf b;
	struct perf_rec r;

	(void)state;
	build_sample(&b, 64, 64);
	for (size_t len = 0; len < b.n; len++) {
		struct buf c = b;
		struct perf_event_header h;
		memcpy(&h, c.b, sizeof(h));
		h.size = (uint16_t)len;
		memcpy(c.b, &h, sizeof(h));
		assert_int_equal(perf_record_decode(c.b, len, PMUTOP_SAMPLE_TYPE_BASE,
						    PMUTOP_REGS_MASK, &r), -EINVAL);
	}
	/* Header size disagreeing with the buffer length. */
	assert_int_equal(perf_record_decode(b.b, b.n - 8, PMUTOP_SAMPLE_TYPE_BASE, PMUTOP_REGS_MASK, &r),
			 -EINVAL);
	/* A sample_type the decoder cannot walk (PERF_SAMPLE_RAW). */
	assert_int_equal(perf_record_decode(b.b, b.n, PMUTOP_SAMPLE_TYPE_BASE | PERF_SAMPLE_RAW,
					    PMUTOP_REGS_MASK, &r), -EINVAL);
}

static void mmap2_and_comm(void **state)
{
	struct buf b = { .n = sizeof(struct perf_event_header) };
	struct perf_rec r;
	const char name[] = "/usr/lib/libfoo.so\0\0\0\0\0\0";

	(void)state;
	put32x2(&b, 7, 8);
	put64(&b, 0x7f0000000000);
	put64(&b, 0x2000);
	put64(&b, 0x1000);
	put32x2(&b, 8, 1);            /* maj, min */
	put64(&b, 4242);              /* ino */
	put64(&b, 0);                 /* ino generation */
	put32x2(&b, 5, 2);            /* prot R|X, flags */
	put(&b, name, sizeof(name) - 1);
	finish(&b, PERF_RECORD_MMAP2, 0);
	assert_int_equal(perf_record_decode(b.b, b.n, PMUTOP_SAMPLE_TYPE_BASE, PMUTOP_REGS_MASK, &r), 0);
	assert_int_equal(r.kind, PREC_MMAP);
	assert_int_equal(r.mmap.pid, 7);
	assert_int_equal(r.mmap.start, 0x7f0000000000);
	assert_int_equal(r.mmap.len, 0x2000);
	assert_int_equal(r.mmap.pgoff, 0x1000);
	assert_int_equal(r.mmap.maj, 8);
	assert_int_equal(r.mmap.ino, 4242);
	assert_int_equal(r.mmap.prot, 5);
	assert_string_equal(r.mmap.filename, "/usr/lib/libfoo.so");

	/* A file name without a terminating NUL inside the record. */
	b.n -= 8;
	memset(b.b + b.n - 16, 'x', 16);
	finish(&b, PERF_RECORD_MMAP2, 0);
	assert_int_equal(perf_record_decode(b.b, b.n, PMUTOP_SAMPLE_TYPE_BASE, PMUTOP_REGS_MASK, &r),
			 -EINVAL);

	memset(&b, 0, sizeof(b));
	b.n = sizeof(struct perf_event_header);
	put32x2(&b, 7, 9);
	put(&b, "worker\0\0", 8);
	finish(&b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	assert_int_equal(perf_record_decode(b.b, b.n, PMUTOP_SAMPLE_TYPE_BASE, PMUTOP_REGS_MASK, &r), 0);
	assert_int_equal(r.kind, PREC_COMM);
	assert_int_equal(r.comm.tid, 9);
	assert_string_equal(r.comm.comm, "worker");
	assert_true(r.comm.exec);
}

static void lost_exit_throttle(void **state)
{
	struct buf b = { .n = sizeof(struct perf_event_header) };
	struct perf_rec r;

	(void)state;
	put64(&b, 1);
	put64(&b, 77);
	finish(&b, PERF_RECORD_LOST, 0);
	assert_int_equal(perf_record_decode(b.b, b.n, PMUTOP_SAMPLE_TYPE_BASE, PMUTOP_REGS_MASK, &r), 0);
	assert_int_equal(r.kind, PREC_LOST);
	assert_int_equal(r.lost, 77);

	b.n = sizeof(struct perf_event_header);
	put32x2(&b, 10, 1);
	put32x2(&b, 11, 10);
	put64(&b, 5);
	finish(&b, PERF_RECORD_EXIT, 0);
	assert_int_equal(perf_record_decode(b.b, b.n, PMUTOP_SAMPLE_TYPE_BASE, PMUTOP_REGS_MASK, &r), 0);
	assert_int_equal(r.kind, PREC_EXIT);
	assert_int_equal(r.task.pid, 10);
	assert_int_equal(r.task.tid, 11);

	b.n = sizeof(struct perf_event_header);
	put64(&b, 99);
	put64(&b, 1);
	put64(&b, 1);
	finish(&b, PERF_RECORD_THROTTLE, 0);
	assert_int_equal(perf_record_decode(b.b, b.n, PMUTOP_SAMPLE_TYPE_BASE, PMUTOP_REGS_MASK, &r), 0);
	assert_int_equal(r.kind, PREC_THROTTLE);
}

/* PERF_RECORD_SWITCH: who and when from the sample_id trailer, out/in and preempt from misc. */
static void context_switch(void **state)
{
	const uint64_t st = PMUTOP_SAMPLE_TYPE_BASE | PERF_SAMPLE_IDENTIFIER;
	struct buf b = { .n = sizeof(struct perf_event_header) };
	struct perf_rec r;

	(void)state;
	put32x2(&b, 10, 11);   /* TID */
	put64(&b, 123456789);  /* TIME */
	put32x2(&b, 1, 0);     /* CPU */
	put64(&b, 42);         /* IDENTIFIER */
	finish(&b, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
	assert_int_equal(perf_record_decode(b.b, b.n, st, PMUTOP_REGS_MASK, &r), 0);
	assert_int_equal(r.kind, PREC_SWITCH);
	assert_int_equal(r.sw.pid, 10);
	assert_int_equal(r.sw.tid, 11);
	assert_int_equal(r.sw.time, 123456789);
	assert_true(r.sw.out);
	assert_true(r.sw.preempt);

	finish(&b, PERF_RECORD_SWITCH, 0); /* a switch-in */
	assert_int_equal(perf_record_decode(b.b, b.n, st, PMUTOP_REGS_MASK, &r), 0);
	assert_false(r.sw.out);
	assert_false(r.sw.preempt);

	b.n = sizeof(struct perf_event_header) + 4; /* trailer cut short */
	finish(&b, PERF_RECORD_SWITCH, 0);
	assert_int_equal(perf_record_decode(b.b, b.n, st, PMUTOP_REGS_MASK, &r), -EINVAL);
}

/*
 * perf_record_time: a sample's TIME field, or the sample_id trailer's of a
 * side-band record (the sampler merges the CPUs' buffers in this order).
 */
static void record_time(void **state)
{
	const uint64_t st = PMUTOP_SAMPLE_TYPE_BASE | PERF_SAMPLE_IDENTIFIER;
	struct buf b;
	uint64_t t = 0;

	(void)state;
	/* A sample: IDENTIFIER, IP, TID, then TIME. */
	memset(&b, 0, sizeof(b));
	b.n = sizeof(struct perf_event_header);
	put64(&b, 42);                /* IDENTIFIER */
	put64(&b, 0x401000);          /* IP */
	put32x2(&b, 100, 101);        /* pid, tid */
	put64(&b, 5551212);           /* TIME */
	put32x2(&b, 1, 0);            /* CPU */
	finish(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	assert_int_equal(perf_record_time(b.b, b.n, st, &t), 0);
	assert_int_equal(t, 5551212);
	/* Without IDENTIFIER the field moves up (build_sample's layout). */
	build_sample(&b, 0, 0);
	assert_int_equal(perf_record_time(b.b, b.n, PMUTOP_SAMPLE_TYPE_BASE, &t), 0);
	assert_int_equal(t, 123456789);

	/* A FORK record: its body, then the trailer TID, TIME, CPU, IDENTIFIER. */
	memset(&b, 0, sizeof(b));
	b.n = sizeof(struct perf_event_header);
	put32x2(&b, 20, 10);          /* pid, ppid */
	put32x2(&b, 20, 10);          /* tid, ptid */
	put64(&b, 777);               /* the body's own time */
	put32x2(&b, 10, 10);          /* trailer: TID */
	put64(&b, 888);               /* TIME */
	put32x2(&b, 0, 0);            /* CPU */
	put64(&b, 42);                /* IDENTIFIER */
	finish(&b, PERF_RECORD_FORK, 0);
	assert_int_equal(perf_record_time(b.b, b.n, st, &t), 0);
	assert_int_equal(t, 888);

	/* Too short for a trailer, no TIME asked for, a size that disagrees. */
	b.n = sizeof(struct perf_event_header) + 8;
	finish(&b, PERF_RECORD_COMM, 0);
	assert_int_equal(perf_record_time(b.b, b.n, st, &t), -EINVAL);
	assert_int_equal(perf_record_time(b.b, b.n, st & ~(uint64_t)PERF_SAMPLE_TIME, &t), -EINVAL);
	assert_int_equal(perf_record_time(b.b, b.n - 1, st, &t), -EINVAL);
}

static void random_bytes_never_crash(void **state)
{
	uint8_t b[512];
	struct perf_rec r;

	(void)state;
	srand(1);
	for (int i = 0; i < 200000; i++) {
		size_t len = (size_t)(rand() % (int)sizeof(b));
		for (size_t j = 0; j < len; j++)
			b[j] = (uint8_t)rand();
		if (len >= sizeof(struct perf_event_header)) {
			struct perf_event_header h;
			memcpy(&h, b, sizeof(h));
			h.size = (uint16_t)len;
			h.type = (uint32_t)(rand() % 20);
			memcpy(b, &h, sizeof(h));
		}
		/* Either decodes within bounds or says no; ASan checks the rest. */
		int rc = perf_record_decode(b, len, PMUTOP_SAMPLE_TYPE_BASE, PMUTOP_REGS_MASK, &r);
		assert_true(rc == 0 || rc == -EINVAL);
		if (rc == 0 && r.kind == PREC_SAMPLE && r.sample.stack)
			assert_true(r.sample.stack + r.sample.stack_size <= b + len);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sample_fields),
		cmocka_unit_test(dyn_size_never_exceeds_copy),
		cmocka_unit_test(truncated_records_rejected),
		cmocka_unit_test(mmap2_and_comm),
		cmocka_unit_test(lost_exit_throttle),
		cmocka_unit_test(context_switch),
		cmocka_unit_test(record_time),
		cmocka_unit_test(random_bytes_never_crash),
	};
	return cmocka_run_group_tests_name("perf_record", tests, NULL, NULL);
}
