/*
 * model.c - the live view's model (see model.h): per-stack weight copies,
 * the table over them (src/profile/table.c), the filtered row list, the selection,
 * callers/callees and the thread list. Plain C, no terminal.
 *
 * Copies hold nev weights per stack, stack-major (cur[i * nev + k]): nev is
 * 1 in a single-event run (the copy is of the shown event, as before
 * several events existed) and the run's event count otherwise, so that
 * every event has its columns and `e` switches without losing a window.
 */
#include "model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/proc_table.h"

struct model {
	const struct aggregate *a;   /* NULL until the first tick after a reset */
	uint64_t gen;                /* a's aggregate_generation() at the last tick */
	uint64_t *cur, *prev;        /* stack weights at the last two ticks, nev per stack */
	size_t ncur, nprev, capcur, capprev;  /* ncur, nprev: stacks */
	uint64_t *scur, *sprev;      /* stack sample counts at the same ticks, one per stack */
	size_t capscur, capsprev;
	uint64_t *w;                 /* estimates of the current window, nev per stack */
	size_t nw, capw;
	/*
	 * With a process chosen (pid != 0): w with every other process's
	 * stacks zeroed, which the table, callers and threads read; the
	 * process list reads w, every process.
	 */
	uint64_t *wp;
	size_t capwp;
	size_t nev;                  /* weights per stack in the copies (1: single event) */

	enum top_sort sort;
	enum model_window window;
	uint32_t tid;
	uint32_t pid;                /* 0: every process */
	unsigned event;              /* index into agg_stack.weights; 0: weight */
	char *filter;                /* NULL: none */

	struct top_table table;      /* every function of the window */
	size_t *view;                /* indices into table.rows that pass the filter */
	uint64_t *sums;              /* running flat over view */
	size_t nview;

	size_t sel, top;
	uint32_t sel_fid;
	bool follow;                 /* keep sel on sel_fid across rebuilds */
};

struct model *model_new(void)
{
	struct model *m = calloc(1, sizeof(*m));

	if (m) {
		m->sort = TOP_SORT_FLAT;
		m->window = MODEL_SINCE_START;
		m->nev = 1;
	}
	return m;
}

static void clear_rows(struct model *m)
{
	top_table_free(&m->table);
	m->table.total = 0;
	free(m->view);
	free(m->sums);
	m->view = NULL;
	m->sums = NULL;
	m->nview = 0;
}

void model_free(struct model *m)
{
	if (!m)
		return;
	clear_rows(m);
	free(m->cur);
	free(m->prev);
	free(m->scur);
	free(m->sprev);
	free(m->w);
	free(m->wp);
	free(m->filter);
	free(m);
}

void model_reset(struct model *m)
{
	clear_rows(m);
	m->a = NULL;
	m->ncur = m->nprev = m->nw = 0;
	m->sel = m->top = 0;
	m->sel_fid = 0;
	m->follow = false;
}

/* Make room for n elements in *v (capacity *cap). 0 or -ENOMEM. */
static int reserve(uint64_t **v, size_t *cap, size_t n)
{
	uint64_t *nv;
	size_t ncap;

	if (n <= *cap)
		return 0;
	ncap = *cap ? *cap : 1024;
	while (ncap < n)
		ncap *= 2;
	nv = realloc(*v, ncap * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

/* Put the selection back on its function, or clamp it. */
static void place_selection(struct model *m)
{
	size_t i;

	if (m->follow && m->sel_fid) {
		for (i = 0; i < m->nview; i++) {
			if (m->table.rows[m->view[i]].function_id == m->sel_fid) {
				m->sel = i;
				return;
			}
		}
	}
	if (m->sel >= m->nview)
		m->sel = m->nview ? m->nview - 1 : 0;
	m->sel_fid = m->nview ? m->table.rows[m->view[m->sel]].function_id : 0;
}

static bool passes(const struct model *m, const struct top_row *r)
{
	return !m->filter || strcasestr(r->name, m->filter);
}

/* Index of the shown event's weight within a stack's nev. */
static size_t key(const struct model *m)
{
	return m->nev > 1 ? m->event : 0;
}

/* The current window's estimates, restricted to the chosen process if any. */
static const uint64_t *shown_weights(const struct model *m)
{
	return m->pid ? m->wp : m->w;
}

/* The shown event's estimate of stack i in the current window. */
static uint64_t window_weight(const struct model *m, size_t i)
{
	return shown_weights(m)[i * m->nev + key(m)];
}

/* Is stack s in the chosen process (always, when none is chosen)? */
static bool in_process(const struct model *m, const struct agg_stack *s)
{
	const struct agg_thread *th;

	if (!m->pid)
		return true;
	th = aggregate_thread(m->a, s->tid);
	return th && th->pid == m->pid;
}

/* wp <- w with the stacks of other processes than the chosen one zeroed. */
static int restrict_process(struct model *m)
{
	const struct agg_stack *stacks;
	size_t ns, i;

	if (!m->pid)
		return 0;
	if (reserve(&m->wp, &m->capwp, m->nw * m->nev))
		return -ENOMEM;
	stacks = aggregate_stacks(m->a, &ns);
	for (i = 0; i < m->nw && i < ns; i++) {
		bool in = in_process(m, &stacks[i]);

		for (size_t k = 0; k < m->nev; k++)
			m->wp[i * m->nev + k] = in ? m->w[i * m->nev + k] : 0;
	}
	return 0;
}

/*
 * Derive the window weights, the table and the filtered view. With several
 * events the window holds estimates (scaled for multiplexing per stack and
 * event, as the table does for the text report), so the rows, callers and
 * threads all agree with the written profile.
 */
static int rebuild(struct model *m)
{
	double scale[PMUTOP_MAX_EVENTS];
	size_t i, k, n = m->ncur * m->nev;
	uint64_t sum = 0;
	int rc;

	clear_rows(m);
	if (!m->a)
		return 0;
	if (reserve(&m->w, &m->capw, n))
		return -ENOMEM;
	for (k = 0; k < m->nev; k++)
		scale[k] = m->nev > 1 ? top_table_scale(m->a, k) : 1.0;
	for (i = 0; i < n; i++) {
		uint64_t base = m->window == MODEL_INTERVAL && i < m->nprev * m->nev ? m->prev[i] : 0;
		uint64_t d = m->cur[i] >= base ? m->cur[i] - base : 0;
		double sc = scale[i % m->nev];

		m->w[i] = sc > 1.0 ? (uint64_t)((double)d * sc + 0.5) : d;
	}
	m->nw = m->ncur;
	if (restrict_process(m))
		return -ENOMEM;
	if (m->nev > 1)
		rc = top_table_build_events(m->a, m->tid, m->sort, (unsigned)key(m), shown_weights(m),
					    m->nw, m->nev, &m->table);
	else
		rc = top_table_build_weights(m->a, m->tid, m->sort, shown_weights(m), m->nw,
					     &m->table);
	if (rc)
		return rc;
	m->view = malloc((m->table.nrows ? m->table.nrows : 1) * sizeof(*m->view));
	m->sums = malloc((m->table.nrows ? m->table.nrows : 1) * sizeof(*m->sums));
	if (!m->view || !m->sums) {
		clear_rows(m);
		return -ENOMEM;
	}
	for (i = 0; i < m->table.nrows; i++) {
		if (!passes(m, &m->table.rows[i]))
			continue;
		sum += m->table.rows[i].flat;
		m->sums[m->nview] = sum;
		m->view[m->nview++] = i;
	}
	place_selection(m);
	return 0;
}

/*
 * Weights per stack to copy from a: all the run's events when it has
 * several and the shown event is one of them, else just the shown one.
 */
static size_t copies_per_stack(const struct model *m, const struct aggregate *a)
{
	const struct agg_info *info = aggregate_info_const(a);
	size_t n = info->nevents > PMUTOP_MAX_EVENTS ? PMUTOP_MAX_EVENTS : info->nevents;

	return n > 1 && m->event < n ? n : 1;
}

/* Exchange two copies and their capacities (the tick's prev <- cur). */
static void swap_copies(uint64_t **a, size_t *capa, uint64_t **b, size_t *capb)
{
	uint64_t *t = *a;
	size_t c = *capa;

	*a = *b;
	*capa = *capb;
	*b = t;
	*capb = c;
}

int model_tick(struct model *m, const struct aggregate *a)
{
	const struct agg_stack *stacks;
	size_t ns, i, k, nev = copies_per_stack(m, a);

	bool rebuilt = a == m->a && aggregate_generation(a) != m->gen;

	stacks = aggregate_stacks(a, &ns);
	if (a != m->a || rebuilt || ns < m->ncur || nev != m->nev) {
		m->a = a;
		m->ncur = m->nprev = 0;
		m->nev = nev;
	}
	m->gen = aggregate_generation(a);
	/* prev <- cur, cur <- now. */
	swap_copies(&m->prev, &m->capprev, &m->cur, &m->capcur);
	swap_copies(&m->sprev, &m->capsprev, &m->scur, &m->capscur);
	m->nprev = m->ncur;
	m->ncur = 0;
	if (reserve(&m->cur, &m->capcur, ns * nev) || reserve(&m->scur, &m->capscur, ns)) {
		clear_rows(m);
		return -ENOMEM;
	}
	if (nev > 1) {
		for (i = 0; i < ns; i++)
			for (k = 0; k < nev; k++)
				m->cur[i * nev + k] = stacks[i].weights[k];
	} else {
		/* An event the run does not have weighs nothing (stacks hold the run's). */
		size_t have = aggregate_info_const(a)->nevents;

		for (i = 0; i < ns; i++)
			m->cur[i] = !m->event ? stacks[i].weight :
				    m->event < have ? stacks[i].weights[m->event] : 0;
	}
	for (i = 0; i < ns; i++)
		m->scur[i] = stacks[i].samples;
	m->ncur = ns;
	/*
	 * The aggregate was rebuilt (stacks merged, threads folded): the old
	 * copies index other stacks. Start the interval afresh from this
	 * copy (empty until the next tick) rather than call everything new.
	 */
	if (rebuilt && !reserve(&m->prev, &m->capprev, ns * nev) &&
	    !reserve(&m->sprev, &m->capsprev, ns)) {
		memcpy(m->prev, m->cur, ns * nev * sizeof(*m->prev));
		memcpy(m->sprev, m->scur, ns * sizeof(*m->sprev));
		m->nprev = ns;
	}
	return rebuild(m);
}

int model_set_sort(struct model *m, enum top_sort sort)
{
	m->sort = sort;
	return rebuild(m);
}

int model_set_window(struct model *m, enum model_window w)
{
	m->window = w;
	return rebuild(m);
}

int model_set_filter(struct model *m, const char *substr)
{
	char *f = NULL;

	if (substr && *substr) {
		f = strdup(substr);
		if (!f)
			return -ENOMEM;
	}
	free(m->filter);
	m->filter = f;
	return rebuild(m);
}

int model_set_thread(struct model *m, uint32_t tid)
{
	m->tid = tid;
	return rebuild(m);
}

int model_set_process(struct model *m, uint32_t pid)
{
	m->pid = pid;
	return rebuild(m);
}

int model_set_event(struct model *m, unsigned k)
{
	if (k >= PMUTOP_MAX_EVENTS)
		return -EINVAL;
	if (k != m->event) {
		m->event = k;
		/* Copies of every event hold this one too; a single-event copy does not. */
		if (m->nev < 2 || k >= m->nev) {
			m->ncur = m->nprev = 0;
			m->nev = 1;
		}
	}
	return rebuild(m);
}

unsigned model_event(const struct model *m) { return m->event; }
size_t model_nevents(const struct model *m) { return m->nev > 1 ? m->nev : 1; }
enum top_sort model_sort(const struct model *m) { return m->sort; }
enum model_window model_window(const struct model *m) { return m->window; }
const char *model_filter(const struct model *m) { return m->filter ? m->filter : ""; }
uint32_t model_thread(const struct model *m) { return m->tid; }
uint32_t model_process(const struct model *m) { return m->pid; }
bool model_has_data(const struct model *m) { return m->a != NULL; }

bool model_stale(const struct model *m, const struct aggregate *a)
{
	return m->a && (m->a != a || aggregate_generation(a) != m->gen);
}
size_t model_nrows(const struct model *m) { return m->nview; }
uint64_t model_total(const struct model *m) { return m->table.total; }
size_t model_nfunctions(const struct model *m) { return m->table.nrows; }

const struct top_row *model_row(const struct model *m, size_t i)
{
	return i < m->nview ? &m->table.rows[m->view[i]] : NULL;
}

uint64_t model_sum(const struct model *m, size_t i)
{
	return i < m->nview ? m->sums[i] : 0;
}

/* ---- selection ------------------------------------------------------------ */

size_t model_selected(const struct model *m)
{
	return m->sel;
}

uint32_t model_selected_function(const struct model *m)
{
	return m->nview ? m->table.rows[m->view[m->sel]].function_id : 0;
}

static void select_row(struct model *m, size_t i)
{
	m->sel = i;
	m->follow = i != 0;
	m->sel_fid = m->nview ? m->table.rows[m->view[i]].function_id : 0;
}

void model_move(struct model *m, long delta)
{
	size_t i = m->sel;

	if (!m->nview)
		return;
	if (delta < 0)
		i = (size_t)-delta >= i ? 0 : i - (size_t)-delta;
	else
		i = (size_t)delta >= m->nview - 1 - i ? m->nview - 1 : i + (size_t)delta;
	select_row(m, i);
}

void model_home(struct model *m)
{
	m->top = 0;
	select_row(m, 0);
}

void model_end(struct model *m)
{
	if (m->nview)
		select_row(m, m->nview - 1);
}

size_t model_scroll(struct model *m, size_t visible)
{
	if (!visible)
		visible = 1;
	if (m->sel < m->top)
		m->top = m->sel;
	else if (m->sel >= m->top + visible)
		m->top = m->sel - visible + 1;
	/* No empty space below the last row while rows are above the window. */
	if (m->top + visible > m->nview)
		m->top = m->nview > visible ? m->nview - visible : 0;
	return m->top;
}

/* ---- callers and callees --------------------------------------------------- */

struct edge_acc {
	uint64_t *w;     /* per function id (0: root/self) */
	size_t *mark;    /* stack index + 1 that last counted it */
};

static int edge_list(const struct edge_acc *acc, const struct agg_function *funcs,
		     size_t nf, bool callers, struct model_edge **out, size_t *n)
{
	size_t i, k = 0;

	for (i = 0; i <= nf; i++)
		k += acc->w[i] != 0;
	*out = calloc(k ? k : 1, sizeof(**out));
	*n = 0;
	if (!*out)
		return -ENOMEM;
	for (i = 0; i <= nf; i++) {
		struct model_edge *e;

		if (!acc->w[i])
			continue;
		e = &(*out)[(*n)++];
		e->function_id = (uint32_t)i;
		e->weight = acc->w[i];
		if (i) {
			e->name = funcs[i - 1].name;
			e->file = funcs[i - 1].file;
		} else {
			e->name = callers ? "(root)" : "(self)";
			e->file = "";
		}
	}
	return 0;
}

static int cmp_edge(const void *p, const void *q)
{
	const struct model_edge *x = p, *y = q;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * The functions of stack s, leaf first, with inlined frames expanded (each
 * Line of a location is a function, innermost first), as src/profile/table.c counts
 * them. Returns the count, or -1 on ENOMEM; *buf grows as needed.
 */
static long stack_functions(const struct aggregate *a, const struct agg_location *locs,
			    const struct agg_stack *s, struct agg_path *path, uint32_t **buf,
			    size_t *cap)
{
	const uint32_t *sl = aggregate_stack_path(a, s, path);
	size_t n = 0, j, k;

	if (!sl)
		return -1;
	for (j = 0; j < s->nlocs; j++) {
		const struct agg_location *l = &locs[sl[j] - 1];
		size_t nl = l->nlines && l->lines ? l->nlines : 1;

		if (n + nl > *cap) {
			size_t ncap = (n + nl) * 2;
			uint32_t *nb = realloc(*buf, ncap * sizeof(*nb));

			if (!nb)
				return -1;
			*buf = nb;
			*cap = ncap;
		}
		for (k = 0; k < nl; k++)
			(*buf)[n++] = l->nlines && l->lines ? l->lines[k].function_id : l->function_id;
	}
	return (long)n;
}

int model_edges(const struct model *m, uint32_t fid, struct model_edges *e)
{
	const struct agg_function *funcs;
	const struct agg_location *locs;
	const struct agg_stack *stacks;
	struct edge_acc up = { 0 }, down = { 0 };
	struct agg_path path = { 0 };
	size_t nf, nl, ns, i, j, cap = 0;
	uint32_t *fn = NULL;
	int rc = -ENOMEM;

	memset(e, 0, sizeof(*e));
	if (!m->a)
		return -ENOENT;
	funcs = aggregate_functions(m->a, &nf);
	locs = aggregate_locations(m->a, &nl);
	stacks = aggregate_stacks(m->a, &ns);
	if (!fid || fid > nf)
		return -ENOENT;
	if (ns > m->nw)
		ns = m->nw;
	up.w = calloc(nf + 1, sizeof(*up.w));
	up.mark = calloc(nf + 1, sizeof(*up.mark));
	down.w = calloc(nf + 1, sizeof(*down.w));
	down.mark = calloc(nf + 1, sizeof(*down.mark));
	if (!up.w || !up.mark || !down.w || !down.mark)
		goto out;

	for (i = 0; i < ns; i++) {
		const struct agg_stack *s = &stacks[i];
		uint64_t w = window_weight(m, i);
		bool on = false;
		long nfn;

		if (!w || (m->tid && s->tid != m->tid))
			continue;
		e->total += w;
		nfn = stack_functions(m->a, locs, s, &path, &fn, &cap);
		if (nfn < 0)
			goto out;
		for (j = 0; j < (size_t)nfn; j++) {
			uint32_t caller, callee;

			if (fn[j] != fid)
				continue;
			on = true;
			caller = j + 1 < (size_t)nfn ? fn[j + 1] : 0;
			callee = j ? fn[j - 1] : 0;
			if (up.mark[caller] != i + 1) {
				up.mark[caller] = i + 1;
				up.w[caller] += w;
			}
			if (down.mark[callee] != i + 1) {
				down.mark[callee] = i + 1;
				down.w[callee] += w;
			}
		}
		if (on) {
			e->cum += w;
			if (fn[0] == fid)
				e->flat += w;
		}
	}
	if (!e->cum) {
		rc = -ENOENT;
		goto out;
	}
	e->function_id = fid;
	e->name = funcs[fid - 1].name;
	e->file = funcs[fid - 1].file;
	if (edge_list(&up, funcs, nf, true, &e->callers, &e->ncallers) ||
	    edge_list(&down, funcs, nf, false, &e->callees, &e->ncallees))
		goto out;
	qsort(e->callers, e->ncallers, sizeof(*e->callers), cmp_edge);
	qsort(e->callees, e->ncallees, sizeof(*e->callees), cmp_edge);
	rc = 0;
out:
	free(fn);
	agg_path_free(&path);
	free(up.w);
	free(up.mark);
	free(down.w);
	free(down.mark);
	if (rc)
		model_edges_free(e);
	return rc;
}

void model_edges_free(struct model_edges *e)
{
	if (!e)
		return;
	free(e->callers);
	free(e->callees);
	e->callers = e->callees = NULL;
	e->ncallers = e->ncallees = 0;
}

/* ---- threads ----------------------------------------------------------------- */

static int cmp_thread(const void *p, const void *q)
{
	const struct model_thread *x = p, *y = q;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Samples of stack i in the current window. */
static uint64_t window_samples(const struct model *m, size_t i)
{
	uint64_t base = m->window == MODEL_INTERVAL && i < m->nprev ? m->sprev[i] : 0;

	return m->scur[i] >= base ? m->scur[i] - base : 0;
}

/* The entry of tid in t[0..*nt), added (zeroed, named name) if new. */
static struct model_thread *thread_slot(struct model_thread *t, size_t *nt, uint32_t tid,
					const char *name)
{
	size_t i;

	for (i = 0; i < *nt; i++)
		if (t[i].tid == tid)
			break;
	if (i == *nt) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].tid = tid;
		(*nt)++;
	}
	if (name && name[0] && !t[i].name[0])
		snprintf(t[i].name, sizeof(t[i].name), "%s", name);
	return &t[i];
}

int model_threads(const struct model *m, const struct model_thread *known, size_t nknown,
		  struct model_thread **out, size_t *n)
{
	const struct agg_thread *threads = NULL;
	const struct agg_stack *stacks = NULL;
	size_t nt = 0, ns = 0, i, cnt = 0;
	struct model_thread *t;

	*out = NULL;
	*n = 0;
	if (m->a) {
		threads = aggregate_threads(m->a, &nt);
		stacks = aggregate_stacks(m->a, &ns);
	}
	t = calloc(nt + nknown + 1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	/* Every thread we know of: the caller's (alive now) and the profile's. */
	for (i = 0; i < nknown; i++)
		thread_slot(t, &cnt, known[i].tid, known[i].name);
	for (i = 0; i < nt; i++)
		if (!m->pid || threads[i].pid == m->pid)
			thread_slot(t, &cnt, threads[i].tid, threads[i].name);
	if (ns > m->nw)
		ns = m->nw;
	/* Threads are few: a linear search per stack is cheaper than a table. */
	for (i = 0; i < ns; i++) {
		uint64_t w = window_weight(m, i), smp = window_samples(m, i);
		struct model_thread *th;

		if ((!w && !smp) || !in_process(m, &stacks[i]))
			continue;
		th = thread_slot(t, &cnt, stacks[i].tid, NULL);
		th->weight += w;
		th->samples += smp;
	}
	qsort(t, cnt, sizeof(*t), cmp_thread);
	*out = t;
	*n = cnt;
	return 0;
}

/* ---- processes --------------------------------------------------------------- */

int model_processes(const struct model *m, struct proc_table *t)
{
	uint64_t *smp;
	size_t i;
	int rc;

	memset(t, 0, sizeof(*t));
	if (!m->a)
		return 0;
	smp = malloc((m->nw ? m->nw : 1) * sizeof(*smp));
	if (!smp)
		return -ENOMEM;
	for (i = 0; i < m->nw; i++)
		smp[i] = window_samples(m, i);
	rc = proc_table_build(m->a, m->w, smp, m->nw, m->nev, (unsigned)key(m), t);
	free(smp);
	return rc;
}

/* ---- formatting ---------------------------------------------------------------- */

static bool is_ns(const char *unit)
{
	return unit && (!strcmp(unit, "nanoseconds") || !strcmp(unit, "nanosecond") ||
			!strcmp(unit, "ns"));
}

/* v / scale with 3 significant digits, then the suffix. */
static void three_digits(double x, const char *suffix, char *buf, size_t len)
{
	if (x >= 99.95)
		snprintf(buf, len, "%.0f%s", x, suffix);
	else if (x >= 9.995)
		snprintf(buf, len, "%.1f%s", x, suffix);
	else
		snprintf(buf, len, "%.2f%s", x, suffix);
}

const char *model_fmt_value(uint64_t v, const char *unit, char *buf, size_t len)
{
	static const struct { double scale; const char *suffix; } counts[] = {
		{ 1e18, "E" }, { 1e15, "P" }, { 1e12, "T" }, { 1e9, "G" }, { 1e6, "M" }, { 1e3, "k" },
	}, times[] = {
		{ 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" },
	};
	double x = (double)v;
	size_t i;

	if (v == 0) {
		snprintf(buf, len, "0");
		return buf;
	}
	if (unit && !strcmp(unit, "bytes")) {  /* pprof's units: 1024-based */
		static const char *const sfx[] = { "B", "kB", "MB", "GB", "TB", "PB", "EB" };

		for (i = 0; x >= 1023.5 && i + 1 < sizeof(sfx) / sizeof(sfx[0]); i++)
			x /= 1024;
		if (!i)
			snprintf(buf, len, "%lluB", (unsigned long long)v);
		else
			three_digits(x, sfx[i], buf, len);
		return buf;
	}
	if (is_ns(unit)) {
		if (x >= 999.5e9) { /* from 1000 s: whole seconds, then hours */
			if (x < 1e14)
				snprintf(buf, len, "%.0fs", x / 1e9);
			else
				snprintf(buf, len, "%.0fh", x / 3.6e12);
			return buf;
		}
		for (i = 0; i < sizeof(times) / sizeof(times[0]); i++)
			if (x >= times[i].scale * 0.9995) {
				three_digits(x / times[i].scale, times[i].suffix, buf, len);
				return buf;
			}
		snprintf(buf, len, "%lluns", (unsigned long long)v);
		return buf;
	}
	if (v < 10000) {
		snprintf(buf, len, "%llu", (unsigned long long)v);
		return buf;
	}
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		if (x >= counts[i].scale * 0.9995) {
			three_digits(x / counts[i].scale, counts[i].suffix, buf, len);
			return buf;
		}
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

const char *model_fmt_percent(uint64_t v, uint64_t total, char *buf, size_t len)
{
	double r = total ? 100.0 * (double)v / (double)total : 0;

	snprintf(buf, len, "%5.1f%%", r);
	return buf;
}

const char *model_basename(const char *path)
{
	const char *s;

	if (!path)
		return "";
	s = strrchr(path, '/');
	return s ? s + 1 : path;
}
