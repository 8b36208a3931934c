/*
 * proc_table.h - the profile grouped by process: one row per process (pid,
 * command name, threads, samples, events and their share), heaviest first,
 * as tiptop and `perf top --sort pid` show it.
 *
 * A stack's process is its thread's (agg_thread.pid, from the session's
 * FORK/COMM records or a saved profile's `pid` label; 0 when unknown). With
 * several events every row carries every event's estimate (samples x
 * period, scaled for multiplexing as the function table does), so the
 * ratios of ratios.h (IPC~, miss%~, br-miss%~) hold per process too.
 *
 * Plain C over the aggregate's public views: the batch report (before the
 * function table when more than one process was sampled, or --by-process)
 * and the live view's process list (ui/processes_view.c) share it.
 */
#ifndef PMUTOP_PROFILE_PROC_TABLE_H
#define PMUTOP_PROFILE_PROC_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pmutop/sample/events.h"

struct aggregate;

struct proc_row {
	uint32_t pid;                     /* 0: samples whose process is unknown */
	char comm[16];                    /* the leader's command name, else a thread's; "" */
	uint32_t nthreads;                /* threads (or folded groups) with weight here */
	uint64_t samples;
	uint64_t weight;                  /* the key event's */
	uint64_t ev[PMUTOP_MAX_EVENTS];   /* multi-event: every event's estimate */
};

struct proc_table {
	struct proc_row *rows;            /* heaviest first, then by pid */
	size_t nrows;
	uint64_t total, samples;          /* over every row */
	size_t nevents;                   /* > 1: a multi-event table (ev[], names) */
	unsigned key;
	const char *ev_name[PMUTOP_MAX_EVENTS];
	const char *ev_unit[PMUTOP_MAX_EVENTS];
	uint64_t ev_total[PMUTOP_MAX_EVENTS];
};

/*
 * Group a's stacks by process. w == NULL: each stack's own weights (with
 * several events in a, every event, scaled for multiplexing) and samples;
 * else stack i < nw weighs w[i * nev + k] for event k (nev 1: one weight,
 * that of the shown event; nev > 1: every event of the run, key is the
 * shown one) and counts samples[i] samples (samples may be NULL: 0), and
 * stacks with no weight and no samples are left out. Returns 0, -EINVAL
 * (nev or key out of range) or -ENOMEM; proc_table_free() releases rows.
 */
int proc_table_build(const struct aggregate *a, const uint64_t *w, const uint64_t *samples,
		     size_t nw, size_t nev, unsigned key, struct proc_table *t);
void proc_table_free(struct proc_table *t);

/*
 * Print the table (max_rows 0: all): a title line, then pid, command,
 * threads, samples, the key event and its share, and with several events
 * every other event and the ratios they allow. unit is the key event's.
 */
void proc_table_print(const struct proc_table *t, FILE *out, size_t max_rows,
		      const char *unit);

#endif
