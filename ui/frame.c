/*
 * frame.c - what surrounds every screen: the header (target, event, rates,
 * state, messages) and the footer of keys, plus clipped text output.
 *
 *   pmutop - PID 4242: ./shares 60                              [sampling]
 *   event task-clock  period 250000 ns  elapsed 12.3s  samples 45,678 3,998/s
 *   lost 0  throttled 0  threads 2  overhead 1.2%  since start | flat | all threads
 *   unwind: root 99.1%  cut 0.4%  no info 0.5%
 *   <message, or a standing notice: target exited, filter, no-PMU fallback>
 *
 * Lines 1-2 count the whole run since start, whatever `z` did; after a `z`
 * line 3 starts with the table's window ("since z at 12s: samples 1,234
 * lost 0") and its unwind quality, so both windows are on screen, each
 * named. "overhead" is pmutop's own CPU use in % of one CPU.
 */
#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "crt.h"
#include "pmutop/frontend/record.h"
#include "pmutop/profile/aggregate.h"
#include "view.h"

int frame_put(int y, int x, int attr, const char *s)
{
	int room = COLS - x;

	if (y < 0 || y >= LINES || room <= 0 || !s)
		return x;
	attrset(attr);
	mvaddnstr(y, x, s, room);
	attrset(crt_attr(CRT_NORMAL));
	return x + (int)strnlen(s, (size_t)room);
}

int frame_printf(int y, int x, int attr, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return frame_put(y, x, attr, buf);
}

/* "45,678" */
static const char *grouped(uint64_t v, char *buf, size_t len)
{
	char tmp[32];
	size_t n, i, o = 0;

	snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
	n = strlen(tmp);
	for (i = 0; i < n && o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = 0;
	return buf;
}

/* label (plain) then value (bold), then two spaces. */
static int field(int y, int x, const char *label, const char *value)
{
	x = frame_put(y, x, crt_attr(CRT_HEADER_LABEL), label);
	x = frame_put(y, x, crt_attr(CRT_NORMAL), " ");
	x = frame_put(y, x, crt_attr(CRT_HEADER_VALUE), value);
	return frame_put(y, x, crt_attr(CRT_NORMAL), "  ");
}

static const char *duration(double s, char *buf, size_t len)
{
	if (s < 60)
		snprintf(buf, len, "%.1fs", s);
	else if (s < 3600)
		snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, len, "%dh%02dm", (int)s / 3600, (int)s % 3600 / 60);
	return buf;
}

/* Right-aligned on line y, if it fits after column min_x. */
static void put_right(int y, int min_x, int attr, const char *s)
{
	int x = COLS - (int)strlen(s);

	if (x > min_x)
		frame_put(y, x, attr, s);
}

static void state_tag(const struct view_ctx *v, char *buf, size_t len, int *attr)
{
	*attr = crt_attr(CRT_MESSAGE);
	if (v->paused) {
		snprintf(buf, len, "[PAUSED]");
		*attr = crt_attr(CRT_NOTICE);
	} else if (!v->live) {
		snprintf(buf, len, "[saved profile]");
	} else if (v->ended) {
		snprintf(buf, len, v->st->state == SESSION_TARGET_EXITED ? "[TARGET EXITED]" : "[STOPPED]");
		*attr = crt_attr(CRT_NOTICE);
	} else {
		snprintf(buf, len, "[sampling]");
	}
}

const char *frame_window_name(const struct view_ctx *v, char *buf, size_t len)
{
	if (model_window(v->m) == MODEL_INTERVAL)
		snprintf(buf, len, "last interval");
	else if (v->st && v->st->resets)
		snprintf(buf, len, "since z at %.0fs", v->st->window_start);
	else
		snprintf(buf, len, "since start");
	return buf;
}

/*
 * "since start | flat | all threads" (or "| pid 42 name" when restricted
 * to a process), shorter variants when short of room.
 */
static void view_settings(const struct view_ctx *v, int y, int min_x)
{
	uint32_t tid = model_thread(v->m);
	char buf[96], wbuf[32];
	const char *win = frame_window_name(v, wbuf, sizeof(wbuf));
	const char *sort = model_sort(v->m) == TOP_SORT_CUM ? "cum" : "flat";
	const struct agg_thread *th = tid ? aggregate_thread(v->agg, tid) : NULL;
	uint32_t pid = model_process(v->m);
	const struct agg_thread *leader = pid ? aggregate_thread(v->agg, pid) : NULL;
	int variant;

	for (variant = 0; variant < 3; variant++) {
		if (!tid && pid && variant == 0 && leader && leader->comm[0])
			snprintf(buf, sizeof(buf), "%s | %s | pid %u %s", win, sort, pid, leader->comm);
		else if (!tid && pid && variant < 2)
			snprintf(buf, sizeof(buf), "%s | %s | pid %u", win, sort, pid);
		else if (!tid && pid)
			snprintf(buf, sizeof(buf), "pid %u", pid);
		else if (!tid && variant < 2)
			snprintf(buf, sizeof(buf), "%s | %s | all threads", win, sort);
		else if (!tid)
			snprintf(buf, sizeof(buf), "%s | %s", win, sort);
		else if (variant == 0 && th && th->name[0])
			snprintf(buf, sizeof(buf), "%s | %s | tid %u %s", win, sort, tid, th->name);
		else if (variant < 2)
			snprintf(buf, sizeof(buf), "%s | %s | tid %u", win, sort, tid);
		else
			snprintf(buf, sizeof(buf), "tid %u", tid);
		if (v->cols - (int)strlen(buf) > min_x) {
			put_right(y, min_x, crt_attr(CRT_DIM), buf);
			return;
		}
	}
}

static void notice_line(const struct view_ctx *v, int y)
{
	if (v->msg) {
		frame_put(y, 0, crt_attr(v->msg_error ? CRT_NOTICE : CRT_MESSAGE), v->msg);
		return;
	}
	if (v->live && v->ended) {
		char buf[200];
		const char *why = v->st->why && v->st->why[0] ? v->st->why : "stopped";

		if (v->st->state == SESSION_TARGET_EXITED)
			snprintf(buf, sizeof(buf), " target %d exited: showing the final data (q quits) ",
				 (int)v->st->pid);
		else
			snprintf(buf, sizeof(buf), " sampling ended (%s): showing the final data (q quits) ",
				 why);
		frame_put(y, 0, crt_attr(CRT_NOTICE), buf);
		return;
	}
	if (v->screen == SCREEN_TOP && *model_filter(v->m) && !v->edit) {
		frame_printf(y, 0, crt_attr(CRT_MESSAGE), "filter \"%s\": %zu of %zu functions "
			     "(/ edits, Esc clears)", model_filter(v->m), model_nrows(v->m),
			     model_nfunctions(v->m));
		return;
	}
	if (v->notes && v->notes[0]) {
		char buf[512], *c;

		snprintf(buf, sizeof(buf), "%s", v->notes);
		for (c = buf; *c; c++)
			if (*c == '\n')
				*c = ';';
		frame_put(y, 0, crt_attr(CRT_NOTICE), buf);
	}
}

/* "unwind: root 99.1%  cut 0.4%  no info 0.5%  short 0.1%" of c (outcomes: unwind.h). */
static int unwind_quality(int y, int x, const struct session_counts *c)
{
	static const struct {
		const char *label;
		int outcome;          /* -1: every other outcome */
	} parts[] = {
		{ "root", UNWIND_ROOT }, { "cut", UNWIND_STACK_CUT }, { "no info", UNWIND_NO_INFO },
		{ "short", UNWIND_NO_ROOT }, { "other", -1 },
	};
	uint64_t n = 0, v;
	char val[32];
	size_t k;

	for (k = 0; k < UNWIND_NOUTCOMES; k++)
		n += c->outcomes[k];
	x = frame_put(y, x, crt_attr(CRT_HEADER_LABEL), "unwind:");
	if (!n)
		return frame_put(y, x, crt_attr(CRT_DIM), " no samples yet");
	x = frame_put(y, x, crt_attr(CRT_NORMAL), " ");
	for (k = 0; k < sizeof(parts) / sizeof(parts[0]); k++) {
		if (parts[k].outcome >= 0)
			v = c->outcomes[parts[k].outcome];
		else
			v = n - c->outcomes[UNWIND_ROOT] - c->outcomes[UNWIND_STACK_CUT] -
			    c->outcomes[UNWIND_NO_INFO] - c->outcomes[UNWIND_NO_ROOT];
		if ((parts[k].outcome < 0 || parts[k].outcome == UNWIND_NO_ROOT) && !v)
			continue;
		snprintf(val, sizeof(val), "%.1f%%", 100.0 * (double)v / (double)n);
		x = field(y, x, parts[k].label, val);
	}
	return x;
}

static int pid_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * Threads and processes with samples: the counts the exit summary, --load
 * and the process list give (not the counters attached, one per CPU with
 * -a, nor the processes alive right now). *nprocs is 0 when unknown.
 */
static void sampled_counts(const struct aggregate *a, size_t *nthreads, size_t *nprocs)
{
	size_t n, k = 0;
	const struct agg_thread *t = aggregate_threads(a, &n);
	uint32_t *pids = malloc((n ? n : 1) * sizeof(*pids));

	*nthreads = record_threads(a);
	*nprocs = 0;
	if (!pids)
		return;
	for (size_t i = 0; i < n; i++)
		if (t[i].samples && t[i].pid)
			pids[k++] = t[i].pid;
	qsort(pids, k, sizeof(*pids), pid_cmp);
	for (size_t i = 0; i < k; i++)
		*nprocs += !i || pids[i] != pids[i - 1];
	free(pids);
}

int frame_header(const struct view_ctx *v)
{
	const struct agg_info *info = v->info;
	const struct session_status *st = v->st;
	char buf[320], val[128], tag[32];
	int x, attr;
	size_t nthreads, nprocs;

	sampled_counts(v->agg, &nthreads, &nprocs);
	state_tag(v, tag, sizeof(tag), &attr);
	x = frame_put(0, 0, crt_attr(CRT_HEADER_VALUE), "pmutop");
	snprintf(buf, sizeof(buf), " - %s", v->subject);
	{
		/* Leave room for the tag. */
		int room = v->cols - x - (int)strlen(tag) - 2;

		if (room < 0)
			room = 0;
		if ((size_t)room < sizeof(buf))
			buf[room] = 0;
	}
	x = frame_put(0, x, crt_attr(CRT_NORMAL), buf);
	put_right(0, x, attr, tag);

	x = 0;
	if (v->live) {
		const struct pmu_event *ev = v->event;
		const char *unit = strcmp(ev->unit, "nanoseconds") ? "" : " ns";

		if (v->nevents > 1)
			snprintf(val, sizeof(val), "%s [%u/%zu]", ev->name, v->event_index + 1,
				 v->nevents);
		else
			snprintf(val, sizeof(val), "%s", ev->name);
		x = field(1, x, "event", val);
		snprintf(val, sizeof(val), st->freq ? "%llu Hz" : "%llu%s",
			 (unsigned long long)v->period, st->freq ? "" : unit);
		if (ev->offcpu) /* every switch-out, weighed by the time off the CPU */
			x = field(1, x, "period", "every switch");
		else
			x = field(1, x, st->freq ? "freq" : "period", val);
		x = field(1, x, "elapsed", duration(st->elapsed, val, sizeof(val)));
		x = field(1, x, "samples", grouped(st->samples, val, sizeof(val)));
		snprintf(buf, sizeof(buf), "%.0f/s", v->rate);
		x = frame_put(1, x, crt_attr(CRT_HEADER_VALUE), buf);

		/* Line 2: the run since start (whatever z did), and the settings. */
		x = 0;
		x = field(2, x, "lost", grouped(st->total.lost, val, sizeof(val)));
		x = field(2, x, "throttled", grouped(st->total.throttled, val, sizeof(val)));
		/* The memory budget merged something: say what (--max-memory). */
		if (st->total.pruned)
			x = field(2, x, "pruned frames", grouped(st->total.pruned, val, sizeof(val)));
		if (st->total.threads_folded)
			x = field(2, x, "folded threads", grouped(st->total.threads_folded, val,
								  sizeof(val)));
		/*
		 * The threads the thread list shows: each with a counter of its own
		 * while sampling (idle ones too), and every one with samples - all of
		 * them with -a (one counter per CPU) or a command's children
		 * (inherited counters); at the end, those with samples, as the exit
		 * summary and --load count.
		 */
		snprintf(val, sizeof(val), "%zu", !v->ended && st->threads_attached > nthreads ?
			 st->threads_attached : nthreads);
		x = field(2, x, "threads", val);
		/* Children, -p A,B, -a: the processes the list shows. */
		if (st->procs.seen > 1 && nprocs) {
			snprintf(val, sizeof(val), "%zu", nprocs);
			x = field(2, x, "procs", val);
		}
		snprintf(val, sizeof(val), "%.1f%%", st->self_cpu);
		x = field(2, x, "overhead", val);
		view_settings(v, 2, x);

		/* Line 3: after a reset, the window the table shows; then unwind quality. */
		x = 0;
		if (st->resets) {
			snprintf(val, sizeof(val), "since z at %.0fs:", st->window_start);
			x = frame_put(3, x, crt_attr(CRT_HEADER_LABEL), val);
			x = frame_put(3, x, crt_attr(CRT_NORMAL), " ");
			x = field(3, x, "samples", grouped(st->window.samples, val, sizeof(val)));
			x = field(3, x, "lost", grouped(st->window.lost, val, sizeof(val)));
		}
		unwind_quality(3, x, st->resets ? &st->window : &st->total);
		notice_line(v, 4);
		return 5;
	} else {
		snprintf(val, sizeof(val), "%s (%s)", info->event, info->event_unit);
		x = field(1, x, "event", val);
		if (info->period) {
			snprintf(val, sizeof(val), "%llu", (unsigned long long)info->period);
			x = field(1, x, "period", val);
		}
		if (info->duration_ns)
			x = field(1, x, "duration", duration((double)info->duration_ns / 1e9, val,
							     sizeof(val)));
		x = field(1, x, "samples", grouped(info->samples, val, sizeof(val)));

		x = 0;
		x = field(2, x, "lost", grouped(info->lost, val, sizeof(val)));
		if (info->pruned)
			x = field(2, x, "pruned frames", grouped(info->pruned, val, sizeof(val)));
		snprintf(val, sizeof(val), "%zu", nthreads);
		x = field(2, x, "threads", val);
	}
	view_settings(v, 2, x);
	notice_line(v, 3);
	return 4;
}

void frame_footer(const struct view_ctx *v, const char *const *keys)
{
	int y = v->lines - 1, x = 0;
	size_t i;

	move(y, 0);
	clrtoeol();
	if (v->edit) {
		x = frame_put(y, x, crt_attr(CRT_KEY), "Filter: ");
		x = frame_put(y, x, crt_attr(CRT_NORMAL), v->edit);
		x = frame_put(y, x, (int)A_REVERSE, " ");
		x = frame_put(y, x + 2, crt_attr(CRT_DIM), "Enter keep  Esc cancel");
		return;
	}
	/* keys: pairs "key", "what", ..., NULL */
	for (i = 0; keys[i] && keys[i + 1]; i += 2) {
		x = frame_put(y, x, crt_attr(CRT_KEY), keys[i]);
		x = frame_put(y, x, crt_attr(CRT_KEY_TEXT), keys[i + 1]);
	}
	if (x < v->cols) {
		attrset(crt_attr(CRT_KEY_TEXT));
		mvhline(y, x, ' ', v->cols - x);
		attrset(crt_attr(CRT_NORMAL));
	}
}
