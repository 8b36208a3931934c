/*
 * state.c - what the loop and the key handlers both do to the live view's
 * state: which aggregate and unit are shown, transient messages, and the
 * lists derived for the current screen (callers/callees, threads).
 *
 * Kept apart from the loop (tui.c) so that keys.c and tui.c do not call each
 * other, and apart from the screens, which only draw a struct view_ctx.
 */
#include "state.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pmutop/profile/aggregate.h"

#define MESSAGE_SECONDS 4

double state_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const struct aggregate *state_aggregate(const struct tui *t)
{
	return t->s ? session_aggregate(t->s) : t->loaded;
}

const char *state_unit(const struct tui *t)
{
	const struct agg_info *info = aggregate_info_const(state_aggregate(t));
	unsigned k = model_event(t->m);

	if (k < info->nevents && info->events[k].unit)
		return info->events[k].unit;
	return info->event_unit;
}

void state_message(struct tui *t, bool error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
	t->msg_error = error;
	t->msg_until = state_now() + MESSAGE_SECONDS;
}

void state_refresh_derived(struct tui *t)
{
	if (t->screen == SCREEN_CALLERS && t->focus) {
		model_edges_free(&t->edges);
		t->have_edges = model_edges(t->m, t->focus, &t->edges) == 0;
		if (t->have_edges && t->edge_sel >= t->edges.ncallers + t->edges.ncallees)
			t->edge_sel = 0;
	}
	if (t->screen == SCREEN_THREADS) {
		free(t->threads);
		t->threads = NULL;
		t->nthreads = 0;
		if (model_threads(t->m, &t->threads, &t->nthreads))
			state_message(t, true, "out of memory");
	}
}
