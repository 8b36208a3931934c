/*
 * help_view.c - `?`: the keys, as the loop lists them from the key table
 * itself (keys.c), so the help cannot drift from what the keys do.
 */
#include <curses.h>

#include "crt.h"
#include "view.h"

static const char *const help_keys[] = { "Esc", "Back ", "q", "Quit", NULL };

void help_view_draw(const struct view_ctx *v)
{
	size_t i;
	int y = frame_header(v), col = 0, top;

	attrset(crt_attr(CRT_TITLE));
	mvhline(y, 0, ' ', v->cols);
	frame_put(y, 0, crt_attr(CRT_TITLE), " pmutop live view - keys");
	y++;
	frame_put(y++, 1, crt_attr(CRT_DIM),
		  "Columns: flat = events in the function itself, cum = in it and its callees,");
	frame_put(y++, 1, crt_attr(CRT_DIM),
		  "sum% = running total of flat%. Counts are events (samples x period).");
	if (model_nevents(v->m) > 1)
		frame_put(y++, 1, crt_attr(CRT_DIM),
			  "Then each other event's flat, and ratios of flat estimates (~), e.g. IPC~.");
	top = y;
	for (i = 0; i < v->nkeys; i++) {
		if (y >= v->lines - 1) {
			/* Second column when the window is short and wide enough. */
			if (col || v->cols < 90)
				break;
			col = v->cols / 2;
			y = top;
		}
		frame_printf(y, col + 1, crt_attr(CRT_KEY), "%-12s", v->keys[i].label);
		frame_put(y, col + 14, crt_attr(CRT_NORMAL), v->keys[i].help);
		y++;
	}
	frame_footer(v, help_keys);
}
