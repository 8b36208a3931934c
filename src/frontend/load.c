/*
 * load.c - print a saved pprof profile's table (--load without a terminal),
 * one function's instruction listing (--load FILE --annotate FUNC), or with
 * --dump the profile in another format (a flame graph page, folded).
 */
#include "pmutop/frontend/load.h"
#include "pmutop/frontend/record.h"

#include <errno.h>
#include <stdio.h>

#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/annotate.h"
#include "pmutop/frontend/cli.h"
#include "pmutop/frontend/dump.h"
#include "pmutop/profile/pprof_read.h"
#include "pmutop/profile/table.h"

int load_run(const struct pmutop_opts *o)
{
	struct aggregate *a = NULL;
	const struct agg_info *info;
	struct top_table t;
	char err[768];
	size_t nthreads;
	int rc = 0;

	if (o->dump && dump_check(o, err, sizeof(err))) {
		fprintf(stderr, "pmutop: %s\n", err);
		return 2;
	}
	if (pprof_read_file(o->load, &a, err, sizeof(err))) {
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
