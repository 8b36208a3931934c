/*
 * model.h - the live view's model: what the screens show, in plain C.
 *
 * No curses here, so every rule of the view is unit-tested without a
 * terminal (tests/unit/test_ui_model.c): sorting by flat or cum, the
 * substring filter, the per-thread restriction, "since start" versus "last
 * interval", the selection and scrolling, callers/callees of a function and
 * the thread list.
 *
 * Time windows. At each refresh tick the model copies every stack's weight
 * (aggregate stacks are append-only and their weights only grow, so stack i
 * stays stack i until a reset). "Since start" is the latest copy; "last
 * interval" is the latest copy minus the one before, stack by stack. Keeping
 * per-stack rather than per-function totals costs 8 bytes per distinct
 * stack and gives exact interval numbers for any thread restriction and for
 * the callers/callees screen too, without waiting for another tick when the
 * user switches thread. With several events in the run the copies hold
 * every event's weight (nev x 8 bytes per stack), so each row carries every
 * event's flat and cum estimate (top_row.ev_flat/ev_cum) for the view's
 * per-event and ratio columns, and switching the shown event keeps both
 * windows. Everything derived (rows, edges, threads) reads the
 * copies, never the live weights, so the screen between two ticks (or while
 * paused) is a consistent picture whatever the user re-sorts or filters.
 *
 * Lifetime: the model keeps the aggregate given to model_tick() and reads
 * it again on every setting change; after session_reset() (which frees the
 * old aggregate) call model_reset() before anything else, and after
 * aggregate_maintain() rebuilt it (model_stale()) tick before anything
 * else: the copies then start a new interval.
 */
#ifndef PMUTOP_UI_MODEL_H
#define PMUTOP_UI_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmutop/profile/proc_table.h"
#include "pmutop/profile/table.h"

struct aggregate;

enum model_window { MODEL_SINCE_START, MODEL_INTERVAL };

/* A caller or callee of the focused function, with the events it carries. */
struct model_edge {
	uint32_t function_id;  /* 0: "(root)" among callers, "(self)" among callees */
	const char *name;
	const char *file;
	uint64_t weight;
};

struct model_edges {
	uint32_t function_id;
	const char *name, *file;
	uint64_t flat, cum, total;     /* of the focused function; total of the window */
	struct model_edge *callers;    /* sorted by weight, heaviest first */
	size_t ncallers;
	struct model_edge *callees;
	size_t ncallees;
};

struct model_thread {
	uint32_t tid;
	char name[16];
	uint64_t samples;  /* samples in the current window */
	uint64_t weight;   /* events in the current window */
};

struct model;

/* A model with no data, sorted by flat, since start. NULL on ENOMEM. */
struct model *model_new(void);
void model_free(struct model *m);

/*
 * The refresh tick: copy a's stack weights, shift the previous copy into
 * the interval base, rebuild the rows. A different aggregate than last
 * time, or fewer stacks, restarts the windows. Returns 0 or -ENOMEM (the
 * model is then empty until the next successful tick).
 */
int model_tick(struct model *m, const struct aggregate *a);

/* Forget the aggregate and both copies (after session_reset()). */
void model_reset(struct model *m);

/* Settings; each rebuilds the rows from the current copies. 0 or -ENOMEM. */
int model_set_sort(struct model *m, enum top_sort sort);
int model_set_window(struct model *m, enum model_window w);
/* Case-insensitive substring of the function name; NULL or "": none. */
int model_set_filter(struct model *m, const char *substr);
int model_set_thread(struct model *m, uint32_t tid);        /* 0: all threads */
/*
 * Restrict the rows, callers/callees and the thread list to process pid's
 * stacks (0: every process); the process list (model_processes) is never
 * restricted. A stack's process is its thread's (agg_thread.pid).
 */
int model_set_process(struct model *m, uint32_t pid);
/*
 * Which event of a multi-event run is the shown one: flat, cum, total, the
 * sort, callers and threads are of event k (agg_stack.weights[k]; 0, the
 * default, is agg_stack.weight). When the copies hold every event of the
 * run (a multi-event aggregate was ticked) the rows are rebuilt at once;
 * otherwise both copies are forgotten and the rows are empty until the
 * next model_tick(). Returns 0 or -EINVAL (k too big).
 */
int model_set_event(struct model *m, unsigned k);

enum top_sort model_sort(const struct model *m);
enum model_window model_window(const struct model *m);
const char *model_filter(const struct model *m);            /* "" when none */
uint32_t model_thread(const struct model *m);
uint32_t model_process(const struct model *m);              /* 0: every process */
unsigned model_event(const struct model *m);
/*
 * Events per row: the run's event count when the rows are a multi-event
 * table (then the rows' ev_flat/ev_cum are filled), else 1.
 */
size_t model_nevents(const struct model *m);
bool model_has_data(const struct model *m);                 /* ticked since reset */
/*
 * Must the model tick before anything reads it again? True when it holds
 * data of a, or of another aggregate, that aggregate_maintain() has
 * rebuilt since (its rows would point at freed strings).
 */
bool model_stale(const struct model *m, const struct aggregate *a);

/* Rows after the filter, in sort order. */
size_t model_nrows(const struct model *m);
const struct top_row *model_row(const struct model *m, size_t i);
/* Events in the window (and thread) before the substring filter: the 100%. */
uint64_t model_total(const struct model *m);
/* Sum of flat over rows 0..i (the sum% column). */
uint64_t model_sum(const struct model *m, size_t i);
/* Functions in the window before the filter. */
size_t model_nfunctions(const struct model *m);

/*
 * Selection. The selected row follows its function across rebuilds once
 * the user has moved it; the top row stays the top row (so a live view left
 * alone keeps showing "the hottest"). Moves are clamped to the rows.
 */
size_t model_selected(const struct model *m);
uint32_t model_selected_function(const struct model *m);    /* 0 when no rows */
void model_move(struct model *m, long delta);
void model_home(struct model *m);
void model_end(struct model *m);
/* First row to show in `visible` lines so that the selection is on screen. */
size_t model_scroll(struct model *m, size_t visible);

/*
 * Callers and callees of function_id in the current window and thread
 * (not the substring filter), each distinct neighbour counted once per
 * stack as pprof does; inlined frames count as calls, as in the table. Returns 0, -ENOENT (not in the window) or -ENOMEM.
 * model_edges_free() releases the arrays.
 */
int model_edges(const struct model *m, uint32_t function_id, struct model_edges *e);
void model_edges_free(struct model_edges *e);

/*
 * Every known thread: those in known[0..nknown) (tid and name; e.g. the
 * target's live threads, sampled or not) and those in the profile, with
 * their samples and events in the current window (and thread names),
 * heaviest first, then by tid. *out is malloc'd (caller frees). Returns 0
 * or -ENOMEM.
 */
int model_threads(const struct model *m, const struct model_thread *known, size_t nknown,
		  struct model_thread **out, size_t *n);

/*
 * Every process with samples or events in the current window (whatever
 * model_set_process chose), heaviest first by the shown event, with every
 * event's estimate in a multi-event run (proc_table.h). Empty before the
 * first tick. Returns 0 or -ENOMEM; proc_table_free() releases t.
 */
int model_processes(const struct model *m, struct proc_table *t);

/* "12.3k" (count), "45.6ms" (nanoseconds), "1.72MB" (bytes): at most 8 characters. */
const char *model_fmt_value(uint64_t v, const char *unit, char *buf, size_t len);
/* " 12.3%" / "100.0%": 6 characters. */
const char *model_fmt_percent(uint64_t v, uint64_t total, char *buf, size_t len);
/* The last path component ("" for ""). */
const char *model_basename(const char *path);

#endif
