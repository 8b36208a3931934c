/*
 * top_view.c - the main screen: header, the flat/cum table of functions
 * (pprof's columns: flat, flat%, sum%, cum, cum%, function (module)), and
 * the footer. The counts are event counts (samples x period).
 *
 * With several events (-e a,b,c) flat/cum are the shown event's (`e`
 * cycles it), and optional columns follow cum%: the flat estimate of each
 * other event, then the ratios the events allow (ratios.h: IPC~, miss%~,
 * br-miss%~, with a footnote saying they are estimates). When the terminal
 * is too narrow for them and MIN_NAME characters of function name, the
 * widest optional columns go first.
 */
#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "crt.h"
#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/ratios.h"
#include "view.h"

/* Width of the numeric column titles, before "function (module)". */
#define TITLE_PREFIX 40
/* Function name characters kept visible when optional columns compete. */
#define MIN_NAME 16
/* Widths of the base columns a narrow terminal drops, separator included. */
#define SUM_W 7
#define CUM_PCT_W 7
#define CUM_W 9

/* The optional columns of a multi-event screen, as laid out for the width. */
struct opt_cols {
	size_t n;
	int width;                        /* of the shown ones, separators included */
	struct {
		bool is_ratio;
		bool is_wall;             /* on + off CPU cum (ev: on, ev2: off) */
		unsigned ev, ev2;         /* event column: the event */
		struct ratio r;           /* ratio column */
		const char *title;
		int w;
		bool shown;
	} c[PMUTOP_MAX_EVENTS + RATIOS_MAX + 1];
	bool any_ratio;                   /* a ratio column is shown: the footnote */
	/*
	 * The base columns: flat and flat% always; sum%, then cum%, then cum
	 * go when the terminal is too narrow for MIN_NAME characters of name.
	 */
	bool sum, cum_pct, cum;
	int prefix;                       /* width before the name, with its two spaces */
};

static void layout(const struct view_ctx *v, struct opt_cols *o)
{
	const struct agg_info *info = v->info;
	size_t nev = model_nevents(v->m), k;
	const char *names[PMUTOP_MAX_EVENTS];
	struct ratio r[RATIOS_MAX];
	size_t nr;
	int room;

	memset(o, 0, sizeof(*o));
	o->sum = o->cum_pct = o->cum = true;
	o->prefix = TITLE_PREFIX;
	if (v->cols - o->prefix < MIN_NAME) {
		o->sum = false;
		o->prefix -= SUM_W;
	}
	if (v->cols - o->prefix < MIN_NAME) {
		o->cum_pct = false;
		o->prefix -= CUM_PCT_W;
	}
	if (v->cols - o->prefix < MIN_NAME) {
		o->cum = false;
		o->prefix -= CUM_W;
	}
	room = v->cols - o->prefix - MIN_NAME;
	if (nev < 2 || nev > info->nevents)
		return;
	for (k = 0; k < nev; k++) {
		names[k] = info->events[k].name ? info->events[k].name : "?";
		if (k == model_event(v->m))
			continue;
		o->c[o->n].ev = (unsigned)k;
		o->c[o->n].title = names[k];
		o->c[o->n].w = (int)strlen(names[k]) > 8 ? (int)strlen(names[k]) : 8;
		o->n++;
	}
	{
		const char *units[PMUTOP_MAX_EVENTS];
		unsigned on, off;

		for (k = 0; k < nev; k++)
			units[k] = info->events[k].unit;
		/* -e task-clock,offcpu: a function's wall time, on + off CPU (cum). */
		if (top_table_wall_events(names, units, nev, &on, &off)) {
			o->c[o->n].is_wall = true;
			o->c[o->n].ev = on;
			o->c[o->n].ev2 = off;
			o->c[o->n].title = "wall cum";
			o->c[o->n].w = 8;
			o->n++;
		}
	}
	nr = ratios_find(names, nev, r);
	for (k = 0; k < nr; k++) {
		o->c[o->n].is_ratio = true;
		o->c[o->n].r = r[k];
		o->c[o->n].title = r[k].label;
		o->c[o->n].w = (int)strlen(r[k].label) > 6 ? (int)strlen(r[k].label) : 6;
		o->n++;
	}
	for (k = 0; k < o->n; k++) {
		o->c[k].shown = true;
		o->width += o->c[k].w + 1;
	}
	/* Too wide: drop the widest (the last of equals) until the rest fit. */
	while (o->width > room) {
		size_t widest = o->n;

		for (k = 0; k < o->n; k++)
			if (o->c[k].shown && (widest == o->n || o->c[k].w >= o->c[widest].w))
				widest = k;
		if (widest == o->n)
			break;
		o->c[widest].shown = false;
		o->width -= o->c[widest].w + 1;
	}
	for (k = 0; k < o->n; k++)
		o->any_ratio |= o->c[k].shown && o->c[k].is_ratio;
}

static const char *const top_keys[] = {
	"?", "Help ", "f/c", "Sort ", "i", "Window ", "Enter", "Callers ", "/", "Filter ",
	"t", "Thread ", "z", "Reset ", "Spc", "Pause ", "w", "Write ", "q", "Quit", NULL,
};

/* A saved profile has no intervals and nothing to reset or pause. */
static const char *const load_keys[] = {
	"?", "Help ", "f/c", "Sort ", "Enter", "Callers ", "/", "Filter ", "t", "Thread ",
	"w", "Write ", "q", "Quit", NULL,
};

static int share_attr(uint64_t v, uint64_t total)
{
	double r = total ? (double)v / (double)total : 0;

	if (r >= 0.10)
		return crt_attr(CRT_HOT);
	if (r >= 0.01)
		return crt_attr(CRT_WARM);
	return crt_attr(CRT_NORMAL);
}

static void draw_row(const struct view_ctx *v, const struct opt_cols *o, int y, size_t i,
		     bool selected)
{
	const struct top_row *r = model_row(v->m, i);
	const char *unit = v->unit;
	const char *mod = model_basename(r->module ? r->module : r->file);
	uint64_t total = model_total(v->m);
	const struct agg_info *info = v->info;
	char f[16], fp[16], sp[16], c[16], cp[16];
	int x, plain = crt_attr(CRT_NORMAL), hot = share_attr(r->flat, total), dim = crt_attr(CRT_DIM);

	model_fmt_value(r->flat, unit, f, sizeof(f));
	model_fmt_percent(r->flat, total, fp, sizeof(fp));
	model_fmt_percent(model_sum(v->m, i), total, sp, sizeof(sp));
	model_fmt_value(r->cum, unit, c, sizeof(c));
	model_fmt_percent(r->cum, total, cp, sizeof(cp));
	if (selected) {
		plain = hot = dim = crt_attr(CRT_SELECTED);
		attrset(plain);
		mvhline(y, 0, ' ', v->cols);
	}
	x = frame_printf(y, 0, plain, "%8s ", f);
	x = frame_put(y, x, hot, fp);
	if (o->sum)
		x = frame_printf(y, x, plain, " %6s", sp);
	if (o->cum)
		x = frame_printf(y, x, plain, " %8s", c);
	if (o->cum_pct)
		x = frame_printf(y, x, plain, " %6s", cp);
	for (size_t k = 0; k < o->n; k++) {
		char val[16];

		if (!o->c[k].shown)
			continue;
		if (o->c[k].is_ratio)
			ratio_format(&o->c[k].r, r->ev_flat, val, sizeof(val));
		else if (o->c[k].is_wall)
			model_fmt_value(r->ev_cum[o->c[k].ev] + r->ev_cum[o->c[k].ev2], "nanoseconds",
					val, sizeof(val));
		else
			model_fmt_value(r->ev_flat[o->c[k].ev], info->events[o->c[k].ev].unit, val,
					sizeof(val));
		x = frame_printf(y, x, plain, " %*s", o->c[k].w, val);
	}
	x = frame_put(y, x, plain, "  ");
	x = frame_put(y, x, plain, r->name);
	if (*mod)
		frame_printf(y, x, dim, " (%s)", mod);
}

/* Does ev count only while the target runs on a CPU (time, cycles, ...)? */
static bool counts_cpu_time(const struct pmu_event *ev)
{
	return !ev->offcpu && (ev->hardware || !strcmp(ev->unit, "nanoseconds"));
}

/*
 * An empty table says why and what to try: the filter, the thread, the
 * window, or (no samples at all) what the event counts - task-clock and
 * cycles count CPU time only, so a sleeping or blocked target gives none.
 */
static void explain_empty(const struct view_ctx *v, int y)
{
	const struct session_status *st = v->st;
	int dim = crt_attr(CRT_DIM), note = crt_attr(CRT_MESSAGE);
	char win[32];

	if (model_has_data(v->m) && model_total(v->m)) {
		frame_put(y, 2, dim, "no function matches the filter (Esc clears it)");
		return;
	}
	frame_window_name(v, win, sizeof(win));
	if (model_thread(v->m)) {
		frame_printf(y, 2, dim, "thread %u has no samples %s (t chooses another thread, "
			     "or all)", model_thread(v->m), win);
		return;
	}
	if (!v->live) {
		frame_put(y, 2, dim, "the saved profile has no samples");
		return;
	}
	if (model_window(v->m) == MODEL_INTERVAL && st->window.samples) {
		frame_printf(y, 2, dim, "no samples in the last interval (%.1fs): i shows the whole "
			     "window", v->refresh);
		return;
	}
	if (st->window.samples) {
		frame_put(y, 2, dim, "no samples yet");
		return;
	}
	frame_printf(y++, 2, note, "No samples %s.", st->resets ? win : "yet");
	if (counts_cpu_time(v->event))
		frame_printf(y++, 2, dim, "%s counts CPU time only: PID %d has not run on a CPU "
			     "while watched", v->event->name, (int)st->pid);
	else
		frame_printf(y++, 2, dim, "%s has not happened in PID %d while watched",
			     v->event->name, (int)st->pid);
	if (counts_cpu_time(v->event))
		frame_put(y++, 2, dim, "(it is sleeping, blocked, or waiting for I/O or a lock).");
	if (st->window.lost)
		frame_printf(y++, 2, dim, "%llu samples were lost: raise --mmap-pages or lower "
			     "--stack-size.", (unsigned long long)st->window.lost);
	y++;
	frame_printf(y++, 2, dim, "Try: pmutop --stacks -p %d  (where every thread is now, "
		     "running or not)", (int)st->pid);
	if (counts_cpu_time(v->event))
		frame_put(y++, 2, dim, "     or -e offcpu (where its threads wait, and how long), "
			  "or another event (pmutop --list-events)");
}

void top_view_draw(const struct view_ctx *v)
{
	int y = frame_header(v), rows, title = y, x;
	size_t first, i, n = model_nrows(v->m);
	char info[128];
	struct opt_cols o;

	layout(v, &o);

	/* The titles; with a filter, "function (module) /expect 6/16" (shorter if need be). */
	attrset(crt_attr(CRT_TITLE));
	mvhline(title, 0, ' ', v->cols);
	info[0] = 0;
	if (*model_filter(v->m)) {
		snprintf(info, sizeof(info), "function (module) /%s %zu/%zu", model_filter(v->m), n,
			 model_nfunctions(v->m));
		if (o.prefix + o.width + (int)strlen(info) > v->cols)
			snprintf(info, sizeof(info), "function /%s %zu/%zu", model_filter(v->m), n,
				 model_nfunctions(v->m));
	}
	x = frame_printf(title, 0, crt_attr(CRT_TITLE), "%8s %6s", "flat", "flat%");
	if (o.sum)
		x = frame_printf(title, x, crt_attr(CRT_TITLE), " %6s", "sum%");
	if (o.cum)
		x = frame_printf(title, x, crt_attr(CRT_TITLE), " %8s", "cum");
	if (o.cum_pct)
		x = frame_printf(title, x, crt_attr(CRT_TITLE), " %6s", "cum%");
	for (i = 0; i < o.n; i++)
		if (o.c[i].shown)
			x = frame_printf(title, x, crt_attr(CRT_TITLE), " %*s", o.c[i].w, o.c[i].title);
	frame_printf(title, x, crt_attr(CRT_TITLE), "  %s", info[0] ? info : "function (module)");
	y++;
	rows = v->lines - 1 - y;
	/* The footnote takes the last table line when a ratio is shown and room allows. */
	if (o.any_ratio && rows > 3) {
		rows--;
		frame_put(v->lines - 2, 0, crt_attr(CRT_DIM),
			  "~ ratios of the flat estimates: sampled counts, so estimates too; - no data");
	}
	if (rows < 1)
		rows = 1;
	first = model_scroll(v->m, (size_t)rows);
	for (i = first; i < n && (int)(i - first) < rows; i++)
		draw_row(v, &o, y + (int)(i - first), i, i == model_selected(v->m));
	if (!n)
		explain_empty(v, y + 1);
	frame_footer(v, v->live ? top_keys : load_keys);
}
