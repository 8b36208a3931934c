/*
 * perf_record.c - bounds-checked decoding of perf ring-buffer records.
 *
 * A cursor walks the record; every read checks the remaining length first,
 * so a malformed record (or fuzzed bytes) is rejected with -EINVAL instead of
 * being read past its end.
 */
#include "pmutop/sample/perf_record.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

struct cursor {
	const uint8_t *p, *end;
};

static int take(struct cursor *c, void *dst, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return -EINVAL;
	memcpy(dst, c->p, n);
	c->p += n;
	return 0;
}

static int skip(struct cursor *c, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return -EINVAL;
	c->p += n;
	return 0;
}

/* A NUL-terminated string that must end inside the record. */
static int take_str(struct cursor *c, const char **s)
{
	const uint8_t *nul = memchr(c->p, 0, (size_t)(c->end - c->p));
	if (!nul)
		return -EINVAL;
	*s = (const char *)c->p;
	c->p = nul + 1;
	return 0;
}

/* Sample types this decoder understands; anything else cannot be skipped safely. */
#define SUPPORTED_SAMPLE_TYPE                                                   \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |            \
	 PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |                 \
	 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |         \
	 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

static int decode_sample(struct cursor *c, uint64_t st, uint64_t regs_mask,
			 struct perf_sample *s)
{
	uint64_t u64;
	uint32_t u32[2];
	int nregs = __builtin_popcountll(regs_mask);

	if (st & ~(uint64_t)SUPPORTED_SAMPLE_TYPE || nregs > PMUTOP_NREGS)
		return -EINVAL;
	if ((st & PERF_SAMPLE_IDENTIFIER) && take(c, &s->id, 8))
		return -EINVAL;
	if ((st & PERF_SAMPLE_IP) && take(c, &s->ip, 8))
		return -EINVAL;
	if (st & PERF_SAMPLE_TID) {
		if (take(c, u32, 8))
			return -EINVAL;
		s->pid = u32[0];
		s->tid = u32[1];
	}
	if ((st & PERF_SAMPLE_TIME) && take(c, &s->time, 8))
		return -EINVAL;
	if ((st & PERF_SAMPLE_ADDR) && skip(c, 8))
		return -EINVAL;
	if ((st & PERF_SAMPLE_ID) && skip(c, 8))
		return -EINVAL;
	if ((st & PERF_SAMPLE_STREAM_ID) && skip(c, 8))
		return -EINVAL;
	if (st & PERF_SAMPLE_CPU) {
		if (take(c, u32, 8))
			return -EINVAL;
		s->cpu = u32[0];
	}
	if ((st & PERF_SAMPLE_PERIOD) && take(c, &s->period, 8))
		return -EINVAL;
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (take(c, &u64, 8) || u64 > (uint64_t)(c->end - c->p) / 8)
			return -EINVAL;
		/* Records are 8-byte aligned in the ring buffer and in the scratch copy. */
		s->callchain = u64 ? (const uint64_t *)(const void *)c->p : NULL;
		s->nr_callchain = u64;
		if (skip(c, u64 * 8))
			return -EINVAL;
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		if (take(c, &s->abi, 8))
			return -EINVAL;
		if (s->abi != PERF_SAMPLE_REGS_ABI_NONE &&
		    take(c, s->regs, (size_t)nregs * 8))
			return -EINVAL;
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		uint64_t size;
		if (take(c, &size, 8))
			return -EINVAL;
		if (size) {
			const uint8_t *data = c->p;
			uint64_t dyn;
			if (size > (uint64_t)(c->end - c->p) || skip(c, size) || take(c, &dyn, 8))
				return -EINVAL;
			/* dyn_size is what was really copied; never trust it past size. */
			s->stack = data;
			s->stack_size = dyn < size ? dyn : size;
		}
	}
	return 0;
}

int perf_record_decode(const void *rec, size_t len, uint64_t sample_type,
		       uint64_t regs_mask, struct perf_rec *out)
{
	struct perf_event_header h;
	struct cursor c = { rec, (const uint8_t *)rec + len };
	uint32_t u32[4];

	memset(out, 0, sizeof(*out));
	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, rec, sizeof(h));
	if (h.size != len)
		return -EINVAL;
	c.p += sizeof(h);

	switch (h.type) {
	case PERF_RECORD_SAMPLE:
		out->kind = PREC_SAMPLE;
		out->sample.misc = h.misc;
		return decode_sample(&c, sample_type, regs_mask, &out->sample);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		struct perf_mmap_rec *m = &out->mmap;
		out->kind = PREC_MMAP;
		if (take(&c, u32, 8) || take(&c, &m->start, 8) || take(&c, &m->len, 8) ||
		    take(&c, &m->pgoff, 8))
			return -EINVAL;
		m->pid = u32[0];
		m->tid = u32[1];
		/* A plain MMAP record only exists for executable mappings. */
		m->prot = 4; /* PROT_EXEC */
		if (h.type == PERF_RECORD_MMAP2) {
			uint64_t gen;
			if (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
				if (skip(&c, 24))
					return -EINVAL;
			} else if (take(&c, u32, 8) || take(&c, &m->ino, 8) || take(&c, &gen, 8)) {
				return -EINVAL;
			} else {
				m->maj = u32[0];
				m->min = u32[1];
			}
			if (take(&c, u32, 8))
				return -EINVAL;
			m->prot = u32[0];
			m->flags = u32[1];
		}
		return take_str(&c, &m->filename);
	}
	case PERF_RECORD_COMM:
		out->kind = PREC_COMM;
		if (take(&c, u32, 8) || take_str(&c, &out->comm.comm))
			return -EINVAL;
		out->comm.pid = u32[0];
		out->comm.tid = u32[1];
		out->comm.exec = !!(h.misc & PERF_RECORD_MISC_COMM_EXEC);
		return 0;
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		out->kind = h.type == PERF_RECORD_EXIT ? PREC_EXIT : PREC_FORK;
		if (take(&c, u32, 16) || take(&c, &out->task.time, 8))
			return -EINVAL;
		out->task.pid = u32[0];
		out->task.ppid = u32[1];
		out->task.tid = u32[2];
		out->task.ptid = u32[3];
		return 0;
	case PERF_RECORD_LOST:
		out->kind = PREC_LOST;
		if (skip(&c, 8) || take(&c, &out->lost, 8))
			return -EINVAL;
		return 0;
	case PERF_RECORD_LOST_SAMPLES:
		out->kind = PREC_LOST_SAMPLES;
		return take(&c, &out->lost, 8);
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		out->kind = h.type == PERF_RECORD_THROTTLE ? PREC_THROTTLE : PREC_UNTHROTTLE;
		return take(&c, &out->throttle_time, 8);
	case PERF_RECORD_SWITCH: {
		/* No body: the sample_id trailer (TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER) says who and when. */
		struct perf_switch_rec *w = &out->sw;
		out->kind = PREC_SWITCH;
		w->out = !!(h.misc & PERF_RECORD_MISC_SWITCH_OUT);
		w->preempt = w->out && (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
		if (sample_type & PERF_SAMPLE_TID) {
			if (take(&c, u32, 8))
				return -EINVAL;
			w->pid = u32[0];
			w->tid = u32[1];
		}
		if ((sample_type & PERF_SAMPLE_TIME) && take(&c, &w->time, 8))
			return -EINVAL;
		return 0;
	}
	default:
		out->kind = PREC_OTHER;
		return 0;
	}
}

int perf_record_time(const void *rec, size_t len, uint64_t sample_type, uint64_t *time)
{
	struct perf_event_header h;
	size_t off;

	if (!(sample_type & PERF_SAMPLE_TIME) || len < sizeof(h))
		return -EINVAL;
	memcpy(&h, rec, sizeof(h));
	if (h.size != len)
		return -EINVAL;
	if (h.type == PERF_RECORD_SAMPLE) {
		/* IDENTIFIER, IP and TID come before TIME, each 8 bytes when asked for. */
		off = sizeof(h) + 8 * (size_t)(!!(sample_type & PERF_SAMPLE_IDENTIFIER) +
					       !!(sample_type & PERF_SAMPLE_IP) +
					       !!(sample_type & PERF_SAMPLE_TID));
	} else {
		/* The trailer ends the record: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER. */
		size_t after = 8 * (size_t)(1 + !!(sample_type & PERF_SAMPLE_ID) +
					    !!(sample_type & PERF_SAMPLE_STREAM_ID) +
					    !!(sample_type & PERF_SAMPLE_CPU) +
					    !!(sample_type & PERF_SAMPLE_IDENTIFIER));
		if (len < sizeof(h) + after)
			return -EINVAL;
		off = len - after;
	}
	if (off + 8 > len)
		return -EINVAL;
	memcpy(time, (const uint8_t *)rec + off, 8);
	return 0;
}
