/*
 * resolve.c - what the parsed options name on this machine (resolve.h).
 *
 * Kept apart from cli.c so that parsing stays a pure function of argv; this
 * file reads /proc and sysctls, once, before the session opens anything.
 */
#include "pmutop/frontend/resolve.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pmutop/target/proc.h"

/* Below this many events between samples a hardware counter interrupts the
 * CPU far more often than the kernel lets it (it throttles). */
#define MIN_HW_PERIOD 1000ULL

static void add_note(struct pmutop_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void add_note(struct pmutop_opts *o, const char *fmt, ...)
{
	va_list ap;

	if (o->nnotes == CLI_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(o->notes[o->nnotes++], sizeof(o->notes[0]), fmt, ap);
	va_end(ap);
}

static void comm_of(pid_t pid, char *buf, size_t len)
{
	if (proc_thread_name(pid, pid, buf, len))
		snprintf(buf, len, "?");
}

/* A kernel thread cannot be profiled: say why and what to do instead. */
static int refuse_kernel_thread(pid_t tid, const char *how, char *err, size_t errlen)
{
	char comm[64];

	comm_of(tid, comm, sizeof(comm));
	snprintf(err, errlen, "%s %d (%s) is a kernel thread: it has no user space to sample or "
		 "unwind; to see kernel functions, profile a process that calls into the kernel "
		 "with -e EVENT:k (or use perf record -a -g for the whole system)", how, (int)tid, comm);
	return -EINVAL;
}

/* -p TID: the process of a thread id, like perf; kernel threads refused. */
static int resolve_pid(struct pmutop_opts *o, char *err, size_t errlen)
{
	pid_t tgid;
	bool kthread;
	int r = proc_thread_group(o->pid, &tgid, &kthread);

	if (r == -ENOENT || r == -ESRCH) {
		snprintf(err, errlen, "no such process: PID %d", (int)o->pid);
		return -ESRCH;
	}
	if (r)
		return 0; /* unreadable here: the session's checks say why */
	if (kthread)
		return refuse_kernel_thread(o->pid, "PID", err, errlen);
	if (tgid != o->pid) {
		char tname[64], pname[64];

		if (proc_thread_name(tgid, o->pid, tname, sizeof(tname)))
			snprintf(tname, sizeof(tname), "?");
		comm_of(tgid, pname, sizeof(pname));
		add_note(o, "%d is thread \"%s\" of process %d (%s): profiling the whole process, as "
			 "perf does (-t %d for that thread only)", (int)o->pid, tname, (int)tgid, pname,
			 (int)o->pid);
		o->pid = tgid;
	}
	return 0;
}

/* -t TID[,TID]: threads of one process, which becomes the target. */
static int resolve_tids(struct pmutop_opts *o, char *err, size_t errlen)
{
	pid_t first = 0;

	for (size_t i = 0; i < o->ntids; i++) {
		pid_t tgid;
		bool kthread;
		int r = proc_thread_group(o->tids[i], &tgid, &kthread);

		if (r) {
			snprintf(err, errlen, "-t %d: no such thread (%s)", (int)o->tids[i],
				 strerror(r == -ENOENT ? ESRCH : -r));
			return r == -ENOENT ? -ESRCH : r;
		}
		if (kthread)
			return refuse_kernel_thread(o->tids[i], "-t", err, errlen);
		if (i == 0)
			first = tgid;
		if (tgid != first) {
			snprintf(err, errlen, "-t: thread %d belongs to process %d and thread %d to "
				 "process %d; give threads of one process (or one -p PID)",
				 (int)o->tids[0], (int)first, (int)o->tids[i], (int)tgid);
			return -EINVAL;
		}
	}
	if (o->pid && o->pid != first) {
		snprintf(err, errlen, "-t %d is a thread of process %d, not of -p %d", (int)o->tids[0],
			 (int)first, (int)o->pid);
		return -EINVAL;
	}
	o->pid = first;
	return 0;
}

unsigned long long resolve_min_period(const struct pmutop_opts *o, long max_rate)
{
	unsigned long long min = 1, clock_min = max_rate > 0 ? (1000000000ULL + (unsigned long long)max_rate - 1) / (unsigned long long)max_rate : 1;
	size_t n = o->nevents ? o->nevents : 1;

	for (size_t k = 0; k < n; k++) {
		const struct pmu_event *ev = o->nevents ? &o->events[k] : &o->event;
		unsigned long long m = 1;

		if (ev->unit && !strcmp(ev->unit, "nanoseconds"))
			m = clock_min;
		else if (ev->hardware)
			m = MIN_HW_PERIOD;
		/* without -e, a missing PMU turns cycles into task-clock */
		if (!o->event_given && ev->hardware && clock_min > m)
			m = clock_min;
		if (m > min)
			min = m;
	}
	return min;
}

/* -F above the kernel's maximum and periods too short: raised, with one note each. */
static void resolve_limits(struct pmutop_opts *o)
{
	long max_rate = 0;

	if (proc_sysctl_int("kernel/perf_event_max_sample_rate", &max_rate) || max_rate <= 0)
		return;
	if (o->freq > (unsigned long long)max_rate) {
		add_note(o, "-F %llu is above kernel.perf_event_max_sample_rate=%ld: sampling at %ld Hz "
			 "(as perf does)", (unsigned long long)o->freq, max_rate, max_rate);
		o->freq = (uint64_t)max_rate;
	}
	if (o->period) {
		unsigned long long min = resolve_min_period(o, max_rate);

		if (o->period < min) {
			/*
			 * Without -e, cycles may become task-clock where there is no PMU:
			 * which event gets the period is known once the session opened
			 * it, and its note says so then (after the fallback's).
			 */
			if (!o->event_given && o->event.hardware)
				o->period_asked = o->period;
			else
				add_note(o, "--period %llu is shorter than %s can be sampled at "
					 "(kernel.perf_event_max_sample_rate=%ld): using %llu",
					 (unsigned long long)o->period, o->event.name, max_rate, min);
			o->period = min;
		}
	}
}

int resolve_target(struct pmutop_opts *o, char *err, size_t errlen)
{
	int r = 0;

	if (o->load || o->list_events)
		return 0;
	if (o->ntids) {
		r = resolve_tids(o, err, errlen);
	} else if (o->npids) {
		/* -p A,B: each one (a thread id means its process). */
		for (size_t i = 0; i < o->npids && !r; i++) {
			o->pid = o->pids[i];
			r = resolve_pid(o, err, errlen);
			o->pids[i] = o->pid;
		}
		o->pid = o->pids[0];
	} else if (o->pid) {
		r = resolve_pid(o, err, errlen);
	}
	if (r)
		return r;
	resolve_limits(o);
	return 0;
}
