/*
 * pyframes.c - per-process Python readers for the sampling session and the
 * frames they add to samples (see pyframes.h for what and why).
 *
 * Processes are few and looked up per sample: a small array searched
 * linearly (the last hit first); when it is full, a process found not to
 * be Python gives its place up. Source files get a mapping each, kept
 * until the reader is freed (the aggregate copies what it keeps of them,
 * and holds no pointer to a mapping without a module).
 */
#include "pmutop/symbols/pyframes.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pmutop/sample/perf_record.h"
#include "pmutop/symbols/symbolize.h"
#include "pmutop/target/maps.h"
#include "pmutop/target/pyproc.h"

/* Addresses of Python frames: 0x5079 ("Py") on top, not a canonical user address. */
#define PY_ADDR_BASE 0x5079000000000000ull
/* Mapping keys of source files: a maps serial no process table hands out. */
#define PY_KEY_SERIAL 0xfffffffeull
#define MAX_PROCS 64
/* The stack pointer's place in perf_sample.regs (perf's x86 numbering, packed). */
#define PERF_SP 7
#define MAX_FILES 65536

/* What the summary says, per process and for those gone. */
struct py_counts {
	uint64_t samples, merged, mismatched, unread;
	uint64_t from_copy, changed;  /* pyproc_stack_at's answers */
	struct pyproc_stats st;       /* the reader's, once it is gone */
};

struct pyp {
	pid_t pid;
	struct pyproc *py;            /* NULL: not (yet) Python */
	int err;                      /* pyproc_open's answer */
	uint64_t tried_ns;
	unsigned tries;               /* answers that it is not Python (yet) */
	char msg[512];
	struct py_counts c;
};

struct pfile {
	struct mapping m;             /* path = the source file */
};

struct pyframes {
	enum py_mode mode;
	unsigned max_depth;
	struct pyp procs[MAX_PROCS];
	size_t nprocs, last;
	struct pfile **files;         /* open addressing by path hash */
	size_t nfiles, fcap;
	struct py_frame *py;          /* max_depth */
	struct pymerge_item *items;   /* 2 * max_depth */
	struct frame *out;            /* max_depth */
	char unsupported[512];        /* the first version without a layout */
	/* Sample -> read delay (CLOCK_MONOTONIC, ns): log2 histogram. */
	uint64_t lag_hist[64], lag_n;
	uint64_t procs_unsupported;
	struct py_counts gone;        /* processes read and gone since */
	size_t ngone;
	char version[32];             /* the last version read */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

struct pyframes *pyframes_new(enum py_mode mode, unsigned max_depth)
{
	struct pyframes *pf = calloc(1, sizeof(*pf));

	if (!pf)
		return NULL;
	pf->mode = mode;
	pf->max_depth = max_depth ? max_depth : 1;
	pf->fcap = 256;
	pf->files = calloc(pf->fcap, sizeof(*pf->files));
	pf->py = calloc(pf->max_depth, sizeof(*pf->py));
	pf->items = calloc(2 * (size_t)pf->max_depth, sizeof(*pf->items));
	pf->out = calloc(pf->max_depth, sizeof(*pf->out));
	if (!pf->files || !pf->py || !pf->items || !pf->out) {
		pyframes_free(pf);
		return NULL;
	}
	return pf;
}

void pyframes_free(struct pyframes *pf)
{
	if (!pf)
		return;
	for (size_t i = 0; i < pf->nprocs; i++)
		pyproc_free(pf->procs[i].py);
	for (size_t i = 0; pf->files && i < pf->fcap; i++) {
		if (pf->files[i]) {
			free(pf->files[i]->m.path);
			free(pf->files[i]);
		}
	}
	free(pf->files);
	free(pf->py);
	free(pf->items);
	free(pf->out);
	free(pf);
}

/* The process entry of pid (made on first sight); NULL when the table is full. */
static struct pyp *proc_of(struct pyframes *pf, pid_t pid)
{
	struct pyp *p;

	if (pf->last < pf->nprocs && pf->procs[pf->last].pid == pid)
		return &pf->procs[pf->last];
	for (size_t i = 0; i < pf->nprocs; i++) {
		if (pf->procs[i].pid == pid) {
			pf->last = i;
			return &pf->procs[i];
		}
	}
	if (pf->nprocs == MAX_PROCS) {
		/* Full (-a, many short programs): take the longest-tried non-Python entry. */
		size_t victim = MAX_PROCS;

		for (size_t i = 0; i < pf->nprocs; i++)
			if (!pf->procs[i].py && pf->procs[i].err != -ENOTSUP &&
			    (victim == MAX_PROCS || pf->procs[i].tried_ns < pf->procs[victim].tried_ns))
				victim = i;
		if (victim == MAX_PROCS)
			return NULL;
		p = &pf->procs[victim];
		pf->last = victim;
	} else {
		p = &pf->procs[pf->nprocs];
		pf->last = pf->nprocs++;
	}
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->err = -EAGAIN;
	return p;
}

/*
 * Open pid's interpreter when due: at first sight, then while it is not
 * Python (a shell that execs python, an interpreter not yet mapped) after
 * 1, 2, 4 and then every 8 s - under -a most processes never are.
 */
static void try_open(struct pyframes *pf, struct pyp *p)
{
	uint64_t now = mono_ns(), wait = 1000000000ull << (p->tries < 3 ? p->tries : 3);

	if (p->py || p->err == -ENOTSUP || (p->tried_ns && now - p->tried_ns < wait))
		return;
	if (p->tried_ns)
		p->tries++;
	p->tried_ns = now;
	p->err = pyproc_open(p->pid, &p->py, p->msg, sizeof(p->msg));
	if (p->py)
		snprintf(pf->version, sizeof(pf->version), "%s", pyproc_version(p->py));
	if (p->err == -ENOTSUP) {
		pf->procs_unsupported++;
		if (!pf->unsupported[0])
			snprintf(pf->unsupported, sizeof(pf->unsupported), "%s", p->msg);
	}
}

/* The mapping that stands for source file path (made on first use); NULL on ENOMEM / cap. */
static const struct mapping *file_map(struct pyframes *pf, const char *path)
{
	uint64_t h = fnv(0xcbf29ce484222325ull, path);
	size_t i = (size_t)h & (pf->fcap - 1);
	struct pfile *f;

	while (pf->files[i]) {
		if (!strcmp(pf->files[i]->m.path, path))
			return &pf->files[i]->m;
		i = (i + 1) & (pf->fcap - 1);
	}
	if (pf->nfiles >= MAX_FILES)
		return NULL;
	if (2 * (pf->nfiles + 1) > pf->fcap) {
		size_t cap = 2 * pf->fcap;
		struct pfile **v = calloc(cap, sizeof(*v));

		if (!v)
			return NULL;
		for (size_t k = 0; k < pf->fcap; k++) {
			if (!pf->files[k])
				continue;
			size_t j = (size_t)fnv(0xcbf29ce484222325ull, pf->files[k]->m.path) & (cap - 1);

			while (v[j])
				j = (j + 1) & (cap - 1);
			v[j] = pf->files[k];
		}
		free(pf->files);
		pf->files = v;
		pf->fcap = cap;
		i = (size_t)h & (cap - 1);
		while (pf->files[i])
			i = (i + 1) & (cap - 1);
	}
	f = calloc(1, sizeof(*f));
	if (!f || !(f->m.path = strdup(path))) {
		free(f);
		return NULL;
	}
	pf->nfiles++;
	f->m.id = (uint32_t)pf->nfiles;
	f->m.key = PY_KEY_SERIAL << 32 | f->m.id;
	/* Its own 2^32 bytes of the Python address range. */
	f->m.start = PY_ADDR_BASE + ((uint64_t)f->m.id << 32);
	f->m.end = f->m.start + (1ull << 32);
	pf->files[i] = f;
	return &f->m;
}

/* Python frame i as a struct frame; false when out of memory. */
static bool py_frame_of(struct pyframes *pf, const struct py_frame *py, struct frame *f)
{
	const struct mapping *m = file_map(pf, py->filename);
	uint64_t h = fnv(0xcbf29ce484222325ull, py->qualname);

	if (!m)
		return false;
	h = (h ^ (uint64_t)(uint32_t)py->line) * 0x100000001b3ull;
	memset(f, 0, sizeof(*f));
	f->map = m;
	/* One address per function and line (of the file's 2^32). */
	f->addr = m->start + (h >> 32 ^ (h & 0xffffffffu));
	f->func = py->qualname;
	f->src_line = py->line > 0 ? (uint32_t)py->line : 0;
	return true;
}

/* to += from, with the reader's stats (py may be NULL). */
static void add_counts(struct py_counts *to, const struct py_counts *from, const struct pyproc *py)
{
	struct pyproc_stats st = from->st;

	if (py)
		pyproc_get_stats(py, &st);
	to->samples += from->samples;
	to->merged += from->merged;
	to->mismatched += from->mismatched;
	to->unread += from->unread;
	to->from_copy += from->from_copy;
	to->changed += from->changed;
	to->st.unreadable += st.unreadable;
	to->st.loops += st.loops;
	to->st.truncated += st.truncated;
	to->st.bad_code += st.bad_code;
	to->st.bad_lines += st.bad_lines;
}

unsigned pyframes_merge(struct pyframes *pf, pid_t pid, pid_t tid, const struct perf_sample *smp,
			const struct frame *in, unsigned n, const struct frame **out)
{
	struct pyp *p;
	unsigned nm, k = 0;
	bool mismatch, from_copy, changed;
	int np;

	*out = in;
	if (!pf || pf->mode == PY_OFF || !(p = proc_of(pf, pid)))
		return n;
	try_open(pf, p);
	if (!p->py)
		return n;
	p->c.samples++;
	if (smp && smp->time) {
		uint64_t now = mono_ns(), d = now > smp->time ? now - smp->time : 0;
		unsigned b = 0;

		while (d >>= 1)
			b++;
		pf->lag_hist[b]++;
		pf->lag_n++;
	}
	if (smp && smp->abi && smp->stack && smp->stack_size)
		np = pyproc_stack_at(p->py, tid, smp->regs[PERF_SP], smp->stack, smp->stack_size,
				     pf->py, pf->max_depth, &from_copy, &changed);
	else
		np = pyproc_stack_at(p->py, tid, 0, NULL, 0, pf->py, pf->max_depth, &from_copy,
				     &changed);
	if (np == -ESRCH && kill(pid, 0) && errno == ESRCH) {
		/* The process is gone: its pid may come back as another program. */
		add_counts(&pf->gone, &p->c, p->py);
		pf->ngone++;
		memset(&p->c, 0, sizeof(p->c));
		pyproc_free(p->py);
		p->py = NULL;
		p->err = -EAGAIN;
		return n;
	}
	if (np <= 0) {
		p->c.unread += np < 0 && np != -ESRCH;
		return n;
	}
	nm = pymerge(in, n, pf->py, (unsigned)np, pf->mode, pf->items, 2 * pf->max_depth, &mismatch);
	p->c.merged++;
	p->c.mismatched += mismatch;
	p->c.from_copy += from_copy;
	p->c.changed += changed;
	for (unsigned i = 0; i < nm && k < pf->max_depth; i++) {
		if (!pf->items[i].python)
			pf->out[k++] = in[pf->items[i].index];
		else if (py_frame_of(pf, &pf->py[pf->items[i].index], &pf->out[k]))
			k++;
	}
	*out = pf->out;
	return k;
}

const char *pyframes_summary(const struct pyframes *pf, char *buf, size_t len)
{
	struct py_counts c;
	size_t nproc, o = 0;
	const char *version;
	uint64_t samples, merged, mismatched, unread, from_copy, changed;
	struct pyproc_stats tot;

	buf[0] = 0;
	if (!pf)
		return buf;
	c = pf->gone;
	nproc = pf->ngone;
	version = pf->version;
	for (size_t i = 0; i < pf->nprocs; i++) {
		const struct pyp *p = &pf->procs[i];

		if (!p->py)
			continue;
		nproc++;
		add_counts(&c, &p->c, p->py);
	}
	samples = c.samples;
	merged = c.merged;
	mismatched = c.mismatched;
	unread = c.unread;
	from_copy = c.from_copy;
	changed = c.changed;
	tot = c.st;
	if (nproc)
		o += (size_t)snprintf(buf + o, len - o,
			"Python %s (%zu process%s): %llu of %llu samples with Python frames; "
			"current frame from the sample's stack copy in %llu, of which %llu (%.1f%%) "
			"had moved on when read; %llu (%.1f%%) not paired with the interpreter's "
			"native frames",
			version, nproc, nproc == 1 ? "" : "es", (unsigned long long)merged,
			(unsigned long long)samples, (unsigned long long)from_copy,
			(unsigned long long)changed,
			from_copy ? 100.0 * (double)changed / (double)from_copy : 0.0,
			(unsigned long long)mismatched,
			merged ? 100.0 * (double)mismatched / (double)merged : 0.0);
	if (nproc && o < len && (unread || tot.unreadable || tot.loops || tot.truncated || tot.bad_code || tot.bad_lines))
		o += (size_t)snprintf(buf + o, len - o,
			"; %llu thread reads failed, %llu walks cut at unreadable memory, %llu at "
			"a loop, %llu at the depth limit, %llu not code objects, %llu corrupt line tables",
			(unsigned long long)unread, (unsigned long long)tot.unreadable,
			(unsigned long long)tot.loops, (unsigned long long)tot.truncated,
			(unsigned long long)tot.bad_code, (unsigned long long)tot.bad_lines);
	if (pf->lag_n && o < len) {
		uint64_t acc = 0, med = 0, p90 = 0;

		for (unsigned b = 0; b < 64; b++) {
			acc += pf->lag_hist[b];
			if (!med && 2 * acc >= pf->lag_n)
				med = 1ull << b;
			if (!p90 && 10 * acc >= 9 * pf->lag_n)
				p90 = 1ull << b;
		}
		o += (size_t)snprintf(buf + o, len - o, "; read %s%.0f us (median), %s%.0f us "
				      "(p90) after the sample", med > 1 ? "<" : "",
				      (double)(2 * med) / 1000.0, p90 > 1 ? "<" : "",
				      (double)(2 * p90) / 1000.0);
	}
	if (pf->unsupported[0] && o < len)
		snprintf(buf + o, len - o, "%s%s", o ? "; " : "", pf->unsupported);
	return buf;
}
