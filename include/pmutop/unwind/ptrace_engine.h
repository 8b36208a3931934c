/*
 * ptrace_engine.h - the `--unwind=ptrace` engine: py-spy's way of taking a
 * stack, driven by perf counter overflows.
 *
 * Every thread of the target is PTRACE_SEIZEd (it keeps running). The
 * counters sample only the IP (no register or stack copy). For each sample
 * the engine interrupts that thread (PTRACE_INTERRUPT); when it reports the
 * stop, its registers (PTRACE_GETREGSET) and stack (one process_vm_readv)
 * are read, the stack is unwound with the project's remote unwinder, and
 * the thread resumes. The sample's own IP stays the leaf: the stop comes a
 * little after the overflow ("skid"), which the engine measures: time from
 * sample to stop and whether the thread still was in the sampled function.
 *
 * All of this is asynchronous: interrupts go out as samples are read and
 * stops are handled when the kernel reports them (SIGCHLD through a
 * signalfd, see ptrace_engine_fd()), so a thread that is runnable but not
 * on a CPU never makes pmutop wait. Signals the target receives while
 * seized are passed on (PTRACE_CONT with the signal), group-stops are kept
 * (PTRACE_LISTEN), and every thread is detached at the end, on errors and
 * on SIGINT/SIGTERM/SIGHUP (by the session); if pmutop is killed, the
 * kernel detaches them.
 */
#ifndef PMUTOP_PTRACE_ENGINE_H
#define PMUTOP_PTRACE_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pmutop/unwind/unwind.h"

struct maps;
struct perf_sample;
struct unwinder;

/*
 * Where finished samples go: tid, event index, frames (leaf first; ips[0]
 * is the sample's own IP, the others return addresses), how the unwind
 * ended and the sample's period (0 = the event's nominal period).
 */
typedef void (*ptrace_engine_emit_fn)(void *arg, uint32_t tid, uint32_t event,
				      const uint64_t *ips, unsigned n,
				      enum unwind_outcome outcome, uint64_t period);

struct ptrace_engine_stats {
	uint64_t samples;       /* samples handed to the engine */
	uint64_t stops;         /* ptrace-stops that served samples */
	uint64_t unwound;       /* samples that got a stack from a stop */
	uint64_t leaf_only;     /* samples left with their IP only (see below) */
	uint64_t gone;          /* ... because the thread exited before stopping */
	uint64_t untraced;      /* ... because the thread could not be traced */
	uint64_t overflow;      /* ... because too many were waiting for one stop */
	uint64_t same_func;     /* stopped in the sampled function */
	uint64_t in_callee;     /* stopped in a function the sampled one called */
	uint64_t elsewhere;     /* stopped somewhere else (returned, or a sibling call) */
	uint64_t signals;       /* signals passed on to the target */
	uint64_t group_stops;   /* group-stops kept with PTRACE_LISTEN */
	uint64_t threads;       /* threads seized */
	uint64_t not_stopped;   /* threads that did not stop at detach time */
	uint64_t skid_p50_ns, skid_p90_ns, skid_p99_ns, skid_max_ns; /* sample → stop */
};

struct ptrace_engine;

/*
 * Seize every thread of pid (running or not). child is pid when pmutop
 * launched it (it is then also our child; its exit status stays for the
 * session to reap), else 0. maps/unwinder are the session's and must
 * outlive the engine. Blocks SIGCHLD for the engine's signalfd (restored by
 * ptrace_engine_free). Returns NULL with a message in err: another tracer
 * ("already traced by PID N (strace) ... use --unwind=snapshot"),
 * permissions, or ENOMEM; threads seized so far are released first.
 */
struct ptrace_engine *ptrace_engine_new(pid_t pid, pid_t child, struct maps *maps,
					struct unwinder *u, unsigned max_depth,
					unsigned stack_size, ptrace_engine_emit_fn emit,
					void *arg, char *err, size_t errlen);

/* Readable when a tracee changed state (a signalfd for SIGCHLD). */
int ptrace_engine_fd(const struct ptrace_engine *e);

/* A sample of the target: interrupt its thread (seizing it if new). */
void ptrace_engine_sample(struct ptrace_engine *e, const struct perf_sample *smp);

/* A thread was created (PERF_RECORD_FORK): seize it now. */
void ptrace_engine_thread_new(struct ptrace_engine *e, pid_t tid);

/*
 * Handle every stop the kernel has reported, without blocking: serve the
 * samples waiting for it (emit), pass signals on, resume. Returns the
 * number of stops handled.
 */
int ptrace_engine_process(struct ptrace_engine *e);

/*
 * Stop and detach every thread (waiting at most timeout_ms in all), serving
 * samples still waiting. Idempotent; the engine only counts afterwards.
 */
void ptrace_engine_detach_all(struct ptrace_engine *e, int timeout_ms);

void ptrace_engine_get_stats(const struct ptrace_engine *e, struct ptrace_engine_stats *st);

/* One line for the summary (no newline). Returns buf. */
const char *ptrace_engine_summary(const struct ptrace_engine *e, char *buf, size_t len);

/* Detach everything left, restore the signal mask, free. NULL is a no-op. */
void ptrace_engine_free(struct ptrace_engine *e);

#endif
