/*
 * push.h - pmutop as a fleet's node agent (--push clickhouse://...): every
 * window of the run (--dump-every SEC, or the whole run) inserted into
 * ClickHouse as rows (ch_rows.h), off the sampling thread.
 *
 * Nothing lost, nothing twice: the sampling thread only encodes a window
 * and queues it; a worker thread sends the queue in order. While the
 * server is down or slow, windows wait in memory up to --push-queue N,
 * the older ones beyond that in the --spool DIR (one file per window,
 * written atomically, 0600; sent first, also by the next run). A window
 * whose insert outcome is unknown (the connection dropped mid-insert) is
 * sent again whole, with the same window id and the very same rows, which
 * the tables (ReplacingMergeTree) and the reader (FINAL) count once. The
 * summary counts windows pushed, queued, spooled, dropped.
 */
#ifndef PMUTOP_FRONTEND_PUSH_H
#define PMUTOP_FRONTEND_PUSH_H

#include <stddef.h>
#include <stdio.h>

struct aggregate;
struct pmutop_opts;
struct push;

/*
 * Check o->push, the labels and o->spool, create the schema when the
 * server answers, start nothing yet. A server that does not answer is not
 * an error (its windows queue; said on log); one that refuses (bad
 * credentials, not ClickHouse) is. Returns NULL with the reason in err.
 */
struct push *push_new(const struct pmutop_opts *o, FILE *log, char *err, size_t errlen);

/*
 * Queue one window (called on the sampling thread; it encodes, never
 * waits for the network or the disk). Returns 0, or -ENOMEM / -ENOSPC when
 * the window was dropped (counted; message on log).
 */
int push_window(struct push *p, const struct aggregate *a, FILE *log);

/*
 * The run is over: send what is queued, for at most wait_s seconds; then
 * what is left goes to the spool (or is dropped when there is none). The
 * summary line goes to log unless quiet. Returns 0, or 1 when a window
 * was dropped.
 */
int push_finish(struct push *p, double wait_s, int quiet, FILE *log);

/* Free p (stops its thread first if push_finish was not called); NULL: no-op. */
void push_free(struct push *p);

#endif
