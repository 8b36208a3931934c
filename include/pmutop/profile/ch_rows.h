/*
 * ch_rows.h - one window of a profile as ClickHouse rows (--push
 * clickhouse://): the bodies of three INSERT ... FORMAT JSONEachRow.
 *
 * The rows are the fleet store's model (README "A fleet in ClickHouse"):
 * samples rows (window id, window start and length, labels, event, stack id,
 * value), stacks (stack id -> frames, leaf first) and mappings (mapping id
 * -> module file, build-id). Stack and mapping ids are hashes of what they
 * name - frames' function, file, line, module and module-relative address -
 * so the same stack has the same id in every window, on every host running
 * the same binaries, and a window sent twice holds the very same rows: the
 * tables (ReplacingMergeTree) and the reader deduplicate on them. The
 * encoder is plain C over the read-only aggregate; the HTTP side is the
 * frontend's (push.c).
 */
#ifndef PMUTOP_PROFILE_CH_ROWS_H
#define PMUTOP_PROFILE_CH_ROWS_H

#include <stddef.h>
#include <stdint.h>

struct aggregate;

/* Schema version: table names end in _v<N> (ch_rows_ddl). */
#define CH_SCHEMA_VERSION 1

/* Labels every row of an agent carries besides the thread's own. */
struct ch_labels {
	const char *host;              /* --label host=..., else the machine's name */
	size_t n;                      /* other --label KEY=VALUE */
	const char *const *keys, *const *values;
};

/* A growable byte buffer. */
struct ch_buf {
	char *p;
	size_t len, cap;
};
void ch_buf_free(struct ch_buf *b);
/* Append n bytes; 0 or -ENOMEM. */
int ch_buf_add(struct ch_buf *b, const void *s, size_t n);

/* One window's bodies (each may be empty: nothing new of that kind). */
struct ch_batch {
	uint64_t window_id;
	uint64_t start_ns;
	struct ch_buf mappings, stacks, samples;
	uint64_t rows;                 /* rows in all three */
	uint64_t samples_total;        /* sum of the samples column (summary) */
};
void ch_batch_free(struct ch_batch *b);

/*
 * Ids already in an earlier batch of this run: a stack or mapping is
 * written once, in the first window that has it. ch_seen_clear() forgets
 * them all (a batch was dropped: the next windows carry theirs again).
 */
struct ch_seen;
struct ch_seen *ch_seen_new(void);
void ch_seen_clear(struct ch_seen *s);
void ch_seen_free(struct ch_seen *s);

/*
 * Encode aggregate a (one window; its agg_info says start and length) as
 * rows of window window_id with labels l. Stacks and mappings already in
 * seen (may be NULL: all) are left out, the new ones added to it.
 * Returns 0 (out filled, freed by the caller) or -ENOMEM.
 */
int ch_rows_encode(const struct aggregate *a, uint64_t window_id, const struct ch_labels *l,
		   struct ch_seen *seen, struct ch_batch *out);

/* 64-bit hash of n bytes (FNV-1a, then a finalizer), chained by seed. */
uint64_t ch_hash(const void *p, size_t n, uint64_t seed);

/*
 * The DDL, statement i (0 .. until NULL) of the schema in database db:
 * CREATE ... IF NOT EXISTS, so running them all on every start is
 * harmless. Returns a malloc'ed string, NULL past the end or on ENOMEM
 * (*end tells which).
 */
char *ch_rows_ddl(const char *db, unsigned i, int *end);

/* Table names (without database) of this schema version. */
#define CH_T_SAMPLES "pmutop_samples_v1"
#define CH_T_STACKS "pmutop_stacks_v1"
#define CH_T_MAPPINGS "pmutop_mappings_v1"
#define CH_T_SCHEMA "pmutop_schema"

#endif
