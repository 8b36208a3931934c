/*
 * windows.c - continuous profiling: the session's aggregate written and
 * replaced every --dump-every seconds (see windows.h).
 *
 * The window boundary is taken in the session's single loop
 * (session_window): the records drained before it are in the old window,
 * the ones after in the new one, so the windows' sums are the run's. File
 * names sort by time; --keep removes only files this run wrote, oldest
 * first, so another run's profiles in the same directory are never touched.
 */
#include "pmutop/frontend/windows.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pmutop/frontend/cli.h"
#include "pmutop/frontend/push.h"
#include "pmutop/frontend/session.h"
#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/pprof.h"

struct windows {
	const struct pmutop_opts *o;
	char dir[4096];
	char **kept;          /* paths written, oldest first (--keep) */
	size_t nkept;
	uint64_t written, removed;
	char name[64];        /* target name in file names */
	int pid;
	FILE *log;
	int rc;
	struct push *push;    /* --push: each window also goes there */
};

struct windows *windows_new(const struct pmutop_opts *o, char *err, size_t errlen)
{
	struct windows *w;
	struct stat st;

	if (!o->dump) /* --push alone: no files */
		goto alloc;
	if (strlen(o->dump) >= sizeof(w->dir)) {
		snprintf(err, errlen, "--dump directory name too long");
		return NULL;
	}
	if (stat(o->dump, &st) != 0) {
		if (errno != ENOENT || mkdir(o->dump, 0755) != 0) {
			snprintf(err, errlen, "cannot create the --dump directory %s: %s", o->dump,
				 strerror(errno));
			return NULL;
		}
	} else if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "--dump %s: not a directory", o->dump);
		return NULL;
	}
	if (access(o->dump, W_OK | X_OK) != 0) {
		snprintf(err, errlen, "cannot write into the --dump directory %s: %s", o->dump,
			 strerror(errno));
		return NULL;
	}
alloc:
	w = calloc(1, sizeof(*w));
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	w->o = o;
	snprintf(w->dir, sizeof(w->dir), "%s", o->dump ? o->dump : "");
	return w;
}

void windows_set_push(struct windows *w, struct push *p)
{
	w->push = p;
}

/* "python3" from "/usr/bin/python3 -u x.py": a file-name-safe target name. */
static void target_name(const struct session_status *st, char *out, size_t len)
{
	const char *p = st->cmdline, *base = p, *e;
	size_t n = 0;

	for (e = p; *e && *e != ' '; e++)
		if (*e == '/')
			base = e + 1;
	for (p = base; p < e && n + 1 < len; p++)
		out[n++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			   (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-' ? *p : '_';
	if (!n && len > 7)
		n = (size_t)snprintf(out, len, "target");
	out[n < len ? n : len - 1] = 0;
}

static void forget_oldest(struct windows *w)
{
	while (w->o->keep && w->nkept > w->o->keep) {
		if (unlink(w->kept[0]) != 0 && errno != ENOENT && w->log)
			fprintf(w->log, "pmutop: cannot remove old window profile %s: %s\n",
				w->kept[0], strerror(errno));
		else
			w->removed++;
		free(w->kept[0]);
		memmove(w->kept, w->kept + 1, (w->nkept - 1) * sizeof(*w->kept));
		w->nkept--;
	}
}

/* session_window's callback: write one window's profile. */
static int write_window(void *arg, const struct aggregate *a)
{
	struct windows *w = arg;
	const struct agg_info *info = aggregate_info_const(a);
	char path[4096 + 160], err[768], stamp[64];
	time_t sec = (time_t)(info->start_ns / 1000000000ULL);
	struct tm tm;
	char **nk;

	if (w->push)
		push_window(w->push, a, w->log); /* queued; a drop is counted and said there */
	if (!w->o->dump)
		return 0;
	gmtime_r(&sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	snprintf(path, sizeof(path), "%s%s-%d-%s.%03uZ.pb.gz", w->dir, w->name, w->pid, stamp,
		 (unsigned)(info->start_ns / 1000000ULL % 1000));
	if (pprof_write(a, path, err, sizeof(err))) {
		if (w->log)
			fprintf(w->log, "pmutop: window profile not written: %s\n", err);
		w->rc = 1;
		return 1;
	}
	w->written++;
	nk = realloc(w->kept, (w->nkept + 1) * sizeof(*nk));
	if (nk) {
		w->kept = nk;
		w->kept[w->nkept] = strdup(path);
		if (w->kept[w->nkept])
			w->nkept++;
	}
	forget_oldest(w);
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int windows_run(struct windows *w, struct session *s, FILE *log)
{
	uint64_t every = (uint64_t)(w->o->dump_every * 1e9), next = mono_ns() + every;
	struct session_status st;

	w->log = log;
	session_get_status(s, &st);
	target_name(&st, w->name, sizeof(w->name));
	w->pid = (int)st.pid;
	for (;;) {
		uint64_t t = mono_ns();
		int wait_ms = next > t ? (int)((next - t + 999999) / 1000000) : 0;

		if (session_poll(s, wait_ms) != SESSION_RUNNING)
			break;
		if (mono_ns() < next)
			continue;
		if (session_window(s, write_window, w) == -ENOMEM && log)
			fprintf(log, "pmutop: out of memory starting a new window; the samples "
				"go on into the current one\n");
		next += every;
		if (next < mono_ns()) /* a slow write: no burst of tiny windows */
			next = mono_ns() + every;
	}
	return w->rc;
}

int windows_finish(struct windows *w, struct session *s, FILE *log)
{
	w->log = log;
	/* The last window, partial: after session_stop() there is nothing to drain. */
	if (write_window(w, session_aggregate(s)) == 0 && log && !w->o->quiet && w->o->dump)
		fprintf(log, "pmutop: wrote %llu window profiles into %s (%llu removed by --keep)\n",
			(unsigned long long)w->written, w->dir, (unsigned long long)w->removed);
	return w->rc;
}

void windows_free(struct windows *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nkept; i++)
		free(w->kept[i]);
	free(w->kept);
	free(w);
}
