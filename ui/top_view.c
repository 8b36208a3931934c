/*
 * top_view.c - the main screen: header, the flat/cum table of functions
 * (pprof's columns: flat, flat%, sum%, cum, cum%, function (module)), and
 * the footer. The counts are event counts (samples x period).
 */
#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "crt.h"
#include "pmutop/aggregate.h"
#include "view.h"

/* Width of the numeric column titles, before "function (module)". */
#define TITLE_PREFIX 40

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

static void draw_row(const struct tui *t, int y, size_t i, bool selected)
{
	const struct top_row *r = model_row(t->m, i);
	const char *unit = tui_unit(t);
	const char *mod = model_basename(r->file);
	uint64_t total = model_total(t->m);
	char f[16], fp[16], sp[16], c[16], cp[16];
	int x, plain = crt_attr(CRT_NORMAL), hot = share_attr(r->flat, total), dim = crt_attr(CRT_DIM);

	model_fmt_value(r->flat, unit, f, sizeof(f));
	model_fmt_percent(r->flat, total, fp, sizeof(fp));
	model_fmt_percent(model_sum(t->m, i), total, sp, sizeof(sp));
	model_fmt_value(r->cum, unit, c, sizeof(c));
	model_fmt_percent(r->cum, total, cp, sizeof(cp));
	if (selected) {
		plain = hot = dim = crt_attr(CRT_SELECTED);
		attrset(plain);
		mvhline(y, 0, ' ', COLS);
	}
	x = frame_printf(y, 0, plain, "%8s ", f);
	x = frame_put(y, x, hot, fp);
	x = frame_printf(y, x, plain, " %6s %8s %6s  ", sp, c, cp);
	x = frame_put(y, x, plain, r->name);
	if (*mod)
		frame_printf(y, x, dim, " (%s)", mod);
}

void top_view_draw(struct tui *t)
{
	int y = frame_header(t), rows, title = y;
	size_t first, i, n = model_nrows(t->m);
	char info[128];

	/* The titles; with a filter, "function (module) /expect 6/16" (shorter if need be). */
	attrset(crt_attr(CRT_TITLE));
	mvhline(title, 0, ' ', COLS);
	info[0] = 0;
	if (*model_filter(t->m)) {
		snprintf(info, sizeof(info), "function (module) /%s %zu/%zu", model_filter(t->m), n,
			 model_nfunctions(t->m));
		if (TITLE_PREFIX + (int)strlen(info) > COLS)
			snprintf(info, sizeof(info), "function /%s %zu/%zu", model_filter(t->m), n,
				 model_nfunctions(t->m));
	}
	frame_printf(title, 0, crt_attr(CRT_TITLE), "%8s %6s %6s %8s %6s  %s", "flat", "flat%",
		     "sum%", "cum", "cum%", info[0] ? info : "function (module)");
	y++;
	rows = LINES - 1 - y;
	if (rows < 1)
		rows = 1;
	first = model_scroll(t->m, (size_t)rows);
	for (i = first; i < n && (int)(i - first) < rows; i++)
		draw_row(t, y + (int)(i - first), i, i == model_selected(t->m));
	if (!n) {
		const char *why;

		if (!model_has_data(t->m) || !model_total(t->m))
			why = model_window(t->m) == MODEL_INTERVAL ? "no samples in the last interval"
								   : "no samples yet";
		else
			why = "no function matches the filter";
		frame_put(y + 1, 2, crt_attr(CRT_DIM), why);
	}
	frame_footer(t, t->s ? top_keys : load_keys);
}
