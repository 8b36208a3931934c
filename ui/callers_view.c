/*
 * callers_view.c - Enter on a function: who calls it and what it calls,
 * with the events each edge carries and its share of the function's cum.
 *
 *   main (shares)                     flat 0 (0.0%)   cum 5.00s (100.0%)
 *     events  share total%  callers / callees
 *   Callers
 *      5.00s 100.0%  (root)
 *   Callees
 *      2.50s  50.0%  f10_expect_18_18 (shares)
 *
 * Enter on a caller or callee moves the focus there (Esc comes back).
 */
#include <curses.h>
#include <stdio.h>

#include "crt.h"
#include "pmutop/profile/aggregate.h"
#include "view.h"

static const char *const callers_keys[] = {
	"Enter", "Focus ", "Esc", "Back ", "f/c", "Sort ", "i", "Window ", "t", "Thread ",
	"Spc", "Pause ", "w", "Write ", "q", "Quit", NULL,
};

/* Display line of edge k (callers first, each list under its label). */
static size_t edge_line(const struct model_edges *e, size_t k)
{
	return k < e->ncallers ? 1 + k : 2 + k;
}

static void draw_edge(const struct view_ctx *v, int y, const struct model_edge *ed, bool selected)
{
	const char *unit = v->unit;
	const char *mod = model_basename(ed->file);
	char val[16], p1[16], p2[16];
	int x, plain = crt_attr(CRT_NORMAL), dim = crt_attr(CRT_DIM);

	if (selected) {
		plain = dim = crt_attr(CRT_SELECTED);
		attrset(plain);
		mvhline(y, 0, ' ', v->cols);
	}
	x = frame_printf(y, 0, plain, "%8s %6s %6s  ", model_fmt_value(ed->weight, unit, val, sizeof(val)),
			 model_fmt_percent(ed->weight, v->edges->cum, p1, sizeof(p1)),
			 model_fmt_percent(ed->weight, v->edges->total, p2, sizeof(p2)));
	x = frame_put(y, x, ed->function_id ? plain : dim, ed->name);
	if (*mod)
		frame_printf(y, x, dim, " (%s)", mod);
}

void callers_view_draw(const struct view_ctx *v)
{
	const struct model_edges *e = v->edges;
	const char *unit = v->unit;
	int y = frame_header(v), rows;
	size_t nlines, first, line, sel_line, k;
	char v1[16], v2[16], p1[16], p2[16];
	int x;

	if (!e) {
		frame_put(y + 1, 2, crt_attr(CRT_DIM),
			  "this function has no samples in the current window (Esc goes back)");
		frame_footer(v, callers_keys);
		return;
	}
	/* The function in focus, then the titles right above the rows they name. */
	x = frame_put(y, 0, crt_attr(CRT_HEADER_VALUE), e->name);
	if (*model_basename(e->file))
		x = frame_printf(y, x, crt_attr(CRT_DIM), " (%s)", model_basename(e->file));
	frame_printf(y, x, crt_attr(CRT_NORMAL), "   flat %s (%s)  cum %s (%s)",
		     model_fmt_value(e->flat, unit, v1, sizeof(v1)),
		     model_fmt_percent(e->flat, e->total, p1, sizeof(p1)),
		     model_fmt_value(e->cum, unit, v2, sizeof(v2)),
		     model_fmt_percent(e->cum, e->total, p2, sizeof(p2)));
	y++;
	attrset(crt_attr(CRT_TITLE));
	mvhline(y, 0, ' ', v->cols);
	frame_printf(y, 0, crt_attr(CRT_TITLE), "%8s %6s %6s  %s", "events", "share", "total%",
		     "callers / callees");
	y++;

	/* Lines: "Callers", callers..., "Callees", callees... */
	nlines = e->ncallers + e->ncallees + 2;
	rows = v->lines - 1 - y;
	if (rows < 1)
		rows = 1;
	sel_line = edge_line(e, v->edge_sel);
	if (sel_line < *v->edge_top + 1)
		*v->edge_top = sel_line ? sel_line - 1 : 0;  /* show the label above, if any */
	else if (sel_line >= *v->edge_top + (size_t)rows)
		*v->edge_top = sel_line - (size_t)rows + 1;
	if (*v->edge_top + (size_t)rows > nlines)
		*v->edge_top = nlines > (size_t)rows ? nlines - (size_t)rows : 0;
	first = *v->edge_top;
	for (line = first; line < nlines && (int)(line - first) < rows; line++) {
		int yy = y + (int)(line - first);

		if (line == 0) {
			frame_printf(yy, 0, crt_attr(CRT_HEADER_LABEL), "Callers (%zu)", e->ncallers);
			continue;
		}
		if (line == e->ncallers + 1) {
			frame_printf(yy, 0, crt_attr(CRT_HEADER_LABEL), "Callees (%zu)", e->ncallees);
			continue;
		}
		k = line <= e->ncallers ? line - 1 : line - 2;
		draw_edge(v, yy, k < e->ncallers ? &e->callers[k] : &e->callees[k - e->ncallers],
			  k == v->edge_sel);
	}
	frame_footer(v, callers_keys);
}
