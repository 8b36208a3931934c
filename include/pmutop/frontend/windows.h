/*
 * windows.h - continuous profiling (--dump-every SEC --dump DIR/ [--keep N]):
 * one pprof profile per window of SEC seconds, written atomically into DIR
 * as TARGET-PID-YYYYmmddTHHMMSS.mmmZ.pb.gz (the window's UTC start; the
 * profile's time_nanos/duration_nanos are the window's), at most N kept.
 * Memory stays flat however long it runs: each window starts a fresh
 * aggregate, and the run's counts since start go into every file.
 */
#ifndef PMUTOP_WINDOWS_H
#define PMUTOP_WINDOWS_H

#include <stdio.h>

struct pmutop_opts;
struct push;
struct session;
struct windows;

/*
 * Check (and create, mode 0755, when missing) the directory --dump names
 * (none with --push alone).
 * Returns NULL with an actionable message in err.
 */
struct windows *windows_new(const struct pmutop_opts *o, char *err, size_t errlen);

/*
 * Poll s until it stops, writing a window profile every --dump-every
 * seconds. Returns 0, or 1 when a window could not be written (the message
 * went to log; sampling goes on).
 */
/* --push: hand every window to p as well (push_window) - or only to p without --dump. */
void windows_set_push(struct windows *w, struct push *p);

int windows_run(struct windows *w, struct session *s, FILE *log);

/* After session_stop(): the last (partial) window. 0 or 1 as above. */
int windows_finish(struct windows *w, struct session *s, FILE *log);

void windows_free(struct windows *w);

#endif
