/*
 * annotate_view.c - a on a function: its instructions, live (annotate.h).
 *
 *   cycles  instr   CPI~   address:  instruction
 *                                   two_loops.c:18   WL_SPIN(3 * N);
 *   15.54%  12.1%   1.28     118c:  shlq   $0xd, %rdx
 *
 * One column per recorded event (share of the function's samples of that
 * event at the line), CPI~ on the first line of each basic block when
 * cycles and instructions were both recorded, source lines interleaved.
 * Lines with a big share of the shown event are highlighted. The listing is
 * a snapshot taken when a was pressed: a again takes a fresh one.
 */
#include <curses.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crt.h"
#include "pmutop/profile/annotate.h"
#include "view.h"

static const char *const annotate_keys[] = {
	"Up/Dn", "Move ", "H", "Hottest ", "a", "Refresh ", "Esc", "Back ", "q", "Quit", NULL,
};

/* A display line: a source line before instruction i, or instruction i. */
struct dline {
	size_t insn;
	bool source;
};

/* The display lines of the listing; *n of them. NULL on ENOMEM. */
static struct dline *lines_of(const struct annotation *an, size_t *n)
{
	struct dline *d = calloc(2 * an->n + 1, sizeof(*d));
	const char *file = NULL;
	uint32_t line = 0;
	size_t k = 0;

	if (!d)
		return NULL;
	for (size_t i = 0; i < an->n; i++) {
		const struct ann_insn *x = &an->insns[i];

		if (x->file && (x->line != line || !file || strcmp(x->file, file))) {
			file = x->file;
			line = x->line;
			d[k++] = (struct dline){ .insn = i, .source = true };
		}
		d[k++] = (struct dline){ .insn = i, .source = false };
	}
	*n = k;
	return d;
}

static int col_width(const struct annotation *an, size_t e)
{
	int n = (int)strlen(an->ev_name[e]);

	return n < 7 ? 7 : n > 14 ? 14 : n;
}

static void draw_insn(const struct view_ctx *v, int y, size_t i, bool selected)
{
	struct annotation *an = v->ann;
	const struct ann_insn *x = &an->insns[i];
	size_t ev = v->event_index < an->nev ? v->event_index : 0;
	double share = an->total[ev] ? 100.0 * (double)x->w[ev] / (double)an->total[ev] : 0;
	int attr = selected ? crt_attr(CRT_SELECTED) : share >= 10 ? crt_attr(CRT_HOT) :
		   share >= 2 ? crt_attr(CRT_WARM) : crt_attr(CRT_NORMAL);
	char cell[24];
	int x0 = 0;

	if (selected) {
		attrset(attr);
		mvhline(y, 0, ' ', v->cols);
	}
	for (size_t e = 0; e < an->nev; e++) {
		if (x->w[e] && an->total[e])
			snprintf(cell, sizeof(cell), "%6.2f%%",
				 100.0 * (double)x->w[e] / (double)an->total[e]);
		else
			cell[0] = 0;
		x0 = frame_printf(y, x0, attr, "%*s ", col_width(an, e), cell);
	}
	if (an->cycles_ev >= 0) {
		const struct ann_block *b = &an->blocks[x->block];
		bool first = b->first == i;

		if (first && b->has_cpi)
			snprintf(cell, sizeof(cell), "%6.2f", b->cpi);
		else
			cell[0] = 0;
		x0 = frame_printf(y, x0, attr, "%6s ", cell);
	}
	x0 = frame_printf(y, x0, attr, "%8" PRIx64 ":  ", x->in.addr);
	frame_put(y, x0, attr, x->text);
}

static void draw_source(const struct view_ctx *v, int y, size_t i, int indent)
{
	struct annotation *an = v->ann;
	const struct ann_insn *x = &an->insns[i];
	const char *base = strrchr(x->file, '/');
	const char *text = annotation_source_line(an, x->file, x->line);
	char buf[256];
	int xx;

	xx = frame_printf(y, indent, crt_attr(CRT_HEADER_LABEL), "%s:%u",
			  base ? base + 1 : x->file, x->line);
	if (text) {
		size_t k = 0;

		while (*text == ' ' || *text == '\t')
			text++;
		/* Terminal control bytes from a source file are shown as '?'. */
		for (; text[k] && k + 1 < sizeof(buf); k++)
			buf[k] = (unsigned char)text[k] < 0x20 || text[k] == 0x7f ? '?' : text[k];
		buf[k] = 0;
		frame_printf(y, xx + 3, crt_attr(CRT_DIM), "%s", buf);
	}
}

void annotate_view_draw(const struct view_ctx *v)
{
	struct annotation *an = v->ann;
	int y = frame_header(v), x = 0, rows, indent = 0;
	size_t ev = v->event_index < an->nev ? v->event_index : 0, nl = 0, sel_line = 0, k;
	struct dline *d;
	char p[16];

	/* Title: the function, where its code is, its share of the profile. */
	x = frame_put(y, 0, crt_attr(CRT_HEADER_VALUE), an->func);
	if (strcmp(an->func, an->symbol))
		x = frame_printf(y, x, crt_attr(CRT_DIM), " (inlined into %s)", an->symbol);
	if (*an->path)
		x = frame_printf(y, x, crt_attr(CRT_DIM), "  %s", an->path);
	if (an->profile_total[ev])
		snprintf(p, sizeof(p), "%.1f%%", 100.0 * (double)an->total[ev] /
			 (double)an->profile_total[ev]);
	else
		snprintf(p, sizeof(p), "-");
	frame_printf(y, x, crt_attr(CRT_NORMAL), "   %s of %s, %" PRIu64 " samples", p,
		     an->ev_name[ev], an->samples);
	y++;
	/* The first note says the most (skid, inlining, JIT, no debug info). */
	if (an->nnotes)
		frame_printf(y++, 0, crt_attr(CRT_DIM), "note: %s", an->notes[0]);

	attrset(crt_attr(CRT_TITLE));
	mvhline(y, 0, ' ', v->cols);
	for (size_t e = 0; e < an->nev; e++)
		indent = frame_printf(y, indent, crt_attr(CRT_TITLE), "%*.*s ", col_width(an, e),
				      col_width(an, e), an->ev_name[e]);
	if (an->cycles_ev >= 0)
		indent = frame_printf(y, indent, crt_attr(CRT_TITLE), "%6s ", "CPI~");
	frame_printf(y, indent, crt_attr(CRT_TITLE), "%9s  %s", "address:", "instruction");
	y++;
	rows = v->lines - 1 - y;
	if (rows < 1)
		rows = 1;

	if (!an->n) {
		/* JIT or anonymous code: the sampled addresses only. */
		for (k = 0; k < an->naddrs && (int)k < rows; k++)
			frame_printf(y + (int)k, 0, crt_attr(CRT_NORMAL), "%7s  %16" PRIx64,
				     model_fmt_percent(an->addrs[k].w[ev], an->total[ev], p, sizeof(p)),
				     an->addrs[k].addr);
		frame_footer(v, annotate_keys);
		return;
	}
	d = lines_of(an, &nl);
	if (!d) {
		frame_put(y, 0, crt_attr(CRT_NOTICE), "out of memory");
		frame_footer(v, annotate_keys);
		return;
	}
	for (k = 0; k < nl; k++)
		if (!d[k].source && d[k].insn == v->ann_sel) {
			sel_line = k;
			break;
		}
	/*
	 * Keep the selection visible; when it leaves the screen (a jump to the
	 * hottest line, paging), put it a third of the way down, so the code
	 * and source line before it are in view.
	 */
	if (sel_line < *v->ann_top || sel_line >= *v->ann_top + (size_t)rows)
		*v->ann_top = sel_line > (size_t)rows / 3 ? sel_line - (size_t)rows / 3 : 0;
	if (*v->ann_top + (size_t)rows > nl)
		*v->ann_top = nl > (size_t)rows ? nl - (size_t)rows : 0;
	for (k = *v->ann_top; k < nl && (int)(k - *v->ann_top) < rows; k++) {
		int yy = y + (int)(k - *v->ann_top);

		if (d[k].source)
			draw_source(v, yy, d[k].insn, indent + 11);
		else
			draw_insn(v, yy, d[k].insn, d[k].insn == v->ann_sel);
	}
	free(d);
	frame_footer(v, annotate_keys);
}
