/*
 * fuzz_perf_record.c - fuzz target: arbitrary perf ring-buffer records.
 *
 * Input layout:
 *   byte 0      flags: bit 0 = take sample_type/regs_mask from the input
 *               (else pmutop's own), bit 1 = keep the header's size field
 *               as given (else patch it to the record length, so that the
 *               body is what gets explored)
 *   bytes 1-16  sample_type, regs_mask (little-endian u64 each)
 *   bytes 17-   the record, header first
 * The record is copied into a buffer of exactly its length, so ASan sees
 * any read past its end; every pointer the decoder returns (stack copy,
 * file name, comm) is then read in full.
 */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pmutop/sample/perf_record.h"

#define FUZZ_PR_HDR 17

static void fuzz_touch_rec(const struct perf_rec *r)
{
	volatile uint64_t sink = 0;

	switch (r->kind) {
	case PREC_SAMPLE:
		for (uint64_t i = 0; i < r->sample.stack_size; i++)
			sink += r->sample.stack[i];
		for (int i = 0; i < PMUTOP_NREGS; i++)
			sink += r->sample.regs[i];
		break;
	case PREC_MMAP:
		sink += strlen(r->mmap.filename);
		break;
	case PREC_COMM:
		sink += strlen(r->comm.comm);
		break;
	default:
		break;
	}
	(void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t st = PMUTOP_SAMPLE_TYPE_BASE, mask = PMUTOP_REGS_MASK;
	struct perf_rec r;
	uint8_t *rec;
	size_t len;

	if (size < FUZZ_PR_HDR)
		return 0;
	if (data[0] & 1) {
		memcpy(&st, data + 1, 8);
		memcpy(&mask, data + 9, 8);
	}
	len = size - FUZZ_PR_HDR;
	rec = malloc(len ? len : 1);
	if (!rec)
		return 0;
	memcpy(rec, data + FUZZ_PR_HDR, len);
	if (!(data[0] & 2) && len >= sizeof(struct perf_event_header)) {
		uint16_t sz = (uint16_t)len;

		memcpy(rec + offsetof(struct perf_event_header, size), &sz, sizeof(sz));
	}
	if (perf_record_decode(rec, len, st, mask, &r) == 0)
		fuzz_touch_rec(&r);
	free(rec);
	return 0;
}
