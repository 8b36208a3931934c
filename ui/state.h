/*
 * state.h - the live view's state and the changes made to it: shared by
 * the loop (tui.c) and the key table (keys.c), never by the screens, which
 * get a struct view_ctx (view.h) and only draw.
 *
 * The state is plain data; the model (model.h) holds everything that is
 * computed from the profile.
 */
#ifndef PMUTOP_UI_STATE_H
#define PMUTOP_UI_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "pmutop/frontend/session.h"
#include "view.h"

struct aggregate;
struct pmutop_opts;

/* What a key handler asks the loop to do (bits). */
enum reaction {
	REACT_NONE = 0,
	REACT_REDRAW = 1 << 0,  /* draw the screen again */
	REACT_TICK = 1 << 1,    /* take fresh data from the profile now */
	REACT_QUIT = 1 << 2,
};

#define CALLERS_HISTORY 64

struct tui {
	const struct pmutop_opts *o;
	struct session *s;             /* live mode; NULL with --load */
	struct aggregate *loaded;      /* --load: the saved profile */
	const char *load_path;
	struct model *m;

	enum tui_screen screen;
	enum tui_screen help_from;        /* where Esc leaves the help screen to */
	bool paused;
	bool ended;                    /* the session stopped (target exit, duration) */
	bool final_tick_done;

	/* The "/" line editor. */
	bool editing;
	char edit[128];
	size_t edit_len;
	char edit_saved[128];          /* the filter before editing (Esc restores it) */

	/* Callers/callees: the function in focus, and where Enter came from. */
	uint32_t focus;
	uint32_t history[CALLERS_HISTORY];
	size_t nhistory;
	struct model_edges edges;
	bool have_edges;
	size_t edge_sel, edge_top;

	/* Annotate: a function's instructions (a snapshot), from a screen. */
	struct annotation *ann;
	enum tui_screen ann_from;
	size_t ann_sel, ann_top;

	/* Threads list. */
	struct model_thread *threads;
	size_t nthreads;
	size_t thread_sel, thread_top; /* 0 = "all threads", i = threads[i - 1] */

	/* Processes list (p; where -a opens). */
	struct proc_table procs;
	size_t proc_sel, proc_top;     /* 0 = "all processes", i = procs.rows[i - 1] */
	uint32_t proc_sel_pid;         /* the selection follows it as rows re-sort (0: "all") */

	/* Status as of the last tick (live mode). */
	struct session_status st;
	double rate;                   /* samples/s over the last interval */
	uint64_t rate_samples;
	double rate_elapsed;

	char msg[256];                 /* a transient message under the header */
	bool msg_error;
	double msg_until;              /* monotonic seconds */

	/* The help screen's lines, from the key table (keys_table()). */
	struct view_key_help *help;
	size_t nhelp;

	int exit_code;
};

/* The aggregate being shown (re-fetched every time: a reset replaces it). */
const struct aggregate *state_aggregate(const struct tui *t);
/* Unit of the event shown ("count", "nanoseconds", ...). */
const char *state_unit(const struct tui *t);
/* Seconds on a monotonic clock. */
double state_now(void);
/* Show a message for a few seconds. */
void state_message(struct tui *t, bool error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Recompute what the current screen shows besides the model's rows. */
void state_refresh_derived(struct tui *t);

/* keys.c: dispatch one key; returns enum reaction bits. */
unsigned keys_dispatch(struct tui *t, int key);

/* The key table, for the help screen. */
struct key_binding {
	int key;                          /* curses key code or character */
	unsigned screens;                 /* enum tui_screen bits where it applies */
	unsigned (*handler)(struct tui *t, int key);
	const char *label;                /* shown in help; NULL: an alias, not listed */
	const char *help;
};
const struct key_binding *keys_table(size_t *n);

#endif
