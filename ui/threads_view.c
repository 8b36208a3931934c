/*
 * threads_view.c - `t`: choose the thread the view is restricted to, from
 * every thread the view knows (the target's live threads, sampled or not,
 * and those in the profile), with their names and their samples, events and
 * share in the current window. The first line is "all".
 */
#include <curses.h>
#include <stdio.h>

#include "crt.h"
#include "pmutop/profile/aggregate.h"
#include "view.h"

static const char *const threads_keys[] = {
	"Enter", "Choose ", "Esc", "Back ", "i", "Window ", "Spc", "Pause ", "q", "Quit", NULL,
};

void threads_view_draw(const struct view_ctx *v)
{
	const char *unit = v->unit;
	int y = frame_header(v), rows;
	size_t n = v->nthreads + 1, first, i;
	uint64_t total = 0;
	char val[16], p[16];

	for (i = 0; i < v->nthreads; i++)
		total += v->threads[i].weight;
	attrset(crt_attr(CRT_TITLE));
	mvhline(y, 0, ' ', v->cols);
	frame_printf(y, 0, crt_attr(CRT_TITLE), "%8s %-16s %10s %8s %6s", "tid", "name", "samples",
		     "events", "share");
	y++;
	rows = v->lines - 1 - y;
	if (rows < 1)
		rows = 1;
	if (v->thread_sel < *v->thread_top)
		*v->thread_top = v->thread_sel;
	else if (v->thread_sel >= *v->thread_top + (size_t)rows)
		*v->thread_top = v->thread_sel - (size_t)rows + 1;
	first = *v->thread_top;
	for (i = first; i < n && (int)(i - first) < rows; i++) {
		int yy = y + (int)(i - first);
		bool sel = i == v->thread_sel;
		bool current = i ? model_thread(v->m) == v->threads[i - 1].tid : !model_thread(v->m);
		int attr = sel ? crt_attr(CRT_SELECTED) : current ? crt_attr(CRT_HEADER_VALUE) : crt_attr(CRT_NORMAL);

		if (sel) {
			attrset(attr);
			mvhline(yy, 0, ' ', v->cols);
		}
		if (!i) {
			uint64_t samples = 0;
			size_t j;

			for (j = 0; j < v->nthreads; j++)
				samples += v->threads[j].samples;
			frame_printf(yy, 0, attr, "%8s %-16s %10llu %8s %6s%s", "all", "(every thread)",
				     (unsigned long long)samples, model_fmt_value(total, unit, val, sizeof(val)),
				     model_fmt_percent(total, total, p, sizeof(p)), current ? "  *" : "");
			continue;
		}
		frame_printf(yy, 0, attr, "%8u %-16s %10llu %8s %6s%s", v->threads[i - 1].tid,
			     v->threads[i - 1].name[0] ? v->threads[i - 1].name : "?",
			     (unsigned long long)v->threads[i - 1].samples,
			     model_fmt_value(v->threads[i - 1].weight, unit, val, sizeof(val)),
			     model_fmt_percent(v->threads[i - 1].weight, total, p, sizeof(p)),
			     current ? "  *" : "");
	}
	frame_footer(v, threads_keys);
}
