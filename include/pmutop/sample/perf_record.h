/*
 * perf_record.h - decoding of perf ring-buffer records.
 *
 * The kernel writes variable-length records whose layout depends on the
 * attr's sample_type. This module turns the raw bytes of one record into a
 * plain struct with bounds checks on every field, so the sampler loop (and a
 * fuzzer) can feed it anything without reading past the record.
 */
#ifndef PMUTOP_PERF_RECORD_H
#define PMUTOP_PERF_RECORD_H

#include <stddef.h>
#include <stdint.h>

/* The sample_type and register mask pmutop asks the kernel for. */
#define PMUTOP_SAMPLE_TYPE_BASE                                               \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |                \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER |       \
	 PERF_SAMPLE_STACK_USER)

/* Registers sampled, in perf's bit numbering (asm/perf_regs.h): AX..IP and R8..R15. */
#define PMUTOP_REGS_MASK (((1ULL << 9) - 1) | (((1ULL << 8) - 1) << 16))
#define PMUTOP_NREGS 17

enum perf_rec_kind {
	PREC_OTHER = 0, /* a record pmutop does not use */
	PREC_SAMPLE,
	PREC_MMAP,      /* PERF_RECORD_MMAP or MMAP2 */
	PREC_COMM,
	PREC_EXIT,
	PREC_FORK,
	PREC_LOST,
	PREC_THROTTLE,
	PREC_UNTHROTTLE,
	PREC_LOST_SAMPLES,
	PREC_SWITCH,    /* PERF_RECORD_SWITCH (attr.context_switch, for -e offcpu) */
};

struct perf_sample {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t ip;
	uint32_t cpu;
	uint64_t period;
	uint64_t abi;               /* PERF_SAMPLE_REGS_ABI_*; 0 = no user regs */
	uint64_t regs[PMUTOP_NREGS];/* indexed by perf register number order, packed */
	const uint8_t *stack;       /* copy of user stack from regs SP, or NULL */
	uint64_t stack_size;        /* valid bytes in stack (dyn_size) */
	uint16_t misc;              /* header misc: user/kernel mode */
	uint64_t id;                /* PERF_SAMPLE_IDENTIFIER: which counter (its parent's for inherited ones) */
	uint32_t event;             /* index of the event in the run (set by the sampler) */
	const uint64_t *callchain;  /* PERF_SAMPLE_CALLCHAIN entries as the kernel wrote them
	                             * (PERF_CONTEXT_* markers included), or NULL */
	uint64_t nr_callchain;
};

struct perf_mmap_rec {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	uint32_t maj, min;
	uint64_t ino;
	uint32_t prot, flags;
	const char *filename; /* NUL-terminated inside the record */
};

struct perf_comm_rec {
	uint32_t pid, tid;
	const char *comm;
	int exec;       /* PERF_RECORD_MISC_COMM_EXEC: the process exec'd */
};

struct perf_task_rec { /* FORK and EXIT */
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct perf_switch_rec {
	uint32_t pid, tid;      /* from the sample_id trailer (0 when not asked for) */
	uint64_t time;
	int out;                /* PERF_RECORD_MISC_SWITCH_OUT: leaving the CPU (else coming back) */
	int preempt;            /* ..._SWITCH_OUT_PREEMPT: taken off while runnable */
};

struct perf_rec {
	enum perf_rec_kind kind;
	union {
		struct perf_sample sample;
		struct perf_mmap_rec mmap;
		struct perf_comm_rec comm;
		struct perf_task_rec task;
		struct perf_switch_rec sw;
		uint64_t lost;      /* PREC_LOST, PREC_LOST_SAMPLES */
		uint64_t throttle_time;
	};
};

/*
 * Decode one record of len bytes (len includes the header). sample_type and
 * regs_mask are those of the attr that produced it; sample_id_all trailers
 * are ignored except on PERF_RECORD_SWITCH, whose tid and time are in it. Returns 0, or -EINVAL for a record that is malformed or
 * inconsistent with sample_type (pointers in out point into rec).
 */
int perf_record_decode(const void *rec, size_t len, uint64_t sample_type,
		       uint64_t regs_mask, struct perf_rec *out);

/*
 * The timestamp of any record without decoding it: a sample's TIME field,
 * or the sample_id_all trailer's of a side-band record (MMAP, COMM, FORK,
 * LOST ...). The ring buffers of several CPUs are merged in this order
 * (sampler_drain). Returns 0, or -EINVAL when sample_type has no TIME or the
 * record is too short to hold it.
 */
int perf_record_time(const void *rec, size_t len, uint64_t sample_type, uint64_t *time);

#endif
