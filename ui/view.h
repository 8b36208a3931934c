/*
 * view.h - what the live view's screens are given to draw.
 *
 * The loop (tui.c) owns the state (state.h) and, before every draw, fills a
 * struct view_ctx with everything a screen shows: the profile and its model,
 * the unit and event, the run's status, the screen size, the message line
 * and the screen's own list. Screens (top_view.c, callers_view.c,
 * threads_view.c, help_view.c and the frame around them, frame.c) only draw
 * from it: they never call back into the loop or the key handlers, so the
 * dependencies run one way, tui.c -> screens -> frame.c -> crt.c, and a new
 * screen (the per-process list, say) is a new drawing function over the same
 * context plus whatever list it shows.
 */
#ifndef PMUTOP_UI_VIEW_H
#define PMUTOP_UI_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "pmutop/frontend/session.h"

struct aggregate;
struct agg_info;
struct annotation;

enum tui_screen {
	SCREEN_TOP = 1 << 0,
	SCREEN_CALLERS = 1 << 1,
	SCREEN_THREADS = 1 << 2,
	SCREEN_HELP = 1 << 3,
	SCREEN_ANNOTATE = 1 << 4,
	SCREEN_PROCS = 1 << 5,
};
#define SCREEN_ANY (SCREEN_TOP | SCREEN_CALLERS | SCREEN_THREADS | SCREEN_HELP | SCREEN_ANNOTATE | \
		    SCREEN_PROCS)

/* A line of the help screen: a key (or keys) and what it does. */
struct view_key_help {
	const char *label;
	const char *help;
};

struct view_ctx {
	/* The screen: lines and columns, curses' LINES and COLS at draw time. */
	int lines, cols;
	enum tui_screen screen;

	/* The data. Screens read the model and may only scroll it. */
	const struct aggregate *agg;      /* the profile being shown */
	const struct agg_info *info;      /* its run facts */
	struct model *m;
	const char *unit;                 /* unit of the shown event ("count", ...) */

	/* Where it comes from: the header. */
	const char *subject;              /* "PID 4242: ./shares 60", "profile f.pb.gz" */
	bool live;                        /* a session (running or ended), not a saved profile */
	const struct session_status *st;  /* live: status as of the last tick; else NULL */
	const struct pmu_event *event;    /* live: the shown event; else NULL */
	uint64_t period;                  /* live: its period (Hz with st->freq) */
	unsigned event_index;             /* the shown event, 0-based */
	size_t nevents;                   /* events in the run */
	double rate;                      /* samples/s over the last interval */
	double refresh;                   /* seconds between ticks (--refresh) */
	bool paused, ended;

	/* The message/notice line: NULL when nothing is to be said. */
	const char *msg;
	bool msg_error;
	/* Standing notes of the run (session_status.notes: the event fallback), "" if none. */
	const char *notes;
	/* The "/" editor: the text being typed, NULL when not editing. */
	const char *edit;

	/* The callers screen: the focused function's edges (NULL: none in the window). */
	const struct model_edges *edges;
	size_t edge_sel;
	size_t *edge_top;                 /* first line shown; the screen scrolls it */

	/* The threads screen: threads[0..nthreads), "all" being line 0. */
	const struct model_thread *threads;
	size_t nthreads;
	size_t thread_sel;
	size_t *thread_top;

	/* The processes screen: procs->rows, "all" being line 0. */
	const struct proc_table *procs;
	size_t proc_sel;
	size_t *proc_top;

	/* The annotate screen: the listing, the selected instruction. */
	struct annotation *ann;
	size_t ann_sel;
	size_t *ann_top;

	/* The help screen. */
	const struct view_key_help *keys;
	size_t nkeys;
};

/* frame.c: the header (returns the first free line) and the footer. */
int frame_header(const struct view_ctx *v);
void frame_footer(const struct view_ctx *v, const char *const *keys);
/* The window the table shows: "since start", "since z at 12s", "last interval". */
const char *frame_window_name(const struct view_ctx *v, char *buf, size_t len);
/* Draw text clipped to the screen width at (y, x); returns the next x. */
int frame_put(int y, int x, int attr, const char *s);
/* frame_put with printf formatting. */
int frame_printf(int y, int x, int attr, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The screens. */
void top_view_draw(const struct view_ctx *v);
void callers_view_draw(const struct view_ctx *v);
void threads_view_draw(const struct view_ctx *v);
void help_view_draw(const struct view_ctx *v);
void annotate_view_draw(const struct view_ctx *v);
void processes_view_draw(const struct view_ctx *v);

#endif
