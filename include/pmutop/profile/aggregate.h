/*
 * aggregate.h - the profile being built: a calling-context tree.
 *
 * Frames are interned into the pprof model as they arrive: mappings,
 * functions (name + file) and locations (mapping + address) each get a dense
 * id from 1. A sample's stack is a path in a calling-context tree (a prefix
 * tree of locations, root = the outermost caller), and its counts live in a
 * record keyed by (thread, tree node): threads and processes are labels on
 * the records, not copies of the tree, so memory follows the program's
 * distinct code paths - a new stack costs one node per frame it does not
 * share with an earlier one, plus one record per (thread, leaf node).
 * The read-only accessors below are what the sinks (pprof writer, text
 * table, top view) use; they see a stack as its record and read its
 * locations through aggregate_stack_path().
 *
 * Size follows the program, not the run: a location is one source position
 * (mapping file, function, inline chain of lines), not one address - every
 * address of it maps to one location, whose address is the first one seen
 * (a real instruction of it, for later symbolization); per-address detail
 * is kept where it is used, in the leaf-address histogram
 * (aggregate_addresses).
 *
 * Memory is bounded by a budget in bytes (agg_limits.max_memory). Nothing
 * is merged below it. Over it, aggregate_maintain() degrades in the order a
 * user would choose: per-address leaf detail first, then exited threads
 * folded into one record per thread name, and only then cold subtrees of
 * the tree pruned into a "[N cold frames pruned]" child of their caller, so
 * that every kept frame's cumulative value stays exact; what was merged is
 * counted in agg_info.
 */
#ifndef PMUTOP_AGGREGATE_H
#define PMUTOP_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmutop/sample/events.h"
#include "pmutop/unwind/unwind.h"

struct frame;

struct agg_mapping {
	uint32_t id;
	uint64_t start, limit, offset;
	const char *file;      /* "" for anonymous memory */
	const char *build_id;  /* hex, or "" */
	bool has_functions;    /* every location in it got a symbol name */
	/* Debug info (DWARF) gave every location in it a file / line / inline chain. */
	bool has_filenames, has_line_numbers, has_inline_frames;
};

struct agg_function {
	uint32_t id;
	const char *name;
	const char *file;      /* module path the function lives in ("" if unknown),
	                          or its source file when debug info named it */
	const char *system_name; /* the raw (mangled) symbol; NULL: same as name */
	int64_t start_line;    /* source line where it starts (DWARF), 0 if unknown */
};

/*
 * One source line of a location (pprof Line): the function and line number.
 * A location in inlined code has several, the innermost inlined callee first
 * and the function the code physically belongs to last.
 */
struct agg_line {
	uint32_t function_id;
	int64_t line;          /* 0 when unknown */
};

struct agg_location {
	uint32_t id;
	uint32_t mapping_id;   /* 0 when no mapping */
	uint64_t address;      /* runtime address */
	uint32_t function_id;  /* always set: unnamed code gets "module+0xOFF";
	                          with lines, that of lines[0] (innermost) */
	uint32_t nlines;       /* 0: no debug info, the one line is function_id */
	const struct agg_line *lines; /* nlines entries, innermost first */
	/*
	 * Code without a symbol or debug info: one location per address (the
	 * function, named by its FDE start, groups them), so the profile keeps
	 * every address for a later symbolizer (issue 13).
	 */
	bool exact;
};

/*
 * One record: the samples of thread tid whose stack is the path from tree
 * node `node` up to the root. Its location ids (leaf first) come from
 * aggregate_stack_path(); the leaf one is here for the many readers that
 * want only it.
 */
struct agg_stack {
	uint32_t tid;
	uint32_t nlocs;        /* frames: the node's depth */
	uint32_t node;         /* tree node (aggregate_stack_path) */
	uint32_t leaf;         /* the leaf location id; 0 for an empty stack */
	uint64_t samples;      /* number of samples with this (tid, stack) */
	uint64_t weight;       /* sum of their event counts (periods): weights[0] */
	/* Per event of the run (agg_info.events; one when nevents is 0): as
	 * many as the run has, not PMUTOP_MAX_EVENTS - a stack was 160 bytes,
	 * most of them zeros, and a long run holds tens of thousands, twice
	 * while it compacts (issue 23). Valid for k < max(nevents, 1). */
	uint64_t *weights;     /* sum of event k's counts */
	uint64_t *ev_samples;  /* samples of event k */
};

struct agg_thread {
	uint32_t tid;          /* a folded group's is AGG_TID_GROUP + n (not a real tid) */
	char name[16];
	uint64_t samples;
	uint32_t nthreads;     /* threads counted here: 1, or a group's folded threads
	                          that had samples */
	bool exited;           /* the thread ended; folded into its name later */
	bool folded;           /* a group: exited threads of this name */
	uint32_t pid;          /* its process; 0 when unknown (a loaded profile without labels) */
	char comm[16];         /* its process's command name ("" when unknown) */
};

/* Thread ids from here up are groups of exited threads (above any pid_max). */
#define AGG_TID_GROUP 0x40000000u

/*
 * The leaf-address histogram: per sampled address its location and how many
 * samples had it as the leaf (0 for addresses only seen as callers).
 */
struct agg_address {
	uint32_t mapping_id;   /* 0 when no mapping */
	uint32_t loc_id;       /* the location the address belongs to */
	uint64_t address;
	uint64_t leaf_samples;
	/* Per event of the run, the weight of those samples: where inside a
	 * line each event lands (the instruction view, annotate.h). */
	uint64_t leaf_weights[PMUTOP_MAX_EVENTS];
};

/*
 * The memory budget (aggregate_maintain enforces it): while the aggregate
 * holds more than max_memory bytes (aggregate_bytes), it merges - leaf
 * address detail first (caller-only entries, then the rarest leaves), then
 * exited threads into one record per name (at most max_names of them, then
 * "[other threads]"), then cold subtrees into "[N cold frames pruned]"
 * nodes - until it is under about two thirds of the budget. A rebuild holds
 * the old and the new aggregate for a moment: the process's peak is up to
 * twice the budget.
 */
struct agg_limits {
	size_t max_memory, max_names;
};

/* The default budget: far above what the programs measured need (README). */
#define AGG_DEFAULT_MAX_MEMORY (256u << 20)
/* The smallest budget accepted: an aggregate's empty tables and one sample. */
#define AGG_MIN_MAX_MEMORY (1u << 20)

/* Facts about the run that end up in the profile header and summary. */
/* One sampled event of the run: a pprof sample type. */
struct agg_event {
	const char *name;           /* "cycles" */
	const char *unit;           /* "count" or "nanoseconds" */
	uint64_t period;            /* nominal events per sample (0 with -F) */
	double scale;               /* time_enabled / time_running (> 1: multiplexed) */
};

struct agg_info {
	size_t nevents;             /* 0 means one event, described by event/event_unit/period */
	struct agg_event events[PMUTOP_MAX_EVENTS];
	const char *event;          /* sample type name, e.g. "cycles" (events[0]) */
	const char *event_unit;     /* "count" or "nanoseconds" */
	uint64_t period;            /* nominal events per sample */
	uint64_t start_ns;          /* wall clock (CLOCK_REALTIME) at start */
	uint64_t duration_ns;
	uint64_t samples;           /* samples aggregated (aggregate_add counts them) */
	uint64_t lost;              /* samples the kernel dropped (PERF_RECORD_LOST) */
	uint64_t throttled;         /* THROTTLE records */
	uint64_t foreign;           /* samples of other processes (dropped) */
	uint64_t pruned;            /* tree nodes pruned into "[N cold frames pruned]" */
	uint64_t pruned_samples;    /* samples whose stack lost frames that way */
	uint64_t threads_folded;    /* exited threads folded into their name */
	uint64_t leaf_dropped;      /* leaf samples whose address detail was dropped */
	uint64_t compactions;       /* times the aggregate was rebuilt over the budget */
	uint64_t max_memory;        /* the budget in bytes (agg_limits.max_memory) */
	/*
	 * Files whose symbols were evicted once no process mapped them
	 * (process_table_prune), since the run started: names already in the
	 * aggregate stay; the session sets it.
	 */
	uint64_t modules_evicted;
	uint64_t modules_parsed_max; /* the most files parsed at once (the cap's bound) */
	/*
	 * Counts since the run started, across windows and the live view's
	 * resets (the session keeps them; equal to the above without resets).
	 */
	uint64_t run_samples, run_lost, run_throttled, run_pruned;
	uint64_t window;            /* window number (0: one profile for the run) */
	uint64_t outcomes[UNWIND_NOUTCOMES];
	/*
	 * What the profile leaves out, in one line for the view header, the
	 * table and the summary (e.g. user mode only, and the knob that would
	 * change it); NULL when nothing. Owned by whoever sets it.
	 */
	const char *note;
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

/*
 * Like aggregate_add for event number `event` of a multi-event run: the
 * sample's weight goes to weights[event] (and to weight when event is 0).
 */
int aggregate_add_event(struct aggregate *a, uint32_t tid, const struct frame *frames,
			unsigned n, unsigned event, uint64_t weight);

/* Name (comm) of a thread; the latest name wins. */
void aggregate_set_thread_name(struct aggregate *a, uint32_t tid, const char *name);

/* Thread tid ended (PERF_RECORD_EXIT): aggregate_maintain() may fold it. */
void aggregate_thread_exited(struct aggregate *a, uint32_t tid);

/* Defaults: AGG_DEFAULT_MAX_MEMORY, 256 names. */
void aggregate_get_limits(const struct aggregate *a, struct agg_limits *lim);
void aggregate_set_limits(struct aggregate *a, const struct agg_limits *lim);

/*
 * Housekeeping between samples (the session calls it about once a second,
 * and before a profile is written): with lines, look up pending lines
 * (aggregate_resolve_lines), then - when no lines are pending - rebuild the
 * aggregate when a quarter of the locations merged (debug info showed them
 * to be one source position) or it is over its memory budget. force:
 * rebuild anyway (merging locations, and applying the budget if over it).
 * Every pointer from the read-only views is invalid afterwards. Returns 0
 * or -ENOMEM (the aggregate is then unchanged and still valid).
 */
int aggregate_maintain(struct aggregate *a, bool force, bool lines);
/* (It spends at most ~10 ms on lines; call again while lines are pending.) */

/*
 * A number that changes each time aggregate_maintain() rebuilds the
 * aggregate: stack indices, strings and view pointers taken before are then
 * invalid (a reader that keeps them, like the live view's model, re-reads).
 */
uint64_t aggregate_generation(const struct aggregate *a);

/* Bytes the aggregate holds now (tables, tree, records, strings). */
size_t aggregate_bytes(const struct aggregate *a);

/* Nodes of the calling-context tree (the root included). */
size_t aggregate_nodes(const struct aggregate *a);

/*
 * A stack's location ids, leaf first: s->nlocs of them, written into a
 * buffer the caller keeps in *p across calls (grown as needed; free it
 * with agg_path_free). Returns the ids, or NULL on ENOMEM. s must be a
 * record of a (the stack's node).
 */
struct agg_path {
	uint32_t *v;
	size_t cap;
};
const uint32_t *aggregate_stack_path(const struct aggregate *a, const struct agg_stack *s,
				     struct agg_path *p);
void agg_path_free(struct agg_path *p);

/* The leaf-address histogram (see struct agg_address), n entries. */
const struct agg_address *aggregate_addresses(const struct aggregate *a, size_t *n);

/*
 * Where a stack's leaf samples landed, address by address. A location is a
 * source position, so the samples of one stack may lie on several
 * instructions of its leaf line: the histogram says how many on each. A
 * part is a share of stack `stack` (index into aggregate_stacks()) at
 * address entry `addr` (index into aggregate_addresses(); UINT32_MAX: at
 * the leaf location's own address, when the table does not know better),
 * with its samples and per-event weights. A stack's parts add up exactly to
 * the stack; the parts at an address add up to its leaf counts (as far as
 * the capped histogram still holds them). Parts come in stack order. This is
 * what the instruction view and the pprof writer (one sample per part, so a
 * saved profile keeps its instructions) read.
 * Returns 0 (*out freed by the caller) or -ENOMEM.
 */
struct agg_leaf_part {
	uint32_t stack;
	uint32_t addr;
	uint64_t samples;
	uint64_t weights[PMUTOP_MAX_EVENTS];
};
int aggregate_leaf_parts(const struct aggregate *a, struct agg_leaf_part **out, size_t *n);
/*
 * The same parts one stack at a time, for a caller that streams them (the
 * pprof writer) rather than holding them all (80 bytes a part). new():
 * NULL on ENOMEM. stack(): stack s's parts (0 when none holds anything),
 * in a buffer valid until the next call. The aggregate must not change
 * while the iterator lives.
 */
struct agg_leaf_iter;
struct agg_leaf_iter *aggregate_leaf_iter_new(const struct aggregate *a);
size_t aggregate_leaf_iter_stack(struct agg_leaf_iter *it, size_t s,
				 const struct agg_leaf_part **parts);
void aggregate_leaf_iter_free(struct agg_leaf_iter *it);
/* The process a thread belongs to (pid, command name); the latest call wins. */
void aggregate_set_thread_process(struct aggregate *a, uint32_t tid, uint32_t pid,
				  const char *comm);

/* Mutable run facts (the record loop fills them in). */
struct agg_info *aggregate_info(struct aggregate *a);
const struct agg_info *aggregate_info_const(const struct aggregate *a);

/*
 * Read-only views. Arrays are indexed by id - 1 for mappings/functions/locations.
 * The arrays may move on the next aggregate_add() or aggregate_set_thread_name();
 * the strings they point to live until aggregate_free()
 * or the next aggregate_maintain().
 */
const struct agg_stack *aggregate_stacks(const struct aggregate *a, size_t *n);
const struct agg_location *aggregate_locations(const struct aggregate *a, size_t *n);
const struct agg_function *aggregate_functions(const struct aggregate *a, size_t *n);
const struct agg_mapping *aggregate_mappings(const struct aggregate *a, size_t *n);
const struct agg_thread *aggregate_threads(const struct aggregate *a, size_t *n);
/* The thread record of tid, or NULL. */
const struct agg_thread *aggregate_thread(const struct aggregate *a, uint32_t tid);

/*
 * Look up file:line and inlined frames (DWARF, debuginfo.h) for the
 * locations added since the last call. Deferred from aggregate_add()
 * because opening a large debug file takes long enough (100+ ms for libc)
 * to overflow the ring buffers if done at sample time. Afterwards such a
 * location has lines[] and its function_id is the innermost line's.
 * session_stop() calls it; a live view may call it before drawing.
 * stop (may be NULL) is asked every few locations: when it returns true
 * the rest stays pending and -EINTR is returned (a second Ctrl-C must not
 * wait for a large debug file). Returns 0, -EINTR or -ENOMEM.
 */
int aggregate_resolve_lines(struct aggregate *a, bool (*stop)(void *arg), void *arg);

/* Locations still waiting for aggregate_resolve_lines(). */
size_t aggregate_pending_lines(const struct aggregate *a);
/*
 * The mapping of the i-th of them (i < aggregate_pending_lines()): its
 * module must stay parsed until the lines are looked up (the module cache's
 * eviction looks them up first, process_table_evict()). NULL past the end.
 */
const struct mapping *aggregate_pending_mapping(const struct aggregate *a, size_t i);
/*
 * Look up now, with no time limit, the pending locations whose mapping
 * want() accepts (a module about to be evicted, process_table_evict());
 * the others, and those whose debug file is still on its way from
 * debuginfod, stay pending in their order. Returns 0 or -ENOMEM.
 */
int aggregate_resolve_lines_of(struct aggregate *a, bool (*want)(const struct mapping *m));

/*
 * The same within about budget_ns (0: no limit), so that a sampling loop
 * can drain its buffers between slices; aggregate_pending_lines() says how
 * many locations still wait.
 */
int aggregate_resolve_lines_for(struct aggregate *a, uint64_t budget_ns);

/*
 * Import: build an aggregate from a saved profile (pprof_read.c) instead of
 * from live frames. Each call appends one entry and returns its id in *id;
 * strings are copied. Mappings and locations are not deduplicated (a saved
 * profile's are already distinct, and inlined frames share an address);
 * functions are, by (name, file). aggregate_import_stack() counts `samples`
 * samples on (tid, locs) with weights[k] for event k (nweights events, from
 * 1 to PMUTOP_MAX_EVENTS) - every id must already exist.
 * All return 0, -EINVAL (bad id) or -ENOMEM. Don't mix with aggregate_add().
 */
int aggregate_import_mapping(struct aggregate *a, uint64_t start, uint64_t limit,
			     uint64_t offset, const char *file, const char *build_id,
			     bool has_functions, uint32_t *id);
int aggregate_import_function(struct aggregate *a, const char *name, const char *file,
			      uint32_t *id);
int aggregate_import_location(struct aggregate *a, uint32_t mapping_id, uint64_t address,
			      uint32_t function_id, uint32_t *id);
int aggregate_import_stack(struct aggregate *a, uint32_t tid, const uint32_t *locs,
			   unsigned n, uint64_t samples, const uint64_t *weights, size_t nweights);
/*
 * After importing a profile of several events: pprof keeps one samples count
 * per stack, which aggregate_import_stack() gives to every event the stack
 * has weight in. Share it out instead by each event's weight divided by
 * per_sample[k], that event's mean weight per sample in the run (from the
 * writer's comments; 0: unknown, the stack is left as it is). Stacks with
 * weight in one event only are exact already and stay as they are.
 */
void aggregate_share_event_samples(struct aggregate *a, const double *per_sample, size_t nev);
/*
 * Name event k of an imported profile (name, unit, nominal period or 0),
 * copied. Event 0 is also agg_info.event/event_unit; naming an event k >= 1
 * makes it a multi-event aggregate (agg_info.nevents = k + 1).
 * 0, -EINVAL (k too large) or -ENOMEM.
 */
int aggregate_set_event_k(struct aggregate *a, size_t k, const char *event, const char *unit,
			  uint64_t period);

#endif
