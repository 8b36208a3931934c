/*
 * process.c - the processes of a session (see process.h for the model).
 *
 * Live processes are found by pid in a small open-addressing table; every
 * process ever followed is also on one list in creation order, so that
 * what samples point at (mappings, through the aggregate) stays valid until
 * the table is freed. An exited process stays findable until
 * process_table_collect(): records of several CPUs are drained one buffer
 * after another, so a sample of a process can be read after its EXIT was.
 */
#include "pmutop/frontend/process.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include "pmutop/symbols/debuginfo.h"
#include "pmutop/symbols/debuginfod.h"
#include "pmutop/symbols/perfmap.h"
#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"
#include "pmutop/target/proc.h"
#include "pmutop/unwind/unwind.h"

struct process {
	pid_t pid, ppid;
	char comm[16];
	struct maps *maps;          /* NULL once freed (exited, never sampled) */
	struct unwinder *unwinder;  /* NULL once exited */
	struct perfmap *perfmap;
	struct debuginfo *dbg;      /* own one (other mount namespace), else NULL */
	bool live;                  /* found by pid (until collected after an exit) */
	bool exited, collected, sampled;
	bool root;                  /* a target: kept whole (the ptrace engine holds its parts) */
	struct process *next;       /* creation order */
};

/*
 * Files no live process maps that stay parsed (module_cache_evict): enough
 * for a build's or a test suite's tools run one after another (sh, make,
 * cc, cc1, as, ld and their libraries) to be parsed once, while a run of
 * thousands of distinct programs keeps only these.
 */
#define KEEP_UNMAPPED_MODULES 32

struct process_table {
	struct module_cache *mc;
	size_t max;
	size_t keep_modules;        /* KEEP_UNMAPPED_MODULES (process_table_set_module_keep) */
	bool evict_due;             /* a process exited or exec'd since the last round */
	size_t modules_marked;      /* files live processes mapped at the last round */
	struct maps *loading;       /* maps read before their process is listed (marked too) */
	/* Pending line lookups (process_table_set_lines). */
	const struct mapping *(*lines_pending)(void *arg, size_t i);
	int (*lines_resolve)(void *arg);
	void *lines_arg;
	struct process *head, *tail;
	struct process **slots;     /* live processes by pid; NULL = empty */
	size_t cap, used;
	bool pending;               /* an exited process awaits collection */
	uint32_t next_serial;       /* maps serials (maps_set_serial), from 1 */
	struct debuginfo *shared_dbg; /* for processes in pmutop's mount namespace */
	struct dfd_fetcher *fetch;    /* debuginfod for every debuginfo here, or NULL */
	struct dwarf_loader *loader;  /* loads every debuginfo's DWARF here, or NULL (ENOMEM) */
	bool fetch_tried;
	struct process_stats st;
	struct unwind_stats unwind_done; /* of unwinders already freed */
};

static size_t slot_of(size_t cap, pid_t pid)
{
	return ((uint32_t)pid * 2654435761u) & (cap - 1);
}

/* Rebuild the pid index from the live processes (after removals or to grow). */
static int reindex(struct process_table *t, size_t cap)
{
	struct process **s = calloc(cap, sizeof(*s));

	if (!s)
		return -ENOMEM;
	free(t->slots);
	t->slots = s;
	t->cap = cap;
	t->used = 0;
	for (struct process *p = t->head; p; p = p->next) {
		size_t i;

		if (!p->live)
			continue;
		i = slot_of(cap, p->pid);
		while (s[i])
			i = (i + 1) & (cap - 1);
		s[i] = p;
		t->used++;
	}
	return 0;
}

static struct process **find_slot(struct process_table *t, pid_t pid)
{
	size_t i = slot_of(t->cap, pid);

	for (size_t n = 0; n < t->cap && t->slots[i]; n++, i = (i + 1) & (t->cap - 1))
		if (t->slots[i]->pid == pid)
			return &t->slots[i];
	return NULL;
}

static void before_parse(void *arg);

struct process_table *process_table_new(struct module_cache *mc, size_t max)
{
	struct process_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->mc = mc;
	t->max = max ? max : 1;
	t->keep_modules = KEEP_UNMAPPED_MODULES;
	if (reindex(t, 64)) {
		free(t);
		return NULL;
	}
	module_cache_set_parse_hook(mc, before_parse, t);
	return t;
}

static void process_free(struct process *p)
{
	unwinder_free(p->unwinder);
	maps_free(p->maps);
	perfmap_free(p->perfmap);
	debuginfo_free(p->dbg);
	free(p);
}

int process_table_fetch_wait(struct process_table *t, FILE *progress, unsigned max_ms,
			     bool (*stop)(void *arg), void *arg)
{
	return t ? dfd_wait(t->fetch, progress, max_ms, stop, arg) : 0;
}

int process_table_load_wait(struct process_table *t, unsigned max_ms, bool (*stop)(void *arg),
			    void *arg)
{
	return t ? dwarf_loader_wait(t->loader, max_ms, stop, arg) : 0;
}

unsigned process_table_loading(const struct process_table *t)
{
	return t ? dwarf_loader_pending(t->loader) : 0;
}

void process_table_free(struct process_table *t)
{
	struct process *p, *next;

	if (!t)
		return;
	module_cache_set_parse_hook(t->mc, NULL, NULL);
	for (p = t->head; p; p = next) {
		next = p->next;
		process_free(p);
	}
	debuginfo_free(t->shared_dbg);
	dfd_fetcher_free(t->fetch); /* after every debuginfo that used it */
	dwarf_loader_free(t->loader); /* the same; never waits for libdw */
	free(t->slots);
	free(t);
}

/*
 * Symbol sources for p's maps: its own JIT map; the DWARF reader shared by
 * everything in our mount namespace, or its own elsewhere (its files are
 * only reachable through its /proc/PID/root).
 */
static int give_symbol_sources(struct process_table *t, struct process *p)
{
	bool host = maps_same_mount_ns(p->maps);
	struct debuginfo *dbg;

	p->perfmap = perfmap_new(p->pid, host);
	if (host) {
		if (!t->shared_dbg)
			t->shared_dbg = debuginfo_new(p->pid, true);
		dbg = t->shared_dbg;
	} else {
		dbg = p->dbg = debuginfo_new(p->pid, false);
	}
	if (!p->perfmap || !dbg)
		return -ENOMEM;
	if (!t->fetch_tried) {
		t->fetch_tried = true;
		t->fetch = dfd_fetcher_new(); /* NULL: DEBUGINFOD_URLS unset */
	}
	debuginfo_set_fetcher(dbg, t->fetch);
	if (!t->loader)
		t->loader = dwarf_loader_new(); /* NULL: loads where looked up */
	debuginfo_set_loader(dbg, t->loader);
	maps_set_symbol_sources(p->maps, dbg, p->perfmap);
	return 0;
}

/* Retire the live process with p's pid from the index (it stays on the list). */
static void unindex(struct process_table *t, struct process *p)
{
	struct process **sl = find_slot(t, p->pid);

	if (sl && *sl == p) {
		p->live = false;
		/* Open addressing: rebuild rather than leave a hole in a probe chain. */
		if (reindex(t, t->cap))
			p->live = true; /* ENOMEM: keep it findable rather than break lookups */
	}
}

/* p ends (exit, or its pid was met again as a new process). */
static void mark_exited(struct process_table *t, struct process *p)
{
	if (p->exited)
		return;
	p->exited = true;
	t->st.live--;
	t->st.exited++;
	t->pending = true;
}

/* A new process object for pid with maps (taken over), indexed and listed. */
static struct process *insert(struct process_table *t, pid_t pid, pid_t ppid, struct maps *m)
{
	struct process *p = calloc(1, sizeof(*p)), **sl;

	if (!p) {
		maps_free(m);
		return NULL;
	}
	p->pid = pid;
	p->ppid = ppid;
	p->maps = m;
	p->unwinder = unwinder_new(m);
	if (!p->unwinder || give_symbol_sources(t, p)) {
		process_free(p);
		return NULL;
	}
	sl = find_slot(t, pid);
	if (sl) {
		/* The pid is reused (or its EXIT was lost): the old process ends here. */
		mark_exited(t, *sl);
		unindex(t, *sl);
	}
	if ((t->used + 1) * 2 > t->cap && reindex(t, t->cap * 2)) {
		process_free(p);
		return NULL;
	}
	{
		size_t i = slot_of(t->cap, pid);
		while (t->slots[i])
			i = (i + 1) & (t->cap - 1);
		t->slots[i] = p;
		t->used++;
	}
	p->live = true;
	if (t->tail)
		t->tail->next = p;
	else
		t->head = p;
	t->tail = p;
	t->st.seen++;
	t->st.live++;
	return p;
}

int process_table_add_root(struct process_table *t, pid_t pid, bool empty, char *err,
			   size_t errlen)
{
	struct maps *m = maps_new(pid, t->mc);
	struct process *p;
	int r;

	if (!m) {
		snprintf(err, errlen, "out of memory setting up PID %d", (int)pid);
		return -ENOMEM;
	}
	maps_set_serial(m, ++t->next_serial);
	if (!empty) {
		t->loading = m;
		r = maps_load_proc(m);
		t->loading = NULL;
		if (r) {
			maps_free(m);
			/* As root, proc_check_target() says what really refused it. */
			if ((r == -EACCES || r == -EPERM) && geteuid() == 0 &&
			    proc_check_target(pid, err, errlen))
				return r;
			snprintf(err, errlen, "cannot read /proc/%d/maps: %s%s", (int)pid, strerror(-r),
				 r == -EACCES || r == -EPERM ? " (reading another user's process "
				 "needs root or CAP_SYS_PTRACE)" : "");
			return r;
		}
	}
	p = insert(t, pid, 0, m);
	if (!p) {
		snprintf(err, errlen, "out of memory setting up PID %d", (int)pid);
		return -ENOMEM;
	}
	p->root = true;
	if (!empty)
		proc_thread_name(pid, pid, p->comm, sizeof(p->comm));
	return 0;
}

struct process *process_table_get(struct process_table *t, pid_t pid)
{
	struct process **sl = find_slot(t, pid);

	return sl ? *sl : NULL;
}

struct process *process_table_spawn(struct process_table *t, pid_t pid, pid_t parent_pid)
{
	struct process *parent = parent_pid ? process_table_get(t, parent_pid) : NULL;
	struct process *p;
	struct maps *m;

	if (t->st.seen - t->st.freed >= t->max) {
		t->st.skipped[PROC_SKIP_LIMIT]++;
		return NULL;
	}
	if (parent && parent->maps) {
		m = maps_clone(parent->maps, pid, ++t->next_serial);
	} else {
		m = maps_new(pid, t->mc);
		/* Met first through a sample or mmap: what it maps now, if it still runs. */
		if (m) {
			maps_set_serial(m, ++t->next_serial);
			t->loading = m;
			maps_load_proc(m);
			t->loading = NULL;
		}
	}
	p = m ? insert(t, pid, parent_pid, m) : NULL;
	if (!p) {
		t->st.skipped[PROC_SKIP_NOMEM]++;
		return NULL;
	}
	if (parent)
		memcpy(p->comm, parent->comm, sizeof(p->comm));
	else
		proc_thread_name(pid, pid, p->comm, sizeof(p->comm));
	return p;
}

void process_exec(struct process_table *t, struct process *p, const char *comm)
{
	t->evict_due = true; /* what it mapped before may be mapped by nobody now */
	maps_reset(p->maps);
	unwinder_flush(p->unwinder);
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
}

void process_table_skip(struct process_table *t, struct process *p, enum process_skip why)
{
	if (p->exited)
		return;
	mark_exited(t, p);
	/* Not followed after all: counted as skipped, not as exited. */
	t->st.exited--;
	t->st.skipped[why]++;
}

void process_table_exit(struct process_table *t, struct process *p)
{
	mark_exited(t, p);
}

static void add_unwind_stats(struct unwind_stats *sum, const struct unwinder *u)
{
	struct unwind_stats st;

	if (!u)
		return;
	unwinder_get_stats(u, &st);
	sum->fast += st.fast;
	sum->slow += st.slow;
	sum->verified += st.verified;
	sum->mismatches += st.mismatches;
	sum->ref_short += st.ref_short;
}

/* module_cache_evict's on_evict: every holder of state derived from mod drops it. */
static void forget_module(void *arg, const struct module *mod)
{
	struct process_table *t = arg;

	for (struct process *p = t->head; p; p = p->next) {
		unwinder_forget_module(p->unwinder, mod);
		debuginfo_forget_module(p->dbg, mod);
	}
	debuginfo_forget_module(t->shared_dbg, mod);
}

/*
 * A round of module eviction (module.h; see process.h): what every process
 * not yet collected has mapped is marked (maps_mark_modules, its whole
 * mapping history; an exited one's samples may still be in the buffers
 * until it is collected), and the maps being read for a process not yet
 * listed; past keep_modules, the files no such process maps are doomed,
 * least recently used first. Their pending line lookups are done now, and
 * a module whose lookups stay pending is taken back; the rest are evicted.
 */
static void evict_round(struct process_table *t)
{
	const struct mapping *m;

	t->evict_due = false;
	module_cache_mark_begin(t->mc);
	for (struct process *p = t->head; p; p = p->next)
		if (!p->collected)
			maps_mark_modules(p->maps);
	maps_mark_modules(t->loading);
	if (module_cache_doom(t->mc, t->keep_modules)) {
		if (t->lines_resolve)
			t->lines_resolve(t->lines_arg); /* ENOMEM: those stay pending, kept below */
		for (size_t i = 0; t->lines_pending && (m = t->lines_pending(t->lines_arg, i)); i++)
			if (module_doomed(m->mod))
				module_cache_mark(t->mc, m->mod);
		module_cache_evict_doomed(t->mc, forget_module, t);
	}
	t->modules_marked = module_cache_marked(t->mc);
}

/*
 * The module cache's parse hook: a file is about to be parsed. When the
 * files parsed reach those marked at the last round plus keep_modules, some
 * may be unmapped past the cap: a round now, so that the cap holds at every
 * parse and not only once a second (a run of short programs parses dozens
 * of files in between, hundreds when the loop falls behind).
 */
static void before_parse(void *arg)
{
	struct process_table *t = arg;
	struct module_cache_stats st;

	module_cache_get_stats(t->mc, &st);
	if (st.resident >= t->modules_marked + t->keep_modules)
		evict_round(t);
}

/*
 * Only after a process exited or exec'd: nothing else leaves files unmapped
 * that pmutop can see (munmap has no record; an unmapped library stays in
 * the view until something is mapped over it).
 */
void process_table_evict(struct process_table *t)
{
	if (t->evict_due)
		evict_round(t);
}

void process_table_set_lines(struct process_table *t,
			     const struct mapping *(*pending)(void *arg, size_t i),
			     int (*resolve)(void *arg), void *arg)
{
	t->lines_pending = pending;
	t->lines_resolve = resolve;
	t->lines_arg = arg;
}

void process_table_prune(struct process_table *t)
{
	for (struct process *p = t->head; p; p = p->next) {
		if (p->maps)
			maps_prune(p->maps);
		debuginfo_trim(p->dbg);
	}
	debuginfo_trim(t->shared_dbg);
}

void process_table_set_module_keep(struct process_table *t, size_t keep)
{
	t->keep_modules = keep;
	t->evict_due = true;
}

static void add_debuginfo_stats(struct process_stats *st, const struct debuginfo *d)
{
	struct debuginfo_stats ds;

	debuginfo_get_stats(d, &ds);
	st->dbg.lookups += ds.lookups;
	st->dbg.cleared += ds.cleared;
	st->dbg.dropped += ds.dropped;
	st->dbg.closed += ds.closed;
	st->dbg.reopened += ds.reopened;
}

void process_table_unwind_stats(const struct process_table *t, struct unwind_stats *st)
{
	*st = t->unwind_done;
	for (const struct process *p = t->head; p; p = p->next)
		add_unwind_stats(st, p->unwinder);
}

void process_table_collect(struct process_table *t,
			   void (*on_free)(void *arg, const struct maps *m), void *arg)
{
	struct process *p, *prev = NULL, *next;

	if (!t->pending)
		return;
	t->pending = false;
	for (p = t->head; p; p = next) {
		next = p->next;
		if (!p->exited || p->collected) {
			prev = p;
			continue;
		}
		if (p->root)
			continue; /* stays findable under its pid until a new process takes it */
		unindex(t, p);
		if (p->live) {
			prev = p; /* ENOMEM rebuilding the index: try again next time */
			t->pending = true;
			continue;
		}
		p->collected = true;
		t->evict_due = true;
		add_unwind_stats(&t->unwind_done, p->unwinder);
		unwinder_free(p->unwinder);
		p->unwinder = NULL;
		if (p->sampled) {
			prev = p;
			continue;
		}
		/* Nothing refers to it: gone entirely, so a fork storm costs no memory. */
		if (on_free)
			on_free(arg, p->maps);
		if (prev)
			prev->next = next;
		else
			t->head = next;
		if (t->tail == p)
			t->tail = prev;
		process_free(p);
		t->st.freed++;
	}
}

struct maps *process_maps(struct process *p)
{
	return p->maps;
}

struct unwinder *process_unwinder(struct process *p)
{
	return p->unwinder;
}

pid_t process_pid(const struct process *p)
{
	return p->pid;
}

pid_t process_ppid(const struct process *p)
{
	return p->ppid;
}

const char *process_comm(const struct process *p)
{
	return p->comm;
}

void process_note_sample(struct process *p)
{
	p->sampled = true;
}

void process_table_stats(const struct process_table *t, struct process_stats *st)
{
	*st = t->st;
	module_cache_get_stats(t->mc, &st->modules);
	st->modules_kept = t->keep_modules;
	memset(&st->dbg, 0, sizeof(st->dbg));
	for (const struct process *p = t->head; p; p = p->next)
		add_debuginfo_stats(st, p->dbg);
	add_debuginfo_stats(st, t->shared_dbg);
}

/* Whether pid is gone or a zombie (its exit is done, only its status is left). */
static bool pid_gone(pid_t pid)
{
	char path[64], buf[512];
	const char *c;
	FILE *f;
	size_t n;

	if (kill(pid, 0) && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	c = strrchr(buf, ')');
	return c && c[1] == ' ' && (c[2] == 'Z' || c[2] == 'X');
}

size_t process_table_settle(struct process_table *t)
{
	size_t gone = 0;

	for (struct process *p = t->head; p; p = p->next) {
		if (p->exited || !pid_gone(p->pid))
			continue;
		mark_exited(t, p);
		gone++;
	}
	return gone;
}

void process_stats_print(const struct process_stats *p, uint64_t unfollowed_samples, FILE *out)
{
	size_t skipped = 0;

	if (p->dbg.closed || p->dbg.cleared)
		fprintf(out, "pmutop: debug info: %llu addresses read from DWARF; readers closed "
			"%llu times (idle or recycled), reopened %llu; address cache emptied %llu "
			"times (%llu addresses)\n",
			(unsigned long long)p->dbg.lookups, (unsigned long long)p->dbg.closed,
			(unsigned long long)p->dbg.reopened, (unsigned long long)p->dbg.cleared,
			(unsigned long long)p->dbg.dropped);
	for (int i = 0; i < PROC_SKIP_N; i++)
		skipped += p->skipped[i];
	if (p->seen <= 1 && !skipped && !p->modules.evicted)
		return;
	fprintf(out, "pmutop: processes: %zu followed (%zu exited, %zu still running)", p->seen,
		p->exited, p->live);
	if (p->modules.evicted)
		fprintf(out, "; memory cap: symbols of %llu files no process mapped any more "
			"freed (the last %zu kept, at most %zu parsed at once), %llu parsed again "
			"when mapped again", (unsigned long long)p->modules.evicted, p->modules_kept,
			p->modules.resident_max,
			(unsigned long long)(p->modules.reopened + p->modules.replaced));
	if (skipped) {
		fprintf(out, "; %zu not followed:", skipped);
		for (int i = 0; i < PROC_SKIP_N; i++)
			if (p->skipped[i])
				fprintf(out, " %zu %s", p->skipped[i], process_skip_name(i));
		if (unfollowed_samples)
			fprintf(out, " (%llu samples of theirs dropped)",
				(unsigned long long)unfollowed_samples);
	}
	fprintf(out, "\n");
}

const char *process_skip_name(enum process_skip why)
{
	static const char *const names[PROC_SKIP_N] = {
		[PROC_SKIP_LIMIT] = "over --max-processes",
		[PROC_SKIP_SETUID] = "setuid/setgid exec (the kernel closes their counters)",
		[PROC_SKIP_NOMEM] = "out of memory",
	};
	return why < PROC_SKIP_N ? names[why] : "?";
}
