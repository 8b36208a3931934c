/*
 * ptrace_engine.c - `--unwind=ptrace`: interrupt the sampled thread, read
 * its registers and stack while it is stopped, unwind, resume (see
 * ptrace_engine.h for the design).
 *
 * Per thread there is a small state machine:
 *   RUNNING      seized, running, nothing asked of it
 *   INTERRUPTED  PTRACE_INTERRUPT sent; samples wait in `pending` for the stop
 *   LISTENING    in a group-stop the target's process wants (PTRACE_LISTEN)
 *   UNTRACEABLE  PTRACE_SEIZE failed; its samples keep only their IP
 * Stops are found with waitid(P_ALL, WNOWAIT) so that, in launch mode, the
 * exit of the command (also our child) is left for the session to reap.
 *
 * The unwinding itself is the snapshot engine's: the stop's registers and a
 * process_vm_readv copy of the stack are put into a struct perf_sample, so
 * both engines share unwind.c (DWARF CFI with a global cache, module images
 * for code, live reads past the copy). libunwind-ptrace's _UPT accessors
 * were measured too: they read memory with PTRACE_PEEKDATA one word at a
 * time and re-read /proc/PID/maps per object (README, "Unwinding engines").
 */
#include "pmutop/unwind/ptrace_engine.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pmutop/target/maps.h"
#include "pmutop/sample/perf_record.h"
#include "pmutop/target/proc.h"
#include "pmutop/unwind/ptrace_thread.h"
#include "pmutop/symbols/symbolize.h"

/*
 * Samples waiting for one thread's stop. They pile up when pmutop reads the
 * ring buffer late (it is itself descheduled): all predate the interrupt,
 * so the next stop serves them all (their skid shows it).
 */
#define MAX_PENDING 4096
#define SKID_BUCKETS 256  /* 4 per power of 2 (log-linear), 1 ns .. 2^64 ns */
#define MAPS_RELOAD_MIN_NS (100 * 1000000ULL)

enum th_state {
	TH_EMPTY = 0,
	TH_RUNNING,
	TH_INTERRUPTED,
	TH_LISTENING,
	TH_UNTRACEABLE,
	TH_DELETED,     /* tombstone */
};

struct pending {
	uint64_t ip, time, period;
	uint32_t event;
	uint16_t misc;
};

struct thread {
	pid_t tid;
	uint8_t state;
	uint32_t npending, cap;
	struct pending *pending; /* malloc'd, grows */
};

struct ptrace_engine {
	pid_t pid, child;
	bool child_exited;   /* launch mode: the command's exit is waiting for the session */
	bool detached;
	struct maps *maps;
	struct unwinder *unw;
	unsigned max_depth, stack_size;
	ptrace_engine_emit_fn emit;
	void *arg;
	uint8_t *stack;      /* stack copy of the stopped thread */
	uint64_t *ips, *out;
	int sigfd;
	sigset_t old_mask;
	bool mask_set;
	uint64_t last_maps_reload;
	struct thread *t;
	size_t cap, used, live;
	struct ptrace_engine_stats st;
	uint64_t skid[SKID_BUCKETS];
	uint64_t nskid, skid_max;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- thread table: open addressing, linear probing, tombstones ---- */

static size_t slot(size_t cap, pid_t tid)
{
	return ((uint32_t)tid * 2654435761u) & (cap - 1);
}

static struct thread *th_find(struct ptrace_engine *e, pid_t tid)
{
	size_t i = slot(e->cap, tid);

	for (size_t n = 0; n < e->cap; n++, i = (i + 1) & (e->cap - 1)) {
		struct thread *t = &e->t[i];
		if (t->state == TH_EMPTY)
			return NULL;
		if (t->state != TH_DELETED && t->tid == tid)
			return t;
	}
	return NULL;
}

static int th_rehash(struct ptrace_engine *e)
{
	size_t cap = 64, old_cap = e->cap;
	struct thread *old = e->t, *nt;

	while (cap < (e->live + 1) * 4)
		cap *= 2;
	nt = calloc(cap, sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	e->t = nt;
	e->cap = cap;
	e->used = 0;
	for (size_t i = 0; i < old_cap; i++) {
		if (old[i].state == TH_EMPTY || old[i].state == TH_DELETED)
			continue;
		size_t j = slot(cap, old[i].tid);
		while (nt[j].state != TH_EMPTY)
			j = (j + 1) & (cap - 1);
		nt[j] = old[i];
		e->used++;
	}
	free(old);
	return 0;
}

static struct thread *th_insert(struct ptrace_engine *e, pid_t tid, enum th_state state)
{
	struct thread *t = th_find(e, tid);
	size_t i;

	if (t)
		return t;
	if ((e->used + 1) * 2 > e->cap && th_rehash(e))
		return NULL;
	i = slot(e->cap, tid);
	while (e->t[i].state != TH_EMPTY && e->t[i].state != TH_DELETED)
		i = (i + 1) & (e->cap - 1);
	if (e->t[i].state == TH_EMPTY)
		e->used++;
	e->live++;
	t = &e->t[i];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->state = (uint8_t)state;
	return t;
}

static void th_remove(struct ptrace_engine *e, struct thread *t)
{
	t->state = TH_DELETED;
	t->npending = 0;
	t->cap = 0;
	free(t->pending);
	t->pending = NULL;
	e->live--;
}

static bool th_push(struct thread *t, const struct pending *p)
{
	if (t->npending == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 8;
		struct pending *n;

		if (cap > MAX_PENDING)
			return false;
		n = realloc(t->pending, cap * sizeof(*n));
		if (!n)
			return false;
		t->pending = n;
		t->cap = cap;
	}
	t->pending[t->npending++] = *p;
	return true;
}

/* ---- skid statistics ---- */

/* Bucket: 4 * floor(log2 ns) + the next two bits (about 19% wide). */
static int skid_bucket(uint64_t ns)
{
	int lg;

	if (ns < 4)
		return (int)ns;
	lg = 63 - __builtin_clzll(ns);
	return 4 * lg + (int)((ns >> (lg - 2)) & 3);
}

/* Middle of a bucket's range. */
static uint64_t skid_value(int b)
{
	int lg = b / 4;

	if (b < 4)
		return (uint64_t)b;
	return ((uint64_t)(4 + b % 4) << (lg - 2)) + ((1ULL << (lg - 2)) >> 1);
}

static void skid_add(struct ptrace_engine *e, uint64_t ns)
{
	int b = skid_bucket(ns);

	e->skid[b]++;
	e->nskid++;
	if (ns > e->skid_max)
		e->skid_max = ns;
}

static uint64_t skid_quantile(const struct ptrace_engine *e, double q)
{
	uint64_t want = (uint64_t)(q * (double)e->nskid + 0.999999), acc = 0;

	if (!e->nskid)
		return 0;
	for (int b = 0; b < SKID_BUCKETS; b++) {
		acc += e->skid[b];
		if (acc >= want && acc)
			return skid_value(b) < e->skid_max ? skid_value(b) : e->skid_max;
	}
	return e->skid_max;
}

/* ---- samples ---- */

/* A sample that cannot get a stack keeps its IP: flat profiles stay right. */
static void emit_leaf(struct ptrace_engine *e, pid_t tid, const struct pending *p)
{
	uint64_t ip = p->ip;

	e->st.leaf_only++;
	e->emit(e->arg, (uint32_t)tid, p->event, &ip, 1, UNWIND_NO_REGS, p->period);
}

static void flush_leaf(struct ptrace_engine *e, struct thread *t, uint64_t *counter)
{
	for (unsigned i = 0; i < t->npending; i++) {
		emit_leaf(e, t->tid, &t->pending[i]);
		(*counter)++;
	}
	t->npending = 0;
}

/* Same function: same module and same symbol (or both unknown at one address). */
static bool same_function(const struct frame *a, const struct frame *b)
{
	if (a->map != b->map && (!a->map || !b->map || a->map->mod != b->map->mod))
		return false;
	if (a->func && b->func)
		return a->func == b->func || strcmp(a->func, b->func) == 0;
	return a->addr - a->func_off == b->addr - b->func_off && a->func == b->func;
}

static unsigned unwind_stopped(struct ptrace_engine *e, pid_t tid,
			       const struct user_regs_struct *regs, enum unwind_outcome *outcome)
{
	struct perf_sample ps;
	size_t got = 0;
	unsigned n;

	memset(&ps, 0, sizeof(ps));
	pt_regs_to_sample(regs, &ps);
	ps.pid = (uint32_t)e->pid;
	ps.tid = (uint32_t)tid;
	if (pt_read_stack(e->pid, regs->rsp, e->stack, e->stack_size, &got))
		got = 0;
	ps.stack = e->stack;
	ps.stack_size = got;
	n = unwinder_unwind(e->unw, &ps, e->ips, e->max_depth, outcome);
	/* An IP in no known mapping: a mapping we missed (exec, a race). */
	if (n && !maps_find(e->maps, e->ips[0])) {
		uint64_t now = mono_ns();
		if (now - e->last_maps_reload > MAPS_RELOAD_MIN_NS) {
			e->last_maps_reload = now;
			if (maps_load_proc(e->maps) == 0) {
				unwinder_flush(e->unw);
				n = unwinder_unwind(e->unw, &ps, e->ips, e->max_depth, outcome);
			}
		}
	}
	return n;
}

/*
 * The thread is in a ptrace-stop: give each waiting sample a stack. The
 * sample's IP is the leaf; the callers come from the stopped state. When
 * the thread stopped in a callee of the sampled function, the frames below
 * the sampled function are dropped; otherwise the stopped leaf frame is
 * replaced by the sample's (same function, or a sibling call after skid).
 */
static void serve(struct ptrace_engine *e, struct thread *t, uint64_t stop_ns)
{
	struct user_regs_struct regs;
	enum unwind_outcome outcome;
	struct frame fs, fk;
	unsigned n;

	if (!t->npending)
		return;
	if (pt_get_regs(t->tid, &regs)) {
		flush_leaf(e, t, &e->st.gone);
		return;
	}
	e->st.stops++;
	n = unwind_stopped(e, t->tid, &regs, &outcome);
	for (unsigned i = 0; i < t->npending; i++) {
		const struct pending *p = &t->pending[i];
		bool user = (p->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;
		unsigned from = 1, m = 0;

		skid_add(e, stop_ns > p->time ? stop_ns - p->time : 0);
		e->out[m++] = p->ip;
		if (!user) {
			/* A kernel-mode sample (--kernel): the user stack under it, whole. */
			from = 0;
		} else if (n) {
			symbolize_stack(e->maps, &p->ip, 1, &fs);
			symbolize_stack(e->maps, e->ips, 1, &fk);
			if (same_function(&fs, &fk)) {
				e->st.same_func++;
			} else {
				unsigned k;
				for (k = 1; k < n; k++) {
					/* Callers are looked up at their call instruction. */
					uint64_t a = e->ips[k] - 1;
					symbolize_stack(e->maps, &a, 1, &fk);
					if (same_function(&fs, &fk))
						break;
				}
				if (k < n) {
					e->st.in_callee++;
					from = k + 1;
				} else {
					e->st.elsewhere++;
				}
			}
		}
		for (unsigned k = from; k < n && m < e->max_depth; k++)
			e->out[m++] = e->ips[k];
		e->st.unwound++;
		e->emit(e->arg, (uint32_t)t->tid, p->event, e->out, m, outcome, p->period);
	}
	t->npending = 0;
}

/* React to one waitpid() status of tracee tid. */
static void handle_status(struct ptrace_engine *e, pid_t tid, int status)
{
	struct thread *t = th_find(e, tid);
	struct pt_stop st;

	pt_classify(status, &st);
	if (st.ev == PT_GONE) {
		if (t) {
			flush_leaf(e, t, &e->st.gone);
			th_remove(e, t);
		}
		return;
	}
	if (t)
		serve(e, t, mono_ns());
	if (st.ev == PT_SIGNAL)
		e->st.signals++;
	if (st.ev == PT_GROUP_STOP)
		e->st.group_stops++;
	if (pt_resume(tid, &st) == -ESRCH) {
		if (t)
			th_remove(e, t);
		return;
	}
	if (t)
		t->state = st.ev == PT_GROUP_STOP ? TH_LISTENING : TH_RUNNING;
}

/* Seize a new thread; on failure remember it as untraceable. */
static struct thread *seize(struct ptrace_engine *e, pid_t tid, int *err)
{
	int r = pt_seize(tid);
	struct thread *t;

	*err = r;
	if (r == -ESRCH)
		return NULL;
	t = th_insert(e, tid, r ? TH_UNTRACEABLE : TH_RUNNING);
	if (t && !r)
		e->st.threads++;
	return t;
}

void ptrace_engine_sample(struct ptrace_engine *e, const struct perf_sample *smp)
{
	pid_t tid = (pid_t)smp->tid;
	struct thread *t;
	struct pending p = {
		.ip = smp->ip, .time = smp->time, .period = smp->period,
		.event = smp->event, .misc = smp->misc,
	};
	int r;

	e->st.samples++;
	if (e->detached) {
		emit_leaf(e, tid, &p);
		return;
	}
	t = th_find(e, tid);
	if (!t)
		t = seize(e, tid, &r);
	if (!t) {
		emit_leaf(e, tid, &p);
		e->st.gone++;
		return;
	}
	switch (t->state) {
	case TH_RUNNING:
		r = pt_interrupt(tid);
		if (r) {
			emit_leaf(e, tid, &p);
			e->st.gone++;
			if (r == -ESRCH)
				th_remove(e, t);
			return;
		}
		t->state = TH_INTERRUPTED;
		/* fall through */
	case TH_INTERRUPTED:
		if (!th_push(t, &p)) {
			emit_leaf(e, tid, &p);
			e->st.overflow++;
		}
		return;
	case TH_UNTRACEABLE:
		emit_leaf(e, tid, &p);
		e->st.untraced++;
		return;
	default: /* LISTENING: it does not run, so this sample predates the stop */
		emit_leaf(e, tid, &p);
		e->st.gone++;
		return;
	}
}

void ptrace_engine_thread_new(struct ptrace_engine *e, pid_t tid)
{
	int r;

	if (!e->detached && !th_find(e, tid))
		seize(e, tid, &r);
}

int ptrace_engine_process(struct ptrace_engine *e)
{
	struct signalfd_siginfo si_buf[16];
	int handled = 0;

	while (read(e->sigfd, si_buf, sizeof(si_buf)) > 0)
		;
	for (;;) {
		siginfo_t si;
		int status;
		pid_t r;

		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WSTOPPED | WNOHANG | WNOWAIT | __WALL) || !si.si_pid)
			break;
		/* The launched command's exit is the session's to collect. */
		if (e->child && si.si_pid == e->child &&
		    (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED)) {
			e->child_exited = true;
			break;
		}
		r = waitpid(si.si_pid, &status, __WALL | WNOHANG);
		if (r <= 0)
			break;
		handle_status(e, r, status);
		handled++;
	}
	return handled;
}

/* Seize all threads of e->pid until a scan finds no new one. */
static int seize_all(struct ptrace_engine *e, char *err, size_t errlen)
{
	size_t cap = 256, n;
	pid_t *tids = NULL;
	int r = 0;

	for (int round = 0; round < 16; round++) {
		int added = 0;

		for (;;) {
			pid_t *b = realloc(tids, cap * sizeof(*tids));
			if (!b) {
				free(tids);
				snprintf(err, errlen, "out of memory");
				return -ENOMEM;
			}
			tids = b;
			r = proc_list_threads(e->pid, tids, cap, &n);
			if (r != -ENOSPC)
				break;
			cap = n + n / 2 + 64;
		}
		if (r) {
			snprintf(err, errlen, "cannot list the threads of PID %d: %s", (int)e->pid,
				 strerror(-r));
			break;
		}
		for (size_t i = 0; i < n; i++) {
			if (th_find(e, tids[i]))
				continue;
			r = pt_seize(tids[i]);
			if (r == -ESRCH) {
				r = 0;
				continue;
			}
			if (r) {
				pt_explain_seize_error(-r, e->pid, tids[i], err, errlen);
				goto out;
			}
			if (!th_insert(e, tids[i], TH_RUNNING)) {
				pt_stop_and_detach(tids[i], 1000);
				snprintf(err, errlen, "out of memory");
				r = -ENOMEM;
				goto out;
			}
			e->st.threads++;
			added++;
		}
		if (!added)
			break;
	}
	if (!r && !e->live) {
		snprintf(err, errlen, "PID %d has no threads left to trace (it exited)", (int)e->pid);
		r = -ESRCH;
	}
out:
	free(tids);
	return r;
}

struct ptrace_engine *ptrace_engine_new(pid_t pid, pid_t child, struct maps *maps,
					struct unwinder *u, unsigned max_depth,
					unsigned stack_size, ptrace_engine_emit_fn emit,
					void *arg, char *err, size_t errlen)
{
	struct ptrace_engine *e = calloc(1, sizeof(*e));
	sigset_t chld;

	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	e->pid = pid;
	e->child = child;
	e->maps = maps;
	e->unw = u;
	e->max_depth = max_depth ? max_depth : 1;
	e->stack_size = stack_size;
	e->emit = emit;
	e->arg = arg;
	e->sigfd = -1;
	e->stack = malloc(stack_size ? stack_size : 1);
	e->ips = calloc(e->max_depth + 2, sizeof(*e->ips));
	e->out = calloc(e->max_depth + 2, sizeof(*e->out));
	if (!e->stack || !e->ips || !e->out || th_rehash(e)) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &chld, &e->old_mask) == 0)
		e->mask_set = true;
	e->sigfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	if (e->sigfd < 0) {
		snprintf(err, errlen, "cannot create a signalfd for SIGCHLD: %s", strerror(errno));
		goto fail;
	}
	if (seize_all(e, err, errlen))
		goto fail;
	return e;
fail:
	ptrace_engine_free(e);
	return NULL;
}

int ptrace_engine_fd(const struct ptrace_engine *e)
{
	return e->sigfd;
}

/* Launch mode: has the command (our child too) exited? Its status is left to reap. */
static bool child_exited(struct ptrace_engine *e)
{
	siginfo_t si;

	if (e->child_exited)
		return true;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)e->child, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) == 0 &&
	    si.si_pid == e->child)
		e->child_exited = true;
	return e->child_exited;
}

void ptrace_engine_detach_all(struct ptrace_engine *e, int timeout_ms)
{
	uint64_t deadline;
	size_t left = 0;
	sigset_t chld;

	if (!e || e->detached)
		return;
	e->detached = true;
	/* Ask every thread to stop; each is detached as its stop comes in. */
	for (size_t i = 0; i < e->cap; i++) {
		struct thread *t = &e->t[i];
		if (t->state == TH_RUNNING || t->state == TH_INTERRUPTED || t->state == TH_LISTENING) {
			if (pt_interrupt(t->tid) == -ESRCH) {
				flush_leaf(e, t, &e->st.gone);
				th_remove(e, t);
				continue;
			}
			left++;
		}
	}
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	deadline = mono_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000ULL;
	while (left) {
		size_t before = left;

		for (size_t i = 0; i < e->cap && left; i++) {
			struct thread *t = &e->t[i];
			struct pt_stop st;
			int status;
			pid_t r;

			if (t->state != TH_RUNNING && t->state != TH_INTERRUPTED &&
			    t->state != TH_LISTENING)
				continue;
			if (t->tid == e->child && child_exited(e)) {
				/* Its exit status is the session's to collect. */
				left--;
				flush_leaf(e, t, &e->st.gone);
				th_remove(e, t);
				continue;
			}
			r = waitpid(t->tid, &status, __WALL | WNOHANG);
			if (r == 0)
				continue;
			left--;
			if (r < 0) { /* ECHILD: not ours any more */
				flush_leaf(e, t, &e->st.gone);
				th_remove(e, t);
				continue;
			}
			pt_classify(status, &st);
			if (st.ev == PT_GONE) {
				flush_leaf(e, t, &e->st.gone);
				th_remove(e, t);
				continue;
			}
			serve(e, t, mono_ns());
			if (st.ev == PT_SIGNAL)
				e->st.signals++;
			/* Passes a signal on; a group-stopped thread stays stopped. */
			pt_detach(t->tid, &st);
			th_remove(e, t);
		}
		if (!left || mono_ns() >= deadline)
			break;
		if (left == before) {
			struct timespec ts = { 0, 2 * 1000000L };
			sigtimedwait(&chld, NULL, &ts);
		}
	}
	/*
	 * Threads that never stopped (stuck in uninterruptible sleep) stay
	 * seized until pmutop exits; the kernel then detaches them and drops
	 * the pending interrupt.
	 */
	for (size_t i = 0; i < e->cap; i++) {
		struct thread *t = &e->t[i];
		if (t->state == TH_RUNNING || t->state == TH_INTERRUPTED || t->state == TH_LISTENING) {
			flush_leaf(e, t, &e->st.gone);
			e->st.not_stopped++;
		}
	}
}

void ptrace_engine_get_stats(const struct ptrace_engine *e, struct ptrace_engine_stats *st)
{
	*st = e->st;
	st->skid_p50_ns = skid_quantile(e, 0.50);
	st->skid_p90_ns = skid_quantile(e, 0.90);
	st->skid_p99_ns = skid_quantile(e, 0.99);
	st->skid_max_ns = e->skid_max;
}

static const char *fmt_ns(uint64_t ns, char *buf, size_t len)
{
	if (ns < 10000)
		snprintf(buf, len, "%.1f us", (double)ns / 1e3);
	else if (ns < 10000000)
		snprintf(buf, len, "%.0f us", (double)ns / 1e3);
	else
		snprintf(buf, len, "%.0f ms", (double)ns / 1e6);
	return buf;
}

const char *ptrace_engine_summary(const struct ptrace_engine *e, char *buf, size_t len)
{
	struct ptrace_engine_stats st;
	char a[32], b[32], c[32], d[32];
	uint64_t judged;
	size_t l;

	ptrace_engine_get_stats(e, &st);
	judged = st.same_func + st.in_callee + st.elsewhere;
	snprintf(buf, len,
		 "ptrace: %llu threads seized, %llu stops for %llu samples; skid sample->stop "
		 "median %s, p90 %s, p99 %s, max %s; stopped in the sampled function %.1f%% "
		 "(in a callee %.1f%%, elsewhere %.1f%%)",
		 (unsigned long long)st.threads, (unsigned long long)st.stops,
		 (unsigned long long)st.samples, fmt_ns(st.skid_p50_ns, a, sizeof(a)),
		 fmt_ns(st.skid_p90_ns, b, sizeof(b)), fmt_ns(st.skid_p99_ns, c, sizeof(c)),
		 fmt_ns(st.skid_max_ns, d, sizeof(d)),
		 judged ? 100.0 * (double)st.same_func / (double)judged : 0.0,
		 judged ? 100.0 * (double)st.in_callee / (double)judged : 0.0,
		 judged ? 100.0 * (double)st.elsewhere / (double)judged : 0.0);
	l = strlen(buf);
	if (st.leaf_only && l < len)
		l += (size_t)snprintf(buf + l, len - l,
				      "; %llu samples kept only their IP (%llu thread exited, %llu "
				      "untraceable, %llu queue full)",
				      (unsigned long long)st.leaf_only, (unsigned long long)st.gone,
				      (unsigned long long)st.untraced, (unsigned long long)st.overflow);
	if (st.signals && l < len)
		l += (size_t)snprintf(buf + l, len - l, "; %llu signals passed on",
				      (unsigned long long)st.signals);
	if (st.not_stopped && l < len)
		snprintf(buf + l, len - l, "; %llu threads did not stop to be detached (the "
			 "kernel detaches them when pmutop exits)", (unsigned long long)st.not_stopped);
	return buf;
}

void ptrace_engine_free(struct ptrace_engine *e)
{
	if (!e)
		return;
	if (e->t)
		ptrace_engine_detach_all(e, 2000);
	for (size_t i = 0; i < e->cap; i++)
		free(e->t[i].pending);
	if (e->sigfd >= 0)
		close(e->sigfd);
	if (e->mask_set)
		sigprocmask(SIG_SETMASK, &e->old_mask, NULL);
	free(e->t);
	free(e->stack);
	free(e->ips);
	free(e->out);
	free(e);
}
