/*
 * threads_view.c - `t`: choose the thread the view is restricted to, from
 * the threads that have samples, with their names, samples since start and
 * share of the events in the current window. The first line is "all".
 */
#include <curses.h>
#include <stdio.h>

#include "crt.h"
#include "pmutop/profile/aggregate.h"
#include "view.h"

static const char *const threads_keys[] = {
	"Enter", "Choose ", "Esc", "Back ", "i", "Window ", "Spc", "Pause ", "q", "Quit", NULL,
};

void threads_view_draw(struct tui *t)
{
	const char *unit = tui_unit(t);
	int y = frame_header(t), rows;
	size_t n = t->nthreads + 1, first, i;
	uint64_t total = 0;
	char v[16], p[16];

	for (i = 0; i < t->nthreads; i++)
		total += t->threads[i].weight;
	attrset(crt_attr(CRT_TITLE));
	mvhline(y, 0, ' ', COLS);
	frame_printf(y, 0, crt_attr(CRT_TITLE), "%8s %-16s %10s %8s %6s", "tid", "name", "samples",
		     "events", "share");
	y++;
	rows = LINES - 1 - y;
	if (rows < 1)
		rows = 1;
	if (t->thread_sel >= n)
		t->thread_sel = n - 1;
	if (t->thread_sel < t->thread_top)
		t->thread_top = t->thread_sel;
	else if (t->thread_sel >= t->thread_top + (size_t)rows)
		t->thread_top = t->thread_sel - (size_t)rows + 1;
	first = t->thread_top;
	for (i = first; i < n && (int)(i - first) < rows; i++) {
		int yy = y + (int)(i - first);
		bool sel = i == t->thread_sel;
		bool current = i ? model_thread(t->m) == t->threads[i - 1].tid : !model_thread(t->m);
		int attr = sel ? crt_attr(CRT_SELECTED) : current ? crt_attr(CRT_HEADER_VALUE) : crt_attr(CRT_NORMAL);

		if (sel) {
			attrset(attr);
			mvhline(yy, 0, ' ', COLS);
		}
		if (!i) {
			uint64_t samples = 0;
			size_t j;

			for (j = 0; j < t->nthreads; j++)
				samples += t->threads[j].samples;
			frame_printf(yy, 0, attr, "%8s %-16s %10llu %8s %6s%s", "all", "(every thread)",
				     (unsigned long long)samples, model_fmt_value(total, unit, v, sizeof(v)),
				     model_fmt_percent(total, total, p, sizeof(p)), current ? "  *" : "");
			continue;
		}
		frame_printf(yy, 0, attr, "%8u %-16s %10llu %8s %6s%s", t->threads[i - 1].tid,
			     t->threads[i - 1].name[0] ? t->threads[i - 1].name : "?",
			     (unsigned long long)t->threads[i - 1].samples,
			     model_fmt_value(t->threads[i - 1].weight, unit, v, sizeof(v)),
			     model_fmt_percent(t->threads[i - 1].weight, total, p, sizeof(p)),
			     current ? "  *" : "");
	}
	frame_footer(t, threads_keys);
}
