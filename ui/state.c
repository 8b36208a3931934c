/*
 * state.c - what the loop and the key handlers both do to the live view's
 * state: which aggregate and unit are shown, transient messages, and the
 * lists derived for the current screen (callers/callees, threads,
 * processes).
 *
 * Kept apart from the loop (tui.c) so that keys.c and tui.c do not call each
 * other, and apart from the screens, which only draw a struct view_ctx.
 */
#include "state.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>

#include "pmutop/profile/aggregate.h"
#include "pmutop/target/proc.h"

#define MESSAGE_SECONDS 4
/* Live threads listed at most (the profile's are always listed). */
#define MAX_LISTED 4096

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

/*
 * The target's (or the chosen process's) threads alive now, with names
 * (the ones the counters are on, sampled or not), so that the thread list shows every thread the
 * header counts. None with a saved profile or after the session ended.
 */
static size_t live_threads(const struct tui *t, struct model_thread **out)
{
	pid_t tids[MAX_LISTED];
	/* The chosen process's (p), else the target's; -a has no one target. */
	pid_t pid = model_process(t->m) ? (pid_t)model_process(t->m) : t->st.pid;
	size_t n = 0, i;

	*out = NULL;
	if (!t->s || t->ended || pid <= 0 || proc_list_threads(pid, tids, MAX_LISTED, &n) || !n)
		return 0;
	*out = calloc(n, sizeof(**out));
	if (!*out)
		return 0;
	for (i = 0; i < n; i++) {
		(*out)[i].tid = (uint32_t)tids[i];
		proc_thread_name(pid, tids[i], (*out)[i].name, sizeof((*out)[i].name));
	}
	return n;
}

void state_refresh_derived(struct tui *t)
{
	if (t->screen == SCREEN_CALLERS && t->focus) {
		model_edges_free(&t->edges);
		t->have_edges = model_edges(t->m, t->focus, &t->edges) == 0;
		if (t->have_edges && t->edge_sel >= t->edges.ncallers + t->edges.ncallees)
			t->edge_sel = 0;
	}
	if (t->screen == SCREEN_PROCS) {
		size_t i;

		proc_table_free(&t->procs);
		if (model_processes(t->m, &t->procs))
			state_message(t, true, "out of memory");
		/* Rows re-sort every tick: keep the selection on its process. */
		for (i = 0; t->proc_sel_pid && i < t->procs.nrows; i++)
			if (t->procs.rows[i].pid == t->proc_sel_pid)
				t->proc_sel = i + 1;
		if (!t->proc_sel_pid)
			t->proc_sel = 0;
	}
	if (t->screen == SCREEN_THREADS) {
		struct model_thread *known = NULL;
		size_t nknown = live_threads(t, &known);

		free(t->threads);
		t->threads = NULL;
		t->nthreads = 0;
		if (model_threads(t->m, known, nknown, &t->threads, &t->nthreads))
			state_message(t, true, "out of memory");
		free(known);
	}
}
