/*
 * sampler.h - perf_event counters on every thread of a target process.
 *
 * One counter per (thread, CPU), all redirected into one ring buffer per CPU
 * (owned by a dummy event on pmutop itself, so the buffer outlives any target
 * thread). Counters are inherited by threads the target creates later
 * (inherit + inherit_thread), so new threads are sampled from their first
 * instruction; a periodic rescan of /proc/PID/task is the safety net for
 * threads created while attaching. The memory this needs is one buffer per
 * CPU whatever the thread count, which keeps a 1,000-thread target within a
 * non-root user's perf_event_mlock_kb.
 */
#ifndef PMUTOP_SAMPLER_H
#define PMUTOP_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pmutop/sample/events.h"

struct perf_rec;

struct sampler_config {
	pid_t pid;              /* the target; or the first of pids[] */
	/*
	 * Several targets (-p A,B, --subprocesses): when npids > 0, pids[]
	 * (copied) replace pid. Each one's threads are attached and rescanned.
	 */
	const pid_t *pids;
	size_t npids;
	/*
	 * Follow child processes: counters are inherited by forks too (not only
	 * by new threads), so a child is sampled from its first instruction
	 * and its FORK/COMM/MMAP2/EXIT records come through the same buffers.
	 */
	bool children;
	/*
	 * The whole machine (-a): one counter per CPU on every task (pid -1),
	 * no per-thread counters, no rescans; pids are ignored.
	 */
	bool system_wide;
	struct pmu_event event;
	uint64_t period;        /* events per sample, or Hz when freq */
	/*
	 * Several events at once: when nevents > 0, events[]/periods[] replace
	 * event/period. Each is its own counter on every (thread, CPU), sampling
	 * at its own period; samples say which through perf_sample.event.
	 */
	size_t nevents;
	struct pmu_event events[PMUTOP_MAX_EVENTS];
	uint64_t periods[PMUTOP_MAX_EVENTS];
	bool freq;
	bool kernel;            /* also sample kernel mode, with the kernel's callchain */
	unsigned stack_size;    /* bytes of user stack copied per sample */
	unsigned mmap_pages;    /* data pages per CPU buffer (power of 2); 0 = auto */
	bool enable_on_exec;    /* launch mode: start counting at exec */
	/*
	 * What a sample carries for unwinding (--unwind): the default, user
	 * registers + stack_size bytes of stack + the kernel's frame-pointer
	 * callchain (for Go's stack switches); the kernel's frame-pointer
	 * callchain (user only unless kernel); or only the IP (the ptrace
	 * engine reads the stack itself).
	 */
	enum { SAMPLER_STACK_COPY = 0, SAMPLER_CALLCHAIN, SAMPLER_IP_ONLY } stack_mode;
	unsigned wakeup_events; /* wake the reader every N samples; 0 = at a quarter-full buffer */
	/*
	 * perf's -t: only these threads of pid (ntids > 0), without inheritance,
	 * so threads they create are not followed. The array must outlive the
	 * sampler.
	 */
	const pid_t *tids;
	size_t ntids;
};

struct sampler_stats {
	size_t threads_attached;   /* counters currently open, in threads */
	size_t threads_seen;       /* distinct threads ever attached or inherited */
	size_t attach_failures;    /* threads that vanished while being attached */
	unsigned mmap_pages;       /* data pages per CPU buffer in use */
	unsigned ncpus;
	uint64_t corrupt;          /* ring-buffer headers that made no sense (rest of that drain given back) */
	uint64_t undecodable;      /* well-framed records perf_record_decode() rejected */
};

struct sampler;

/*
 * Bytes of one stack-copy sample record (SAMPLER_STACK_COPY): header, ids,
 * registers and stack_size bytes of stack. A ring buffer must hold two of
 * them: a record that can never fit is dropped without a trace, since the
 * kernel writes its LOST record only in front of a record that fits.
 */
size_t sampler_sample_size(unsigned stack_size);

/*
 * Open counters on every thread of cfg->pid (or pids[], or every CPU). On
 * failure returns NULL with
 * an actionable message in err (which tid, which knob).
 */
struct sampler *sampler_new(const struct sampler_config *cfg, char *err, size_t errlen);
void sampler_free(struct sampler *s);

/* An fd that becomes readable when any buffer has data (for poll/epoll). */
int sampler_fd(const struct sampler *s);

/*
 * Rescan /proc/PID/task and attach to threads not yet covered. Returns the
 * number of threads newly attached, or -errno.
 */
int sampler_rescan(struct sampler *s);

/* A thread exited (from a PREC_EXIT record): close its counters if we own any. */
void sampler_thread_exited(struct sampler *s, pid_t tid);

/* The callback gets each decoded record; return non-zero to stop draining. */
typedef int (*sampler_fn)(void *arg, const struct perf_rec *rec);

/*
 * Drain the buffers, calling fn for each record in timestamp order across
 * CPUs (a child's FORK sits in its parent's CPU's buffer, its first samples
 * in another's: merged, the FORK comes first). Records newer than horizon
 * (CLOCK_MONOTONIC ns) stay in the buffers for a later drain: a record is
 * published a little after its timestamp is taken, so a caller that reads
 * the clock before draining and passes that time less a margin gets every
 * record up to the horizon in order. UINT64_MAX drains everything. Returns
 * the number of records read.
 */
long sampler_drain(struct sampler *s, uint64_t horizon, sampler_fn fn, void *arg);

/* Enable counting now (attach mode starts enabled; this is for tests). */
int sampler_enable(struct sampler *s);

void sampler_get_stats(const struct sampler *s, struct sampler_stats *st);

/*
 * How long each event was enabled and actually counting, summed over the
 * threads whose counters are still open (inherited ones included), with
 * enabled normalised per CPU. running < enabled means the PMU multiplexed
 * more events than it has counters. Returns 0 or -errno.
 */
int sampler_read_times(const struct sampler *s, uint64_t *enabled, uint64_t *running);

#endif
