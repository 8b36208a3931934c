/*
 * tui.c - the live view's loop (htop's shape): one loop that, on a short
 * timeout, lets the session drain the ring buffers, takes a fresh copy of
 * the profile every --refresh seconds (the model's "tick"), draws the
 * current screen, and dispatches keys through the key table (keys.c),
 * whose handlers return reaction flags.
 *
 * Sampling is never starved by drawing: the session is polled every 50 ms
 * at most (its ring buffers hold far more than that), and the work of a
 * tick - one pass over the distinct stacks - happens once per refresh
 * interval, not per key.
 *
 * Ways out: q (and with --dump, FILE is written after the terminal is
 * restored); SIGINT/SIGTERM/SIGHUP, which the session reads from its
 * signalfd (or crt_take_signal() once no session is running); a session
 * error. The target exiting or --duration elapsing does not end the view:
 * it stays open on the final data with a notice.
 */
#include "tui.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curses.h>

#include "crt.h"
#include "pmutop/profile/annotate.h"
#include "pmutop/profile/aggregate.h"
#include "pmutop/frontend/cli.h"
#include "pmutop/frontend/load.h"
#include "pmutop/frontend/record.h"
#include "pmutop/profile/pprof.h"
#include "pmutop/profile/pprof_read.h"
#include "pmutop/frontend/session.h"
#include "state.h"
#include "view.h"

#define POLL_MS 50        /* session drain interval while sampling */
#define IDLE_MS 200       /* signal check interval when nothing samples */

/* Fresh status and a fresh copy of the profile. */
static void tick(struct tui *t)
{
	if (t->s) {
		session_get_status(t->s, &t->st);
		if (t->rate_elapsed > 0 && t->st.elapsed > t->rate_elapsed &&
		    t->st.samples >= t->rate_samples)
			t->rate = (double)(t->st.samples - t->rate_samples) /
				  (t->st.elapsed - t->rate_elapsed);
		else if (t->st.elapsed > 0)
			t->rate = (double)t->st.samples / t->st.elapsed;
		t->rate_samples = t->st.samples;
		t->rate_elapsed = t->st.elapsed;
	}
	if (model_tick(t->m, state_aggregate(t)))
		state_message(t, true, "out of memory: the view is empty until the next refresh");
	state_refresh_derived(t);
}

/*
 * Everything the current screen draws, from the state: the screens get this
 * and nothing else (view.h).
 */
static void fill_context(struct tui *t, struct view_ctx *v, char *subject, size_t len)
{
	const struct aggregate *a = state_aggregate(t);

	memset(v, 0, sizeof(*v));
	v->lines = LINES;
	v->cols = COLS;
	v->screen = t->screen;
	v->agg = a;
	v->info = aggregate_info_const(a);
	v->m = t->m;
	v->unit = state_unit(t);
	v->live = t->s != NULL;
	v->event_index = model_event(t->m);
	v->nevents = 1;
	if (t->s) {
		if (t->st.pid > 0)
			snprintf(subject, len, "PID %d: %s", (int)t->st.pid, t->st.cmdline);
		else
			snprintf(subject, len, "%s", t->st.cmdline);
		v->st = &t->st;
		v->period = t->st.period;
		v->event = session_event(t->s, v->event_index, &v->period);
		if (!v->event)
			v->event = &t->st.event;
		v->nevents = t->st.nevents;
	} else {
		snprintf(subject, len, "profile %s", t->load_path);
	}
	v->subject = subject;
	v->rate = t->rate;
	v->refresh = t->o->refresh;
	v->paused = t->paused;
	v->ended = t->ended;
	if (t->msg[0] && state_now() < t->msg_until) {
		v->msg = t->msg;
		v->msg_error = t->msg_error;
	}
	v->notes = t->s && t->st.notes && !t->o->quiet ? t->st.notes : "";
	v->edit = t->editing ? t->edit : NULL;
	v->edges = t->have_edges ? &t->edges : NULL;
	v->edge_sel = t->edge_sel;
	v->edge_top = &t->edge_top;
	v->threads = t->threads;
	v->nthreads = t->nthreads;
	if (t->thread_sel > t->nthreads)
		t->thread_sel = t->nthreads;
	v->thread_sel = t->thread_sel;
	v->thread_top = &t->thread_top;
	v->procs = &t->procs;
	if (t->proc_sel > t->procs.nrows)
		t->proc_sel = t->procs.nrows;
	v->proc_sel = t->proc_sel;
	v->proc_top = &t->proc_top;
	v->ann = t->ann;
	v->ann_sel = t->ann_sel;
	v->ann_top = &t->ann_top;
	v->keys = t->help;
	v->nkeys = t->nhelp;
}

static void draw(struct tui *t)
{
	struct view_ctx v;
	char subject[320];

	fill_context(t, &v, subject, sizeof(subject));
	erase();
	switch (t->screen) {
	case SCREEN_TOP:
		top_view_draw(&v);
		break;
	case SCREEN_CALLERS:
		callers_view_draw(&v);
		break;
	case SCREEN_THREADS:
		threads_view_draw(&v);
		break;
	case SCREEN_HELP:
		help_view_draw(&v);
		break;
	case SCREEN_ANNOTATE:
		annotate_view_draw(&v);
		break;
	case SCREEN_PROCS:
		processes_view_draw(&v);
		break;
	}
	if (t->editing)
		move(LINES - 1, 8 + (int)t->edit_len);
	/* curses sends only what changed since the last refresh: no flicker. */
	refresh();
}

static void loop(struct tui *t)
{
	unsigned r = REACT_TICK | REACT_REDRAW;
	double next_tick = 0, now;
	bool msg_shown = false;
	int key;

	for (;;) {
		bool live = t->s && !t->ended;

		if (live) {
			enum session_state st = session_poll(t->s, 0);

			if (st == SESSION_SIGNALLED)
				return;  /* Ctrl-C, SIGTERM, SIGHUP */
			if (st == SESSION_FAILED) {
				t->exit_code = 1;
				return;
			}
			if (st != SESSION_RUNNING) {
				/* Target exited or --duration: keep the final data on screen. */
				session_stop(t->s);
				t->ended = true;
				r |= REACT_TICK;
			}
		} else if (crt_take_signal()) {
			return;
		}

		/* The session compacted the profile: the rows point into the old one. */
		if (model_stale(t->m, state_aggregate(t)))
			r |= REACT_TICK;
		now = state_now();
		if ((r & REACT_TICK) ||
		    (!t->paused && now >= next_tick && !(t->ended && t->final_tick_done))) {
			tick(t);
			next_tick = now + t->o->refresh;
			if (t->ended || !t->s)
				t->final_tick_done = true;
			r |= REACT_REDRAW;
		}
		if (msg_shown && now >= t->msg_until)
			r |= REACT_REDRAW;
		if (r & REACT_REDRAW) {
			draw(t);
			msg_shown = t->msg[0] && now < t->msg_until;
		}
		r = 0;

		{
			int wait = live ? POLL_MS : IDLE_MS;
			double until = next_tick - now;

			if (!t->paused && !(t->ended && t->final_tick_done) && until * 1000 < wait)
				wait = until > 0 ? (int)(until * 1000) + 1 : 0;
			if (crt_wait(live ? session_fd(t->s) : -1, wait))
				return;  /* terminal hung up */
		}
		while ((key = crt_read_key()) >= 0)
			r |= keys_dispatch(t, key);
		if (r & REACT_QUIT)
			return;
	}
}

/*
 * Start the session. A launched command must not write on (or read keys
 * from) the screen: it gets /dev/null as stdin, stdout and stderr.
 */
static struct session *start_session(const struct pmutop_opts *o, char *err, size_t errlen)
{
	int saved[3] = { -1, -1, -1 }, nul = -1, fd, e;
	struct session *s;

	if (o->cmd) {
		nul = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (nul < 0) {
			snprintf(err, errlen, "cannot open /dev/null: %s", strerror(errno));
			return NULL;
		}
		fflush(stdout);
		fflush(stderr);
		for (fd = 0; fd < 3; fd++) {
			saved[fd] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
			dup2(nul, fd);
		}
	}
	s = session_start(o, err, errlen);
	e = errno; /* session_start_exit_status() */
	if (o->cmd) {
		for (fd = 0; fd < 3; fd++) {
			if (saved[fd] >= 0) {
				dup2(saved[fd], fd);
				close(saved[fd]);
			}
		}
		close(nul);
	}
	errno = e;
	return s;
}

/* After the terminal is back: stop, write --dump, say how it ended. */
static void finish(struct tui *t)
{
	const struct pmutop_opts *o = t->o;
	struct session_status st;
	char err[768];

	if (!t->s)
		return;
	session_stop(t->s);
	session_get_status(t->s, &st);
	if (st.state == SESSION_FAILED) {
		fprintf(stderr, "pmutop: %s\n", st.why);
		t->exit_code = 1;
	}
	if (!o->quiet) {
		session_print_notes(t->s, stderr);
		/*
		 * The run since start, whatever z did (what a batch run prints: lost
		 * warning, budget, unwinder); then the window the file holds.
		 */
		record_print_summary(t->s, stderr);
		if (st.resets)
			fprintf(stderr, "pmutop: since the last reset (z at %.1f s): %llu samples; "
				"lost %llu, throttled %llu%s\n", st.window_start,
				(unsigned long long)st.window.samples,
				(unsigned long long)st.window.lost,
				(unsigned long long)st.window.throttled,
				o->dump ? " (what the profile holds)" : "");
	}
	if (o->dump) {
		if (pprof_write(session_aggregate(t->s), o->dump, err, sizeof(err))) {
			fprintf(stderr, "pmutop: %s\n", err);
			t->exit_code = 1;
		} else if (!o->quiet) {
			fprintf(stderr, "pmutop: wrote %s (view: go tool pprof -top %s)\n", o->dump,
				o->dump);
		}
	}
	/* Transparent like time(1): the command's status unless pmutop failed. */
	if (!t->exit_code && session_command_exit_code(&st) >= 0)
		t->exit_code = session_command_exit_code(&st);
	if (o->cmd && st.exit_status >= 0) {
		if (WIFEXITED(st.exit_status))
			fprintf(stderr, "pmutop: %s exited with status %d\n", o->cmd[0],
				WEXITSTATUS(st.exit_status));
		else if (WIFSIGNALED(st.exit_status))
			fprintf(stderr, "pmutop: %s was killed by signal %d (%s)\n", o->cmd[0],
				WTERMSIG(st.exit_status), strsignal(WTERMSIG(st.exit_status)));
	}
}

int tui_terminal_check(char *why, size_t len)
{
	return crt_check(why, len);
}

/* The help screen lists the key table itself: it cannot drift from the keys. */
static int help_lines(struct tui *t)
{
	const struct key_binding *kb;
	size_t n, i;

	kb = keys_table(&n);
	t->help = calloc(n, sizeof(*t->help));
	if (!t->help)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (kb[i].label)
			t->help[t->nhelp++] = (struct view_key_help){ kb[i].label, kb[i].help };
	return 0;
}

int tui_run(const struct pmutop_opts *o)
{
	struct tui t = {
		.o = o,
		/* -a: which process is hot comes first (tiptop, perf top --sort pid). */
		.screen = o->system_wide ? SCREEN_PROCS : SCREEN_TOP,
		.help_from = SCREEN_TOP,
	};
	char err[768] = "";
	int rc = 1;

	if (o->load) {
		if (load_profile(o->load, true, &t.loaded, err, sizeof(err))) {
			fprintf(stderr, "pmutop: %s\n", err);
			return 1;
		}
		t.load_path = o->load;
		t.ended = true;
	} else {
		if (o->dump && pprof_check_writable(o->dump, err, sizeof(err))) {
			fprintf(stderr, "pmutop: %s\n", err);
			return 2;
		}
		t.s = start_session(o, err, sizeof(err));
		if (!t.s) {
			int status = session_start_exit_status(errno);

			fprintf(stderr, "pmutop: %s\n", err);
			return status;
		}
	}
	t.m = model_new();
	if (!t.m || help_lines(&t)) {
		fprintf(stderr, "pmutop: out of memory\n");
		goto out;
	}
	if (crt_init(err, sizeof(err))) {
		fprintf(stderr, "pmutop: %s\n", err);
		goto out;
	}
	loop(&t);
	crt_done();
	finish(&t);
	rc = t.exit_code;
out:
	model_edges_free(&t.edges);
	free(t.threads);
	proc_table_free(&t.procs);
	free(t.help);
	annotation_free(t.ann);
	model_free(t.m);
	session_free(t.s);
	aggregate_free(t.loaded);
	return rc;
}
