/*
 * table.h - the flat/cumulative function table, as `go tool pprof -top`
 * prints it: flat, flat%, sum%, cum, cum%, function.
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

struct aggregate;

struct top_row {
	uint32_t function_id;
	const char *name;
	const char *file;
	uint64_t flat;  /* event count with this function as the leaf */
	uint64_t cum;   /* event count with this function anywhere on the stack */
};

enum top_sort { TOP_SORT_FLAT, TOP_SORT_CUM };

struct top_table {
	struct top_row *rows;
	size_t nrows;
	uint64_t total;  /* all event counts in the profile */
};

/*
 * Build the table from a, restricted to thread tid when tid != 0. Returns 0
 * or -ENOMEM. top_table_free() releases rows.
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
void top_table_free(struct top_table *t);

/* Print like `go tool pprof -top` (max_rows 0 = all). */
void top_table_print(const struct top_table *t, FILE *out, size_t max_rows,
		     const char *unit);

#endif
