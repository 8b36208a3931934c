/*
 * table.c - the flat/cumulative function table over the aggregate.
 *
 * One pass over the distinct stacks: a stack's weight is flat for the
 * function of its leaf location and cum for every distinct function on it.
 * A per-function "last stack seen" mark makes recursion count once per
 * stack, as pprof does. Printing follows `go tool pprof -top` (internal/
 * report printText and internal/measurement), so users can compare the two
 * outputs column by column.
 */
#include "pmutop/profile/table.h"
#include "pmutop/profile/term_text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/ratios.h"

static int cmp_name_id(const struct top_row *x, const struct top_row *y)
{
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->function_id < y->function_id ? -1 : x->function_id > y->function_id;
}

static int cmp_desc(uint64_t x, uint64_t y)
{
	return x > y ? -1 : x < y;
}

/* pprof's FlatNameOrder: flat, name, cum. */
static int cmp_flat(const void *p, const void *q)
{
	const struct top_row *x = p, *y = q;
	int c = cmp_desc(x->flat, y->flat);

	if (!c)
		c = strcmp(x->name, y->name);
	if (!c)
		c = cmp_desc(x->cum, y->cum);
	return c ? c : cmp_name_id(x, y);
}

/* pprof's CumNameOrder: cum, name, flat. */
static int cmp_cum(const void *p, const void *q)
{
	const struct top_row *x = p, *y = q;
	int c = cmp_desc(x->cum, y->cum);

	if (!c)
		c = strcmp(x->name, y->name);
	if (!c)
		c = cmp_desc(x->flat, y->flat);
	return c ? c : cmp_name_id(x, y);
}

double top_table_scale(const struct aggregate *a, size_t k)
{
	const struct agg_info *info = aggregate_info_const(a);

	if (info->nevents > 1 && k < info->nevents && info->events[k].scale > 1.0)
		return info->events[k].scale;
	return 1.0;
}

/*
 * The table over stacks with the given weights, nev per stack (1: the
 * single-event table). w == NULL means each stack's own weight (with nev >
 * 1, its weights[k] scaled for multiplexing and rounded per stack, as the
 * pprof writer does); else w[i * nev + k] for stack i < nw, and stacks
 * whose weights are all zero (or i >= nw) are left out. flat/cum/total are
 * of event key.
 */
static int build(const struct aggregate *a, uint32_t tid, enum top_sort sort,
		 const uint64_t *w, size_t nw, size_t nev, unsigned key, struct top_table *t)
{
	const struct agg_info *info = aggregate_info_const(a);
	const struct agg_function *funcs;
	const struct agg_location *locs;
	const struct agg_stack *stacks;
	size_t nf, nl, ns, i, j, k, n = 0;
	uint64_t *flat, *cum, sw[PMUTOP_MAX_EVENTS];
	double scale[PMUTOP_MAX_EVENTS];
	size_t *mark;          /* per function: index + 1 of the last stack counted */
	const char **modv;     /* per function: the file of a mapping its code is in */
	const struct agg_mapping *maps;
	size_t nm;
	struct agg_path path = { 0 };
	const uint32_t *sl;
	int rc = -ENOMEM;

	memset(t, 0, sizeof(*t));
	t->note = info->note;
	funcs = aggregate_functions(a, &nf);
	locs = aggregate_locations(a, &nl);
	stacks = aggregate_stacks(a, &ns);
	flat = calloc((nf + 1) * nev, sizeof(*flat));
	cum = calloc((nf + 1) * nev, sizeof(*cum));
	mark = calloc(nf + 1, sizeof(*mark));
	modv = calloc(nf + 1, sizeof(*modv));
	maps = aggregate_mappings(a, &nm);
	if (!flat || !cum || !mark || !modv)
		goto out;
	if (nev > 1) {
		t->nevents = nev;
		t->key = key;
		for (k = 0; k < nev; k++) {
			t->ev_name[k] = info->events[k].name ? info->events[k].name : "?";
			t->ev_unit[k] = info->events[k].unit ? info->events[k].unit : "count";
			scale[k] = top_table_scale(a, k);
		}
	}

	if (w && nw < ns)
		ns = nw;
	for (i = 0; i < ns; i++) {
		const struct agg_stack *s = &stacks[i];
		bool any = false;

		if (tid && s->tid != tid)
			continue;
		if (nev == 1) {
			sw[0] = w ? w[i] : s->weight;
			any = sw[0] != 0;
		} else {
			for (k = 0; k < nev; k++) {
				sw[k] = w ? w[i * nev + k]
					  : (uint64_t)((double)s->weights[k] * scale[k] + 0.5);
				any |= sw[k] != 0;
			}
		}
		if (w && !any)
			continue;
		t->total += sw[nev == 1 ? 0 : key];
		for (k = 0; k < t->nevents; k++)
			t->ev_total[k] += sw[k];
		if (!(sl = aggregate_stack_path(a, s, &path)))
			goto out;
		for (j = 0; j < s->nlocs; j++) {
			const struct agg_location *l = &locs[sl[j] - 1];
			/* Inlined frames (debug info): each line is a function, innermost first. */
			uint32_t li, nlines = l->nlines && l->lines ? l->nlines : 1;

			for (li = 0; li < nlines; li++) {
				uint32_t f = (l->nlines && l->lines ? l->lines[li].function_id
								    : l->function_id) - 1;

				if (!modv[f] && l->mapping_id && l->mapping_id <= nm)
					modv[f] = maps[l->mapping_id - 1].file;
				if (j == 0 && li == 0)
					for (k = 0; k < nev; k++)
						flat[f * nev + k] += sw[k];
				if (mark[f] != i + 1) {
					mark[f] = i + 1;
					for (k = 0; k < nev; k++)
						cum[f * nev + k] += sw[k];
				}
			}
		}
	}
	for (i = 0; i < nf; i++)
		n += mark[i] != 0;
	t->rows = calloc(n ? n : 1, sizeof(*t->rows));
	if (!t->rows)
		goto out;
	for (i = 0; i < nf; i++) {
		struct top_row *r;

		if (!mark[i])
			continue;
		r = &t->rows[t->nrows++];
		r->function_id = funcs[i].id;
		r->name = funcs[i].name;
		r->file = funcs[i].file;
		r->module = modv[i] && *modv[i] ? modv[i] : funcs[i].file;
		r->flat = flat[i * nev + (nev == 1 ? 0 : key)];
		r->cum = cum[i * nev + (nev == 1 ? 0 : key)];
		for (k = 0; k < t->nevents; k++) {
			r->ev_flat[k] = flat[i * nev + k];
			r->ev_cum[k] = cum[i * nev + k];
		}
	}
	qsort(t->rows, t->nrows, sizeof(*t->rows), sort == TOP_SORT_CUM ? cmp_cum : cmp_flat);
	rc = 0;
out:
	free(flat);
	free(cum);
	free(mark);
	free(modv);
	agg_path_free(&path);
	return rc;
}

int top_table_build(const struct aggregate *a, uint32_t tid, enum top_sort sort,
		    struct top_table *t)
{
	const struct agg_info *info = aggregate_info_const(a);
	size_t nev = info->nevents > 1 ? info->nevents : 1;

	if (nev > PMUTOP_MAX_EVENTS)
		nev = PMUTOP_MAX_EVENTS;
	return build(a, tid, sort, NULL, 0, nev, 0, t);
}

int top_table_build_weights(const struct aggregate *a, uint32_t tid, enum top_sort sort,
			    const uint64_t *w, size_t nw, struct top_table *t)
{
	static const uint64_t none[1];

	return build(a, tid, sort, w ? w : none, w ? nw : 0, 1, 0, t);
}

int top_table_build_events(const struct aggregate *a, uint32_t tid, enum top_sort sort,
			   unsigned key, const uint64_t *w, size_t nw, size_t nev,
			   struct top_table *t)
{
	static const uint64_t none[1];

	if (nev < 2 || nev > PMUTOP_MAX_EVENTS || key >= nev) {
		memset(t, 0, sizeof(*t));
		return -EINVAL;
	}
	return build(a, tid, sort, w ? w : none, w ? nw : 0, nev, key, t);
}

void top_table_free(struct top_table *t)
{
	if (!t)
		return;
	free(t->rows);
	t->rows = NULL;
	t->nrows = 0;
}

/* ---- formatting as pprof does it ----------------------------------------- */

struct time_unit {
	const char *name;
	double factor;  /* nanoseconds per unit */
};

static const struct time_unit time_units[] = {
	{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "hrs", 3600e9 },
};

static bool is_nanoseconds(const char *unit)
{
	return unit && (!strcmp(unit, "nanoseconds") || !strcmp(unit, "nanosecond") ||
			!strcmp(unit, "ns"));
}

/* Units pprof prints without a suffix. */
static bool is_plain(const char *unit)
{
	return !unit || !*unit || !strcmp(unit, "count") || !strcmp(unit, "sample") ||
	       !strcmp(unit, "unit");
}

/* The largest time unit in which ns is at least 1 (pprof autoScale), else s. */
static const struct time_unit *time_autoscale(double ns)
{
	const struct time_unit *best = NULL;
	size_t i;

	for (i = 0; i < sizeof(time_units) / sizeof(time_units[0]); i++)
		if (ns / time_units[i].factor >= 1.0)
			best = &time_units[i];
	return best ? best : &time_units[3];
}

/*
 * pprof's selectOutputUnit for time: the unit of the smallest shown value,
 * or one that shows it as at least 0.01 when the total needs a larger unit.
 * ev < 0: the flat/cum columns; else event ev's flat column.
 */
static const struct time_unit *time_output_unit(const struct top_table *t, size_t shown, int ev)
{
	const struct time_unit *min_u, *max_u;
	uint64_t min = 0, v, total = ev < 0 ? t->total : t->ev_total[ev];
	size_t i;

	for (i = 0; i < shown; i++) {
		const struct top_row *r = &t->rows[i];

		if (ev < 0)
			v = r->flat ? r->flat : r->cum;
		else
			v = r->ev_flat[ev];
		if (v && (!min || v < min))
			min = v;
	}
	if (!min)
		min = total;
	min_u = time_autoscale((double)min);
	max_u = time_autoscale((double)total);
	if (min_u != max_u && (double)min * 100 < (double)total)
		min_u = time_autoscale((double)min * 100);
	return min_u;
}

/* pprof's ScaledLabel: "%.2f" without a ".00" tail, then the unit. */
static const char *format_value(uint64_t v, const char *unit, const struct time_unit *tu,
				char *buf, size_t len)
{
	size_t n;

	if (!tu) {
		snprintf(buf, len, "%llu%s", (unsigned long long)v,
			 is_plain(unit) ? "" : unit);
		return buf;
	}
	snprintf(buf, len, "%.2f", (double)v / tu->factor);
	n = strlen(buf);
	if (n > 3 && !strcmp(buf + n - 3, ".00"))
		buf[n - 3] = 0;
	if (!strcmp(buf, "0"))
		return buf;
	snprintf(buf + strlen(buf), len - strlen(buf), "%s", tu->name);
	return buf;
}

/* pprof's measurement.Percentage: 6 characters wide. */
static const char *format_percent(uint64_t v, uint64_t total, char *buf, size_t len)
{
	double ratio = total ? (double)v / (double)total * 100 : 0;

	if (ratio >= 99.95 && ratio <= 100.05)
		snprintf(buf, len, "  100%%");
	else if (ratio >= 1.0)
		snprintf(buf, len, "%5.2f%%", ratio);
	else
		snprintf(buf, len, "%5.2g%%", ratio);
	return buf;
}

/* The extra columns of a multi-event table: other events' flat, then ratios. */
struct extra_cols {
	size_t nev;                                /* other events */
	unsigned ev[PMUTOP_MAX_EVENTS];
	const struct time_unit *tu[PMUTOP_MAX_EVENTS];
	int width[PMUTOP_MAX_EVENTS];
	struct ratio ratios[RATIOS_MAX];
	size_t nratios;
	int rwidth[RATIOS_MAX];
	/*
	 * Off-CPU time beside an on-CPU time event (-e task-clock,offcpu):
	 * offcpu's cum and the wall time (on + off cum) per function.
	 */
	int off, on;                               /* event indices, -1: none */
	const struct time_unit *wall_tu;
};

/* An event that measures a thread's time on a CPU in ns (task-clock, cpu-clock, timer). */
static bool on_cpu_time(const char *name, const char *unit)
{
	return is_nanoseconds(unit) && (!strncmp(name, "task-clock", 10) ||
					!strncmp(name, "cpu-clock", 9) || !strcmp(name, "timer"));
}

bool top_table_wall_events(const char *const *names, const char *const *units, size_t n,
			   unsigned *on, unsigned *off)
{
	int o = -1, f = -1;

	for (size_t k = 0; k < n; k++) {
		if (!names[k] || !units[k])
			continue;
		if (f < 0 && !strcmp(names[k], "offcpu") && is_nanoseconds(units[k]))
			f = (int)k;
		else if (o < 0 && on_cpu_time(names[k], units[k]))
			o = (int)k;
	}
	if (o < 0 || f < 0)
		return false;
	*on = (unsigned)o;
	*off = (unsigned)f;
	return true;
}

static void extra_setup(const struct top_table *t, size_t shown, struct extra_cols *x)
{
	size_t k;

	memset(x, 0, sizeof(*x));
	for (k = 0; k < t->nevents; k++) {
		int w = (int)strlen(t->ev_name[k]);

		if (k == t->key)
			continue;
		x->ev[x->nev] = (unsigned)k;
		x->tu[x->nev] = is_nanoseconds(t->ev_unit[k]) ? time_output_unit(t, shown, (int)k)
							       : NULL;
		x->width[x->nev++] = w > 10 ? w : 10;
	}
	x->nratios = ratios_find(t->ev_name, t->nevents, x->ratios);
	for (k = 0; k < x->nratios; k++) {
		int w = (int)strlen(x->ratios[k].label);

		x->rwidth[k] = w > 8 ? w : 8;
	}
	x->off = x->on = -1;
	{
		unsigned on, off;

		if (top_table_wall_events(t->ev_name, t->ev_unit, t->nevents, &on, &off)) {
			x->on = (int)on;
			x->off = (int)off;
		}
	}
	if (x->off >= 0)
		x->wall_tu = time_autoscale((double)(t->ev_total[x->on] + t->ev_total[x->off]));
}

/* "Events: cycles (flat, cum), instructions (flat); ..." and the ratios. */
static void extra_legend(const struct top_table *t, const struct extra_cols *x, FILE *out)
{
	size_t k;

	fprintf(out, "Events: %s (flat, cum)", t->ev_name[t->key]);
	for (k = 0; k < x->nev; k++)
		fprintf(out, "%s%s", k ? ", " : "; ", t->ev_name[x->ev[k]]);
	fprintf(out, "%s; sampled counts are estimates (samples x period)\n",
		x->nev ? " (flat)" : "");
	if (x->off >= 0)
		fprintf(out, "Wall time per function: %s cum + %s cum = wall cum (on + off CPU)\n",
			t->ev_name[x->on], t->ev_name[x->off]);
	if (!x->nratios)
		return;
	fprintf(out, "Ratios (~) of the flat estimates:");
	for (k = 0; k < x->nratios; k++)
		fprintf(out, "%s %s = %s/%s", k ? "," : "", x->ratios[k].label,
			t->ev_name[x->ratios[k].num], t->ev_name[x->ratios[k].den]);
	fprintf(out, "\n");
}

/*
 * Whether row r is under the min_cum cut (pprof's node fraction); with
 * several events, under it in every one (a parked thread's function has no
 * task-clock but all of the offcpu time: it stays).
 */
static bool cut_row(const struct top_table *t, const struct top_row *r, double min_cum)
{
	if (min_cum <= 0 || (double)r->cum >= min_cum * (double)t->total)
		return false;
	for (size_t k = 0; k < t->nevents; k++)
		if ((double)r->ev_cum[k] >= min_cum * (double)t->ev_total[k] && r->ev_cum[k])
			return false;
	return true;
}

void top_table_print(const struct top_table *t, FILE *out, size_t max_rows, double min_cum,
		     const char *unit)
{
	size_t shown = 0, kept = 0, dropped = 0, i, k;
	const struct time_unit *tu = NULL;
	char v1[32], v2[32], p1[16], p2[16], p3[16];
	const char *pct;
	struct extra_cols x;
	uint64_t sum = 0;
	struct top_table view = *t;  /* the printed rows: units and columns fit them */
	struct top_row *vrows = malloc((t->nrows ? t->nrows : 1) * sizeof(*vrows));

	for (i = 0; i < t->nrows; i++) {
		if (vrows && cut_row(t, &t->rows[i], min_cum)) {
			dropped++;
			continue;
		}
		kept++;
		if (!max_rows || shown < max_rows) {
			if (vrows)
				vrows[shown] = t->rows[i];
			shown++;
		}
	}
	if (vrows)
		view.rows = vrows;
	view.nrows = shown;
#define ROW(j) (&view.rows[j])
	if (is_nanoseconds(unit))
		tu = time_output_unit(&view, shown, -1);
	for (i = 0; i < shown; i++)
		sum += ROW(i)->flat;
	if (t->nevents > 1)
		extra_setup(&view, shown, &x);

	pct = format_percent(sum, t->total, p1, sizeof(p1));
	while (*pct == ' ')
		pct++;
	if (t->note)
		fprintf(out, "Note: %s\n", t->note);
	fprintf(out, "Showing nodes accounting for %s, %s of %s total\n",
		format_value(sum, unit, tu, v1, sizeof(v1)), pct,
		format_value(t->total, unit, tu, v2, sizeof(v2)));
	if (dropped)
		fprintf(out, "Dropped %zu nodes (cum < %s, %.1f%% of the total; --rows all shows "
			"them)\n", dropped,
			format_value((uint64_t)(min_cum * (double)t->total), unit, tu, v1, sizeof(v1)),
			100 * min_cum);
	if (t->total && shown < kept)
		fprintf(out, "Showing top %zu nodes out of %zu\n", shown, kept);
	if (t->nevents > 1)
		extra_legend(t, &x, out);
	fprintf(out, "%10s %5s%% %5s%% %10s %5s%%", "flat", "flat", "sum", "cum", "cum");
	if (t->nevents > 1) {
		for (k = 0; k < x.nev; k++)
			fprintf(out, " %*s", x.width[k], t->ev_name[x.ev[k]]);
		for (k = 0; k < x.nratios; k++)
			fprintf(out, " %*s", x.rwidth[k], x.ratios[k].label);
		if (x.off >= 0)
			fprintf(out, " %10s %10s", "offcpu cum", "wall cum");
	}
	fprintf(out, "\n");

	sum = 0;
	for (i = 0; i < shown; i++) {
		const struct top_row *r = ROW(i);

		sum += r->flat;
		fprintf(out, "%10s %s %s %10s %s",
			format_value(r->flat, unit, tu, v1, sizeof(v1)),
			format_percent(r->flat, t->total, p1, sizeof(p1)),
			format_percent(sum, t->total, p2, sizeof(p2)),
			format_value(r->cum, unit, tu, v2, sizeof(v2)),
			format_percent(r->cum, t->total, p3, sizeof(p3)));
		if (t->nevents > 1) {
			for (k = 0; k < x.nev; k++)
				fprintf(out, " %*s", x.width[k],
					format_value(r->ev_flat[x.ev[k]], t->ev_unit[x.ev[k]], x.tu[k],
						     v1, sizeof(v1)));
			for (k = 0; k < x.nratios; k++)
				fprintf(out, " %*s", x.rwidth[k],
					ratio_format(&x.ratios[k], r->ev_flat, v1, sizeof(v1)));
			if (x.off >= 0) {
				fprintf(out, " %10s", format_value(r->ev_cum[x.off], "nanoseconds",
								   x.wall_tu, v1, sizeof(v1)));
				fprintf(out, " %10s", format_value(r->ev_cum[x.off] + r->ev_cum[x.on],
								   "nanoseconds", x.wall_tu, v1,
								   sizeof(v1)));
			}
		}
		fputs("  ", out);
		term_fputs(r->name, out); /* a target's symbol may hold escape sequences */
		fputc('\n', out);
	}
#undef ROW
	free(vrows);
}
