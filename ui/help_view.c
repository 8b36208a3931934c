/*
 * help_view.c - `?`: the keys, listed from the key table itself (keys.c),
 * so the help cannot drift from what the keys do.
 */
#include <curses.h>

#include "crt.h"
#include "view.h"

static const char *const help_keys[] = { "Esc", "Back ", "q", "Quit", NULL };

void help_view_draw(struct tui *t)
{
	const struct key_binding *kb;
	size_t n, i;
	int y = frame_header(t), col = 0, top;

	attrset(crt_attr(CRT_TITLE));
	mvhline(y, 0, ' ', COLS);
	frame_put(y, 0, crt_attr(CRT_TITLE), " pmutop live view - keys");
	y++;
	frame_put(y++, 1, crt_attr(CRT_DIM),
		  "Columns: flat = events in the function itself, cum = in it and its callees,");
	frame_put(y++, 1, crt_attr(CRT_DIM),
		  "sum% = running total of flat%. Counts are events (samples x period).");
	if (model_nevents(t->m) > 1)
		frame_put(y++, 1, crt_attr(CRT_DIM),
			  "Then each other event's flat, and ratios of flat estimates (~), e.g. IPC~.");
	top = y;
	kb = keys_table(&n);
	for (i = 0; i < n; i++) {
		if (!kb[i].label)
			continue;
		if (y >= LINES - 1) {
			/* Second column when the window is short and wide enough. */
			if (col || COLS < 90)
				break;
			col = COLS / 2;
			y = top;
		}
		frame_printf(y, col + 1, crt_attr(CRT_KEY), "%-12s", kb[i].label);
		frame_put(y, col + 14, crt_attr(CRT_NORMAL), kb[i].help);
		y++;
	}
	frame_footer(t, help_keys);
}
