/*
 * keys.c - key -> action table of the live view.
 *
 * One table (htop's shape): each binding names the screens where it works
 * and a handler that changes the state and returns reaction bits (redraw,
 * fresh data now, quit) for the loop. The help screen prints the same
 * table. The "/" line editor takes the keys first while it is open.
 */
#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crt.h"
#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/annotate.h"
#include "pmutop/profile/pprof.h"
#include "pmutop/frontend/cli.h"
#include "pmutop/frontend/session.h"
#include "state.h"

#define KEY_ESC 27
#define CTRL(c) ((c) & 0x1f)

/* Lines a page moves: the table's height. */
static long page(void)
{
	long n = LINES - 7;

	return n > 1 ? n : 1;
}

static unsigned on_quit(struct tui *t, int key)
{
	(void)t;
	(void)key;
	return REACT_QUIT;
}

static unsigned on_help(struct tui *t, int key)
{
	(void)key;
	if (t->screen == SCREEN_HELP) {
		t->screen = t->help_from;
	} else {
		t->help_from = t->screen;
		t->screen = SCREEN_HELP;
	}
	return REACT_REDRAW;
}

static unsigned set_sort(struct tui *t, enum top_sort sort, const char *what)
{
	if (model_set_sort(t->m, sort))
		state_message(t, true, "out of memory");
	else
		state_message(t, false, "sorted by %s", what);
	state_refresh_derived(t);
	return REACT_REDRAW;
}

static unsigned on_sort_flat(struct tui *t, int key)
{
	(void)key;
	return set_sort(t, TOP_SORT_FLAT, "flat");
}

static unsigned on_sort_cum(struct tui *t, int key)
{
	(void)key;
	return set_sort(t, TOP_SORT_CUM, "cum");
}

static unsigned on_window(struct tui *t, int key)
{
	enum model_window w = model_window(t->m) == MODEL_INTERVAL ? MODEL_SINCE_START
								   : MODEL_INTERVAL;

	(void)key;
	if (!t->s) {
		state_message(t, true, "a saved profile has no intervals");
		return REACT_REDRAW;
	}
	model_set_window(t->m, w);
	state_message(t, false, "%s", w == MODEL_INTERVAL ? "showing the last refresh interval"
							: "showing everything since start");
	state_refresh_derived(t);
	return REACT_REDRAW;
}

static unsigned on_event(struct tui *t, int key)
{
	size_t n = t->s ? t->st.nevents : 1;
	unsigned k = model_event(t->m) + 1;
	uint64_t period;
	const struct pmu_event *ev;

	(void)key;
	if (n < 2) {
		state_message(t, true, "one event in this run (sample several with -e a,b)");
		return REACT_REDRAW;
	}
	if (k >= n)
		k = 0;
	/* The model keeps every event's copies: flat, cum and the sort switch at once. */
	model_set_event(t->m, k);
	ev = session_event(t->s, k, &period);
	state_message(t, false, "flat, cum and the sort are now of %s", ev ? ev->name : "?");
	state_refresh_derived(t);
	/* A tick now would shorten the interval window (and undo a pause). */
	return model_nevents(t->m) > 1 ? REACT_REDRAW : REACT_TICK | REACT_REDRAW;
}

/* Move the selection of whatever list the screen shows. */
static unsigned move_selection(struct tui *t, long delta, int whole)
{
	size_t *sel, n;

	if (t->screen == SCREEN_TOP) {
		if (whole < 0)
			model_home(t->m);
		else if (whole > 0)
			model_end(t->m);
		else
			model_move(t->m, delta);
		return REACT_REDRAW;
	}
	if (t->screen == SCREEN_CALLERS) {
		sel = &t->edge_sel;
		n = t->have_edges ? t->edges.ncallers + t->edges.ncallees : 0;
	} else if (t->screen == SCREEN_THREADS) {
		sel = &t->thread_sel;
		n = t->nthreads + 1;
	} else if (t->screen == SCREEN_PROCS) {
		sel = &t->proc_sel;
		n = t->procs.nrows + 1;
	} else {
		return REACT_NONE;
	}
	if (!n)
		return REACT_NONE;
	if (whole < 0)
		*sel = 0;
	else if (whole > 0)
		*sel = n - 1;
	else if (delta < 0)
		*sel = (size_t)-delta > *sel ? 0 : *sel - (size_t)-delta;
	else
		*sel = *sel + (size_t)delta >= n ? n - 1 : *sel + (size_t)delta;
	if (t->screen == SCREEN_PROCS)
		t->proc_sel_pid = t->proc_sel ? t->procs.rows[t->proc_sel - 1].pid : 0;
	return REACT_REDRAW;
}

static unsigned on_up(struct tui *t, int key) { (void)key; return move_selection(t, -1, 0); }
static unsigned on_down(struct tui *t, int key) { (void)key; return move_selection(t, 1, 0); }
static unsigned on_pgup(struct tui *t, int key) { (void)key; return move_selection(t, -page(), 0); }
static unsigned on_pgdn(struct tui *t, int key) { (void)key; return move_selection(t, page(), 0); }
static unsigned on_home(struct tui *t, int key) { (void)key; return move_selection(t, 0, -1); }
static unsigned on_end(struct tui *t, int key) { (void)key; return move_selection(t, 0, 1); }

static void focus(struct tui *t, uint32_t fid)
{
	t->focus = fid;
	t->edge_sel = t->edge_top = 0;
	state_refresh_derived(t);
}

static unsigned on_enter(struct tui *t, int key)
{
	(void)key;
	if (t->screen == SCREEN_TOP) {
		uint32_t fid = model_selected_function(t->m);

		if (!fid)
			return REACT_NONE;
		t->nhistory = 0;
		t->screen = SCREEN_CALLERS;
		focus(t, fid);
	} else if (t->screen == SCREEN_CALLERS && t->have_edges) {
		const struct model_edges *e = &t->edges;
		size_t k = t->edge_sel;
		uint32_t fid;

		if (k >= e->ncallers + e->ncallees)
			return REACT_NONE;
		fid = k < e->ncallers ? e->callers[k].function_id : e->callees[k - e->ncallers].function_id;
		if (!fid || fid == t->focus)
			return REACT_NONE;  /* (root), (self), recursion */
		if (t->nhistory == CALLERS_HISTORY) {
			memmove(t->history, t->history + 1, (CALLERS_HISTORY - 1) * sizeof(*t->history));
			t->nhistory--;
		}
		t->history[t->nhistory++] = t->focus;
		focus(t, fid);
	} else if (t->screen == SCREEN_THREADS) {
		uint32_t tid = t->thread_sel ? t->threads[t->thread_sel - 1].tid : 0;

		model_set_thread(t->m, tid);
		if (tid)
			state_message(t, false, "showing thread %u only (t changes, t Enter on \"all\" undoes)", tid);
		else
			state_message(t, false, "showing all threads");
		t->screen = SCREEN_TOP;
		model_home(t->m);
	} else if (t->screen == SCREEN_PROCS) {
		const struct proc_row *p = t->proc_sel && t->proc_sel <= t->procs.nrows
					   ? &t->procs.rows[t->proc_sel - 1] : NULL;

		/* A thread of another process would leave the table empty. */
		model_set_thread(t->m, 0);
		model_set_process(t->m, p ? p->pid : 0);
		if (p && p->pid)
			state_message(t, false, "process %u (%s) only: Esc or p lists the processes",
				      p->pid, p->comm[0] ? p->comm : "?");
		else
			state_message(t, false, "every process: Esc or p lists the processes");
		t->screen = SCREEN_TOP;
		model_home(t->m);
	}
	return REACT_REDRAW;
}

static unsigned on_processes(struct tui *t, int key);

static unsigned on_back(struct tui *t, int key)
{
	(void)key;
	switch (t->screen) {
	case SCREEN_HELP:
		t->screen = t->help_from;
		break;
	case SCREEN_ANNOTATE:
		t->screen = t->ann_from;
		annotation_free(t->ann);
		t->ann = NULL;
		break;
	case SCREEN_CALLERS:
		if (t->nhistory) {
			focus(t, t->history[--t->nhistory]);
			break;
		}
		/* fall through */
	case SCREEN_THREADS:
	case SCREEN_PROCS:
		t->screen = SCREEN_TOP;
		break;
	case SCREEN_TOP:
		if (*model_filter(t->m)) {
			model_set_filter(t->m, NULL);
			state_message(t, false, "filter cleared");
		} else if (model_process(t->m) || t->o->system_wide) {
			/* Drilled into a process (or -a, which opens on them): back to the list. */
			return on_processes(t, key);
		}
		break;
	}
	return REACT_REDRAW;
}

static unsigned on_filter(struct tui *t, int key)
{
	(void)key;
	t->screen = SCREEN_TOP;
	t->editing = true;
	snprintf(t->edit_saved, sizeof(t->edit_saved), "%s", model_filter(t->m));
	snprintf(t->edit, sizeof(t->edit), "%s", model_filter(t->m));
	t->edit_len = strlen(t->edit);
	curs_set(1);
	return REACT_REDRAW;
}

static unsigned on_processes(struct tui *t, int key)
{
	(void)key;
	if (t->screen == SCREEN_PROCS) {
		t->screen = SCREEN_TOP;
		return REACT_REDRAW;
	}
	t->screen = SCREEN_PROCS;
	t->proc_sel = t->proc_top = 0;
	t->proc_sel_pid = model_process(t->m);
	state_refresh_derived(t);
	return REACT_REDRAW;
}

static unsigned on_threads(struct tui *t, int key)
{
	size_t i;

	(void)key;
	if (t->screen == SCREEN_THREADS)
		return on_back(t, key);
	t->screen = SCREEN_THREADS;
	state_refresh_derived(t);
	t->thread_sel = t->thread_top = 0;
	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == model_thread(t->m))
			t->thread_sel = i + 1;
	return REACT_REDRAW;
}

static unsigned on_reset(struct tui *t, int key)
{
	(void)key;
	if (!t->s) {
		state_message(t, true, "a saved profile cannot be reset");
		return REACT_REDRAW;
	}
	if (t->ended) {
		state_message(t, true, "sampling has ended: nothing new would come after a reset");
		return REACT_REDRAW;
	}
	/*
	 * The model and the callers screen read the old aggregate, and function
	 * ids start over in the new one: drop both before the session frees it.
	 */
	model_reset(t->m);
	model_edges_free(&t->edges);
	t->have_edges = false;
	t->focus = 0;
	t->nhistory = 0;
	if (t->screen == SCREEN_CALLERS)
		t->screen = SCREEN_TOP;
	if (session_reset(t->s)) {
		state_message(t, true, "reset failed: out of memory");
		return REACT_TICK | REACT_REDRAW;
	}
	t->rate_samples = 0;
	state_message(t, false, "counts reset: the table starts now; the header keeps lost and "
		      "throttled since start");
	return REACT_TICK | REACT_REDRAW;
}

static unsigned on_pause(struct tui *t, int key)
{
	(void)key;
	t->paused = !t->paused;
	state_message(t, false, t->paused ? "display paused (sampling goes on); Space resumes"
					: "display resumed");
	return t->paused ? REACT_REDRAW : REACT_TICK | REACT_REDRAW;
}

static unsigned on_write(struct tui *t, int key)
{
	char path[256], err[512], cwd[512];
	struct tm tm;
	time_t now = time(NULL);
	int i;

	(void)key;
	localtime_r(&now, &tm);
	/* A new name each time: never overwrite an earlier write. */
	for (i = 0; i < 100; i++) {
		char stamp[32], who[32], suffix[8] = "";

		strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
		if (t->s && t->st.pid > 0)
			snprintf(who, sizeof(who), "%d", (int)t->st.pid);
		else if (t->s)
			snprintf(who, sizeof(who), "all");
		else
			snprintf(who, sizeof(who), "load");
		if (i)
			snprintf(suffix, sizeof(suffix), "-%d", i);
		snprintf(path, sizeof(path), "pmutop-%s-%s%s.pb.gz", who, stamp, suffix);
		if (access(path, F_OK) != 0)
			break;
	}
	if (pprof_write(state_aggregate(t), path, err, sizeof(err))) {
		state_message(t, true, "%s", err);
		return REACT_REDRAW;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), ".");
	/* The file holds the aggregate: every thread, since start or the last z. */
	if (t->s && t->st.resets)
		state_message(t, false, "wrote ./%s (all threads, since z at %.0fs) in %s", path,
			      t->st.window_start, cwd);
	else
		state_message(t, false, "wrote ./%s (all threads, %s) in %s", path,
			      t->s ? "since start" : "the whole profile", cwd);
	return REACT_REDRAW;
}

static unsigned on_redraw(struct tui *t, int key)
{
	(void)t;
	(void)key;
	crt_force_redraw();
	return REACT_REDRAW;
}

static unsigned on_resize(struct tui *t, int key)
{
	(void)t;
	(void)key;
	/* curses has resized stdscr already (KEY_RESIZE); just draw again. */
	return REACT_REDRAW;
}


/* ---- annotate: a function's instructions ---- */

/*
 * Take a fresh listing of the function in focus (the selected row on the
 * table, the focused function on callers/callees). The binary is found by
 * its path inside the target's root first (containers), then as written.
 */
static unsigned on_annotate(struct tui *t, int key)
{
	const struct aggregate *a = state_aggregate(t);
	const struct agg_function *fns;
	struct annotation *an = NULL;
	/* A live session must not wait on the network; a saved profile may. */
	struct annotate_opts ao = { .root = NULL, .offline = t->s != NULL };
	char root[64], err[512], name[256];
	uint32_t fid;
	size_t nf;
	int rc;

	(void)key;
	fid = t->screen == SCREEN_CALLERS ? t->focus :
	      t->screen == SCREEN_ANNOTATE ? 0 : model_selected_function(t->m);
	fns = aggregate_functions(a, &nf);
	if (t->screen == SCREEN_ANNOTATE && t->ann)
		snprintf(name, sizeof(name), "%s", t->ann->func);
	else if (fid && fid <= nf)
		snprintf(name, sizeof(name), "%s", fns[fid - 1].name);
	else
		return REACT_NONE;
	if (t->s && (model_process(t->m) || t->st.pid > 0)) {
		snprintf(root, sizeof(root), "/proc/%d/root",
			 model_process(t->m) ? (int)model_process(t->m) : (int)t->st.pid);
		ao.root = root;
	}
	/*
	 * Source files as the process they belong to could read them (issue
	 * 32): the one chosen in the view, else the only target; a command
	 * pmutop launched reads as the operator; several targets and none
	 * chosen: no source.
	 */
	if (!t->s || (t->o->cmd && !model_process(t->m)))
		ao.sources_of = 0;
	else if (model_process(t->m))
		ao.sources_of = (int)model_process(t->m);
	else if (!t->o->system_wide && t->o->npids <= 1 && t->st.pid > 0)
		ao.sources_of = (int)t->st.pid;
	else
		ao.sources_of = -1;
	rc = annotate_build(a, name, &ao, &an, err, sizeof(err));
	if (rc) {
		state_message(t, true, "annotate %s: %s", name, err);
		return REACT_REDRAW;
	}
	if (t->screen != SCREEN_ANNOTATE) {
		long h = annotation_hottest(an, model_event(t->m) < an->nev ? model_event(t->m) : 0);

		t->ann_from = t->screen;
		t->ann_sel = h > 0 ? (size_t)h : 0;
		t->ann_top = 0;
	} else if (t->ann_sel >= an->n) {
		t->ann_sel = an->n ? an->n - 1 : 0;
	}
	annotation_free(t->ann);
	t->ann = an;
	t->screen = SCREEN_ANNOTATE;
	return REACT_REDRAW;
}

static unsigned ann_move(struct tui *t, long delta, int whole)
{
	long n = t->ann ? (long)t->ann->n : 0, sel = (long)t->ann_sel;

	if (!n)
		return REACT_NONE;
	sel = whole < 0 ? 0 : whole > 0 ? n - 1 : sel + delta;
	if (sel < 0)
		sel = 0;
	if (sel >= n)
		sel = n - 1;
	t->ann_sel = (size_t)sel;
	return REACT_REDRAW;
}

static unsigned on_ann_up(struct tui *t, int key) { (void)key; return ann_move(t, -1, 0); }
static unsigned on_ann_down(struct tui *t, int key) { (void)key; return ann_move(t, 1, 0); }
static unsigned on_ann_pgup(struct tui *t, int key) { (void)key; return ann_move(t, -page(), 0); }
static unsigned on_ann_pgdn(struct tui *t, int key) { (void)key; return ann_move(t, page(), 0); }
static unsigned on_ann_home(struct tui *t, int key) { (void)key; return ann_move(t, 0, -1); }
static unsigned on_ann_end(struct tui *t, int key) { (void)key; return ann_move(t, 0, 1); }

static unsigned on_ann_hottest(struct tui *t, int key)
{
	long h;

	(void)key;
	if (!t->ann)
		return REACT_NONE;
	h = annotation_hottest(t->ann, model_event(t->m) < t->ann->nev ? model_event(t->m) : 0);
	if (h < 0) {
		state_message(t, false, "no samples in this function");
		return REACT_REDRAW;
	}
	t->ann_sel = (size_t)h;
	return REACT_REDRAW;
}

#define LISTS (SCREEN_TOP | SCREEN_CALLERS | SCREEN_THREADS | SCREEN_PROCS)
#define DATA (SCREEN_TOP | SCREEN_CALLERS | SCREEN_THREADS | SCREEN_PROCS)
#define SORTED (SCREEN_TOP | SCREEN_CALLERS | SCREEN_THREADS)

static const struct key_binding table[] = {
	{ '?', SCREEN_ANY, on_help, "?  F1  h", "help (this screen)" },
	{ KEY_F(1), SCREEN_ANY, on_help, NULL, NULL },
	{ 'h', SCREEN_ANY, on_help, NULL, NULL },
	{ 'f', SORTED, on_sort_flat, "f  c", "sort by flat / by cum" },
	{ 'c', SORTED, on_sort_cum, NULL, NULL },
	{ 'i', DATA, on_window, "i  Tab", "since start <-> last refresh interval" },
	{ 'e', DATA, on_event, "e", "next event (with several -e)" },
	{ '\t', DATA, on_window, NULL, NULL },
	{ KEY_UP, LISTS, on_up, "Up Down j k", "move the selection" },
	{ 'k', LISTS, on_up, NULL, NULL },
	{ KEY_DOWN, LISTS, on_down, NULL, NULL },
	{ 'j', LISTS, on_down, NULL, NULL },
	{ KEY_PPAGE, LISTS, on_pgup, "PgUp PgDn", "move a page" },
	{ KEY_NPAGE, LISTS, on_pgdn, NULL, NULL },
	{ KEY_HOME, LISTS, on_home, "Home End", "first / last row" },
	{ 'g', LISTS, on_home, NULL, NULL },
	{ KEY_END, LISTS, on_end, NULL, NULL },
	{ 'G', LISTS, on_end, NULL, NULL },
	{ '\n', LISTS, on_enter, "Enter", "callers and callees of the function; choose" },
	{ '\r', LISTS, on_enter, NULL, NULL },
	{ KEY_ENTER, LISTS, on_enter, NULL, NULL },
	{ KEY_RIGHT, SCREEN_TOP | SCREEN_CALLERS | SCREEN_PROCS, on_enter, NULL, NULL },
	{ KEY_ESC, SCREEN_ANY, on_back, "Esc  Left", "back (on the table: clear the filter)" },
	{ KEY_LEFT, SCREEN_ANY, on_back, NULL, NULL },
	{ KEY_BACKSPACE, SCREEN_CALLERS | SCREEN_THREADS | SCREEN_HELP | SCREEN_PROCS, on_back,
	  NULL, NULL },
	{ 'a', SCREEN_TOP | SCREEN_CALLERS | SCREEN_ANNOTATE, on_annotate, "a",
	  "annotate: the function's instructions with each event's share (a again: refresh)" },
	{ 'H', SCREEN_ANNOTATE, on_ann_hottest, "H", "annotate: go to the hottest instruction" },
	{ KEY_UP, SCREEN_ANNOTATE, on_ann_up, NULL, NULL },
	{ 'k', SCREEN_ANNOTATE, on_ann_up, NULL, NULL },
	{ KEY_DOWN, SCREEN_ANNOTATE, on_ann_down, NULL, NULL },
	{ 'j', SCREEN_ANNOTATE, on_ann_down, NULL, NULL },
	{ KEY_PPAGE, SCREEN_ANNOTATE, on_ann_pgup, NULL, NULL },
	{ KEY_NPAGE, SCREEN_ANNOTATE, on_ann_pgdn, NULL, NULL },
	{ KEY_HOME, SCREEN_ANNOTATE, on_ann_home, NULL, NULL },
	{ 'g', SCREEN_ANNOTATE, on_ann_home, NULL, NULL },
	{ KEY_END, SCREEN_ANNOTATE, on_ann_end, NULL, NULL },
	{ 'G', SCREEN_ANNOTATE, on_ann_end, NULL, NULL },
	{ '/', SCREEN_TOP | SCREEN_CALLERS, on_filter, "/", "filter functions by substring" },
	{ 't', DATA, on_threads, "t  p", "restrict to one thread / one process (IPC~ per process)" },
	{ 'p', DATA, on_processes, NULL, NULL },
	{ 'z', DATA, on_reset, "z", "reset the counts" },
	{ ' ', SCREEN_ANY, on_pause, "Space", "pause the display (sampling goes on)" },
	{ 'w', SCREEN_ANY, on_write, "w", "write the profile to ./pmutop-PID-TIME.pb.gz" },
	{ CTRL('l'), SCREEN_ANY, on_redraw, "Ctrl-L", "redraw the screen" },
	{ KEY_RESIZE, SCREEN_ANY, on_resize, NULL, NULL },
	{ 'q', SCREEN_ANY, on_quit, "q  F10", "quit (with --dump FILE: write FILE)" },
	{ 'Q', SCREEN_ANY, on_quit, NULL, NULL },
	{ KEY_F(10), SCREEN_ANY, on_quit, NULL, NULL },
};

const struct key_binding *keys_table(size_t *n)
{
	*n = sizeof(table) / sizeof(table[0]);
	return table;
}

/* The "/" line editor: every key edits the filter, which applies as typed. */
static unsigned edit_key(struct tui *t, int key)
{
	bool changed = false;

	switch (key) {
	case KEY_ESC:
		snprintf(t->edit, sizeof(t->edit), "%s", t->edit_saved);
		t->editing = false;
		changed = true;
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		t->editing = false;
		break;
	case KEY_BACKSPACE:
	case 127:
	case CTRL('h'):
		if (t->edit_len) {
			t->edit[--t->edit_len] = 0;
			changed = true;
		}
		break;
	case CTRL('u'):
		t->edit_len = 0;
		t->edit[0] = 0;
		changed = true;
		break;
	case KEY_RESIZE:
		return REACT_REDRAW;
	default:
		if (key >= 32 && key < 127 && t->edit_len + 1 < sizeof(t->edit)) {
			t->edit[t->edit_len++] = (char)key;
			t->edit[t->edit_len] = 0;
			changed = true;
		}
		break;
	}
	if (changed) {
		if (model_set_filter(t->m, t->edit))
			state_message(t, true, "out of memory");
		model_home(t->m);
	}
	if (!t->editing)
		curs_set(0);
	return REACT_REDRAW;
}

unsigned keys_dispatch(struct tui *t, int key)
{
	size_t i;

	if (t->editing)
		return edit_key(t, key);
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].key == key && (table[i].screens & t->screen))
			return table[i].handler(t, key);
	return REACT_NONE;
}
