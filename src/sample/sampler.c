/*
 * sampler.c - perf_event counters on every thread of a target process.
 *
 * Layout (see sampler.h for why): per CPU, a dummy software event on
 * pmutop's own thread owns an mmap'd ring buffer; every counter opened on a
 * target thread for that CPU is redirected into it with
 * PERF_EVENT_IOC_SET_OUTPUT. Target counters are inherited, so a thread
 * (and, following children, a process) created by a covered thread is
 * covered from birth, and the kernel reports it with a FORK record; with
 * --no-children inherit_thread keeps forks out. Several target processes
 * are each attached and rescanned; -a opens one counter per CPU instead.
 *
 * The one gap inheritance leaves is a thread created, while we attach, by a
 * thread whose counters were not open yet. The rescan closes it: a thread
 * found in /proc/PID/task that is neither ours nor announced by a FORK record
 * is attached only when a second scan, after the buffers were drained, still
 * does not know it. Attaching any sooner could put two counters on one
 * thread and count its samples twice.
 */
#include "pmutop/sample/sampler.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pmutop/sample/perf_record.h"
#include "pmutop/sample/ring.h"
#include "pmutop/target/proc.h"

enum tid_state {
	TID_EMPTY = 0,
	TID_SEEN_ONCE,  /* found by one scan, not yet known to be covered */
	TID_DIRECT,     /* we opened counters on it */
	TID_INHERITED,  /* covered by inheritance (FORK record or a sample) */
	TID_DELETED,    /* tombstone */
};

struct tid_entry {
	pid_t tid;
	uint8_t state;
	uint32_t scan;  /* scan number that last saw it (TID_SEEN_ONCE) */
	int *fds;       /* ncpu fds for TID_DIRECT */
};

/*
 * One buffer's place in a merged drain: the head read at the start, the
 * reader's tail, and the record at the tail once framed (its bytes in the
 * ring, or in this buffer's own scratch space when it wraps: several
 * buffers hold a framed record at once).
 */
struct drain_cursor {
	struct ring ring;
	uint64_t head, tail;
	const uint8_t *rec;    /* NULL: nothing (more) to deliver from this buffer */
	size_t len;
	uint64_t time;         /* rec's timestamp; a record without one keeps the last */
};

struct cpu_buf {
	int cpu;
	int owner_fd;
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t size; /* data area, a power of 2 */
};

struct id_entry {
	uint64_t id;    /* 0 = empty */
	uint32_t event;
};

struct sampler {
	struct sampler_config cfg;
	struct perf_event_attr attr;           /* attrs[0], for the decoder */
	struct perf_event_attr attrs[PMUTOP_MAX_EVENTS];
	unsigned nev;
	struct id_entry *ids;                  /* counter id → event index */
	size_t id_cap, id_used;
	struct cpu_buf *bufs;
	unsigned nbufs;
	int epfd;
	uint8_t *scratch;       /* per buffer, for records that wrap around its end */
	size_t scratch_size;    /* each buffer's part of scratch */
	struct drain_cursor *cursors; /* per buffer, for sampler_drain's merge */
	struct tid_entry *tids;
	size_t tid_cap, tid_used; /* used counts non-empty slots incl. tombstones */
	size_t tid_live;          /* entries not deleted */
	uint32_t scan_no;
	pid_t *roots;             /* target processes, sorted; root_gone[i]: exited */
	bool *root_gone;
	size_t nroots;
	pid_t *scan_buf;
	size_t scan_cap;
	struct sampler_stats stats;
	/*
	 * Fault injection for the tests (PMUTOP_FAULT_RING_CORRUPT=N): the
	 * N-th time a drain finds records in a buffer, the first record's
	 * header is taken for corrupt (the data pages cannot be written: the
	 * kernel maps them read-only) - what ring_next() says of a header with
	 * a size no record has (test_ring) - and handled as such, end to end on
	 * a real process (t_fault_ring). 0: off.
	 */
	unsigned long fault_corrupt_at, ndrains;
};

static long perf_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* ---- thread table: open addressing, linear probing ---- */

static size_t tid_slot(size_t cap, pid_t tid)
{
	return ((uint32_t)tid * 2654435761u) & (cap - 1);
}

static struct tid_entry *tid_find(struct sampler *s, pid_t tid)
{
	size_t i = tid_slot(s->tid_cap, tid);

	for (size_t n = 0; n < s->tid_cap; n++, i = (i + 1) & (s->tid_cap - 1)) {
		struct tid_entry *e = &s->tids[i];
		if (e->state == TID_EMPTY)
			return NULL;
		if (e->state != TID_DELETED && e->tid == tid)
			return e;
	}
	return NULL;
}

/*
 * Rehash into a table sized for the live entries (dropping tombstones left
 * by exited threads), so thread churn does not grow the table forever.
 */
static int tid_grow(struct sampler *s)
{
	size_t old_cap = s->tid_cap, cap = 256;
	struct tid_entry *old = s->tids, *t;

	while (cap < (s->tid_live + 1) * 4)
		cap *= 2;
	t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	s->tids = t;
	s->tid_cap = cap;
	s->tid_used = 0;
	for (size_t i = 0; i < old_cap; i++) {
		if (old[i].state == TID_EMPTY || old[i].state == TID_DELETED)
			continue;
		size_t j = tid_slot(cap, old[i].tid);
		while (t[j].state != TID_EMPTY)
			j = (j + 1) & (cap - 1);
		t[j] = old[i];
		s->tid_used++;
	}
	free(old);
	return 0;
}

static struct tid_entry *tid_insert(struct sampler *s, pid_t tid)
{
	struct tid_entry *e = tid_find(s, tid);
	size_t i;

	if (e)
		return e;
	if ((s->tid_used + 1) * 2 > s->tid_cap && tid_grow(s))
		return NULL;
	i = tid_slot(s->tid_cap, tid);
	while (s->tids[i].state != TID_EMPTY && s->tids[i].state != TID_DELETED)
		i = (i + 1) & (s->tid_cap - 1);
	if (s->tids[i].state == TID_EMPTY)
		s->tid_used++;
	s->tid_live++;
	e = &s->tids[i];
	memset(e, 0, sizeof(*e));
	e->tid = tid;
	return e;
}

static void close_fds(struct sampler *s, struct tid_entry *e)
{
	if (!e->fds)
		return;
	for (unsigned c = 0; c < s->nbufs * s->nev; c++)
		if (e->fds[c] >= 0)
			close(e->fds[c]);
	free(e->fds);
	e->fds = NULL;
	s->stats.threads_attached--;
}

static void tid_remove(struct sampler *s, struct tid_entry *e)
{
	close_fds(s, e);
	e->state = TID_DELETED;
	s->tid_live--;
}

/* ---- buffers ---- */

size_t sampler_sample_size(unsigned stack_size)
{
	/* header, identifier, ip, tid, time, cpu, period; abi + registers; size + stack + dyn_size */
	return 8 * 7 + 8 + 8 * PMUTOP_NREGS + 8 + (size_t)stack_size + 8;
}
/*
 * Data pages per CPU buffer when --mmap-pages is not given. A non-root
 * user may lock 516 KiB in all (kernel.perf_event_mlock_kb): 128 pages, and
 * sampler_new() halves them to fit. Root: a buffer that holds about 250
 * samples with the default 16 KiB stack copy (1024 pages, 4 MiB), so the
 * first samples - read while the target's files are first touched, 15-25
 * ms - and a scheduling delay do not overflow it at 10k samples/s per CPU
 * (issue 12: 512 pages lost 0-225 of 178,000 samples per 10 s run on Go,
 * 1024 none); at most 64 MiB over all CPUs, at least 128 pages each.
 */
static unsigned default_pages(const struct sampler *s, long ncpu, long page)
{
	unsigned pages = s->cfg.stack_mode == SAMPLER_STACK_COPY ? 1024 : 512;

	if (geteuid() != 0)
		return 128;
	while (pages > 128 && (uint64_t)pages * (uint64_t)page * (uint64_t)(ncpu > 0 ? ncpu : 1) >
				      (64ULL << 20))
		pages /= 2;
	return pages;
}


static int open_buffers(struct sampler *s, char *err, size_t errlen)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	long page = sysconf(_SC_PAGESIZE);
	unsigned pages = s->cfg.mmap_pages ? s->cfg.mmap_pages : default_pages(s, ncpu, page);
	unsigned min_pages = 8;
	struct perf_event_attr dummy;

	if (ncpu < 1)
		ncpu = 1;
	/* Shrinking to fit the locked-memory budget stops where two samples no longer fit. */
	if (s->cfg.stack_mode == SAMPLER_STACK_COPY)
		while ((uint64_t)min_pages * (uint64_t)page < 2 * sampler_sample_size(s->cfg.stack_size))
			min_pages *= 2;
	s->bufs = calloc((size_t)ncpu, sizeof(*s->bufs));
	if (!s->bufs)
		return -ENOMEM;

	memset(&dummy, 0, sizeof(dummy));
	dummy.size = sizeof(dummy);
	dummy.type = PERF_TYPE_SOFTWARE;
	dummy.config = PERF_COUNT_SW_DUMMY;
	dummy.exclude_kernel = 1;
	dummy.exclude_hv = 1;
	/* Must match the target counters for the kernel to accept SET_OUTPUT. */
	dummy.use_clockid = 1;
	dummy.clockid = CLOCK_MONOTONIC;

	for (int cpu = 0; cpu < ncpu; cpu++) {
		struct cpu_buf *b = &s->bufs[s->nbufs];
		void *p;
		int fd = (int)perf_open(&dummy, 0, cpu);

		if (fd < 0) {
			if (errno == ENODEV || errno == ENXIO || errno == EINVAL)
				continue; /* offline CPU */
			return proc_explain_perf_error(errno, getpid(), "dummy", err, errlen);
		}
		for (;;) {
			p = mmap(NULL, (size_t)(pages + 1) * (size_t)page, PROT_READ | PROT_WRITE,
				 MAP_SHARED, fd, 0);
			if (p != MAP_FAILED)
				break;
			/* Over the locked-memory budget: smaller buffers, down to 8 pages. */
			if ((errno == EPERM || errno == ENOMEM) && pages > min_pages &&
			    !s->cfg.mmap_pages) {
				pages /= 2;
				continue;
			}
			int e = errno;
			close(fd);
			snprintf(err, errlen,
				 "cannot map a %u-page ring buffer for CPU %d: %s (locked memory is "
				 "limited by kernel.perf_event_mlock_kb and `ulimit -l`; try a smaller "
				 "--mmap-pages)",
				 pages, cpu, strerror(e));
			return -e;
		}
		/* All buffers get the same size; restart if it shrank after the first. */
		if (s->nbufs && pages != s->stats.mmap_pages) {
			munmap(p, (size_t)(pages + 1) * (size_t)page);
			close(fd);
			for (unsigned i = 0; i < s->nbufs; i++) {
				munmap(s->bufs[i].meta, s->bufs[i].size + (size_t)page);
				close(s->bufs[i].owner_fd);
			}
			s->nbufs = 0;
			s->stats.mmap_pages = pages;
			cpu = -1;
			continue;
		}
		s->stats.mmap_pages = pages;
		b->cpu = cpu;
		b->owner_fd = fd;
		b->meta = p;
		b->data = (uint8_t *)p + page;
		b->size = (uint64_t)pages * (uint64_t)page;
		s->nbufs++;
	}
	if (!s->nbufs) {
		snprintf(err, errlen, "no usable CPU found for perf ring buffers");
		return -ENODEV;
	}
	s->stats.ncpus = s->nbufs;

	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return -errno;
	for (unsigned i = 0; i < s->nbufs; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->bufs[i].owner_fd, &ev))
			return -errno;
	}
	/* A record is at most 64 KiB (u16 size). */
	s->scratch_size = 65536;
	s->scratch = malloc(s->scratch_size * s->nbufs);
	s->cursors = calloc(s->nbufs, sizeof(*s->cursors));
	return s->scratch && s->cursors ? 0 : -ENOMEM;
}

static void build_attr(struct sampler *s, unsigned k)
{
	struct perf_event_attr *a = &s->attrs[k];
	const struct pmu_event *ev = s->cfg.nevents ? &s->cfg.events[k] : &s->cfg.event;
	uint64_t period = s->cfg.nevents ? s->cfg.periods[k] : s->cfg.period;

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	events_fill_attr(ev, s->cfg.kernel, a);
	if (s->cfg.freq) {
		a->freq = 1;
		a->sample_freq = period;
	} else {
		a->sample_period = period;
	}
	a->sample_type = PMUTOP_SAMPLE_TYPE_BASE | PERF_SAMPLE_IDENTIFIER;
	a->sample_regs_user = PMUTOP_REGS_MASK;
	a->sample_stack_user = s->cfg.stack_size;
	/*
	 * With the stack copy, the kernel's frame-pointer chain too: Go code
	 * switches stacks, and only this chain, taken at the interrupt, follows
	 * it back to the goroutine (unwind/gostack.h).
	 */
	a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	a->exclude_callchain_kernel = !s->cfg.kernel;
	a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	a->exclude_guest = 1;
	/*
	 * -t: only the threads named. Per-CPU counters (-a) see every task
	 * already. inherit_thread: new threads only; without it forks inherit
	 * too (following children).
	 */
	a->inherit = !s->cfg.ntids && !s->cfg.system_wide;
	a->inherit_thread = a->inherit && !s->cfg.children;
	/* Side-band records (mmap, comm, fork/exit) once, from the first event. */
	a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = k == 0;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(s->bufs[0].size / 4);
	/*
	 * Kernel frames (cfg.kernel): the kernel walks its own stack (the
	 * kernel part of the callchain above); the user part stays too, for
	 * Go's stack switches, while the user stack itself is unwound from the
	 * stack copy.
	 */
	if (s->cfg.stack_mode != SAMPLER_STACK_COPY) {
		/* fp / ptrace engines: no register or stack copy (sampler.h). */
		a->sample_type &= ~(uint64_t)(PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
		a->sample_regs_user = 0;
		a->sample_stack_user = 0;
		if (s->cfg.stack_mode != SAMPLER_CALLCHAIN)
			a->sample_type &= ~(uint64_t)PERF_SAMPLE_CALLCHAIN;
	}
	if (s->cfg.wakeup_events) {
		a->watermark = 0;
		a->wakeup_events = s->cfg.wakeup_events;
	}
	/*
	 * Counting software events (page-faults, context-switches, ...) go
	 * through the kernel's perf_swevent_event(), which takes a sample on
	 * EVERY event when PERF_SAMPLE_PERIOD is asked for with a fixed period.
	 * Leave the field out for them: the period then means what it says,
	 * and each sample weighs the configured period. (The clocks are hrtimer
	 * driven and unaffected.)
	 */
	if (a->type == PERF_TYPE_SOFTWARE && !a->freq && a->config != PERF_COUNT_SW_CPU_CLOCK &&
	    a->config != PERF_COUNT_SW_TASK_CLOCK)
		a->sample_type &= ~(uint64_t)PERF_SAMPLE_PERIOD;
	/*
	 * offcpu: every switch-out is a sample (period 1, no frequency mode),
	 * and the switch records say when the thread came back and whether it
	 * was preempted (sample/offcpu.h).
	 */
	if (ev->offcpu) {
		a->freq = 0;
		a->sample_period = 1;
		a->context_switch = 1;
	}
	a->disabled = 1;
	a->enable_on_exec = s->cfg.enable_on_exec;
}

static uint32_t id_event(const struct sampler *s, uint64_t id);

/*
 * The attr a sample record came from: events may differ in sample_type, and
 * PERF_SAMPLE_IDENTIFIER (always first after the header) says which counter.
 */
static const struct perf_event_attr *record_attr(const struct sampler *s, const uint8_t *rec,
						 size_t len, uint32_t *event)
{
	struct perf_event_header h;
	uint64_t id;

	*event = 0;
	if (s->nev < 2 || len < sizeof(h) + sizeof(id))
		return &s->attrs[0];
	memcpy(&h, rec, sizeof(h));
	if (h.type != PERF_RECORD_SAMPLE)
		return &s->attrs[0];
	memcpy(&id, rec + sizeof(h), sizeof(id));
	*event = id_event(s, id);
	return &s->attrs[*event];
}

/* Remember which event a counter id belongs to (open addressing). */
static int id_insert(struct sampler *s, uint64_t id, uint32_t event)
{
	if ((s->id_used + 1) * 2 > s->id_cap) {
		size_t cap = s->id_cap ? s->id_cap * 2 : 1024;
		struct id_entry *t = calloc(cap, sizeof(*t));
		if (!t)
			return -ENOMEM;
		for (size_t i = 0; i < s->id_cap; i++) {
			if (!s->ids[i].id)
				continue;
			size_t j = (s->ids[i].id * 0x9E3779B97F4A7C15ULL) >> 40 & (cap - 1);
			while (t[j].id)
				j = (j + 1) & (cap - 1);
			t[j] = s->ids[i];
		}
		free(s->ids);
		s->ids = t;
		s->id_cap = cap;
	}
	size_t j = (id * 0x9E3779B97F4A7C15ULL) >> 40 & (s->id_cap - 1);
	while (s->ids[j].id && s->ids[j].id != id)
		j = (j + 1) & (s->id_cap - 1);
	if (!s->ids[j].id)
		s->id_used++;
	s->ids[j].id = id;
	s->ids[j].event = event;
	return 0;
}

static uint32_t id_event(const struct sampler *s, uint64_t id)
{
	if (!s->id_cap)
		return 0;
	size_t j = (id * 0x9E3779B97F4A7C15ULL) >> 40 & (s->id_cap - 1);
	for (size_t n = 0; n < s->id_cap && s->ids[j].id; n++, j = (j + 1) & (s->id_cap - 1))
		if (s->ids[j].id == id)
			return s->ids[j].event;
	return 0;
}

/*
 * Open one counter per CPU on tid. Returns 0, -ESRCH when the thread is
 * gone (not an error for callers), or another -errno with err filled.
 */
static int attach_thread(struct sampler *s, pid_t tid, char *err, size_t errlen)
{
	struct tid_entry *e;
	unsigned nfds = s->nbufs * s->nev;
	int *fds = malloc(nfds * sizeof(int));
	int r = 0;

	if (!fds)
		return -ENOMEM;
	for (unsigned i = 0; i < nfds; i++)
		fds[i] = -1;
	for (unsigned k = 0; k < s->nev && !r; k++) {
		struct perf_event_attr *attr = &s->attrs[k];
		const char *name = s->cfg.nevents ? s->cfg.events[k].name : s->cfg.event.name;

		for (unsigned c = 0; c < s->nbufs; c++) {
			int fd = (int)perf_open(attr, tid, s->bufs[c].cpu);
			uint64_t id;

			if (fd < 0 && errno == EINVAL && attr->inherit_thread) {
				/* Kernels before 5.13: inherit to forks too; the session drops them. */
				for (unsigned j = 0; j < s->nev; j++)
					s->attrs[j].inherit_thread = 0;
				fd = (int)perf_open(attr, tid, s->bufs[c].cpu);
			}
			if (fd < 0) {
				int e_no = errno;
				r = e_no == ESRCH ? -ESRCH : proc_explain_perf_error(e_no, tid, name, err, errlen);
				break;
			}
			fds[k * s->nbufs + c] = fd;
			if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->bufs[c].owner_fd)) {
				int e_no = errno;
				snprintf(err, errlen, "cannot redirect the counter of tid %d to CPU %d's buffer: %s",
					 (int)tid, s->bufs[c].cpu, strerror(e_no));
				r = -e_no;
				break;
			}
			if (s->nev > 1 && (ioctl(fd, PERF_EVENT_IOC_ID, &id) || id_insert(s, id, k))) {
				snprintf(err, errlen, "cannot identify the counter of tid %d: %s", (int)tid,
					 strerror(errno));
				r = -EIO;
				break;
			}
		}
	}
	if (!r) {
		e = tid_insert(s, tid);
		if (!e)
			r = -ENOMEM;
	}
	if (r) {
		for (unsigned i = 0; i < nfds; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		free(fds);
		return r;
	}
	if (e->state != TID_DIRECT)
		s->stats.threads_seen++;
	e->state = TID_DIRECT;
	e->fds = fds;
	s->stats.threads_attached++;
	return 0;
}

/* -t: drop from the scan every thread not named in cfg.tids. */
static void keep_named_threads(struct sampler *s, size_t *n)
{
	size_t k = 0;

	for (size_t i = 0; i < *n; i++)
		for (size_t j = 0; j < s->cfg.ntids; j++)
			if (s->scan_buf[i] == s->cfg.tids[j]) {
				s->scan_buf[k++] = s->scan_buf[i];
				break;
			}
	*n = k;
}

static int scan_threads(struct sampler *s, pid_t pid, size_t *n)
{
	for (;;) {
		int r = proc_list_threads(pid, s->scan_buf, s->scan_cap, n);
		if (r != -ENOSPC) {
			if (!r && s->cfg.ntids)
				keep_named_threads(s, n);
			return r;
		}
		size_t cap = *n + *n / 2 + 64;
		pid_t *b = realloc(s->scan_buf, cap * sizeof(pid_t));
		if (!b)
			return -ENOMEM;
		s->scan_buf = b;
		s->scan_cap = cap;
	}
}

/*
 * One scan. With `eager`, unknown threads are attached at once (initial
 * attach, when nothing can be inherited yet from them); otherwise only those
 * a previous scan already saw (see the file comment).
 */
static int rescan_pid(struct sampler *s, pid_t pid, bool eager, char *err, size_t errlen)
{
	size_t n;
	int added = 0, r = scan_threads(s, pid, &n);

	if (r)
		return r;
	for (size_t i = 0; i < n; i++) {
		pid_t tid = s->scan_buf[i];
		struct tid_entry *e = tid_find(s, tid);

		if (e && (e->state == TID_DIRECT || e->state == TID_INHERITED))
			continue;
		if (!eager && (!e || e->state != TID_SEEN_ONCE)) {
			e = tid_insert(s, tid);
			if (!e)
				return -ENOMEM;
			e->state = TID_SEEN_ONCE;
			e->scan = s->scan_no;
			continue;
		}
		r = attach_thread(s, tid, err, errlen);
		if (r == -ESRCH) {
			s->stats.attach_failures++;
			e = tid_find(s, tid);
			if (e)
				tid_remove(s, e);
			continue;
		}
		if (r)
			return r;
		added++;
	}
	return added;
}

/*
 * One scan of every target process still there. Returns the threads newly
 * attached, or -errno; -ESRCH only when every target is gone.
 */
static int rescan(struct sampler *s, bool eager, char *err, size_t errlen)
{
	int added = 0, live = 0;

	if (s->cfg.system_wide)
		return 0;
	s->scan_no++;
	for (size_t i = 0; i < s->nroots; i++) {
		int r;

		if (s->root_gone[i])
			continue;
		r = rescan_pid(s, s->roots[i], eager, err, errlen);
		if (r == -ESRCH) {
			s->root_gone[i] = true;
			continue;
		}
		if (r < 0)
			return r;
		live++;
		added += r;
	}
	return live ? added : -ESRCH;
}

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static bool is_root(const struct sampler *s, pid_t pid)
{
	if (s->nroots == 1)
		return s->roots[0] == pid;
	return bsearch(&pid, s->roots, s->nroots, sizeof(pid), pid_cmp) != NULL;
}

/* The target processes, sorted and without duplicates. */
static int set_roots(struct sampler *s)
{
	size_t n = s->cfg.npids ? s->cfg.npids : 1, k = 0;

	s->roots = malloc(n * sizeof(*s->roots));
	s->root_gone = calloc(n, sizeof(*s->root_gone));
	if (!s->roots || !s->root_gone)
		return -ENOMEM;
	if (s->cfg.npids)
		memcpy(s->roots, s->cfg.pids, n * sizeof(*s->roots));
	else
		s->roots[0] = s->cfg.pid;
	qsort(s->roots, n, sizeof(*s->roots), pid_cmp);
	for (size_t i = 0; i < n; i++)
		if (!k || s->roots[k - 1] != s->roots[i])
			s->roots[k++] = s->roots[i];
	s->nroots = k;
	s->cfg.pids = NULL; /* not ours to keep */
	return 0;
}

/*
 * -a: one counter per (event, CPU) on every task. Needs root, CAP_PERFMON
 * or kernel.perf_event_paranoid <= 0; the error says so.
 */
static int attach_system_wide(struct sampler *s, char *err, size_t errlen)
{
	int r = attach_thread(s, -1, err, errlen);

	if (r == -EACCES || r == -EPERM) {
		long paranoid = 2;

		proc_sysctl_int("kernel/perf_event_paranoid", &paranoid);
		snprintf(err, errlen, "sampling the whole machine (-a) needs root, CAP_PERFMON or "
			 "kernel.perf_event_paranoid <= 0 (it is %ld here: sysctl -w "
			 "kernel.perf_event_paranoid=0, or run as root)", paranoid);
	}
	return r;
}

struct sampler *sampler_new(const struct sampler_config *cfg, char *err, size_t errlen)
{
	struct sampler *s = calloc(1, sizeof(*s));
	int r;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->cfg = *cfg;
	s->epfd = -1;
	{
		const char *f = getenv("PMUTOP_FAULT_RING_CORRUPT");

		s->fault_corrupt_at = f ? strtoul(f, NULL, 10) : 0;
	}
	if (tid_grow(s))
		goto oom;
	r = open_buffers(s, err, errlen);
	if (r) {
		if (r == -ENOMEM)
			goto oom;
		if (r != -ENODEV && !*err)
			snprintf(err, errlen, "cannot set up ring buffers: %s", strerror(-r));
		goto fail;
	}
	s->nev = cfg->nevents ? (unsigned)cfg->nevents : 1;
	for (unsigned k = 0; k < s->nev; k++)
		build_attr(s, k);
	s->attr = s->attrs[0];
	if (set_roots(s))
		goto oom;
	if (cfg->system_wide) {
		r = attach_system_wide(s, err, errlen);
		if (r == -ENOMEM)
			goto oom;
		if (r)
			goto fail;
	}

	/*
	 * Attach until a scan finds nothing new: threads created meanwhile by
	 * threads not yet attached are caught by the next round.
	 */
	for (int round = 0; round < 16 && !cfg->system_wide; round++) {
		r = rescan(s, true, err, errlen);
		if (r == -ESRCH && !s->stats.threads_seen) {
			snprintf(err, errlen, "no such process: PID %d", (int)cfg->pid);
			goto fail;
		}
		if (r < 0) {
			if (r == -ENOMEM)
				goto oom;
			if (!*err)
				snprintf(err, errlen, "cannot list threads of PID %d: %s", (int)cfg->pid,
					 strerror(-r));
			goto fail;
		}
		if (r == 0)
			break;
	}
	if (!s->stats.threads_attached && cfg->ntids) {
		snprintf(err, errlen, "none of the threads given to -t is left in PID %d (they exited)",
			 (int)cfg->pid);
		goto fail;
	}
	if (!s->stats.threads_attached) {
		snprintf(err, errlen, "PID %d has no threads left to attach to (it exited)", (int)cfg->pid);
		goto fail;
	}
	/*
	 * Counters were opened disabled so that a slow attach to many threads
	 * does not fill the buffers before anyone drains them; start them all
	 * now, and open later ones enabled.
	 */
	if (!cfg->enable_on_exec) {
		for (unsigned k = 0; k < s->nev; k++)
			s->attrs[k].disabled = 0;
		if (sampler_enable(s)) {
			snprintf(err, errlen, "cannot enable counters on PID %d: %s", (int)cfg->pid,
				 strerror(errno));
			goto fail;
		}
	}
	return s;
oom:
	snprintf(err, errlen, "out of memory while attaching to PID %d", (int)cfg->pid);
fail:
	sampler_free(s);
	return NULL;
}

void sampler_free(struct sampler *s)
{
	long page = sysconf(_SC_PAGESIZE);

	if (!s)
		return;
	for (size_t i = 0; i < s->tid_cap; i++)
		if (s->tids[i].state == TID_DIRECT)
			close_fds(s, &s->tids[i]);
	for (unsigned i = 0; i < s->nbufs; i++) {
		munmap(s->bufs[i].meta, s->bufs[i].size + (size_t)page);
		close(s->bufs[i].owner_fd);
	}
	if (s->epfd >= 0)
		close(s->epfd);
	free(s->bufs);
	free(s->tids);
	free(s->scan_buf);
	free(s->roots);
	free(s->root_gone);
	free(s->scratch);
	free(s->cursors);
	free(s->ids);
	free(s);
}

int sampler_fd(const struct sampler *s)
{
	return s->epfd;
}

int sampler_rescan(struct sampler *s)
{
	char err[256];

	return rescan(s, false, err, sizeof(err));
}

void sampler_thread_exited(struct sampler *s, pid_t tid)
{
	struct tid_entry *e = tid_find(s, tid);

	if (e)
		tid_remove(s, e);
}

/* A thread is known to be covered: it forked from a covered one, or sampled. */
static void mark_inherited(struct sampler *s, pid_t tid)
{
	struct tid_entry *e = tid_find(s, tid);

	if (e && (e->state == TID_DIRECT || e->state == TID_INHERITED))
		return;
	e = tid_insert(s, tid);
	if (!e)
		return;
	e->state = TID_INHERITED;
	s->stats.threads_seen++;
}

/* A header that cannot be framed: nothing after it can be (ring.h). Give the rest back, count it. */
static void cursor_corrupt(struct sampler *s, struct cpu_buf *b, struct drain_cursor *c)
{
	c->rec = NULL;
	s->stats.corrupt++;
	c->tail = c->head;
	__atomic_store_n(&b->meta->data_tail, c->tail, __ATOMIC_RELEASE);
}

/* Frame the record at c's tail; a corrupt header gives the rest back and counts it. */
static void cursor_peek(struct sampler *s, struct cpu_buf *b, struct drain_cursor *c)
{
	enum ring_step step = ring_next(&c->ring, c->head, c->tail, &c->rec, &c->len);
	uint64_t t;

	if (step == RING_RECORD) {
		if (perf_record_time(c->rec, c->len, s->attrs[0].sample_type, &t) == 0)
			c->time = t;
		return;
	}
	c->rec = NULL;
	if (step == RING_CORRUPT)
		cursor_corrupt(s, b, c);
}

/* Decode and hand over one record; fn's verdict (non-zero: stop). */
static int deliver(struct sampler *s, const uint8_t *rec, size_t len, sampler_fn fn, void *arg)
{
	struct perf_rec r;
	uint32_t event;
	const struct perf_event_attr *ra = record_attr(s, rec, len, &event);

	if (perf_record_decode(rec, len, ra->sample_type, ra->sample_regs_user, &r)) {
		s->stats.undecodable++; /* counted, not silently dropped */
		return 0;
	}
	if (r.kind == PREC_SAMPLE)
		r.sample.event = event;
	if (r.kind == PREC_FORK && is_root(s, (pid_t)r.task.pid))
		mark_inherited(s, (pid_t)r.task.tid);
	else if (r.kind == PREC_SAMPLE && !s->cfg.system_wide && is_root(s, (pid_t)r.sample.pid))
		mark_inherited(s, (pid_t)r.sample.tid);
	return fn(arg, &r);
}

long sampler_drain(struct sampler *s, uint64_t horizon, sampler_fn fn, void *arg)
{
	struct drain_cursor *cur = s->cursors;
	long count = 0;

	/* The heads are read after the caller's clock: see sampler.h. */
	for (unsigned i = 0; i < s->nbufs; i++) {
		struct cpu_buf *b = &s->bufs[i];

		cur[i].ring = (struct ring){ .data = b->data, .size = b->size,
					     .scratch = s->scratch + (size_t)i * s->scratch_size,
					     .scratch_size = s->scratch_size };
		cur[i].head = __atomic_load_n(&b->meta->data_head, __ATOMIC_ACQUIRE);
		cur[i].tail = b->meta->data_tail;
		cur[i].time = 0;
		if (s->fault_corrupt_at && cur[i].tail < cur[i].head &&
		    ++s->ndrains == s->fault_corrupt_at) {
			cursor_corrupt(s, b, &cur[i]);
			continue;
		}
		cursor_peek(s, b, &cur[i]);
	}
	for (;;) {
		struct drain_cursor *c = NULL;
		unsigned at = 0;

		/* The oldest framed record of all buffers (few CPUs: a scan beats a heap). */
		for (unsigned i = 0; i < s->nbufs; i++)
			if (cur[i].rec && (!c || cur[i].time < c->time)) {
				c = &cur[i];
				at = i;
			}
		if (!c || c->time > horizon)
			break; /* newer ones stay in the buffers for the next drain */
		int stop = deliver(s, c->rec, c->len, fn, arg);

		c->tail += c->len;
		count++;
		/* Give the space back as we go so the kernel can keep writing. */
		__atomic_store_n(&s->bufs[at].meta->data_tail, c->tail, __ATOMIC_RELEASE);
		if (stop)
			break;
		cursor_peek(s, &s->bufs[at], c);
	}
	return count;
}

int sampler_enable(struct sampler *s)
{
	for (size_t i = 0; i < s->tid_cap; i++) {
		struct tid_entry *e = &s->tids[i];
		if (e->state != TID_DIRECT)
			continue;
		for (unsigned c = 0; c < s->nbufs * s->nev; c++)
			if (ioctl(e->fds[c], PERF_EVENT_IOC_ENABLE, 0))
				return -errno;
	}
	return 0;
}

void sampler_get_stats(const struct sampler *s, struct sampler_stats *st)
{
	*st = s->stats;
}

int sampler_read_times(const struct sampler *s, uint64_t *enabled, uint64_t *running)
{
	for (unsigned k = 0; k < s->nev; k++)
		enabled[k] = running[k] = 0;
	for (size_t i = 0; i < s->tid_cap; i++) {
		const struct tid_entry *e = &s->tids[i];
		if (e->state != TID_DIRECT || !e->fds)
			continue;
		for (unsigned k = 0; k < s->nev; k++) {
			for (unsigned c = 0; c < s->nbufs; c++) {
				uint64_t v[3];
				if (read(e->fds[k * s->nbufs + c], v, sizeof(v)) != sizeof(v))
					continue;
				enabled[k] += v[1];
				running[k] += v[2];
			}
		}
	}
	/*
	 * A counter tied to one CPU is enabled whenever its thread runs (on any
	 * CPU) but runs only while the thread is on that CPU: across the CPUs,
	 * running adds up to the thread's run time, and enabled to ncpus times
	 * it. Report enabled per CPU so running == enabled means "never
	 * multiplexed".
	 */
	for (unsigned k = 0; k < s->nev && !s->cfg.system_wide; k++)
		enabled[k] /= s->nbufs;
	return 0;
}
