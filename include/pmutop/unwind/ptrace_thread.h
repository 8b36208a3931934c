/*
 * ptrace_thread.h - stopping one thread of another process for a moment,
 * the py-spy way: PTRACE_SEIZE (no stop), PTRACE_INTERRUPT, wait for the
 * stop, read registers (PTRACE_GETREGSET) and stack (process_vm_readv, never
 * PTRACE_PEEKDATA per word), then resume or detach.
 *
 * Shared by `pmutop --stacks` (one look at every thread) and the ptrace
 * unwinding engine (one look per sample). Nothing here keeps state: callers
 * own the per-thread bookkeeping. Every function returns 0 or -errno.
 */
#ifndef PMUTOP_PTRACE_THREAD_H
#define PMUTOP_PTRACE_THREAD_H

#include <stdbool.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct perf_sample;
struct user_regs_struct;

/* What a waitpid() status of a seized thread means. */
enum pt_event {
	PT_INTERRUPT = 0, /* PTRACE_EVENT_STOP after our PTRACE_INTERRUPT (or a SIGCONT wake) */
	PT_GROUP_STOP,    /* PTRACE_EVENT_STOP of a group-stop (SIGSTOP, SIGTSTP, ...) */
	PT_SIGNAL,        /* signal-delivery-stop: sig must be re-injected on resume */
	PT_OTHER_EVENT,   /* another PTRACE_EVENT_* stop (exec, ...) */
	PT_GONE,          /* the thread exited or was killed */
};

struct pt_stop {
	enum pt_event ev;
	int sig;          /* PT_SIGNAL: the signal; PT_GROUP_STOP: the stop signal */
};

/* Classify a waitpid() status of a seized tracee. */
void pt_classify(int status, struct pt_stop *out);

/*
 * PTRACE_SEIZE tid without stopping it (no options: no exit-kill, no clone
 * tracing). -EPERM when we may not trace it or another tracer holds it,
 * -ESRCH when it is gone.
 */
int pt_seize(pid_t tid);

/* PTRACE_INTERRUPT: the thread enters a stop on its next way to user mode. */
int pt_interrupt(pid_t tid);

/*
 * Wait up to timeout_ms for a state change of tracee tid (waitpid __WALL).
 * Sleeps in sigtimedwait on SIGCHLD when the caller has SIGCHLD blocked,
 * else polls. If `stop_set` is not NULL and one of its signals is pending,
 * returns -EINTR early (the caller is being told to quit). Returns 0 with
 * *status filled, -ETIMEDOUT, -EINTR or -errno of waitpid.
 */
int pt_wait(pid_t tid, int timeout_ms, const sigset_t *stop_set, int *status);

/*
 * Leave a ptrace-stop: PTRACE_LISTEN for a group-stop (the thread stays
 * stopped as its process wants, and SIGCONT still wakes it), else
 * PTRACE_CONT re-injecting the signal of a signal-delivery-stop.
 */
int pt_resume(pid_t tid, const struct pt_stop *st);

/*
 * Detach a tracee that is in a ptrace-stop described by st: the signal of a
 * signal-delivery-stop is passed on; a group-stopped thread stays stopped.
 */
int pt_detach(pid_t tid, const struct pt_stop *st);

/*
 * Bring a seized thread to a stop and detach it, within timeout_ms. Signals
 * met on the way are re-injected. -ETIMEDOUT when it did not stop (it stays
 * seized until we exit, when the kernel detaches it).
 */
int pt_stop_and_detach(pid_t tid, int timeout_ms);

/* PTRACE_GETREGSET NT_PRSTATUS. */
int pt_get_regs(pid_t tid, struct user_regs_struct *regs);

/*
 * Fill the register part of a perf_sample (abi, regs in perf's packed
 * PMUTOP_REGS_MASK order, ip, misc = user) from ptrace registers, so the
 * snapshot unwinder can walk a stopped thread.
 */
void pt_regs_to_sample(const struct user_regs_struct *regs, struct perf_sample *s);

/*
 * Copy up to cap bytes of pid's memory from addr into buf with one
 * process_vm_readv, page by page so that a copy running off the end of the
 * stack mapping returns what was readable. *got = bytes copied (a prefix).
 */
int pt_read_stack(pid_t pid, uint64_t addr, void *buf, size_t cap, size_t *got);

/*
 * A thread blocked in the kernel, looked at without stopping it:
 * /proc/PID/task/TID/syscall gives the user stack pointer and program
 * counter it left user mode at (and the system call number, *nr; -1 when
 * it sleeps outside one, e.g. in a page fault), and up to cap bytes of its
 * stack are read into buf. Fills s like a stack-copy sample with only SP
 * and IP set (enough for CFI unwinding; a frame-pointer walk has no BP).
 * Returns 0, -EAGAIN when the thread is running, or -errno (-EACCES: not
 * ours to read).
 */
int pt_blocked_sample(pid_t pid, pid_t tid, void *buf, size_t cap, struct perf_sample *s,
		      long *nr);

/*
 * One look at a thread the --stacks way: seize, interrupt, wait up to
 * timeout_ms for the stop, read all registers and up to cap bytes of stack
 * into buf, detach (a signal met is passed on; a blocking system call is
 * restarted by the kernel as after any ptrace stop). Fills s like a
 * stack-copy sample. Returns 0 or -errno (-EPERM: not traceable here, e.g.
 * Yama's ptrace_scope or another tracer; the thread is then untouched).
 * -ETIMEDOUT: it did not stop in time (uninterruptible sleep) and is not
 * waited for again: it stays seized with its stop pending, and would stop
 * in tracing stop when it leaves the kernel, until the calling thread
 * exits (the kernel then lets it go) - see pt_snapshot_once().
 */
int pt_snapshot(pid_t pid, pid_t tid, void *buf, size_t cap, struct perf_sample *s,
		int timeout_ms);

/*
 * pt_snapshot() from a short-lived thread of its own, joined before
 * returning: a thread that did not stop in time (-ETIMEDOUT) is let go by
 * the kernel when that tracer thread ends - never left seized, nor stopped
 * later, by the caller's thread (issue 32: -e offcpu's looks left such a
 * thread in tracing stop until pmutop exited). The new thread has the
 * caller's signal mask. Same returns as pt_snapshot(), or -errno from
 * pthread_create.
 */
int pt_snapshot_once(pid_t pid, pid_t tid, void *buf, size_t cap, struct perf_sample *s,
		     int timeout_ms);

/* TracerPid of /proc/PID/status: >0 traced by it, 0 not traced, -errno. */
int pt_tracer_pid(pid_t pid);

/*
 * Explain a failed PTRACE_SEIZE of pid/tid in err: another tracer (its pid
 * and name, e.g. "already traced by PID 42 (strace)") with the way out
 * (--unwind=snapshot), permissions, or the errno. Returns -err_no.
 */
int pt_explain_seize_error(int err_no, pid_t pid, pid_t tid, char *err, size_t errlen);

/* State letter of /proc/PID/task/TID/stat (R, S, D, T, t, Z, ...) or '?'. */
char pt_thread_state(pid_t pid, pid_t tid);

/* A word for a state letter: "running", "sleeping", ... */
const char *pt_state_name(char state);

#endif
