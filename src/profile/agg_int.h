/*
 * agg_int.h - the aggregate's insides, shared by the files that make it up
 * (private to src/profile/agg*.c; everything else goes through
 * include/pmutop/profile/aggregate.h).
 *
 * The aggregate is split by what each file holds:
 *   agg_index.c   hashing, the open-addressing index, the arena
 *   aggregate.c   interning (mappings, functions, locations, addresses),
 *                 the calling-context tree, threads, samples, the views
 *   agg_lines.c   file:line from debug info, looked up after the fact
 *   agg_leaf.c    where a stack's leaf samples landed, address by address
 *   agg_import.c  building an aggregate from a saved profile
 *   agg_budget.c  the memory budget: measuring, and the rebuild that
 *                 merges (address detail, exited threads, cold subtrees)
 */
#ifndef PMUTOP_AGG_INT_H
#define PMUTOP_AGG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmutop/profile/aggregate.h"

/* ---- hashing (agg_index.c) ---- */

static inline uint64_t hash_round(uint64_t h, uint64_t v)
{
	h ^= v * 0xc2b2ae3d27d4eb4fULL;
	h = (h << 31) | (h >> 33);
	return h * 0x9e3779b97f4a7c15ULL;
}

/* murmur3's fmix64, folded to the 32 bits an index slot keeps. */
static inline uint32_t hash_final(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return (uint32_t)(h ^ (h >> 32));
}

uint32_t hash_str(const char *s);

/*
 * One open-addressing index type for every lookup table (linear probing,
 * power-of-two size, at most 70% full) over dense entry arrays; a slot
 * keeps the entry's hash beside its number, so most mismatches are
 * rejected without touching the entry and growing never re-hashes keys.
 */
struct slot {
	uint32_t hash;
	uint32_t ref;  /* entry number + 1; 0 = empty */
};

struct index {
	struct slot *slots;
	size_t mask;   /* capacity - 1 */
	size_t count;
};

int index_init(struct index *ix, size_t cap);

typedef bool (*index_eq_fn)(const struct aggregate *a, uint32_t entry, const void *key);

/* The slot holding key, or the empty slot where it would go. */
static inline struct slot *index_probe(const struct index *ix, uint32_t hash,
				       index_eq_fn eq, const struct aggregate *a,
				       const void *key)
{
	size_t i = hash & ix->mask;

	for (;;) {
		struct slot *s = &ix->slots[i];

		if (!s->ref || (s->hash == hash && eq(a, s->ref - 1, key)))
			return s;
		i = (i + 1) & ix->mask;
	}
}

/*
 * Room for one more entry: 0 or -ENOMEM; after growing (*grown), a slot
 * found earlier by index_probe() is stale (index_insert looks again).
 */
int index_reserve(struct index *ix, bool *grown);
void index_insert(struct index *ix, struct slot *s, bool grown, uint32_t hash, uint32_t entry);
/* Room for n entries at once (a rebuild sizes its tables up front). */
int index_presize(struct index *ix, size_t n);

/* Stable storage for strings, inline chains and count arrays. */
struct arena {
	struct chunk *head;
	size_t bytes;  /* allocated, for the memory budget */
};

void *arena_alloc(struct arena *ar, size_t size, size_t align);
void arena_free(struct arena *ar);

/* A growable array of entries; n doubles as the next id - 1. */
#define VEC(type) struct { type *v; size_t n, cap; }

void *vec_grow(void *v, size_t *cap, size_t elsize);

/* Make room for one more element in a VEC: 0 or -ENOMEM. */
#define VEC_RESERVE(vec)                                                      \
	((vec).n < (vec).cap ? 0 :                                            \
	 ((vec).v = vec_grow((vec).v, &(vec).cap, sizeof(*(vec).v)),          \
	  (vec).n < (vec).cap ? 0 : -ENOMEM))

/* ---- the aggregate ---- */

struct pending_loc {
	uint32_t loc_id;
	uint32_t aidx;            /* its entry in the address table */
	bool unnamed;             /* no symbol: only DWARF can name it */
	const struct mapping *map;
	uint64_t addr;
};

/*
 * A node of the calling-context tree: one frame (location) under its
 * caller. Node 0 is the root (no location). A node's id is always larger
 * than its parent's (nodes are made top-down, and a rebuild copies them
 * in id order), so one pass in id order visits callers first and one in
 * reverse visits callees first.
 */
struct cct_node {
	uint32_t parent;
	uint32_t loc;
	uint32_t depth;          /* frames from the root: the stack's nlocs */
	uint32_t pruned;         /* a "[N cold frames pruned]" node: N; else 0 */
};

struct aggregate {
	struct agg_info info;
	uint64_t generation;           /* rebuilds: see aggregate_generation() */

	VEC(struct agg_mapping) maps;
	VEC(uint64_t) map_keys;        /* struct mapping.key of each agg mapping:
	                                  unique across the processes of a run */
	VEC(struct agg_function) funcs;
	VEC(struct agg_location) locs;
	VEC(struct cct_node) nodes;    /* the tree; nodes.v[0] is the root */
	VEC(struct agg_stack) stacks;  /* (thread, node) -> counts */
	size_t ev_width;               /* events per stack's weights/ev_samples (>= 1) */
	VEC(struct agg_thread) threads;
	VEC(const char *) strs;        /* interned strings */
	VEC(struct agg_address) addrs; /* address table and leaf histogram */
	VEC(uint32_t) loc_canon;       /* per location: 0, or the id it merged into */
	/*
	 * Per function id: 0, or the function debug info showed it to be (the
	 * same name with its source file), so that addresses named from the
	 * symbol table alone and those DWARF resolved are one function in
	 * every output. Indexed by id; fredir_n entries.
	 */
	uint32_t *fredir;
	size_t fredir_n;
	/* Locations whose debug info is still to be looked up. */
	VEC(struct pending_loc) pending;

	struct index map_ix, func_ix, loc_ix, node_ix, stack_ix, thread_ix, str_ix;
	/* loc_ix: locations by source position (canonical ones only). */
	struct index addr_ix;          /* addrs by (mapping id, address) */
	struct agg_limits lim;
	size_t exited, merged;         /* exited threads, merged locations to fold */
	struct arena arena;

	uint32_t *scratch;             /* location ids of the sample being added */
	unsigned scratch_cap;
	/*
	 * The last sample's path, root first: its location ids and tree nodes
	 * (room for scratch_cap). The next sample walks its shared prefix by
	 * comparing ids instead of probing the node index frame by frame.
	 */
	uint32_t *last_locs, *last_nodes;
	unsigned last_n;

	/* Consecutive frames are usually in the same mapping. */
	uint64_t last_map_key;
	uint32_t last_map_id;
};

/* aggregate.c, for the other agg files */
const char *str_intern(struct aggregate *a, const char *s);
int function_intern(struct aggregate *a, const char *name, const char *file, uint32_t *id);
int function_intern_sym(struct aggregate *a, const char *raw, const char *file,
			int64_t start_line, uint32_t *id);
int location_push(struct aggregate *a, uint32_t mapping_id, uint64_t address,
		  uint32_t function_id, uint32_t *id);
int pos_canonical(struct aggregate *a, uint32_t id, uint32_t *canon);
uint32_t func_redirected(const struct aggregate *a, uint32_t fid);
int func_redirect(struct aggregate *a, uint32_t from, uint32_t to);
int mapping_index(struct aggregate *a, uint64_t key, uint32_t entry);
struct agg_thread *thread_get(struct aggregate *a, uint32_t tid);
uint32_t thread_find(const struct aggregate *a, uint32_t tid); /* entry + 1, or 0 */
/* The child of node parent at location loc (made when new): 0 on ENOMEM. */
uint32_t node_get(struct aggregate *a, uint32_t parent, uint32_t loc);
struct agg_stack *stack_get(struct aggregate *a, uint32_t tid, uint32_t node);
int widen(struct aggregate *a, size_t n);
/* The address entry of (mapping id, address), or UINT32_MAX. */
uint32_t address_find(const struct aggregate *a, uint32_t mapping_id, uint64_t address);
int address_index(struct aggregate *a, uint32_t entry);

/* agg_budget.c: the rebuild (aggregate_maintain) */
int agg_rebuild(struct aggregate *a, bool over_budget);

#endif
