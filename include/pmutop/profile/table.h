/*
 * table.h - the flat/cumulative function table, as `go tool pprof -top`
 * prints it: flat, flat%, sum%, cum, cum%, function.
 *
 * With several events in the run (agg_info.nevents > 1) every row also
 * carries the flat and cum estimate of each event (samples x period,
 * scaled by the multiplexing correction as the pprof writer does), and
 * flat/cum/total are those of one event, the table's `key` event; the text
 * output then adds a flat column per other event and the derived ratios
 * (ratios.h). With one event nothing of that changes the table.
 *
 * Plain C over the aggregate's public views, no terminal code, so the text
 * report and the live view share it and tests can check it directly.
 */
#ifndef PMUTOP_UI_TABLE_H
#define PMUTOP_UI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pmutop/sample/events.h"

struct aggregate;

struct top_row {
	uint32_t function_id;
	const char *name;
	const char *file;
	const char *module; /* the module (mapping's file) its code is in: the live view's
	                       column, never the source file debug info names in `file` */
	uint64_t flat;  /* event count with this function as the leaf */
	uint64_t cum;   /* event count with this function anywhere on the stack */
	/* Per event of a multi-event table (top_table.nevents > 1): estimates. */
	uint64_t ev_flat[PMUTOP_MAX_EVENTS];
	uint64_t ev_cum[PMUTOP_MAX_EVENTS];
};

enum top_sort { TOP_SORT_FLAT, TOP_SORT_CUM };

struct top_table {
	struct top_row *rows;
	size_t nrows;
	uint64_t total;  /* all event counts in the profile */
	/*
	 * Multi-event tables: nevents > 1 and, per event k, its name and unit
	 * (the aggregate's strings) and total; flat/cum/total above are event
	 * `key`'s. Single-event tables: nevents 0, the rest unused.
	 */
	size_t nevents;
	unsigned key;
	const char *ev_name[PMUTOP_MAX_EVENTS];
	const char *ev_unit[PMUTOP_MAX_EVENTS];
	uint64_t ev_total[PMUTOP_MAX_EVENTS];
	const char *note;  /* agg_info.note: printed above the rows; NULL: none */
};

/*
 * Build the table from a, restricted to thread tid when tid != 0. Returns 0
 * or -ENOMEM. top_table_free() releases rows. With several events in a,
 * a multi-event table keyed (and sorted) by the first event; stacks of any
 * event make rows, so a function with page faults but no cycles is a row
 * with a flat of 0.
 */
int top_table_build(const struct aggregate *a, uint32_t tid, enum top_sort sort,
		    struct top_table *t);
/*
 * The same over explicit per-stack weights (the live view's snapshots and
 * interval deltas): stack i (index into aggregate_stacks()) weighs w[i];
 * stacks with weight 0 or i >= nw are left out. Returns 0 or -ENOMEM.
 */
int top_table_build_weights(const struct aggregate *a, uint32_t tid, enum top_sort sort,
			    const uint64_t *w, size_t nw, struct top_table *t);
/*
 * A multi-event table over explicit per-stack estimates: w[i * nev + k] is
 * event k of stack i (already scaled: they are used as they are), for
 * stacks i < nw; stacks whose nev weights are all 0 are left out. flat,
 * cum, total and the sort are of event key. nev must be 2..PMUTOP_MAX_EVENTS
 * and key < nev (else -EINVAL); the event names and units come from a's
 * agg_info. Returns 0, -EINVAL or -ENOMEM.
 */
int top_table_build_events(const struct aggregate *a, uint32_t tid, enum top_sort sort,
			   unsigned key, const uint64_t *w, size_t nw, size_t nev,
			   struct top_table *t);
void top_table_free(struct top_table *t);

/*
 * Off-CPU time beside an on-CPU time event (-e task-clock,offcpu): true
 * with their indices in *on and *off when names/units (n events) hold an
 * "offcpu" event in ns and task-clock, cpu-clock or timer; a function's
 * wall time is then its ev_cum[on] + ev_cum[off].
 */
bool top_table_wall_events(const char *const *names, const char *const *units, size_t n,
			   unsigned *on, unsigned *off);

/*
 * Multiplexing correction of event k of a's run: agg_info.events[k].scale
 * when the run has several events and it is > 1, else 1 (single-event
 * tables are never scaled).
 */
double top_table_scale(const struct aggregate *a, size_t k);

/*
 * Print like `go tool pprof -top` (max_rows 0 = all); unit is that of the
 * flat/cum columns. min_cum > 0 is pprof's node fraction: rows whose cum is
 * under min_cum of the total are left out, with a "Dropped N nodes" line
 * saying how many (0: every row). A multi-event table adds, before the
 * function name, a flat column per other event (in its own unit) and one
 * per ratio the events allow, with a line saying what they are.
 */
void top_table_print(const struct top_table *t, FILE *out, size_t max_rows, double min_cum,
		     const char *unit);

#endif
