/*
 * load.c - print a saved pprof profile's table (--load without a terminal),
 * one function's instruction listing (--load FILE --annotate FUNC), or with
 * --dump the profile in another format (a flame graph page, folded).
 * The profile is a file, or a slice of a fleet in ClickHouse (ch_load.h).
 */
#include "pmutop/frontend/load.h"
#include "pmutop/frontend/record.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/annotate.h"
#include "pmutop/frontend/ch_load.h"
#include "pmutop/frontend/cli.h"
#include "pmutop/frontend/clickhouse.h"
#include "pmutop/frontend/dump.h"
#include "pmutop/profile/pprof_read.h"
#include "pmutop/profile/table.h"

int load_profile(const char *src, bool quiet, struct aggregate **a, char *err, size_t errlen)
{
	struct ch_load_stats st;
	int rc;

	if (!ch_url_is(src))
		return pprof_read_file(src, a, err, errlen);
	rc = ch_load_read(src, NULL, a, &st, err, errlen);
	if (!rc && !quiet)
		fprintf(stderr, "pmutop: ClickHouse merged %llu windows from %llu host%s into %llu "
			"stack rows (%llu stacks) in %.2f s\n", st.windows, st.hosts,
			st.hosts == 1 ? "" : "s", st.rows, st.stacks, st.seconds);
	return rc;
}

struct by_part {
	uint32_t label, func;
	uint64_t weight;
};

static int cmp_part(const void *a, const void *b)
{
	const struct by_part *x = a, *y = b;

	if (x->label != y->label)
		return x->label < y->label ? -1 : 1;
	return x->func < y->func ? -1 : x->func > y->func;
}

/*
 * --by LABEL: one row per value of the label, heaviest first: its share of
 * the whole, samples, and its hottest function (by self weight) with that
 * function's share of the value's weight.
 */
static int print_by(const struct pmutop_opts *o)
{
	struct aggregate *a = NULL;
	struct ch_load_stats st = { 0 };
	const struct agg_stack *stk;
	const struct agg_location *locs;
	const struct agg_function *funcs;
	struct by_part *parts = NULL;
	struct { uint64_t w, samples, best_w; uint32_t best_f; } *row = NULL;
	size_t ns, nl, nf, *order = NULL;
	uint64_t total = 0;
	char err[768];
	int rc = 1;

	if (ch_load_read(o->load, o->by, &a, &st, err, sizeof(err))) {
		fprintf(stderr, "pmutop: %s\n", err);
		return 1;
	}
	if (!o->quiet)
		fprintf(stderr, "pmutop: ClickHouse merged %llu windows from %llu host%s in %.2f s\n",
			st.windows, st.hosts, st.hosts == 1 ? "" : "s", st.seconds);
	stk = aggregate_stacks(a, &ns);
	locs = aggregate_locations(a, &nl);
	funcs = aggregate_functions(a, &nf);
	parts = calloc(ns + 1, sizeof(*parts));
	row = calloc(st.nby + 1, sizeof(*row));
	order = calloc(st.nby + 1, sizeof(*order));
	if (!parts || !row || !order) {
		fprintf(stderr, "pmutop: out of memory\n");
		goto out;
	}
	for (size_t i = 0; i < ns; i++) {
		uint32_t lab = stk[i].tid >= 1 && stk[i].tid <= st.nby ? stk[i].tid - 1 : 0;

		parts[i] = (struct by_part){ lab, stk[i].leaf && stk[i].leaf <= nl ?
			locs[stk[i].leaf - 1].function_id : 0, stk[i].weight };
		row[lab].w += stk[i].weight;
		row[lab].samples += stk[i].samples;
		total += stk[i].weight;
	}
	qsort(parts, ns, sizeof(*parts), cmp_part);
	for (size_t i = 0; i < ns;) {
		size_t j = i;
		uint64_t w = 0;

		for (; j < ns && parts[j].label == parts[i].label && parts[j].func == parts[i].func; j++)
			w += parts[j].weight;
		if (w > row[parts[i].label].best_w) {
			row[parts[i].label].best_w = w;
			row[parts[i].label].best_f = parts[i].func;
		}
		i = j;
	}
	for (size_t i = 0; i < st.nby; i++)
		order[i] = i;
	for (size_t i = 1; i < st.nby; i++) /* insertion sort: heaviest first */
		for (size_t j = i; j > 0 && row[order[j]].w > row[order[j - 1]].w; j--) {
			size_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	printf("%-24s %7s %10s  %s\n", o->by, "share", "samples", "hottest function (its share)");
	for (size_t r = 0; r < st.nby && (!o->top_rows || r < o->top_rows); r++) {
		size_t i = order[r];
		const char *fn = row[i].best_f && row[i].best_f <= nf ? funcs[row[i].best_f - 1].name : "-";

		printf("%-24s %6.2f%% %10llu  %s (%.1f%%)\n", st.by_values[i][0] ? st.by_values[i] : "\"\"",
		       total ? 100.0 * (double)row[i].w / (double)total : 0.0,
		       (unsigned long long)row[i].samples, fn,
		       row[i].w ? 100.0 * (double)row[i].best_w / (double)row[i].w : 0.0);
	}
	rc = fflush(stdout) && errno != EPIPE ? 1 : 0;
out:
	free(parts);
	free(row);
	free(order);
	ch_load_stats_free(&st);
	aggregate_free(a);
	return rc;
}

int load_run(const struct pmutop_opts *o)
{
	struct aggregate *a = NULL;
	const struct agg_info *info;
	struct top_table t;
	char err[768];
	size_t nthreads;
	int rc = 0;

	if (o->by)
		return print_by(o);
	if (o->dump && dump_check(o, err, sizeof(err))) {
		fprintf(stderr, "pmutop: %s\n", err);
		return 2;
	}
	if (load_profile(o->load, o->quiet, &a, err, sizeof(err))) {
		fprintf(stderr, "pmutop: %s\n", err);
		return 1;
	}
	info = aggregate_info_const(a);
	nthreads = record_threads(a); /* as the recording's summary counts them */
	if (!o->quiet)
		fprintf(stderr, "pmutop: %s: %llu samples of %s (%s) from %zu thread%s; lost %llu\n",
			o->load, (unsigned long long)info->samples, info->event, info->event_unit,
			nthreads, nthreads == 1 ? "" : "s", (unsigned long long)info->lost);
	if (o->dump && dump_write(o, a, o->load, stderr))
		rc = 1;
	if (o->annotate) {
		if (annotate_print_function(a, o->annotate, NULL, stdout, stderr))
			rc = 1;
	} else if (o->dump) {
		/* converted: no table */
	} else if (top_table_build(a, 0, TOP_SORT_FLAT, &t) == 0) {
		top_table_print(&t, stdout, o->top_rows, cli_rows_min_cum(o), info->event_unit);
		top_table_free(&t);
	} else {
		fprintf(stderr, "pmutop: out of memory\n");
		rc = 1;
	}
	if (fflush(stdout) && errno != EPIPE)
		rc = 1;
	aggregate_free(a);
	return rc;
}
