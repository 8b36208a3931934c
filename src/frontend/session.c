/*
 * session.c - a live profiling session: attach or launch, then feed every
 * sample through unwind → symbolize → aggregate.
 *
 * Single-threaded and event-driven: one epoll set holds the sampler's ring
 * buffers, a signalfd (SIGINT/SIGTERM/SIGHUP) and a pidfd that becomes
 * readable when the target exits. Whatever ends the session (duration,
 * signal, target exit), session_stop() drains the buffers once more before
 * the counters close, so no sample the kernel delivered is lost.
 */
#include "pmutop/frontend/session.h"
#include "pmutop/frontend/broken_pipe.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pmutop/profile/aggregate.h"
#include "pmutop/unwind/callchain.h"
#include "pmutop/frontend/cli.h"
#include "pmutop/frontend/process.h"
#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"
#include "pmutop/target/pyproc.h"
#include "pmutop/sample/offcpu.h"
#include "pmutop/sample/perf_record.h"
#include "pmutop/target/proc.h"
#include "pmutop/unwind/ptrace_engine.h"
#include "pmutop/unwind/ptrace_thread.h"
#include "pmutop/sample/sampler.h"
#include "pmutop/symbols/debuginfo.h"
#include "pmutop/symbols/kallsyms.h"
#include "pmutop/symbols/perfmap.h"
#include "pmutop/symbols/pyframes.h"
#include "pmutop/symbols/symbolize.h"
#include "pmutop/unwind/unwind.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define RESCAN_INTERVAL_NS (50 * 1000000ULL)
#define MAPS_RELOAD_MIN_NS (100 * 1000000ULL)
/* Lines looked up, exited threads folded, caps applied (aggregate_maintain). */
#define MAINTAIN_INTERVAL_NS (1000 * 1000000ULL)
/*
 * Lines are looked up while sampling only after this long: opening a large
 * debug file (libc's: 100+ ms, seconds on a loaded machine) stalls the loop
 * once and the ring buffers overflow - a cost a long run amortises and a
 * short one should not pay (it gets its lines at the end).
 */
#define LINES_WHILE_SAMPLING_NS (10 * 1000000000ULL)
/*
 * At the end, DWARF still being read (loaded or looked up on the loader's
 * thread, debuginfo.h) is waited for this long at most, 2 s in the live
 * view: libc's debug file loads in 0.1 s, a large C++ program's in
 * seconds; a hostile debug file of two million CUs needs 17 s of CPU to
 * load, one whose CU has 40 million DIEs 2-3 s per address (issue 17),
 * which a --duration run must not wait for. A second Ctrl-C ends the wait
 * at once.
 */
#define FINAL_LOAD_WAIT_MS 10000
#define FINAL_LOAD_WAIT_LIVE_MS 2000
/*
 * -e offcpu: a switch-out is paired with its switch-in once every buffer
 * has been drained past it; a record is written within microseconds of
 * its timestamp, so records older than the last drain's start less this
 * are all in (sample/offcpu.h).
 */
#define OFFCPU_MARGIN_NS (20 * 1000000ULL)
/*
 * Records are handed on in time order across the CPUs' buffers up to the
 * drain's start less this (sampler_drain): a record can be published a
 * little after its timestamp (microseconds; a descheduled vCPU, longer).
 * What is newer waits for the next drain. Small against a buffer's span:
 * at 10k samples/s per CPU a 2 MiB buffer of 16 KiB samples holds 13 ms.
 */
#define ORDER_MARGIN_NS (2 * 1000000ULL)
/* Free heap pages go back to the kernel at least this often (maintain()). */
#define TRIM_INTERVAL_NS (30 * 1000000000ULL)

enum { EP_SAMPLER = 0, EP_SIGNAL, EP_PIDFD, EP_PTRACE };

struct session {
	const struct pmutop_opts *o;
	struct pmu_event event;          /* events[0] */
	uint64_t period;                 /* periods[0] */
	struct pmu_event events[PMUTOP_MAX_EVENTS];
	uint64_t periods[PMUTOP_MAX_EVENTS];
	size_t nevents;
	bool freq;
	pid_t pid;
	bool launched, child_running, stopped;
	int exit_status;
	int exec_errno;                  /* the launched command's exec error (0: none) */
	struct module_cache *modules;
	struct process_table *procs;     /* every process followed (process.h) */
	struct maps *maps;               /* the first target's, for --unwind=ptrace */
	struct unwinder *unwinder;       /* likewise */
	bool follow;                     /* follow processes other than the targets */
	pid_t *pids;                     /* the target processes (attach mode) */
	size_t npids;
	bool gave_terminal;              /* the command's group is the terminal's foreground */
	uint32_t self_pid;
	uint64_t unfollowed_samples;     /* of processes not followed (limit, setuid) */
	struct symbol_cache *symcache;
	struct pyframes *py;             /* Python frames of the samples (--python) */
	const struct perf_sample *cur_sample; /* the sample handle_sample() is adding, or NULL */
	bool kernel;                     /* kernel frames are sampled */
	const struct kallsyms *ks;       /* their names (NULL: user mode only) */
	struct kallsyms *ks_own;         /* ks when this session read it (else o->kallsyms) */
	char note[512];                  /* agg_info.note: what the profile leaves out */
	struct aggregate *agg;
	struct sampler *sampler;
	struct sampler_stats last_stats; /* kept when the sampler closes */
	struct ptrace_engine *pte;       /* --unwind=ptrace */
	uint64_t *ips;
	struct frame *frames;
	int ep, sigfd, pidfd;
	sigset_t old_mask;
	bool mask_set;
	uint64_t start_mono, deadline, next_rescan, last_maps_reload, next_maintain;
	uint64_t lines_after_ns;         /* file:line lookups while sampling from here on */
	uint64_t last_trim;              /* malloc_trim() last run (maintain()) */
	uint64_t final_lines_ns;         /* at most this long on lines at the end (0: all) */
	double start_cpu;
	enum session_state state;
	int signal;
	char cmdline[256];
	char why[128];
	/* Notes for the user (event fallback, lowered precision): shown by the front end. */
	char notes[512];
	unsigned stack_size;             /* bytes of stack per sample (--stack-size, or fitted) */
	/* Live view resets: counters of the windows before the last one, and when it began. */
	struct session_counts before;
	uint64_t window_mono, stop_mono;
	unsigned resets;
	struct offcpu *oc;               /* -e offcpu: switch-outs waiting for their switch-in */
	uint32_t offcpu_k;               /* its event index */
	uint64_t offcpu_lost;            /* blocks of processes already gone when they ended */
	long offcpu_initial;             /* threads found blocked at the start (-1: not looked) */
};

/* A switch-out's unwound stack, held until its block ends (sample/offcpu.h). */
struct oc_stack {
	unsigned n;
	enum unwind_outcome outcome;
	uint64_t ips[];
};

/* Add a line to the session's notes (kept for the front end to show). */
static void add_note(struct session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void add_note(struct session *s, const char *fmt, ...)
{
	size_t l = strlen(s->notes);
	va_list ap;

	if (l && l + 1 < sizeof(s->notes))
		s->notes[l++] = '\n';
	va_start(ap, fmt);
	vsnprintf(s->notes + l, sizeof(s->notes) - l, fmt, ap);
	va_end(ap);
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Counters need one fd per thread and CPU: use all the fds we may have. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* A thread's name (and its process) the first time one of its samples is counted. */
static void name_thread(struct session *s, struct process *p, uint32_t tid)
{
	const struct agg_thread *t = aggregate_thread(s->agg, tid);
	char name[32];

	if (t && t->name[0] && t->pid == (uint32_t)process_pid(p))
		return;
	/* Named by its COMM record already (a thread that renamed itself may
	 * be gone from /proc by now): keep that name, add the process. */
	if (t && t->name[0] && !t->pid) {
		aggregate_set_thread_process(s->agg, tid, (uint32_t)process_pid(p), process_comm(p));
		return;
	}
	if (proc_thread_name(process_pid(p), (pid_t)tid, name, sizeof(name)))
		snprintf(name, sizeof(name), "%s", process_comm(p)[0] ? process_comm(p) : "?");
	aggregate_set_thread_name(s->agg, tid, name);
	aggregate_set_thread_process(s->agg, tid, (uint32_t)process_pid(p), process_comm(p));
}

/*
 * The stack of a sample by the snapshot or fp engine (--unwind): the kernel
 * part first when kernel frames are sampled, then the user stack (the fp
 * engine's callchain has both already).
 */
static unsigned unwind_sample(struct session *s, struct process *p, const struct perf_sample *smp,
			      enum unwind_outcome *outcome)
{
	unsigned nk = 0;

	if (s->o->unwind == UNWIND_ENGINE_FP) {
		unsigned n = callchain_ips(smp, s->ips, s->o->max_depth, outcome);

		/* The chain says it ended; its last frame says whether at a root. */
		if (*outcome == UNWIND_ROOT)
			*outcome = unwinder_callchain_outcome(process_unwinder(p), smp, s->ips, n);
		return n;
	}
	if (s->kernel)
		nk = callchain_kernel_ips(smp, s->ips, s->o->max_depth);
	return nk + unwinder_unwind(process_unwinder(p), smp, s->ips + nk, s->o->max_depth - nk, outcome);
}

/*
 * perf's ":k" (kernel only): the kernel's frames of the stack, leaf first,
 * without the user stack under them. Kernel addresses are the upper half.
 */
static unsigned kernel_frames(const uint64_t *ips, unsigned n)
{
	unsigned k = 0;

	while (k < n && kallsyms_is_kernel_addr(ips[k]))
		k++;
	return k;
}

/*
 * Symbolize and count one unwound sample (period 0: the event's nominal
 * one). Kernel frames (on top) are named from kallsyms, the rest from the
 * target's maps.
 */
static void add_stack_top(struct session *s, struct process *p, uint32_t tid, uint32_t event,
			  const uint64_t *ips, unsigned n, enum unwind_outcome outcome,
			  uint64_t period, const char *top);

static void add_stack(struct session *s, struct process *p, uint32_t tid, uint32_t event,
		      const uint64_t *ips, unsigned n, enum unwind_outcome outcome, uint64_t period)
{
	add_stack_top(s, p, tid, event, ips, n, outcome, period, NULL);
}

/*
 * The same with a pseudo-frame `top` (NULL: none) as the leaf, for what
 * is not code: "[preempted]" off-CPU time. Its address (in the null page,
 * no mapping) keeps it a location of its own.
 */
static void add_stack_top(struct session *s, struct process *p, uint32_t tid, uint32_t event,
			  const uint64_t *ips, unsigned n, enum unwind_outcome outcome,
			  uint64_t period, const char *top)
{
	unsigned nk = 0;
	struct frame *frames = s->frames + (top != NULL);

	if (event < s->nevents && s->events[event].user == 0)
		n = kernel_frames(ips, n);
	if (ips)
		aggregate_info(s->agg)->outcomes[outcome]++;
	while (nk < n && kallsyms_is_kernel_addr(ips[nk]))
		nk++;
	if (nk && kallsyms_restricted(s->ks)) {
		/* No kernel names: the whole kernel part is one "[kernel]" frame. */
		kallsyms_symbolize(s->ks, ips, 1, frames);
		symbolize_stack_cached(s->symcache, process_maps(p), ips + nk, n - nk, frames + 1);
		n = n - nk + 1;
	} else if (n) {
		if (nk)
			kallsyms_symbolize(s->ks, ips, nk, frames);
		symbolize_stack_cached(s->symcache, process_maps(p), ips + nk, n - nk, frames + nk);
	}
	/*
	 * Off-CPU stacks all end in the scheduler (schedule, __schedule,
	 * schedule_hrtimeout_range, preempt_schedule_irq, ...): leave those
	 * frames out, so the leaf is what blocked (do_nanosleep, futex_wait,
	 * anon_pipe_read, ...).
	 */
	if (s->oc && event == s->offcpu_k) {
		unsigned k = 0;

		while (k < nk && k + 1 < n && frames[k].func && strstr(frames[k].func, "schedule"))
			k++;
		if (k) {
			memmove(frames, frames + k, (n - k) * sizeof(*frames));
			n -= k;
		}
	}
	if (top) {
		memset(s->frames, 0, sizeof(*s->frames));
		s->frames[0].func = top;
		s->frames[0].addr = top[1]; /* a distinct address per pseudo-frame */
		n++;
	}
	process_note_sample(p);
	name_thread(s, p, tid);
	/* Python frames in place of the interpreter loop (on-CPU samples: read now). */
	const struct frame *fr = s->frames;
	if (!top && !(s->oc && event == s->offcpu_k))
		n = pyframes_merge(s->py, process_pid(p), (pid_t)tid, s->cur_sample, s->frames, n,
				   &fr);
	/* On failure (ENOMEM) the aggregate counts nothing; the summary shows it. */
	aggregate_add_event(s->agg, tid, fr, n, event, period ? period : s->periods[event]);
}

/* ---- -e offcpu (sample/offcpu.h pairs the switches) ---- */

/* A finished off-CPU block: its stack weighted by its length in ns. */
static void oc_emit(void *arg, const struct offcpu_block *b)
{
	struct session *s = arg;
	struct oc_stack *st = b->payload;
	struct process *p = process_table_get(s->procs, (pid_t)b->pid);
	uint64_t ns = b->end > b->start ? b->end - b->start : 1;

	if (!p)
		s->offcpu_lost++; /* its process ended before (not followed, or gone) */
	else if (!st)
		add_stack_top(s, p, b->tid, s->offcpu_k, NULL, 0, UNWIND_ROOT, ns,
			      b->initial ? "[blocked since the start: stack unknown]"
					 : "[switch-out sample lost: stack unknown]");
	else
		add_stack_top(s, p, b->tid, s->offcpu_k, st->ips, st->n, st->outcome, ns,
			      b->preempted ? "[preempted]" : NULL);
	free(st);
}

static void oc_drop(void *arg, void *payload)
{
	(void)arg;
	free(payload);
}

/* s->ips[0..n) as a payload (NULL on ENOMEM). */
static struct oc_stack *oc_copy(struct session *s, unsigned n, enum unwind_outcome outcome)
{
	struct oc_stack *st = malloc(sizeof(*st) + n * sizeof(st->ips[0]));

	if (st) {
		st->n = n;
		st->outcome = outcome;
		memcpy(st->ips, s->ips, n * sizeof(st->ips[0]));
	}
	return st;
}

/* Keep an unwound switch-out stack until its switch-in. */
static void oc_hold(struct session *s, const struct perf_sample *smp, unsigned n,
		    enum unwind_outcome outcome, bool initial)
{
	struct oc_stack *st = oc_copy(s, n, outcome);

	if (initial)
		offcpu_initial(s->oc, smp->pid, smp->tid, st);
	else
		offcpu_sample(s->oc, smp->pid, smp->tid, smp->time, st);
}

/*
 * One look at a blocked thread of p into s->ips: all registers through
 * ptrace, as --stacks does (frame-pointer code needs BP); where ptrace is
 * refused, SP and IP from /proc/TID/syscall. 0 or -errno.
 */
static int oc_look(struct session *s, struct process *p, pid_t pid, pid_t tid, char state,
		   uint8_t *stack, struct perf_sample *smp, unsigned *depth,
		   enum unwind_outcome *outcome)
{
	long nr;

	/*
	 * A thread in uninterruptible sleep ('D') does not stop for ptrace
	 * until it leaves the kernel: the look waited 400 ms for each (4,096
	 * such threads: 27 minutes) and could leave it seized, to stop later
	 * in tracing stop. Its registers come from /proc instead; a sleeping
	 * one is stopped from a thread of its own (pt_snapshot_once), so that
	 * one caught entering such a sleep is never left behind (issue 32).
	 */
	if ((state == 'D' || pt_snapshot_once(pid, tid, stack, s->stack_size, smp, 200)) &&
	    pt_blocked_sample(pid, tid, stack, s->stack_size, smp, &nr))
		return -ESRCH;
	*depth = unwinder_unwind(process_unwinder(p), smp, s->ips, s->o->max_depth, outcome);
	return 0;
}

/*
 * A block whose switch-out sample was lost (a busy moment, throttling) has
 * no stack; when it lasts (a parked thread's one switch-out), look at the
 * thread once - it is still blocked where it was - and give the block that
 * stack. A few per poll, so a storm of them cannot stall the loop.
 */
#define OC_LATE_LOOK_NS (200 * 1000000ULL)
static void oc_late_looks(struct session *s, uint64_t now)
{
	uint32_t pids[4], tids[4];
	size_t n = offcpu_stackless(s->oc, now - OC_LATE_LOOK_NS, pids, tids, 4);
	uint8_t *stack = n ? malloc(s->stack_size) : NULL;

	for (size_t i = 0; i < n && stack; i++) {
		struct process *p = process_table_get(s->procs, (pid_t)pids[i]);
		char state = pt_thread_state((pid_t)pids[i], (pid_t)tids[i]);
		struct perf_sample smp;
		enum unwind_outcome outcome;
		unsigned depth;

		if (p && (state == 'S' || state == 'D') &&
		    !oc_look(s, p, (pid_t)pids[i], (pid_t)tids[i], state, stack, &smp, &depth,
			     &outcome))
			offcpu_set_stack(s->oc, tids[i], oc_copy(s, depth, outcome));
	}
	free(stack);
}

/*
 * Threads already blocked when recording starts would show up only when
 * they wake, or never (a thread parked for the whole run): look at each
 * sleeping thread once as --stacks does (stopped for its own look, its
 * system call restarted after), and hold that stack as a block from the
 * start. The look itself wakes the thread, so that block ends there and
 * the kernel's own switch-out samples take over.
 */
static void oc_look_at_blocked(struct session *s)
{
	size_t cap = 4096, n;
	pid_t *tids = malloc(cap * sizeof(*tids));
	uint8_t *stack = malloc(s->stack_size);

	s->offcpu_initial = 0;
	for (size_t i = 0; tids && stack && i < s->npids; i++) {
		struct process *p = process_table_get(s->procs, s->pids[i]);

		if (!p || proc_list_threads(s->pids[i], tids, cap, &n))
			continue;
		for (size_t j = 0; j < n; j++) {
			char state = pt_thread_state(s->pids[i], tids[j]);
			struct perf_sample smp;
			enum unwind_outcome outcome;
			unsigned depth;

			bool named = !s->o->ntids;

			/* -t: only the threads named are sampled, so only they are looked at. */
			for (size_t t = 0; t < s->o->ntids && !named; t++)
				named = s->o->tids[t] == tids[j];
			if (!named || (state != 'S' && state != 'D') ||
			    oc_look(s, p, s->pids[i], tids[j], state, stack, &smp, &depth, &outcome))
				continue;
			oc_hold(s, &smp, depth, outcome, true);
			s->offcpu_initial++;
		}
	}
	free(tids);
	free(stack);
}

/*
 * The run's off-CPU event, if any: checked before the counters open, its
 * tracker made once they count (blocks from the start count from then).
 */
static int oc_start(struct session *s, bool counting, char *err, size_t errlen)
{
	const struct offcpu_ops ops = { oc_emit, oc_drop, s };

	s->offcpu_initial = -1;
	for (size_t k = 0; k < s->nevents; k++) {
		if (!s->events[k].offcpu)
			continue;
		if (s->o->unwind == UNWIND_ENGINE_PTRACE || s->o->system_wide) {
			snprintf(err, errlen, "-e offcpu works with the snapshot and fp unwinders "
				 "on processes (not with --unwind=ptrace or -a)");
			return -EINVAL;
		}
		s->offcpu_k = (uint32_t)k;
		if (!counting)
			return 0;
		s->oc = offcpu_new(&ops, now_ns(CLOCK_MONOTONIC));
		if (!s->oc) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * Kernel symbols, read before sampling starts (it takes ~0.2 s). Addresses
 * hidden by kptr_restrict: kernel time is one "[kernel]" frame, and the
 * note says why. Unreadable: the same, with the reason.
 */
static int load_kernel_symbols(struct session *s)
{
	char err[256];
	long restrict_ = -1, paranoid = -1;

	if (s->o->kallsyms && !kallsyms_restricted(s->o->kallsyms)) {
		s->ks = s->o->kallsyms; /* the caller's, shared */
		return 0;
	}
	s->ks = s->ks_own = kallsyms_load(NULL, err, sizeof(err));
	if (s->ks && !kallsyms_restricted(s->ks))
		return 0;
	proc_sysctl_int("kernel/kptr_restrict", &restrict_);
	proc_sysctl_int("kernel/perf_event_paranoid", &paranoid);
	if (!s->ks)
		snprintf(s->note, sizeof(s->note), "kernel frames unnamed ([kernel]): %s", err);
	else
		snprintf(s->note, sizeof(s->note), "kernel frames unnamed ([kernel]): /proc/kallsyms "
			 "shows this user zero addresses (kernel.kptr_restrict=%ld, "
			 "kernel.perf_event_paranoid=%ld; names need root or CAP_SYSLOG, or "
			 "kptr_restrict=0 with perf_event_paranoid <= 1)", restrict_, paranoid);
	if (!s->ks) {
		/* A table with no symbols names every kernel frame [kernel]. */
		s->ks = s->ks_own = kallsyms_load("/dev/null", err, sizeof(err));
		return s->ks ? 0 : -ENOMEM;
	}
	return 0;
}

/*
 * The process a record is about: a target, a descendant announced by a
 * FORK record, or (following children) one first met here because its
 * FORK sits in another CPU's buffer not drained yet. NULL: not followed.
 */
static struct process *process_of(struct session *s, uint32_t pid)
{
	struct process *p = process_table_get(s->procs, (pid_t)pid);

	/* pmutop itself (seen by -a) is not profiled: its work would feed itself. */
	if (p || !s->follow || pid == 0 || pid == (uint32_t)-1 || pid == s->self_pid)
		return p;
	return process_table_spawn(s->procs, (pid_t)pid, 0);
}

static void ptrace_emit(void *arg, uint32_t tid, uint32_t event, const uint64_t *ips,
			unsigned n, enum unwind_outcome outcome, uint64_t period)
{
	struct session *s = arg;
	struct process *p = process_table_get(s->procs, s->pid);

	if (p)
		add_stack(s, p, tid, event, ips, n, outcome, period);
}

static void handle_sample(struct session *s, const struct perf_sample *smp)
{
	struct agg_info *info = aggregate_info(s->agg);
	enum unwind_outcome outcome;
	struct process *p;
	struct maps *maps;
	unsigned n;

	if (s->pte) {
		if (smp->pid != (uint32_t)s->pid) {
			info->foreign++;
			return;
		}
		/* Interrupts the thread; the stack comes back through add_stack(). */
		ptrace_engine_sample(s->pte, smp);
		return;
	}
	p = process_of(s, smp->pid);
	if (!p) {
		if (smp->pid == s->self_pid)
			info->foreign++; /* pmutop's own, under -a */
		else if (s->follow)
			s->unfollowed_samples++; /* over the limit, out of memory */
		else
			info->foreign++; /* a forked child on kernels without inherit_thread */
		return;
	}
	n = unwind_sample(s, p, smp, &outcome);
	maps = process_maps(p);
	/*
	 * A user IP outside every known mapping means we missed a mapping (the
	 * vDSO after exec, a race at attach): re-read /proc/PID/maps, rarely.
	 */
	if (n && (smp->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER &&
	    !kallsyms_is_kernel_addr(s->ips[0]) && !maps_find(maps, s->ips[0])) {
		uint64_t t = now_ns(CLOCK_MONOTONIC), gen = maps_generation(maps);
		if (t - s->last_maps_reload > MAPS_RELOAD_MIN_NS) {
			s->last_maps_reload = t;
			/* Cached unwind rules only go when the map really changed. */
			if (maps_load_proc(maps) == 0 && maps_generation(maps) != gen) {
				unwinder_flush(process_unwinder(p));
				n = unwind_sample(s, p, smp, &outcome);
			}
		}
	}
	if (s->oc && smp->event == s->offcpu_k)
		oc_hold(s, smp, n, outcome, false); /* weighed when the thread runs again */
	else {
		s->cur_sample = smp;
		add_stack(s, p, smp->tid, smp->event, s->ips, n, outcome, smp->period);
		s->cur_sample = NULL;
	}
}

/* Whether pid runs with different real and effective ids (a setuid/setgid exec). */
static bool changed_credentials(pid_t pid)
{
	char path[64], line[256];
	unsigned long r, e, gr, ge;
	bool uid = false, gid = false, changed = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Uid: %lu %lu", &r, &e) == 2) {
			uid = true;
			changed |= r != e;
		} else if (sscanf(line, "Gid: %lu %lu", &gr, &ge) == 2) {
			gid = true;
			changed |= gr != ge;
		} else if (strncmp(line, "State:", 6) == 0 && strchr(line, 'Z')) {
			break; /* a zombie: it exited */
		}
	}
	fclose(f);
	return uid && gid && changed;
}

/*
 * A process's leader left the counters: it exited, or it exec'd a setuid
 * binary (the kernel then closes a task's counters and says EXIT while it
 * runs on, unprofilable).
 */
static void on_process_exit(struct session *s, struct process *p)
{
	if (process_pid(p) != s->pid && changed_credentials(process_pid(p)))
		process_table_skip(s->procs, p, PROC_SKIP_SETUID);
	else
		process_table_exit(s->procs, p);
}

static void on_mmap(struct session *s, const struct perf_mmap_rec *m)
{
	struct process *p = process_of(s, m->pid);

	if (!p)
		return;
	maps_add(process_maps(p), m->start, m->len, m->pgoff, makedev(m->maj, m->min), m->ino,
		 (m->prot & 4) != 0, m->filename);
	/* New code at an address may replace old code with cached unwind rules. */
	if (m->prot & 4)
		unwinder_flush(process_unwinder(p));
}

static void on_comm(struct session *s, const struct perf_comm_rec *c)
{
	struct process *p = process_of(s, c->pid);

	if (!p)
		return;
	if (c->exec) {
		process_exec(s->procs, p, c->comm);
		aggregate_set_thread_process(s->agg, c->tid, c->pid, c->comm);
	}
	aggregate_set_thread_name(s->agg, c->tid, c->comm);
}

static void on_fork(struct session *s, const struct perf_task_rec *t)
{
	if (s->oc)
		offcpu_thread_new(s->oc, t->pid, t->tid, t->time);
	if (t->pid != t->ppid) {
		/* A new process; it may already be known from a record drained first. */
		if (s->follow && !process_table_get(s->procs, (pid_t)t->pid))
			process_table_spawn(s->procs, (pid_t)t->pid, (pid_t)t->ppid);
		return;
	}
	if (s->pte && t->pid == (uint32_t)s->pid)
		ptrace_engine_thread_new(s->pte, (pid_t)t->tid);
}

static void on_exit_rec(struct session *s, const struct perf_task_rec *t)
{
	struct process *p;

	/* A block the thread was in ends with it (before its process goes). */
	if (s->oc) {
		offcpu_end_thread(s->oc, t->tid, t->time);
		if (t->tid == t->pid)
			offcpu_end_process(s->oc, t->pid, t->time);
	}
	/* Our own counters on the thread (a target's), if any, close now. */
	sampler_thread_exited(s->sampler, (pid_t)t->tid);
	aggregate_thread_exited(s->agg, t->tid);
	if (t->tid != t->pid)
		return;
	p = process_table_get(s->procs, (pid_t)t->pid);
	if (p)
		on_process_exit(s, p);
}

static int on_record(void *arg, const struct perf_rec *r)
{
	struct session *s = arg;
	struct agg_info *info = aggregate_info(s->agg);

	switch (r->kind) {
	case PREC_SAMPLE:
		handle_sample(s, &r->sample);
		break;
	case PREC_MMAP:
		on_mmap(s, &r->mmap);
		break;
	case PREC_COMM:
		on_comm(s, &r->comm);
		break;
	case PREC_FORK:
		on_fork(s, &r->task);
		break;
	case PREC_EXIT:
		on_exit_rec(s, &r->task);
		break;
	case PREC_LOST:
	case PREC_LOST_SAMPLES:
		info->lost += r->lost;
		break;
	case PREC_THROTTLE:
		info->throttled++;
		break;
	case PREC_SWITCH:
		if (s->oc && process_of(s, r->sw.pid))
			offcpu_switch(s->oc, r->sw.pid, r->sw.tid, r->sw.time, r->sw.out, r->sw.preempt);
		break;
	default:
		break;
	}
	return 0;
}

/*
 * Fork the command, held before exec until its counters are attached: the
 * child waits on a pipe, then execs; an exec failure comes back through a
 * close-on-exec pipe. Returns the child's pid, or -1 with err filled.
 */
static pid_t launch(char **cmd, int *go_fd, int *status_fd, char *err, size_t errlen)
{
	int go[2], status[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC))
		goto fail;
	if (pipe2(status, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		close(status[0]);
		close(status[1]);
		goto fail;
	}
	if (pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(status[0]);
		/* Its own process group, so that ending the command ends all it started. */
		setpgid(0, 0);
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* pmutop gave up before starting us */
		{
			/* pmutop blocks its stop signals from its start: not the command's. */
			sigset_t stop;

			sigemptyset(&stop);
			sigaddset(&stop, SIGINT);
			sigaddset(&stop, SIGTERM);
			sigaddset(&stop, SIGHUP);
			sigprocmask(SIG_UNBLOCK, &stop, NULL);
			/* Nor its ignored SIGPIPE (an ignored signal stays so across exec). */
			broken_pipe_restore_default();
		}
		execvp(cmd[0], cmd);
		e = errno;
		if (write(status[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	/* Also from this side, so the group exists before anything signals it. */
	setpgid(pid, pid);
	close(go[0]);
	close(status[1]);
	*go_fd = go[1];
	*status_fd = status[0];
	return pid;
fail:
	snprintf(err, errlen, "cannot start %s: %s", cmd[0], strerror(errno));
	return -1;
}

/* EACCES/EPERM: what perf_event_open says when kernel mode is not allowed. */
static bool is_denied(int r)
{
	return r == -EACCES || r == -EPERM;
}

/*
 * Probe ev with kernel mode when *kernel; when the kernel refuses kernel
 * mode but takes ev in user mode, note that in *denied (kernel stays as
 * asked: the caller decides for all events at once).
 */
static int probe_event(const struct pmu_event *ev, bool kernel, bool *denied)
{
	int r = events_probe(ev, kernel);

	if (is_denied(r) && kernel && ev->kernel != 1) {
		int r2 = events_probe(ev, false);

		if (!is_denied(r2)) {
			*denied = true;
			r = r2;
		}
	}
	return r;
}

/*
 * Check every event opens here. Without -e, a machine with no PMU falls back
 * from cycles to task-clock (and says so); an event the user named is never
 * silently replaced. Precision (:p..:ppp) is lowered to what the CPU takes.
 * Kernel mode: on by default where the kernel allows it (*kernel stays
 * true), off with --user-only; where it is not allowed, user mode only and
 * a note in note, or an error when --kernel asked for it.
 */
static int resolve_events(struct session *s, const struct pmutop_opts *o, struct pmu_event *evs,
			  size_t *n, bool *kernel, char *note, size_t notelen, char *err,
			  size_t errlen)
{
	bool denied = false;

	*kernel = !o->user_only;
	*n = o->nevents ? o->nevents : 1;
	for (size_t k = 0; k < *n; k++) {
		struct pmu_event *ev = &evs[k];
		int r;

		*ev = o->nevents ? o->events[k] : o->event;
		if (o->system_wide && ev->type == PERF_TYPE_SOFTWARE &&
		    ev->config == PERF_COUNT_SW_TASK_CLOCK) {
			/* task-clock follows tasks; per CPU the clock is cpu-clock. */
			char e2[128];
			if (events_parse("cpu-clock", ev, e2, sizeof(e2)) == 0 && o->event_given)
				add_note(s, "-a samples per CPU: task-clock becomes cpu-clock");
		}
		r = probe_event(ev, *kernel && !denied, &denied);
		while (r && ev->precise_max && ev->precise > 0 && (r == -EINVAL || r == -EOPNOTSUPP)) {
			ev->precise--;
			r = probe_event(ev, *kernel && !denied, &denied);
			if (!r)
				add_note(s, "%s: precise_ip lowered to %u, the most this CPU accepts",
					 ev->name, ev->precise);
		}
		if (r == 0)
			continue;
		if (ev->precise && !ev->precise_max && (r == -EINVAL || r == -EOPNOTSUPP) &&
		    (ev->precise = 0, events_probe(ev, o->kernel) == 0)) {
			snprintf(err, errlen, "%s: this CPU's PMU has no precise sampling at that "
				 "level (perf's :p/:pp/:ppp); drop the p's, or use :P for the most it "
				 "has", ev->name);
			return -EOPNOTSUPP;
		}
		if (!o->event_given && *n == 1 && ev->hardware &&
		    (r == -ENOENT || r == -EOPNOTSUPP || r == -ENODEV)) {
			struct pmu_event fb;
			char e2[128];
			const char *clock = o->system_wide ? "cpu-clock" : "task-clock";
			if (events_parse(clock, &fb, e2, sizeof(e2)) == 0 &&
			    probe_event(&fb, *kernel && !denied, &denied) == 0) {
				add_note(s, "no hardware PMU here (%s is not supported): sampling "
					 "%s instead", ev->name, clock);
				*ev = fb;
				continue;
			}
		}
		if (is_denied(r) && ev->offcpu) {
			char why[160];
			snprintf(err, errlen, "offcpu: the kernel takes switch-out samples in kernel "
				 "mode, which this user may not sample (%s)",
				 proc_kernel_sampling_hint(why, sizeof(why)));
			return r;
		}
		if (is_denied(r) && ev->kernel == 1) {
			char why[160];
			snprintf(err, errlen, "%s: kernel-mode sampling is not allowed here (%s)",
				 ev->name, proc_kernel_sampling_hint(why, sizeof(why)));
			return r;
		}
		{
			/* Named as perf spells it: the hint is a perf command to paste. */
			char pname[64];

			r = proc_explain_perf_error(-r, getpid(),
						    events_perf_name(ev->name, pname, sizeof(pname)),
						    err, errlen);
		}
		if (r == -ENOENT || r == -EOPNOTSUPP || r == -ENODEV) {
			size_t l = strlen(err);
			snprintf(err + l, errlen - l, " (pmutop --list-events shows what opens here)");
		}
		return r;
	}
	note[0] = '\0';
	if (denied) {
		char why[160];

		proc_kernel_sampling_hint(why, sizeof(why));
		if (o->kernel) {
			snprintf(err, errlen, "--kernel: kernel-mode sampling is not allowed here (%s)",
				 why);
			return -EACCES;
		}
		*kernel = false;
		snprintf(note, notelen, "user mode only: kernel samples not allowed (%s)", why);
	}
	/* Every event counts user mode only (:u): no kernel frames to take. */
	if (*kernel) {
		bool any = false;
		for (size_t k = 0; k < *n; k++)
			any |= evs[k].kernel != 0;
		*kernel = any;
	}
	return 0;
}

/*
 * A ring buffer must hold two stack-copy samples: a sample larger than the
 * buffer is dropped with no LOST record (the kernel writes that only in
 * front of a record that fits), so the loss would be invisible. With
 * --mmap-pages too small: lower the stack copy when --stack-size was not
 * given (and say so), else refuse, naming both ways out. Automatic buffer
 * sizes are the sampler's to fit (it never shrinks below two samples).
 */
static int fit_ring_buffer(struct session *s, char *err, size_t errlen)
{
	const struct pmutop_opts *o = s->o;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), bytes, need;
	unsigned fit, pages;

	s->stack_size = o->stack_size;
	if (o->unwind != UNWIND_ENGINE_SNAPSHOT || !o->mmap_pages)
		return 0;
	bytes = (uint64_t)o->mmap_pages * page;
	need = 2 * sampler_sample_size(o->stack_size);
	if (bytes >= need)
		return 0;
	fit = bytes / 2 > sampler_sample_size(0) ?
	      (unsigned)(bytes / 2 - sampler_sample_size(0)) & ~7u : 0;
	if (!o->stack_size_given && fit >= 64) {
		s->stack_size = fit;
		add_note(s, "--mmap-pages %u: a %llu-byte ring buffer cannot hold two samples with "
			 "the default %u-byte stack copy: copying %u bytes of stack per sample (deeper "
			 "stacks are cut; raise --mmap-pages to keep %u)", o->mmap_pages,
			 (unsigned long long)bytes, o->stack_size, fit, o->stack_size);
		return 0;
	}
	for (pages = 1; (uint64_t)pages * page < need; pages *= 2)
		;
	if (fit >= 64)
		snprintf(err, errlen, "--mmap-pages %u (%llu bytes per CPU) cannot hold two samples "
			 "of --stack-size %u (%zu bytes each): the kernel would drop them without "
			 "counting; use --mmap-pages %u or more, or --stack-size %u or less",
			 o->mmap_pages, (unsigned long long)bytes, o->stack_size,
			 sampler_sample_size(o->stack_size), pages, fit);
	else
		snprintf(err, errlen, "--mmap-pages %u (%llu bytes per CPU) cannot hold two samples "
			 "of --stack-size %u (%zu bytes each): use --mmap-pages %u or more",
			 o->mmap_pages, (unsigned long long)bytes, o->stack_size,
			 sampler_sample_size(o->stack_size), pages);
	return -EINVAL;
}

/*
 * SIGKILL what is left of the process group pgid and wait (1 s at most) for
 * it to be gone, so that pmutop's exit means the command's processes have
 * ended, not merely been signalled: a killed task still has to be scheduled
 * to die, and a loaded machine can take a moment. Members whose parent
 * died are reaped by init; a pid 1 that never reaps bounds this at 1 s.
 */
static void kill_group(pid_t pgid)
{
	kill(-pgid, SIGKILL);
	for (int i = 0; i < 100 && kill(-pgid, 0) == 0; i++) {
		struct timespec ts = { 0, 10 * 1000000 };
		nanosleep(&ts, NULL);
	}
}

/*
 * Reap the launched command, ending it first when asked: SIGTERM to its
 * whole process group (a shell's or make's children too), SIGKILL to what
 * is left once the command has exited, or after 3 s. Returns the command's
 * wait status.
 */
static int end_child(pid_t pid, bool terminate)
{
	int status = 0;

	if (terminate && kill(-pid, SIGTERM))
		kill(pid, SIGTERM);
	for (int i = 0; i < 300; i++) {
		pid_t r = waitpid(pid, &status, terminate ? WNOHANG : 0);
		if (r == pid) {
			if (terminate)
				kill_group(pid); /* stragglers of the group it led */
			return status;
		}
		if (r < 0)
			return -1;
		struct timespec ts = { 0, 10 * 1000000 };
		nanosleep(&ts, NULL);
	}
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	kill_group(pid);
	return status;
}

static int setup_loop(struct session *s, char *err, size_t errlen)
{
	sigset_t mask;
	struct epoll_event e1 = { .events = EPOLLIN, .data.u32 = EP_SAMPLER };
	struct epoll_event e2 = { .events = EPOLLIN, .data.u32 = EP_SIGNAL };
	struct epoll_event e3 = { .events = EPOLLIN, .data.u32 = EP_PIDFD };

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, &s->old_mask);
	s->mask_set = true;
	s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	/* One target: its pidfd says when it exits; several: the rescans do. */
	if (s->launched || (!s->o->system_wide && s->npids <= 1))
		s->pidfd = (int)syscall(SYS_pidfd_open, s->pid, 0);
	s->ep = epoll_create1(EPOLL_CLOEXEC);
	if (s->sigfd < 0 || s->ep < 0 ||
	    epoll_ctl(s->ep, EPOLL_CTL_ADD, sampler_fd(s->sampler), &e1) ||
	    epoll_ctl(s->ep, EPOLL_CTL_ADD, s->sigfd, &e2) ||
	    (s->pidfd >= 0 && epoll_ctl(s->ep, EPOLL_CTL_ADD, s->pidfd, &e3))) {
		snprintf(err, errlen, "cannot set up the event loop: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/* Launch the command (held before exec) or check the PID to attach to. */
static int start_target(struct session *s, int *go_fd, int *status_fd, char *err, size_t errlen)
{
	const struct pmutop_opts *o = s->o;

	if (o->cmd) {
		s->pid = launch(o->cmd, go_fd, status_fd, err, errlen);
		if (s->pid < 0)
			return -1;
		s->launched = s->child_running = true;
		snprintf(s->cmdline, sizeof(s->cmdline), "%s", o->cmd[0]);
		for (char **a = o->cmd + 1; *a; a++) {
			size_t l = strlen(s->cmdline);
			snprintf(s->cmdline + l, sizeof(s->cmdline) - l, " %s", *a);
		}
		return 0;
	}
	if (o->system_wide) {
		snprintf(s->cmdline, sizeof(s->cmdline), "the whole machine (-a)");
		return 0;
	}
	s->pid = o->pid;
	s->npids = o->npids ? o->npids : 1;
	s->pids = malloc(PMUTOP_MAX_PIDS * sizeof(*s->pids));
	if (!s->pids) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (o->npids)
		memcpy(s->pids, o->pids, o->npids * sizeof(*s->pids));
	else
		s->pids[0] = o->pid;
	for (size_t i = 0; i < s->npids; i++)
		if (proc_check_target(s->pids[i], err, errlen))
			return -1;
	if (o->subprocesses) {
		pid_t roots[PMUTOP_MAX_PIDS];
		int r;

		memcpy(roots, s->pids, s->npids * sizeof(*roots));
		r = proc_descendants(roots, s->npids, s->pids, PMUTOP_MAX_PIDS, &s->npids);
		if (r) {
			snprintf(err, errlen, "cannot list the processes under PID %d: %s%s", (int)s->pid,
				 strerror(-r), r == -ENOSPC ? " (more than " STR(PMUTOP_MAX_PIDS) ")" : "");
			return -1;
		}
	}
	proc_cmdline(s->pid, s->cmdline, sizeof(s->cmdline));
	if (s->npids > 1) {
		size_t l = strlen(s->cmdline);
		snprintf(s->cmdline + l, sizeof(s->cmdline) - l, " (and %zu more)", s->npids - 1);
	}
	return 0;
}

#define DEFAULT_MAX_PROCESSES 4096

/* The process table's view of the pending line lookups (process_table_set_lines). */
static const struct mapping *pending_mapping(void *arg, size_t i)
{
	struct session *s = arg;

	return s->agg ? aggregate_pending_mapping(s->agg, i) : NULL;
}

static bool of_doomed_module(const struct mapping *m)
{
	return module_doomed(m->mod);
}

static int resolve_doomed(void *arg)
{
	struct session *s = arg;

	return s->agg ? aggregate_resolve_lines_of(s->agg, of_doomed_module) : 0;
}

/* The pipeline's stages: modules, processes, symbol cache, aggregate. */
static int build_pipeline(struct session *s, char *err, size_t errlen)
{
	const struct pmutop_opts *o = s->o;

	s->modules = module_cache_new();
	s->procs = s->modules ? process_table_new(s->modules, o->max_processes ? o->max_processes
						  : DEFAULT_MAX_PROCESSES) : NULL;
	s->symcache = symbol_cache_new();
	s->agg = aggregate_new();
	s->ips = calloc(o->max_depth + 2, sizeof(*s->ips));
	s->frames = calloc(o->max_depth + 2, sizeof(*s->frames));
	s->py = pyframes_new(o->python, o->max_depth + 2);
	if (!s->procs || !s->symcache || !s->agg || !s->ips || !s->frames || !s->py) {
		snprintf(err, errlen, "out of memory setting up");
		return -ENOMEM;
	}
	/* Evicting a file no process maps any more looks up its pending lines first. */
	process_table_set_lines(s->procs, pending_mapping, resolve_doomed, s);
	return 0;
}

/*
 * The target processes: their current maps (a launched command starts
 * empty: its exec's records fill them in). -a starts with none.
 */
static int add_targets(struct session *s, char *err, size_t errlen)
{
	const struct pmutop_opts *o = s->o;
	struct process *p;
	int r;

	if (o->system_wide && !s->launched)
		return 0;
	for (size_t i = 0; i < (s->launched ? 1 : s->npids); i++) {
		pid_t pid = s->launched ? s->pid : s->pids[i];

		if (process_table_get(s->procs, pid))
			continue; /* listed twice */
		r = process_table_add_root(s->procs, pid, s->launched, err, errlen);
		if (r)
			return r;
	}
	p = process_table_get(s->procs, s->pid);
	s->maps = process_maps(p);
	s->unwinder = process_unwinder(p);
	return 0;
}

/*
 * Whether Python frames will be read (--python on/only): the target
 * process is a CPython pmutop reads, or the command launched is named
 * python* (it is not exec'd yet, so its maps cannot tell).
 */
static bool python_expected(const struct session *s)
{
	const struct pmutop_opts *o = s->o;
	struct pyproc *py = NULL;
	const char *base;
	char msg[256];

	if (o->python == PY_OFF || o->system_wide)
		return false;
	if (o->cmd) {
		base = strrchr(o->cmd[0], '/');
		return !strncmp(base ? base + 1 : o->cmd[0], "python", 6);
	}
	if (s->pid <= 0 || pyproc_open(s->pid, &py, msg, sizeof(msg)))
		return false;
	pyproc_free(py);
	return true;
}

/* The sampler's configuration from the options and the resolved events. */
static void fill_sampler_config(struct session *s, struct sampler_config *cfg)
{
	const struct pmutop_opts *o = s->o;

	memset(cfg, 0, sizeof(*cfg));
	cfg->pid = s->pid;
	if (!s->launched && s->npids > 1) {
		cfg->pids = s->pids;
		cfg->npids = s->npids;
	}
	cfg->system_wide = o->system_wide;
	s->follow = (!o->no_children || o->system_wide) && o->unwind != UNWIND_ENGINE_PTRACE;
	cfg->children = s->follow && !o->system_wide;
	cfg->event = s->event;
	s->freq = cfg->freq = o->freq != 0;
	/* --period and -F apply to every event; otherwise each has its preset. */
	for (size_t k = 0; k < s->nevents; k++)
		s->periods[k] = o->freq ? o->freq : (o->period ? o->period : s->events[k].preset_period);
	/* offcpu samples every switch-out whatever --period/-F say (sampler.c). */
	for (size_t k = 0; k < s->nevents; k++)
		if (s->events[k].offcpu)
			s->periods[k] = 1;
	s->period = cfg->period = s->periods[0];
	cfg->nevents = s->nevents;
	memcpy(cfg->events, s->events, sizeof(cfg->events));
	memcpy(cfg->periods, s->periods, sizeof(cfg->periods));
	cfg->kernel = s->kernel;
	cfg->tids = o->tids;
	cfg->ntids = o->ntids;
	cfg->stack_size = s->stack_size;
	cfg->mmap_pages = o->mmap_pages;
	/* -a counts from the start; a command from its exec. */
	cfg->enable_on_exec = s->launched && !o->system_wide;
	/*
	 * A Python target's frames are read as each sample is processed: wake
	 * per sample, so that is right after it fired, not at a quarter-full
	 * buffer (then a whole batch of samples would get the frames of the
	 * moment it is drained). Native targets keep the batched wakeups.
	 */
	if (python_expected(s))
		cfg->wakeup_events = 1;
	if (o->unwind == UNWIND_ENGINE_PTRACE) {
		/* IPs only, and a wakeup per sample: the stop must follow it closely. */
		cfg->stack_mode = SAMPLER_IP_ONLY;
		cfg->wakeup_events = 1;
	} else if (o->unwind == UNWIND_ENGINE_FP) {
		cfg->stack_mode = SAMPLER_CALLCHAIN;
	}
}

/* --unwind=ptrace: seize first, so another tracer is reported before any counter opens. */
static int start_ptrace_engine(struct session *s, char *err, size_t errlen)
{
	const struct pmutop_opts *o = s->o;

	if (o->unwind != UNWIND_ENGINE_PTRACE)
		return 0;
	s->pte = ptrace_engine_new(s->pid, s->launched ? s->pid : 0, s->maps, s->unwinder,
				   o->max_depth, o->stack_size, ptrace_emit, s, err, errlen);
	return s->pte ? 0 : -1;
}

/* Open the counters (fit_ring_buffer() made sure two samples fit a buffer). */
static int open_sampler(struct session *s, const struct sampler_config *cfg, char *err,
			size_t errlen)
{
	s->sampler = sampler_new(cfg, err, errlen);
	return s->sampler ? 0 : -1;
}

/* What the profile says about its events and when it started. */
static void describe_profile(struct session *s, const struct sampler_config *cfg)
{
	struct agg_info *info = aggregate_info(s->agg);

	info->event = s->event.name;
	info->event_unit = s->event.unit;
	info->period = cfg->freq ? 0 : cfg->period;
	info->start_ns = now_ns(CLOCK_REALTIME);
	info->note = s->note[0] ? s->note : NULL;
	info->nevents = s->nevents;
	for (size_t k = 0; k < s->nevents; k++) {
		info->events[k].name = s->events[k].name;
		info->events[k].unit = s->events[k].unit;
		info->events[k].period = cfg->freq ? 0 : s->periods[k];
		info->events[k].scale = 1.0;
	}
}

/* The event loop, plus the ptrace engine's fd when it runs. */
static int setup_session_loop(struct session *s, char *err, size_t errlen)
{
	struct epoll_event e4 = { .events = EPOLLIN, .data.u32 = EP_PTRACE };

	if (setup_loop(s, err, errlen))
		return -1;
	if (s->pte && epoll_ctl(s->ep, EPOLL_CTL_ADD, ptrace_engine_fd(s->pte), &e4)) {
		snprintf(err, errlen, "cannot set up the event loop: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * tcsetpgrp() from a background process group is stopped by SIGTTOU unless
 * the signal is blocked: block it around the call.
 */
static void set_foreground(pid_t pgrp)
{
	sigset_t ttou, old;

	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	tcsetpgrp(STDIN_FILENO, pgrp);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/*
 * The command runs in a process group of its own (so that ending it ends
 * what it started). Without the live view, and when pmutop has the
 * terminal, the command gets it, as under time(1): it reads the keyboard
 * and Ctrl-C goes to it; pmutop takes the terminal back when it ends.
 */
static void hand_terminal(struct session *s)
{
	if (s->o->live_view || !isatty(STDIN_FILENO) || tcgetpgrp(STDIN_FILENO) != getpgrp())
		return;
	set_foreground(s->pid);
	s->gave_terminal = true;
}

static void take_terminal_back(struct session *s)
{
	if (!s->gave_terminal)
		return;
	s->gave_terminal = false;
	set_foreground(getpgrp());
}

/*
 * Let a launched command exec now that its counters are open. Closes both
 * pipes (sets them to -1); returns -1 with err filled when exec failed.
 */
static int release_command(struct session *s, int *go_fd, int *status_fd, char *err,
			   size_t errlen)
{
	char c = 'g';
	int e;

	if (!s->launched)
		return 0;
	hand_terminal(s);
	if (write(*go_fd, &c, 1) != 1) {
		snprintf(err, errlen, "cannot start %s: %s", s->o->cmd[0], strerror(errno));
		return -1;
	}
	close(*go_fd);
	*go_fd = -1;
	/* EOF: exec succeeded (the pipe is close-on-exec); else its errno. */
	if (read(*status_fd, &e, sizeof(e)) == sizeof(e)) {
		/* A shell's words: "not found" for a name searched in PATH. */
		snprintf(err, errlen, e == ENOENT && !strchr(s->o->cmd[0], '/') ?
			 "%s: command not found" : "cannot run %s: %s", s->o->cmd[0], strerror(e));
		s->exec_errno = e;
		return -1;
	}
	close(*status_fd);
	*status_fd = -1;
	return 0;
}

/*
 * The ring buffers must be read within their span - about 27 ms at 10k
 * samples/s per CPU with the default buffer - and a target that keeps
 * every CPU busy delays a waking pmutop by 6-15 ms, sometimes more (CFS
 * wakes it with no priority over the threads it profiles). Where allowed
 * (root, CAP_SYS_NICE) and the user set no nice value, this thread - the
 * one that drains - runs at nice -5: it needs 5-10% of a CPU, but promptly
 * (issue 12: Go at 10k samples/s per thread, 0-225 samples lost per 10 s
 * run without it, 0-1 with it). Threads started later inherit it; the
 * background ones (DWARF loader, debuginfod) give it back.
 */
static void favour_drain(const struct session *s)
{
	/*
	 * Only for the stack copy, whose 16 KiB samples fill a buffer in
	 * milliseconds, and which wakes pmutop every quarter buffer. The
	 * ptrace engine is woken per sample: at nice -5 it preempted the
	 * target 10,000 times a second, and t_unwind_engines' ptrace shares
	 * went from 0.29-0.51 pp to 0.43-1.24 pp off (3 runs each, load 3-4);
	 * fp's samples are small.
	 */
	if (s->o->unwind != UNWIND_ENGINE_SNAPSHOT)
		return;
	errno = 0;
	if (getpriority(PRIO_PROCESS, 0) == 0 && errno == 0)
		(void)setpriority(PRIO_PROCESS, 0, -5); /* not allowed: stays at 0 */
}

/* Sampling starts now: clocks, the deadline, the first rescan. */
static void start_clocks(struct session *s)
{
	if (s->o->max_memory) {
		struct agg_limits lim;

		aggregate_get_limits(s->agg, &lim);
		lim.max_memory = s->o->max_memory;
		aggregate_set_limits(s->agg, &lim);
	}
	s->start_mono = s->window_mono = now_ns(CLOCK_MONOTONIC);
	s->next_maintain = s->start_mono + MAINTAIN_INTERVAL_NS;
	s->lines_after_ns = LINES_WHILE_SAMPLING_NS;
	s->start_cpu = cpu_seconds();
	if (s->o->duration > 0)
		s->deadline = s->start_mono + (uint64_t)(s->o->duration * 1e9);
	s->next_rescan = s->start_mono + RESCAN_INTERVAL_NS;
}

struct session *session_start(const struct pmutop_opts *o, char *err, size_t errlen)
{
	struct session *s = calloc(1, sizeof(*s));
	struct sampler_config cfg;
	int go_fd = -1, status_fd = -1;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		errno = 0;
		return NULL;
	}
	s->o = o;
	s->self_pid = (uint32_t)getpid();
	s->ep = s->sigfd = s->pidfd = -1;
	s->exit_status = -1;
	raise_fd_limit();
	if (resolve_events(s, o, s->events, &s->nevents, &s->kernel, s->note, sizeof(s->note),
			   err, errlen) ||
	    fit_ring_buffer(s, err, errlen))
		goto fail;
	if (s->kernel && load_kernel_symbols(s))
		goto fail;
	if (s->note[0])
		add_note(s, "%s", s->note);
	s->event = s->events[0];
	if (o->period_asked && !o->freq) {
		bool ns = s->event.unit && !strcmp(s->event.unit, "nanoseconds");

		add_note(s, "--period %llu is shorter than %s can be sampled at (kernel."
			 "perf_event_max_sample_rate): using %llu%s",
			 (unsigned long long)o->period_asked, s->event.name,
			 (unsigned long long)o->period, ns ? " ns" : "");
	}
	if (start_target(s, &go_fd, &status_fd, err, errlen) ||
	    build_pipeline(s, err, errlen) ||
	    add_targets(s, err, errlen))
		goto fail;
	fill_sampler_config(s, &cfg);
	if (oc_start(s, false, err, errlen) ||
	    start_ptrace_engine(s, err, errlen) ||
	    open_sampler(s, &cfg, err, errlen) ||
	    oc_start(s, true, err, errlen))
		goto fail;
	if (s->oc && !s->launched)
		oc_look_at_blocked(s);
	describe_profile(s, &cfg);
	if (setup_session_loop(s, err, errlen) ||
	    release_command(s, &go_fd, &status_fd, err, errlen))
		goto fail;
	favour_drain(s);
	start_clocks(s);
	return s;
fail:
	if (go_fd >= 0)
		close(go_fd); /* the child reads EOF and exits without exec */
	if (status_fd >= 0)
		close(status_fd);
	{
		int e = s->exec_errno;

		session_free(s);
		errno = e; /* session_start_exit_status() reads it */
	}
	return NULL;
}

int session_start_exit_status(int e)
{
	return e == ENOENT ? 127 : e ? 126 : 1;
}

static void set_state(struct session *s, enum session_state st, const char *why)
{
	if (s->state != SESSION_RUNNING)
		return;
	s->state = st;
	snprintf(s->why, sizeof(s->why), "%s", why);
}

/*
 * Without a pidfd (kernels before 5.3, seccomp, valgrind) the rescan's
 * ESRCH is the only exit signal, and it never comes for a zombie: its
 * /proc/PID/task still lists the leader. So look for the exit directly:
 * reap our own command (keeping its status), or see a zombie state.
 */
static bool target_exited_nopidfd(struct session *s)
{
	char path[64], buf[512];
	const char *p;
	ssize_t r;
	int fd, status;

	if (s->child_running) {
		if (waitpid(s->pid, &status, WNOHANG) != s->pid)
			return false;
		s->exit_status = status;
		s->child_running = false;
		return true;
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)s->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return false;
	buf[r] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/* The run's totals since start into the aggregate (every profile carries them). */
static void sync_run_counts(struct session *s)
{
	struct agg_info *info = aggregate_info(s->agg);

	info->run_samples = s->before.samples + info->samples;
	info->run_lost = s->before.lost + info->lost;
	info->run_throttled = s->before.throttled + info->throttled;
	info->run_pruned = s->before.pruned + info->pruned;
	{
		struct module_cache_stats ms;

		module_cache_get_stats(s->modules, &ms);
		info->modules_evicted = ms.evicted;
		info->modules_parsed_max = ms.resident_max;
	}
	info->window = s->resets;
}

/*
 * About once a second: pending lines, thread folding and the caps
 * (aggregate_maintain), then the mapping history's cap - in that order,
 * since pending locations point into the history. Out of memory leaves
 * both as they were; the next round tries again.
 */
static void maintain(struct session *s, bool force)
{
	uint64_t t = now_ns(CLOCK_MONOTONIC), gen = aggregate_generation(s->agg);
	bool lines = s->stopped || t - s->start_mono >= s->lines_after_ns;

	if (aggregate_maintain(s->agg, force, lines) == 0)
		process_table_prune(s->procs);
	/* Files no process maps any more (their pending lines are looked up first). */
	process_table_evict(s->procs);
	/*
	 * A rebuilt aggregate frees the old one's arrays and strings; closed
	 * DWARF readers and evicted files free theirs: hand the free pages in
	 * the middle of the heap back to the kernel, or a long run's RSS keeps
	 * its highest point (issue 23). A few ms, at most every TRIM_INTERVAL_NS
	 * unless the aggregate was rebuilt.
	 */
	if (aggregate_generation(s->agg) != gen || t - s->last_trim >= TRIM_INTERVAL_NS) {
		malloc_trim(0);
		s->last_trim = t;
	}
	sync_run_counts(s);
}

static void forget_maps(void *arg, const struct maps *m)
{
	symbol_cache_forget(arg, m);
}

void session_set_deadline(struct session *s, uint64_t mono_ns)
{
	/* Already due: one drain's worth of sampling rather than none. */
	s->deadline = mono_ns > s->start_mono ? mono_ns : s->start_mono + 1;
}

void session_set_lines(struct session *s, uint64_t after_ns, uint64_t final_ns)
{
	uint64_t first = s->start_mono + after_ns + MAINTAIN_INTERVAL_NS / 5;

	s->lines_after_ns = after_ns;
	s->final_lines_ns = final_ns;
	if (first < s->next_maintain)
		s->next_maintain = first;
}

/*
 * Up to where a drain at time t hands records on. The ptrace engine stops
 * a thread per sample and must see each at once; it follows one process,
 * so the order across CPUs matters less than the delay.
 */
static uint64_t drain_horizon(const struct session *s, uint64_t t)
{
	return s->pte ? UINT64_MAX : t - ORDER_MARGIN_NS;
}

enum session_state session_poll(struct session *s, int timeout_ms)
{
	struct epoll_event evs[4];
	uint64_t t = now_ns(CLOCK_MONOTONIC), wake = s->next_rescan;
	int n;

	if (s->stopped || s->state != SESSION_RUNNING)
		return s->state;
	/* Keep the profile's duration current: the live view writes it mid-run. */
	aggregate_info(s->agg)->duration_ns = t - s->window_mono;
	if (s->deadline && s->deadline < wake)
		wake = s->deadline;
	{
		int until = wake > t ? (int)((wake - t + 999999) / 1000000) : 0;
		if (timeout_ms < 0 || timeout_ms > until)
			timeout_ms = until;
	}
	n = epoll_wait(s->ep, evs, 4, timeout_ms);
	if (n < 0 && errno != EINTR) {
		set_state(s, SESSION_FAILED, "epoll_wait failed");
		return s->state;
	}
	t = now_ns(CLOCK_MONOTONIC);
	sampler_drain(s->sampler, drain_horizon(s, t), on_record, s);
	if (s->oc) {
		offcpu_flush(s->oc, t - OFFCPU_MARGIN_NS);
		if (!s->pte && t > OC_LATE_LOOK_NS + OFFCPU_MARGIN_NS)
			oc_late_looks(s, t - OFFCPU_MARGIN_NS);
	}
	/* Every record up to now is handled: exited processes can go. */
	process_table_collect(s->procs, forget_maps, s->symcache);
	if (s->pte)
		ptrace_engine_process(s->pte);
	for (int i = 0; i < n; i++) {
		if (evs[i].data.u32 == EP_SIGNAL) {
			struct signalfd_siginfo si;
			if (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
				s->signal = (int)si.ssi_signo;
				set_state(s, SESSION_SIGNALLED,
					  si.ssi_signo == SIGINT ? "interrupted (SIGINT)"
					  : si.ssi_signo == SIGTERM ? "terminated (SIGTERM)"
					  : "hung up (SIGHUP)");
			}
		} else if (evs[i].data.u32 == EP_PIDFD) {
			set_state(s, SESSION_TARGET_EXITED, "target exited");
		}
	}
	t = now_ns(CLOCK_MONOTONIC);
	if (s->deadline && t >= s->deadline)
		set_state(s, SESSION_DURATION, "duration elapsed");
	if (s->state == SESSION_RUNNING && t >= s->next_maintain) {
		maintain(s, false);
		/* Lines still pending: another slice soon, after a drain. */
		s->next_maintain = t + (aggregate_pending_lines(s->agg) ? MAINTAIN_INTERVAL_NS / 20
					: MAINTAIN_INTERVAL_NS);
	}
	if (s->state == SESSION_RUNNING && t >= s->next_rescan) {
		int r = sampler_rescan(s->sampler);
		if (s->pidfd < 0 && !s->o->system_wide &&
		    (r == -ESRCH || ((s->launched || s->npids <= 1) && target_exited_nopidfd(s))))
			set_state(s, SESSION_TARGET_EXITED, "target exited");
		s->next_rescan = t + RESCAN_INTERVAL_NS;
	}
	return s->state;
}

/*
 * More events than the PMU has counters: the kernel time-shares them and
 * each counts only part of the time. Scale each event's estimates by
 * enabled/running (the profile's values are scaled) and say so.
 */
static void note_multiplexing(struct session *s)
{
	uint64_t enabled[PMUTOP_MAX_EVENTS], running[PMUTOP_MAX_EVENTS];
	struct agg_info *info = aggregate_info(s->agg);

	if (sampler_read_times(s->sampler, enabled, running))
		return;
	for (size_t k = 0; k < s->nevents; k++) {
		if (!enabled[k] || !running[k] || running[k] >= enabled[k])
			continue;
		info->events[k].scale = (double)enabled[k] / (double)running[k];
		if (info->events[k].scale > 1.01)
			fprintf(stderr, "pmutop: WARNING: %s was multiplexed (counting %.0f%% of the "
				"time): its counts are scaled by %.2f and are estimates\n",
				s->events[k].name, 100.0 / info->events[k].scale, info->events[k].scale);
	}
}

/* A SIGINT/SIGTERM/SIGHUP waits in the signalfd (left there for the caller). */
static bool signal_waiting(void *arg)
{
	const struct session *s = arg;
	struct pollfd p = { .fd = s->sigfd, .events = POLLIN };

	return s->sigfd >= 0 && poll(&p, 1, 0) == 1;
}

/* One pass over the pending lines: answers taken, new lookups queued. */
static int resolve_pass(struct session *s, uint64_t budget)
{
	return budget ? aggregate_resolve_lines_for(s->agg, budget)
		      : aggregate_resolve_lines(s->agg, signal_waiting, s);
}

/*
 * Lines at the end. Each pass takes the answers the loader's thread has
 * (debuginfo.h: the DWARF loads and the lookups both run there) and queues
 * the addresses still to look up; then a wait for those jobs, and again,
 * while locations are pending - FINAL_LOAD_WAIT_MS in all at most
 * (--debuginfo-wait; --http: its final budget), cut short by a second signal. A module still
 * being read then (a huge or hostile debug file: libdw cannot be
 * interrupted) is written without file:line, and the summary says how
 * many locations lack it.
 */
static void final_lines(struct session *s)
{
	uint64_t budget = s->final_lines_ns; /* 0: all (batch) */
	unsigned busy = 0, wait_ms = budget ? (unsigned)(budget / 1000000)
			       : s->o->debuginfo_wait >= 0 ? (unsigned)(s->o->debuginfo_wait * 1000)
			       : s->o->live_view ? FINAL_LOAD_WAIT_LIVE_MS : FINAL_LOAD_WAIT_MS;
	uint64_t start = now_ns(CLOCK_MONOTONIC), spent_ms;
	bool said = false;
	int rc = resolve_pass(s, budget);

	while (rc == 0 && wait_ms && aggregate_pending_lines(s->agg) &&
	       (busy = process_table_loading(s->procs)) > 0) {
		unsigned step;

		spent_ms = (now_ns(CLOCK_MONOTONIC) - start) / 1000000;
		if (spent_ms >= wait_ms)
			break;
		step = (unsigned)(wait_ms - spent_ms);
		/* A wait that takes more than a second is worth a line. */
		if (spent_ms < 1000 && step > 1000 - spent_ms)
			step = (unsigned)(1000 - spent_ms);
		else if (!said && spent_ms >= 1000) {
			said = true;
			if (!budget && !s->o->live_view && !s->o->quiet)
				fprintf(stderr, "pmutop: waiting up to %.0f s more for the debug info "
					"of %u module%s still being read (Ctrl-C: write the profile "
					"without their file:line)\n", step / 1000.0, busy,
					busy == 1 ? "" : "s");
		}
		rc = process_table_load_wait(s->procs, step, signal_waiting, s);
		if (rc == -EINTR)
			break;
		rc = resolve_pass(s, budget);
	}
	if (rc == 0 && busy && aggregate_pending_lines(s->agg) && !budget)
		fprintf(stderr, "pmutop: debug info of %u module%s still being read after %.1f s: "
			"%zu locations written without file:line\n", busy,
			busy == 1 ? "" : "s", wait_ms / 1000.0, aggregate_pending_lines(s->agg));
	if (rc == -EINTR && !budget)
		fprintf(stderr, "pmutop: interrupted while reading debug info: %zu locations "
			"written without file:line\n", aggregate_pending_lines(s->agg));
}

void session_stop(struct session *s)
{
	if (!s || s->stopped)
		return;
	s->stopped = true;
	/* Everything written before the counters close is still ours. */
	sampler_drain(s->sampler, UINT64_MAX, on_record, s);
	/* Blocks still open count up to now, the end of the recording. */
	if (s->oc)
		offcpu_finish(s->oc, now_ns(CLOCK_MONOTONIC));
	if (s->pte) {
		/* Before the command is ended: a tracee would hold its SIGTERM for us. */
		ptrace_engine_process(s->pte);
		ptrace_engine_detach_all(s->pte, 2000);
	}
	s->stop_mono = now_ns(CLOCK_MONOTONIC);
	aggregate_info(s->agg)->duration_ns = s->stop_mono - s->window_mono;
	set_state(s, SESSION_SIGNALLED, "stopped");
	if (s->child_running) {
		/* A command we started is ours to end when sampling ends first. */
		s->exit_status = end_child(s->pid, s->state != SESSION_TARGET_EXITED);
		s->child_running = false;
	}
	take_terminal_back(s);
	process_table_settle(s->procs);
	sampler_get_stats(s->sampler, &s->last_stats);
	note_multiplexing(s);
	sampler_free(s->sampler);
	s->sampler = NULL;
	/*
	 * Debug files asked of debuginfod while sampling: wait for them now -
	 * in the live view (a frozen screen, no room for a progress line) for
	 * two seconds at most: they had the whole session to arrive.
	 */
	if (process_table_fetch_wait(s->procs, s->o->live_view ? NULL : stderr,
				     s->o->live_view ? 2000 : 0, signal_waiting, s) == -EINTR)
		fprintf(stderr, "pmutop: interrupted while fetching debug info from debuginfod\n");
	/* file:line and inlined frames, now that no ring buffer can overflow. */
	final_lines(s);
	/* Fold and merge what can be (nothing when lines are still pending). */
	maintain(s, true);
}

/*
 * A new window: a fresh aggregate with the same run facts (events, units,
 * periods) and thread names, its counters at zero; the old window's
 * counters are added to `before` so that the run's totals (samples, lost,
 * throttled, unwind outcomes since start) stay true whatever resets did.
 */
int session_window(struct session *s, int (*write)(void *arg, const struct aggregate *a),
		   void *arg)
{
	int rc;

	/* Every record the kernel has written so far belongs to this window. */
	if (s->sampler)
		sampler_drain(s->sampler, drain_horizon(s, now_ns(CLOCK_MONOTONIC)), on_record, s);
	aggregate_info(s->agg)->duration_ns = now_ns(CLOCK_MONOTONIC) - s->window_mono;
	/*
	 * Lines for at most 100 ms, and only after the first 10 s as in
	 * maintain() (they are cached per module, so later windows find most
	 * at once): the lookups asked of the loader's thread are waited for
	 * within that time, and a location still pending then is written
	 * without file:line rather than stalling the ring buffers.
	 */
	if (now_ns(CLOCK_MONOTONIC) - s->start_mono >= LINES_WHILE_SAMPLING_NS) {
		uint64_t end = now_ns(CLOCK_MONOTONIC) + 100 * 1000000ULL, t;

		aggregate_resolve_lines_for(s->agg, 100 * 1000000ULL);
		while (aggregate_pending_lines(s->agg) && process_table_loading(s->procs) &&
		       (t = now_ns(CLOCK_MONOTONIC)) < end &&
		       process_table_load_wait(s->procs, (unsigned)((end - t) / 1000000) + 1,
					       NULL, NULL) == 0) {
			t = now_ns(CLOCK_MONOTONIC);
			aggregate_resolve_lines_for(s->agg, t < end ? end - t : 1000000ULL);
		}
	}
	/*
	 * Not forced: the window's aggregate goes right after the write, and a
	 * rebuild only to fold merged locations would stall the ring buffers
	 * for a copy of the whole tree (outputs read merged locations right).
	 */
	maintain(s, false);
	rc = write(arg, s->agg);
	if (session_reset(s))
		return rc ? rc : -ENOMEM;
	return rc;
}

int session_reset(struct session *s)
{
	struct aggregate *fresh = aggregate_new();
	const struct agg_info *old;
	const struct agg_thread *th;
	struct agg_info *info;
	struct agg_limits lim;
	size_t nth;

	if (!fresh)
		return -ENOMEM;
	old = aggregate_info_const(s->agg);
	aggregate_get_limits(s->agg, &lim);
	aggregate_set_limits(fresh, &lim);
	s->before.samples += old->samples;
	s->before.lost += old->lost;
	s->before.throttled += old->throttled;
	s->before.pruned += old->pruned;
	s->before.pruned_samples += old->pruned_samples;
	s->before.threads_folded += old->threads_folded;
	s->before.leaf_dropped += old->leaf_dropped;
	for (size_t k = 0; k < UNWIND_NOUTCOMES; k++)
		s->before.outcomes[k] += old->outcomes[k];
	info = aggregate_info(fresh);
	*info = *old;
	info->start_ns = now_ns(CLOCK_REALTIME);
	info->duration_ns = 0;
	info->samples = info->lost = info->throttled = info->foreign = 0;
	info->pruned = info->pruned_samples = info->threads_folded = 0;
	info->leaf_dropped = info->compactions = 0;
	memset(info->outcomes, 0, sizeof(info->outcomes));
	th = aggregate_threads(s->agg, &nth);
	/* Live threads keep their names; exited and folded ones are gone. */
	for (size_t i = 0; i < nth; i++)
		if (th[i].name[0] && !th[i].exited && !th[i].folded)
			aggregate_set_thread_name(fresh, th[i].tid, th[i].name);
	aggregate_free(s->agg);
	s->agg = fresh;
	s->window_mono = now_ns(CLOCK_MONOTONIC);
	s->resets++;
	sync_run_counts(s);
	return 0;
}

const struct aggregate *session_aggregate(const struct session *s)
{
	return s->agg;
}

void session_get_status(const struct session *s, struct session_status *st)
{
	const struct agg_info *info = aggregate_info_const(s->agg);
	double wall;

	memset(st, 0, sizeof(*st));
	st->pid = s->pid;
	snprintf(st->cmdline, sizeof(st->cmdline), "%s", s->cmdline);
	st->event = s->event;
	st->nevents = s->nevents;
	st->period = s->period;
	st->freq = s->freq;
	uint64_t end = s->stopped ? s->stop_mono : now_ns(CLOCK_MONOTONIC);

	wall = (double)(end - s->start_mono) / 1e9;
	st->elapsed = wall;
	st->window.samples = info->samples;
	st->window.lost = info->lost;
	st->window.throttled = info->throttled;
	memcpy(st->window.outcomes, info->outcomes, sizeof(st->window.outcomes));
	st->total = s->before;
	st->total.samples += info->samples;
	st->total.lost += info->lost;
	st->total.throttled += info->throttled;
	st->total.pruned += info->pruned;
	st->total.pruned_samples += info->pruned_samples;
	st->total.threads_folded += info->threads_folded;
	st->total.leaf_dropped += info->leaf_dropped;
	st->window.pruned = info->pruned;
	st->window.pruned_samples = info->pruned_samples;
	st->window.threads_folded = info->threads_folded;
	st->window.leaf_dropped = info->leaf_dropped;
	for (size_t k = 0; k < UNWIND_NOUTCOMES; k++)
		st->total.outcomes[k] += info->outcomes[k];
	st->samples = st->total.samples;
	st->lost = st->total.lost;
	st->throttled = st->total.throttled;
	st->resets = s->resets;
	st->window_start = (double)(s->window_mono - s->start_mono) / 1e9;
	st->notes = s->notes;
	{
		struct sampler_stats ss = s->last_stats;
		if (s->sampler)
			sampler_get_stats(s->sampler, &ss);
		st->threads_seen = ss.threads_seen;
		st->corrupt = ss.corrupt;
		st->undecodable = ss.undecodable;
		st->threads_attached = s->sampler ? ss.threads_attached : 0;
		st->ncpus = ss.ncpus;
	}
	st->self_cpu = wall > 0 ? 100.0 * (cpu_seconds() - s->start_cpu) / wall : 0;
	st->state = s->state;
	st->signal = s->signal;
	st->exit_status = s->exit_status;
	st->why = s->why;
	if (s->procs) {
		process_table_unwind_stats(s->procs, &st->unwind);
		process_table_stats(s->procs, &st->procs);
	}
	if (s->oc) {
		st->offcpu = true;
		offcpu_get_stats(s->oc, &st->offcpu_stats);
		st->offcpu_lost = s->offcpu_lost;
		st->offcpu_initial = s->offcpu_initial;
	}
	st->follow = s->follow;
	st->unfollowed_samples = s->unfollowed_samples;
	st->perfmap_note[0] = '\0';
	if (s->maps && !perfmap_note(maps_perfmap(s->maps), st->perfmap_note,
				    sizeof(st->perfmap_note)))
		st->perfmap_note[0] = '\0';
	st->symbol_note = s->symcache ? symbol_cache_note(s->symcache) : "";
	pyframes_summary(s->py, st->python_note, sizeof(st->python_note));
	st->skipped_files = module_cache_skipped(s->modules, &st->skipped_first);
	if (s->maps && !st->skipped_files)
		st->skipped_files = debuginfo_skipped(maps_debuginfo(s->maps), &st->skipped_first);
	else if (s->maps)
		st->skipped_files += debuginfo_skipped(maps_debuginfo(s->maps), NULL);
}

int session_command_exit_code(const struct session_status *st)
{
	if (st->exit_status < 0 || st->state != SESSION_TARGET_EXITED)
		return -1;
	if (WIFEXITED(st->exit_status))
		return WEXITSTATUS(st->exit_status);
	if (WIFSIGNALED(st->exit_status))
		return 128 + WTERMSIG(st->exit_status);
	return -1;
}

const char *session_engine_summary(const struct session *s, char *buf, size_t len)
{
	if (!s->pte)
		return NULL;
	return ptrace_engine_summary(s->pte, buf, len);
}

void session_print_notes(const struct session *s, FILE *f)
{
	const char *p = s->notes, *nl;

	while (*p) {
		nl = strchr(p, '\n');
		fprintf(f, "pmutop: %.*s\n", nl ? (int)(nl - p) : (int)strlen(p), p);
		if (!nl)
			break;
		p = nl + 1;
	}
}

int session_fd(const struct session *s)
{
	return s->ep;
}

void session_free(struct session *s)
{
	if (!s)
		return;
	ptrace_engine_free(s->pte); /* detaches whatever is still traced */
	s->pte = NULL;
	if (s->child_running)
		end_child(s->pid, true);
	take_terminal_back(s);
	sampler_free(s->sampler);
	offcpu_free(s->oc);
	symbol_cache_free(s->symcache);
	pyframes_free(s->py);
	kallsyms_free(s->ks_own);
	process_table_free(s->procs);
	aggregate_free(s->agg);
	module_cache_free(s->modules);
	free(s->ips);
	free(s->frames);
	free(s->pids);
	if (s->ep >= 0)
		close(s->ep);
	if (s->sigfd >= 0) {
		struct signalfd_siginfo si;

		/*
		 * A stop signal that came after the session ended (a second
		 * Ctrl-C while the profile was written) has been answered by
		 * the run ending: take it now, or restoring the mask below
		 * would deliver it and turn a clean exit into "killed by
		 * SIGINT" (status 130) after the profile is already written.
		 */
		while (read(s->sigfd, &si, sizeof(si)) == sizeof(si))
			;
		close(s->sigfd);
	}
	if (s->pidfd >= 0)
		close(s->pidfd);
	if (s->mask_set)
		sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
	free(s);
}

const struct pmu_event *session_event(const struct session *s, size_t k, uint64_t *period)
{
	if (k >= s->nevents)
		return NULL;
	if (period)
		*period = s->periods[k];
	return &s->events[k];
}
