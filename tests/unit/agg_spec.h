/*
 * agg_spec.h - build test aggregates from short stack descriptions.
 *
 * Shared by the unit tests of the aggregate's readers (table, live-view
 * model, folded output): a stack is written "name@addr name@addr ...",
 * leaf first, addresses in hex, frames without a mapping. Include after
 * <cmocka.h>.
 */
#ifndef PMUTOP_TEST_AGG_SPEC_H
#define PMUTOP_TEST_AGG_SPEC_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmutop/profile/aggregate.h"
#include "pmutop/symbols/symbolize.h"

/* Count one sample of `weight` events of event ev on thread tid. */
static inline void agg_add_spec_ev(struct aggregate *a, uint32_t tid, unsigned ev,
				   uint64_t weight, const char *spec)
{
	struct frame f[16];
	char buf[256], *save = NULL, *tok;
	unsigned n = 0;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *at = strrchr(tok, '@');

		assert_non_null(at);
		assert_true(n < sizeof(f) / sizeof(f[0]));
		*at = 0;
		memset(&f[n], 0, sizeof(f[n]));
		f[n].addr = strtoull(at + 1, NULL, 16);
		f[n].func = strdup(tok);
		n++;
	}
	assert_int_equal(aggregate_add_event(a, tid, f, n, ev, weight), 0);
	while (n--)
		free((char *)f[n].func);
}

/* The same for a single-event run. */
static inline void agg_add_spec(struct aggregate *a, uint32_t tid, uint64_t weight,
				const char *spec)
{
	agg_add_spec_ev(a, tid, 0, weight, spec);
}

#endif
