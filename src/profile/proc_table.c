/*
 * proc_table.c - the profile grouped by process (see proc_table.h).
 *
 * Threads, not stacks, know their process, and there are far fewer of
 * them: the threads are sorted by pid once, each group of equal pids is a
 * row, and every stack then adds its weight to its thread's row through
 * aggregate_thread() - one pass over the stacks, no per-stack search.
 */
#include "pmutop/profile/proc_table.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/ratios.h"
#include "pmutop/profile/table.h"
#include "pmutop/profile/term_text.h"

/* A thread index and its pid, for grouping (index nt: threads unknown to a). */
struct tp {
	uint32_t pid;
	size_t ti;
};

static int cmp_tp(const void *p, const void *q)
{
	const struct tp *x = p, *y = q;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->ti < y->ti ? -1 : x->ti > y->ti;
}

static int cmp_row(const void *p, const void *q)
{
	const struct proc_row *x = p, *y = q;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/*
 * rowof[ti] for every thread index 0..nt (nt: unknown threads, pid 0),
 * and the rows' pids and command names. Returns the number of rows, or
 * -ENOMEM.
 */
static long group_threads(const struct agg_thread *th, size_t nt, size_t *rowof,
			  struct proc_row *rows)
{
	struct tp *tp = malloc((nt + 1) * sizeof(*tp));
	size_t i;
	long n = 0;

	if (!tp)
		return -ENOMEM;
	for (i = 0; i <= nt; i++)
		tp[i] = (struct tp){ .pid = i < nt ? th[i].pid : 0, .ti = i };
	qsort(tp, nt + 1, sizeof(*tp), cmp_tp);
	for (i = 0; i <= nt; i++) {
		struct proc_row *r;
		const struct agg_thread *t = tp[i].ti < nt ? &th[tp[i].ti] : NULL;

		if (!i || tp[i].pid != tp[i - 1].pid) {
			r = &rows[n++];
			memset(r, 0, sizeof(*r));
			r->pid = tp[i].pid;
		}
		r = &rows[n - 1];
		rowof[tp[i].ti] = (size_t)(n - 1);
		/* The leader's command name wins; else the first thread's that has one. */
		if (t && t->comm[0] && (!r->comm[0] || t->tid == r->pid))
			memcpy(r->comm, t->comm, sizeof(r->comm));
	}
	free(tp);
	return n;
}

int proc_table_build(const struct aggregate *a, const uint64_t *w, const uint64_t *samples,
		     size_t nw, size_t nev, unsigned key, struct proc_table *t)
{
	const struct agg_info *info = aggregate_info_const(a);
	const struct agg_thread *th;
	const struct agg_stack *stacks;
	size_t nt, ns, i, k, *rowof = NULL, kept = 0;
	double scale[PMUTOP_MAX_EVENTS];
	bool *counted = NULL;
	long nrows;
	int rc = -ENOMEM;

	memset(t, 0, sizeof(*t));
	if (!w) {
		nev = info->nevents > 1 ? info->nevents : 1;
		if (nev > PMUTOP_MAX_EVENTS)
			nev = PMUTOP_MAX_EVENTS;
	}
	if (!nev || nev > PMUTOP_MAX_EVENTS || key >= nev)
		return -EINVAL;
	th = aggregate_threads(a, &nt);
	stacks = aggregate_stacks(a, &ns);
	if (w && nw < ns)
		ns = nw;
	t->key = key;
	if (nev > 1) {
		t->nevents = nev;
		for (k = 0; k < nev; k++) {
			t->ev_name[k] = k < info->nevents && info->events[k].name ? info->events[k].name : "?";
			t->ev_unit[k] = k < info->nevents && info->events[k].unit ? info->events[k].unit
										 : "count";
		}
	}
	for (k = 0; k < nev; k++)
		scale[k] = nev > 1 ? top_table_scale(a, k) : 1.0;
	rowof = malloc((nt + 1) * sizeof(*rowof));
	counted = calloc(nt + 1, sizeof(*counted));
	t->rows = calloc(nt + 1, sizeof(*t->rows));
	if (!rowof || !counted || !t->rows)
		goto out;
	nrows = group_threads(th, nt, rowof, t->rows);
	if (nrows < 0)
		goto out;

	for (i = 0; i < ns; i++) {
		const struct agg_stack *s = &stacks[i];
		const struct agg_thread *st = aggregate_thread(a, s->tid);
		size_t ti = st ? (size_t)(st - th) : nt;
		struct proc_row *r = &t->rows[rowof[ti]];
		uint64_t sw[PMUTOP_MAX_EVENTS], smp;
		bool any = false;

		for (k = 0; k < nev; k++) {
			if (w)
				sw[k] = w[i * nev + k];
			else if (nev == 1)
				sw[k] = key ? s->weights[key] : s->weight;
			else
				sw[k] = (uint64_t)((double)s->weights[k] * scale[k] + 0.5);
			any |= sw[k] != 0;
		}
		smp = w ? (samples ? samples[i] : 0) : s->samples;
		if (!any && !smp)
			continue;
		r->samples += smp;
		r->weight += sw[nev == 1 ? 0 : key];
		for (k = 0; k < t->nevents; k++)
			r->ev[k] += sw[k];
		if (!counted[ti]) {
			counted[ti] = true;
			r->nthreads += st && st->folded && st->nthreads ? st->nthreads : 1;
		}
	}
	/* Keep the processes that had something in this window. */
	for (i = 0; i < (size_t)nrows; i++) {
		if (!t->rows[i].samples && !t->rows[i].weight)
			continue;
		t->rows[kept++] = t->rows[i];
		t->total += t->rows[i].weight;
		t->samples += t->rows[i].samples;
		for (k = 0; k < t->nevents; k++)
			t->ev_total[k] += t->rows[i].ev[k];
	}
	t->nrows = kept;
	qsort(t->rows, t->nrows, sizeof(*t->rows), cmp_row);
	rc = 0;
out:
	free(rowof);
	free(counted);
	if (rc)
		proc_table_free(t);
	return rc;
}

void proc_table_free(struct proc_table *t)
{
	if (!t)
		return;
	free(t->rows);
	t->rows = NULL;
	t->nrows = 0;
}

/* A value in its unit: nanoseconds as s/ms/us (by the column's total), counts whole. */
static const char *fmt_value(uint64_t v, const char *unit, uint64_t total, char *buf,
			     size_t len)
{
	if (unit && !strcmp(unit, "nanoseconds")) {
		if (total >= 1000000000ull)
			snprintf(buf, len, "%.2fs", (double)v / 1e9);
		else if (total >= 1000000ull)
			snprintf(buf, len, "%.2fms", (double)v / 1e6);
		else
			snprintf(buf, len, "%.2fus", (double)v / 1e3);
	} else {
		snprintf(buf, len, "%llu", (unsigned long long)v);
	}
	return buf;
}

void proc_table_print(const struct proc_table *t, FILE *out, size_t max_rows,
		      const char *unit)
{
	size_t shown = t->nrows, i, k, nr = 0;
	struct ratio r[RATIOS_MAX];
	char v[40];

	if (max_rows && max_rows < shown)
		shown = max_rows;
	if (t->nevents > 1)
		nr = ratios_find(t->ev_name, t->nevents, r);
	fprintf(out, "Processes: %zu with samples", t->nrows);
	if (shown < t->nrows)
		fprintf(out, ", top %zu shown", shown);
	fprintf(out, " (%llu samples, %s total)\n", (unsigned long long)t->samples,
		fmt_value(t->total, unit, t->total, v, sizeof(v)));
	fprintf(out, "%8s %-16s %7s %10s %12s %6s", "pid", "command", "threads", "samples",
		t->nevents > 1 ? t->ev_name[t->key] : "flat", "share");
	for (k = 0; k < t->nevents; k++)
		if (k != t->key)
			fprintf(out, " %12s", t->ev_name[k]);
	for (k = 0; k < nr; k++)
		fprintf(out, " %9s", r[k].label);
	fprintf(out, "\n");
	for (i = 0; i < shown; i++) {
		const struct proc_row *p = &t->rows[i];

		const char *c = p->comm[0] ? p->comm : "?";
		int pad = 16 - (int)strlen(c);

		if (p->pid)
			fprintf(out, "%8u ", p->pid);
		else
			fprintf(out, "%8s ", "?");
		term_fputs(c, out);  /* a process names itself: no escapes to the terminal */
		fprintf(out, "%*s %7u %10llu", pad > 0 ? pad : 0, "", p->nthreads,
			(unsigned long long)p->samples);
		fprintf(out, " %12s %5.1f%%", fmt_value(p->weight, unit, t->total, v, sizeof(v)),
			t->total ? 100.0 * (double)p->weight / (double)t->total : 0.0);
		for (k = 0; k < t->nevents; k++)
			if (k != t->key)
				fprintf(out, " %12s", fmt_value(p->ev[k], t->ev_unit[k],
								t->ev_total[k], v, sizeof(v)));
		for (k = 0; k < nr; k++)
			fprintf(out, " %9s", ratio_format(&r[k], p->ev, v, sizeof(v)));
		fprintf(out, "\n");
	}
	if (nr)
		fprintf(out, "(~ ratios of the process's sampled estimates)\n");
}
