/*
 * offcpu.h - off-CPU blocks from context-switch samples and records.
 *
 * `-e offcpu` samples PERF_COUNT_SW_CONTEXT_SWITCHES on every switch-out
 * (the thread's user registers and stack at the moment it leaves the CPU:
 * where it blocks) and asks for PERF_RECORD_SWITCH records (switch-out with
 * the PREEMPT flag, switch-in). A block is the time from a thread's
 * switch-out to its next switch-in; its stack is the switch-out sample's.
 *
 * The records of one thread come through the buffers of several CPUs (it
 * leaves one CPU and comes back on another), and pmutop drains one buffer
 * after the other, so records arrive out of time order. This tracker
 * queues them and pairs them in time order only up to a horizon the caller
 * knows to be complete (the start of its last full drain, less a margin),
 * keeping the rest for later. Pure bookkeeping: the stack is an opaque
 * payload the caller allocates (owned here until handed back by emit or
 * drop), so it is unit-tested without a kernel.
 */
#ifndef PMUTOP_OFFCPU_H
#define PMUTOP_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One finished block: a thread off the CPU from start to end (ns). */
struct offcpu_block {
	uint32_t pid, tid;
	uint64_t start, end;     /* CLOCK_MONOTONIC ns, as in the records */
	bool preempted;          /* the kernel took the CPU away (SWITCH_OUT_PREEMPT) */
	bool initial;            /* already blocked when recording started */
	/*
	 * Why it ended: 0 the thread ran again, 1 it exited, 2 recording
	 * stopped while it was still off the CPU.
	 */
	int ended_by;
	void *payload;           /* its stack (caller's), or NULL: no sample came */
};

struct offcpu_ops {
	/* A block is finished; the callee now owns b->payload (may be NULL). */
	void (*emit)(void *arg, const struct offcpu_block *b);
	/* A payload that will never be emitted (its block was lost). */
	void (*drop)(void *arg, void *payload);
	void *arg;
};

struct offcpu_stats {
	uint64_t blocks;         /* emitted */
	uint64_t no_stack;       /* emitted without a stack (sample throttled or lost) */
	uint64_t unmatched;      /* switch-outs whose switch-in never came (records lost) */
	uint64_t orphan_in;      /* switch-ins with no switch-out before them */
	uint64_t late;           /* records of a thread after its exit (ignored) */
	uint64_t ended_by_exit, ended_by_stop;
	uint64_t queued;         /* records waiting for the horizon now */
	uint64_t late_looks;     /* stackless blocks given a stack by offcpu_set_stack() */
};

struct offcpu;

/*
 * A tracker for a recording that started at `start` (ns, the records'
 * clock): a thread whose first record is a switch-in was blocked since then.
 * NULL on ENOMEM.
 */
struct offcpu *offcpu_new(const struct offcpu_ops *ops, uint64_t start);
/* Drops every payload still held; NULL is a no-op. */
void offcpu_free(struct offcpu *o);

/*
 * Queue a switch-out sample (payload: its stack, owned here from now on),
 * a PERF_RECORD_SWITCH (out, with preempt; or in), or a thread found
 * blocked when recording started (at `start`, its stack read from /proc).
 * Return 0 or -ENOMEM (the payload is then dropped through ops->drop).
 */
int offcpu_sample(struct offcpu *o, uint32_t pid, uint32_t tid, uint64_t time, void *payload);
int offcpu_switch(struct offcpu *o, uint32_t pid, uint32_t tid, uint64_t time, bool out,
		  bool preempt);
int offcpu_initial(struct offcpu *o, uint32_t pid, uint32_t tid, void *payload);
/* A thread created at `time` (FORK record): it was not blocked before. */
int offcpu_thread_new(struct offcpu *o, uint32_t pid, uint32_t tid, uint64_t time);

/* Pair everything queued with a time at or before horizon, in time order. */
void offcpu_flush(struct offcpu *o, uint64_t horizon);

/*
 * Thread tid exited at `time` (its EXIT record): its queued records up to
 * then are paired, a block still open ends at `time`, and later records of
 * it are ignored (counted as late). offcpu_end_process() does the same for
 * every thread of pid seen so far.
 */
void offcpu_end_thread(struct offcpu *o, uint32_t tid, uint64_t time);
void offcpu_end_process(struct offcpu *o, uint32_t pid, uint64_t time);

/* Recording ended at `end`: pair all that is queued, end open blocks at `end`. */
void offcpu_finish(struct offcpu *o, uint64_t end);

/*
 * Blocks still open with no stack (their switch-out sample was throttled or
 * lost) that began before `before`: up to max of them, each listed once,
 * their pid and tid in pids[]/tids[]. The caller may look at such a thread
 * (it is still blocked) and hand its stack to offcpu_set_stack(), which
 * attaches it to the open block (0), or drops it when the block has ended
 * meanwhile (-ESRCH). The payload is owned here either way.
 */
size_t offcpu_stackless(struct offcpu *o, uint64_t before, uint32_t *pids, uint32_t *tids,
			size_t max);
int offcpu_set_stack(struct offcpu *o, uint32_t tid, void *payload);

void offcpu_get_stats(const struct offcpu *o, struct offcpu_stats *st);

#endif
