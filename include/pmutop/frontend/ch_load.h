/*
 * ch_load.h - a slice of the fleet read back from ClickHouse (--load
 * 'clickhouse://HOST:PORT/DB?host=a&comm=postgres&from=-1h&to=now&event=cycles')
 * as one profile, for the table, the live view and --dump.
 *
 * The merging is ClickHouse's: one GROUP BY stack id over the matching
 * rows (read FINAL, so a window sent twice counts once); pmutop then reads
 * only the distinct stacks' frames. Query keys: host, comm, thread, pid,
 * tid, event, from and to (now, -90s, -30m, -1h, -2d, or Unix seconds;
 * windows whose start lies in [from, to]); any other key is a --label of
 * the agents (service=db). A key given twice matches either value.
 */
#ifndef PMUTOP_FRONTEND_CH_LOAD_H
#define PMUTOP_FRONTEND_CH_LOAD_H

#include <stddef.h>

struct aggregate;

/* What the query matched (the summary line). */
struct ch_load_stats {
	unsigned long long windows, hosts, rows, stacks;
	double seconds;             /* wall time of the load */
	/*
	 * With a by label: its values, by_values[i] for the stacks of thread
	 * (and pid) i + 1 in the aggregate; freed with ch_load_stats_free().
	 */
	char **by_values;
	size_t nby;
};
void ch_load_stats_free(struct ch_load_stats *st);

/*
 * Read url's slice into a new aggregate (*out). by (may be NULL): a label
 * (host, comm, thread, pid, or a --label key) whose values become the
 * aggregate's processes and threads (pid = tid = value's index + 1; see
 * ch_load_stats.by_values), for a per-label view (--by). Returns 0; -EINVAL (a bad
 * URL or query key: the reason in err), -ENOENT (nothing matched),
 * -EIO (the server failed or did not answer: its message in err), -ENOMEM.
 * stats may be NULL.
 */
int ch_load_read(const char *url, const char *by, struct aggregate **out,
		 struct ch_load_stats *stats, char *err, size_t errlen);

#endif
