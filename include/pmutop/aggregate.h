/*
 * aggregate.h - the profile being built: identical stacks counted once.
 *
 * Frames are interned into the pprof model as they arrive: mappings,
 * functions (name + file) and locations (mapping + address) each get a dense
 * id from 1, and a stack is the array of its location ids, leaf first.
 * Stacks are keyed by (tid, locations) in a hash table, so every sample
 * keeps its thread. The read-only accessors below are what the sinks
 * (pprof writer, text table, top view) use; they never see the hash table.
 */
#ifndef PMUTOP_AGGREGATE_H
#define PMUTOP_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmutop/unwind.h"

struct frame;

struct agg_mapping {
	uint32_t id;
	uint64_t start, limit, offset;
	const char *file;      /* "" for anonymous memory */
	const char *build_id;  /* hex, or "" */
	bool has_functions;    /* every location in it got a symbol name */
};

struct agg_function {
	uint32_t id;
	const char *name;
	const char *file;      /* module path the function lives in ("" if unknown) */
};

struct agg_location {
	uint32_t id;
	uint32_t mapping_id;   /* 0 when no mapping */
	uint64_t address;      /* runtime address */
	uint32_t function_id;  /* always set: unnamed code gets "module+0xOFF" */
};

struct agg_stack {
	uint32_t tid;
	uint32_t nlocs;
	const uint32_t *locs;  /* location ids, leaf first */
	uint64_t samples;      /* number of samples with this (tid, stack) */
	uint64_t weight;       /* sum of their event counts (periods) */
};

struct agg_thread {
	uint32_t tid;
	char name[16];
	uint64_t samples;
};

/* Facts about the run that end up in the profile header and summary. */
struct agg_info {
	const char *event;          /* sample type name, e.g. "cycles" */
	const char *event_unit;     /* "count" or "nanoseconds" */
	uint64_t period;            /* nominal events per sample */
	uint64_t start_ns;          /* wall clock (CLOCK_REALTIME) at start */
	uint64_t duration_ns;
	uint64_t samples;           /* samples aggregated (aggregate_add counts them) */
	uint64_t lost;              /* samples the kernel dropped (PERF_RECORD_LOST) */
	uint64_t throttled;         /* THROTTLE records */
	uint64_t foreign;           /* samples of other processes (dropped) */
	uint64_t outcomes[UNWIND_NOUTCOMES];
};

struct aggregate;

struct aggregate *aggregate_new(void);
void aggregate_free(struct aggregate *a);

/*
 * Count one sample of `weight` events on thread tid with the given frames
 * (leaf first). Returns 0 or -ENOMEM (the sample is then dropped).
 * Strings the frames point to are copied; n may be 0.
 */
int aggregate_add(struct aggregate *a, uint32_t tid, const struct frame *frames,
		  unsigned n, uint64_t weight);

/* Name (comm) of a thread; the latest name wins. */
void aggregate_set_thread_name(struct aggregate *a, uint32_t tid, const char *name);

/* Mutable run facts (the record loop fills them in). */
struct agg_info *aggregate_info(struct aggregate *a);
const struct agg_info *aggregate_info_const(const struct aggregate *a);

/*
 * Read-only views. Arrays are indexed by id - 1 for mappings/functions/locations.
 * The arrays may move on the next aggregate_add() or aggregate_set_thread_name();
 * the strings and agg_stack.locs they point to live until aggregate_free().
 */
const struct agg_stack *aggregate_stacks(const struct aggregate *a, size_t *n);
const struct agg_location *aggregate_locations(const struct aggregate *a, size_t *n);
const struct agg_function *aggregate_functions(const struct aggregate *a, size_t *n);
const struct agg_mapping *aggregate_mappings(const struct aggregate *a, size_t *n);
const struct agg_thread *aggregate_threads(const struct aggregate *a, size_t *n);
/* The thread record of tid, or NULL. */
const struct agg_thread *aggregate_thread(const struct aggregate *a, uint32_t tid);

#endif
