/*
 * proc.h - what pmutop learns about a target from /proc.
 *
 * Thread lists, thread and process names, and the pre-flight checks that turn
 * "it does not work" into "turn this knob" before any counter is opened.
 */
#ifndef PMUTOP_PROC_H
#define PMUTOP_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/*
 * Fill tids[0..*n) with the thread ids of pid (at most cap). Returns 0 or
 * -errno (-ESRCH when the process is gone).
 */
int proc_list_threads(pid_t pid, pid_t *tids, size_t cap, size_t *n);

/* Thread name (comm) of pid/tid into buf; returns 0 or -errno. */
int proc_thread_name(pid_t pid, pid_t tid, char *buf, size_t len);

/*
 * Arguments of pid as the kernel keeps them: each NUL-terminated, *nbytes
 * bytes in all (cut at len - 1). Returns 0 or -errno.
 */
int proc_argv(pid_t pid, char *buf, size_t len, size_t *nbytes);

/* Command line of pid, arguments joined by spaces; returns 0 or -errno. */
int proc_cmdline(pid_t pid, char *buf, size_t len);

/*
 * The process (thread group id) thread tid belongs to, and whether it is a
 * kernel thread (PF_KTHREAD: no user space). Returns 0 or -errno (-ENOENT
 * when there is no such thread).
 */
int proc_thread_group(pid_t tid, pid_t *tgid, bool *kernel_thread);

/*
 * The roots and every live descendant of them (from the parent pids in
 * /proc/PID/stat), roots first, into out[0..*n) (at most cap). Returns 0,
 * -ENOSPC when there are more, or -errno.
 */
int proc_descendants(const pid_t *roots, size_t nroots, pid_t *out, size_t cap, size_t *n);

/* Read an integer sysctl such as "kernel/perf_event_paranoid"; -errno on failure. */
int proc_sysctl_int(const char *name, long *value);

/*
 * Check pid exists and that we may observe it. On failure returns -errno and
 * writes an actionable message (which pid, which knob) into err.
 */
int proc_check_target(pid_t pid, char *err, size_t errlen);

/*
 * Why kernel-mode sampling is refused and which knob allows it, in one
 * phrase ("kernel.perf_event_paranoid=2; kernel mode needs <= 1, ..."),
 * written into buf. Returns buf.
 */
const char *proc_kernel_sampling_hint(char *buf, size_t len);

/*
 * When pid started, on the wall clock (CLOCK_REALTIME, the clock of file
 * mtimes): so a file can be told to be older than the process, e.g. a
 * perf map left behind by an earlier process with the same pid. The start
 * in /proc/PID/stat (clock ticks since boot) is moved onto the wall clock
 * by the current CLOCK_BOOTTIME to CLOCK_REALTIME offset: exact to a tick,
 * off by any step of the wall clock since. Returns 0 or -errno.
 */
int proc_start_realtime(pid_t pid, struct timespec *when);

/*
 * Explain a perf_event_open() failure for tid in err: errno plus which knob
 * (perf_event_paranoid, hardware PMU absent, fd limits). Returns -err_no.
 */
int proc_explain_perf_error(int err_no, pid_t tid, const char *event,
			    char *err, size_t errlen);

#endif
