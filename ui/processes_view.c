/*
 * processes_view.c - `p` (and where `-a` opens): the processes of the
 * current window, tiptop-style: pid, command name, threads with samples,
 * samples, the shown event and its share, and with several events each
 * other event's estimate and the ratios they allow (IPC~, miss%~,
 * br-miss%~: ratios.h) per process. Enter shows the chosen process's
 * functions (the first line, "all", every process's); Esc on the function
 * table comes back here.
 */
#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "crt.h"
#include "pmutop/profile/proc_table.h"
#include "pmutop/profile/ratios.h"
#include "view.h"

/* Width of one optional column (another event, a ratio), separator included. */
#define OPT_W 10

static const char *const procs_keys[] = {
	"Enter", "Functions ", "Esc", "Back ", "i", "Window ", "e", "Event ", "Spc", "Pause ",
	"q", "Quit", NULL,
};

/* Does the row stand for the process the table is restricted to? */
static bool is_current(const struct view_ctx *v, size_t i)
{
	uint32_t pid = model_process(v->m);

	return i ? pid && pid == v->procs->rows[i - 1].pid : !pid;
}

void processes_view_draw(const struct view_ctx *v)
{
	const struct proc_table *pt = v->procs;
	const char *unit = v->unit;
	const char *names[PMUTOP_MAX_EVENTS];
	struct ratio r[RATIOS_MAX];
	size_t n = pt->nrows + 1, first, i, k, nr = 0, nopt = 0, nev;
	int y = frame_header(v), rows, x, room;
	char val[16], p[16];

	nev = pt->nevents > 1 ? pt->nevents : 1;
	for (k = 0; k < nev && nev > 1; k++)
		names[k] = pt->ev_name[k];
	if (nev > 1)
		nr = ratios_find(names, nev, r);
	/* Optional columns while they fit beside 16 characters of command. */
	room = v->cols - 57;
	nopt = room > 0 ? (size_t)room / OPT_W : 0;

	attrset(crt_attr(CRT_TITLE));
	mvhline(y, 0, ' ', v->cols);
	x = frame_printf(y, 0, crt_attr(CRT_TITLE), "%8s %-16s %4s %9s %8s %6s", "pid", "command",
			 "thr", "samples", nev > 1 ? names[pt->key] : "events", "share");
	for (k = 0, i = 0; nev > 1 && k < nev && i < nopt; k++) {
		if (k == pt->key)
			continue;
		i++;
		x = frame_printf(y, x, crt_attr(CRT_TITLE), " %*.*s", OPT_W - 1, OPT_W - 1, names[k]);
	}
	for (k = 0; k < nr && i < nopt; k++, i++)
		x = frame_printf(y, x, crt_attr(CRT_TITLE), " %*s", OPT_W - 1, r[k].label);
	y++;
	rows = v->lines - 1 - y;
	if (nr && nev - 1 + nr <= nopt && rows > 3) {
		rows--;
		frame_put(v->lines - 2, 0, crt_attr(CRT_DIM),
			  "~ ratios of each process's sampled estimates; - no data");
	}
	if (rows < 1)
		rows = 1;
	if (v->proc_sel < *v->proc_top)
		*v->proc_top = v->proc_sel;
	else if (v->proc_sel >= *v->proc_top + (size_t)rows)
		*v->proc_top = v->proc_sel - (size_t)rows + 1;
	first = *v->proc_top;
	for (i = first; i < n && (int)(i - first) < rows; i++) {
		int yy = y + (int)(i - first);
		bool sel = i == v->proc_sel, cur = is_current(v, i);
		int attr = sel ? crt_attr(CRT_SELECTED) : cur ? crt_attr(CRT_HEADER_VALUE)
							      : crt_attr(CRT_NORMAL);
		const struct proc_row *row = i ? &pt->rows[i - 1] : NULL;
		uint64_t w = row ? row->weight : pt->total;
		size_t shown = 0;
		char pid[16];

		if (sel) {
			attrset(attr);
			mvhline(yy, 0, ' ', v->cols);
		}
		if (row && row->pid)
			snprintf(pid, sizeof(pid), "%u", row->pid);
		else
			snprintf(pid, sizeof(pid), "%s", row ? "?" : "all");
		x = frame_printf(yy, 0, attr, "%8s %-16s ", pid,
				 row ? (row->comm[0] ? row->comm : "?") : "(every process)");
		if (row)
			x = frame_printf(yy, x, attr, "%4u", row->nthreads);
		else
			x = frame_printf(yy, x, attr, "%4s", "");
		x = frame_printf(yy, x, attr, " %9llu %8s %6s",
				 (unsigned long long)(row ? row->samples : pt->samples),
				 model_fmt_value(w, unit, val, sizeof(val)),
				 model_fmt_percent(w, pt->total, p, sizeof(p)));
		for (k = 0; k < nev && nev > 1 && shown < nopt; k++) {
			if (k == pt->key)
				continue;
			shown++;
			x = frame_printf(yy, x, attr, " %*s", OPT_W - 1,
					 model_fmt_value(row ? row->ev[k] : pt->ev_total[k],
							 pt->ev_unit[k], val, sizeof(val)));
		}
		for (k = 0; k < nr && shown < nopt; k++, shown++)
			x = frame_printf(yy, x, attr, " %*s", OPT_W - 1,
					 ratio_format(&r[k], row ? row->ev : pt->ev_total, val,
						      sizeof(val)));
		if (cur)
			frame_put(yy, x, attr, "  *");
	}
	if (n == 1)
		frame_put(y + 2, 2, crt_attr(CRT_DIM), "no process has samples in this window yet");
	frame_footer(v, procs_keys);
}
