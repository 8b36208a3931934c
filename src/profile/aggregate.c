/*
 * aggregate.c - the profile being built: samples folded into a
 * calling-context tree.
 *
 * aggregate_add() is on the sampling hot path, so everything is interned
 * once and afterwards found by hashing small integers:
 *
 *   frame  --(mapping id, address)-->  location id  (string work only the
 *                                                    first time an address
 *                                                    is seen)
 *   (parent node, location id)  -->  tree node      (one probe per frame)
 *   (tid, node)  -->  stack record                  (one probe)
 *
 * A sample whose stack was seen before costs a few hash probes and no
 * allocation. The tree is why memory follows the program's distinct code
 * paths and not its stacks: deep, varied recursion that makes a new stack
 * with almost every sample costs one node (16 bytes and ~11 of index) per
 * frame it does not share with an earlier stack, not a copy of the whole
 * stack; threads are labels on the records, so a thread pool does not
 * multiply the tree. Strings (function names, paths, build-ids) are stored
 * once in an arena whose chunks never move, so the pointers the read-only
 * views hand out stay valid until the next aggregate_maintain(); the entry
 * arrays may move on the next add.
 *
 * And what is distinct follows the program, not the run: an address maps
 * to its location through the address table, and a location is one source
 * position (mapping file, function, lines), so the thousands of addresses
 * of a hot interpreter loop make one location when it has no debug info,
 * and a library reloaded at a new address reuses the old locations.
 * Addresses with debug info get a location of their own until their lines
 * are known (agg_lines.c), then point to the location with the same lines.
 * The rebuild (agg_budget.c) folds such merged locations and applies the
 * memory budget.
 */
#include "agg_int.h"

#include <errno.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmutop/symbols/debuginfo.h"
#include "pmutop/symbols/demangle.h"
#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"
#include "pmutop/symbols/symbolize.h"

/* ---- strings ---- */

static bool str_eq(const struct aggregate *a, uint32_t e, const void *key)
{
	return strcmp(a->strs.v[e], key) == 0;
}

/* The interned copy of s (compare interned strings by pointer), or NULL. */
const char *str_intern(struct aggregate *a, const char *s)
{
	uint32_t h = hash_str(s);
	struct slot *sl = index_probe(&a->str_ix, h, str_eq, a, s);
	size_t len;
	bool grown;
	char *copy;

	if (sl->ref)
		return a->strs.v[sl->ref - 1];
	if (index_reserve(&a->str_ix, &grown) || VEC_RESERVE(a->strs))
		return NULL;
	len = strlen(s) + 1;
	copy = arena_alloc(&a->arena, len, 1);
	if (!copy)
		return NULL;
	memcpy(copy, s, len);
	a->strs.v[a->strs.n] = copy;
	index_insert(&a->str_ix, sl, grown, h, (uint32_t)a->strs.n);
	a->strs.n++;
	return copy;
}

/* ---- mappings ---- */

static bool map_eq(const struct aggregate *a, uint32_t e, const void *key)
{
	return a->map_keys.v[e] == *(const uint64_t *)key;
}

static int mapping_intern(struct aggregate *a, const struct mapping *m, uint32_t *id)
{
	uint64_t key = m->key;
	uint32_t h;
	struct agg_mapping *am;
	const char *file, *build_id;
	struct slot *sl;
	bool grown;

	if (a->last_map_id && a->last_map_key == key) {
		*id = a->last_map_id;
		return 0;
	}
	h = hash_final(hash_round(0x6d6170, key));
	sl = index_probe(&a->map_ix, h, map_eq, a, &key);
	if (!sl->ref) {
		file = str_intern(a, m->path ? m->path : "");
		build_id = str_intern(a, m->mod ? module_build_id(m->mod)
					     : m->build_id ? m->build_id : "");
		if (!file || !build_id || index_reserve(&a->map_ix, &grown) ||
		    VEC_RESERVE(a->maps) || VEC_RESERVE(a->map_keys))
			return -ENOMEM;
		am = &a->maps.v[a->maps.n];
		am->id = (uint32_t)a->maps.n + 1;
		am->start = m->start;
		am->limit = m->end;
		am->offset = m->pgoff;
		am->file = file;
		am->build_id = build_id;
		am->has_functions = true;
		/* Until a location in it turns out to have no debug info. */
		am->has_filenames = am->has_line_numbers = am->has_inline_frames = m->dbg != NULL;
		a->map_keys.v[a->map_keys.n++] = key;
		index_insert(&a->map_ix, sl, grown, h, (uint32_t)a->maps.n);
		a->maps.n++;
		*id = am->id;
	} else {
		*id = sl->ref;
	}
	a->last_map_key = key;
	a->last_map_id = *id;
	return 0;
}

int mapping_index(struct aggregate *a, uint64_t key, uint32_t entry)
{
	uint32_t h = hash_final(hash_round(0x6d6170, key));
	struct slot *sl = index_probe(&a->map_ix, h, map_eq, a, &key);
	bool grown;

	if (index_reserve(&a->map_ix, &grown))
		return -ENOMEM;
	index_insert(&a->map_ix, sl, grown, h, entry);
	return 0;
}

/* ---- functions ---- */

struct func_key {
	const char *name, *file;  /* interned */
};

static bool func_eq(const struct aggregate *a, uint32_t e, const void *key)
{
	const struct func_key *k = key;

	return a->funcs.v[e].name == k->name && a->funcs.v[e].file == k->file;
}

int function_intern(struct aggregate *a, const char *name, const char *file,
			   uint32_t *id)
{
	struct func_key k = { str_intern(a, name), str_intern(a, file) };
	struct agg_function *f;
	struct slot *sl;
	uint32_t h;
	bool grown;

	if (!k.name || !k.file)
		return -ENOMEM;
	h = hash_final(hash_round(hash_round(0x66756e63, (uintptr_t)k.name),
				  (uintptr_t)k.file));
	sl = index_probe(&a->func_ix, h, func_eq, a, &k);
	if (sl->ref) {
		*id = sl->ref;
		return 0;
	}
	if (index_reserve(&a->func_ix, &grown) || VEC_RESERVE(a->funcs))
		return -ENOMEM;
	f = &a->funcs.v[a->funcs.n];
	f->id = (uint32_t)a->funcs.n + 1;
	f->name = k.name;
	f->file = k.file;
	f->system_name = NULL;
	f->start_line = 0;
	index_insert(&a->func_ix, sl, grown, h, (uint32_t)a->funcs.n);
	a->funcs.n++;
	*id = f->id;
	return 0;
}

/* ---- locations ---- */

/* An address: (mapping id, runtime address). */
struct loc_key {
	uint32_t mapping_id;
	uint64_t address;
};

static bool addr_eq(const struct aggregate *a, uint32_t e, const void *key)
{
	const struct loc_key *k = key;

	return a->addrs.v[e].address == k->address &&
	       a->addrs.v[e].mapping_id == k->mapping_id;
}

static inline uint32_t addr_hash(const struct loc_key *k)
{
	return hash_final(hash_round(hash_round(0x6c6f63, k->mapping_id), k->address));
}

/*
 * A source position: the mapping's file (interned; NULL without a
 * mapping), the function and the inline chain. Two addresses with equal
 * positions share one location.
 */
struct pos_key {
	const char *file;
	uint32_t function_id, nlines;
	const struct agg_line *lines;
	uint64_t exact;            /* agg_location.exact: its address is part of it; else 0 */
};

static const char *loc_file(const struct aggregate *a, const struct agg_location *l)
{
	return l->mapping_id ? a->maps.v[l->mapping_id - 1].file : NULL;
}

static bool pos_eq(const struct aggregate *a, uint32_t e, const void *key)
{
	const struct pos_key *k = key;
	const struct agg_location *l = &a->locs.v[e];

	if (l->function_id != k->function_id || l->nlines != k->nlines ||
	    loc_file(a, l) != k->file || (l->exact ? l->address : 0) != k->exact)
		return false;
	for (uint32_t i = 0; i < k->nlines; i++)
		if (l->lines[i].function_id != k->lines[i].function_id ||
		    l->lines[i].line != k->lines[i].line)
			return false;
	return true;
}

static uint32_t pos_hash(const struct pos_key *k)
{
	uint64_t h = hash_round(hash_round(hash_round(0x706f73, (uintptr_t)k->file),
					   ((uint64_t)k->nlines << 32) | k->function_id),
				k->exact);

	for (uint32_t i = 0; i < k->nlines; i++)
		h = hash_round(h, ((uint64_t)k->lines[i].function_id << 32) ^
				  (uint64_t)k->lines[i].line);
	return hash_final(h);
}

static struct pos_key loc_pos(const struct aggregate *a, const struct agg_location *l)
{
	return (struct pos_key){ loc_file(a, l), l->function_id, l->nlines, l->lines,
				 l->exact ? l->address : 0 };
}

/*
 * The location with l's source position, or (none yet) make l the one:
 * returns the canonical id.
 */
int pos_canonical(struct aggregate *a, uint32_t id, uint32_t *canon)
{
	struct pos_key k = loc_pos(a, &a->locs.v[id - 1]);
	uint32_t h = pos_hash(&k);
	struct slot *sl = index_probe(&a->loc_ix, h, pos_eq, a, &k);
	bool grown;

	if (sl->ref) {
		*canon = sl->ref;
		return 0;
	}
	if (index_reserve(&a->loc_ix, &grown))
		return -ENOMEM;
	index_insert(&a->loc_ix, sl, grown, h, id - 1);
	*canon = id;
	return 0;
}

/* Append a location; 0 or -ENOMEM. */
int location_push(struct aggregate *a, uint32_t mapping_id, uint64_t address,
			 uint32_t function_id, uint32_t *id)
{
	struct agg_location *l;

	if (VEC_RESERVE(a->locs) || VEC_RESERVE(a->loc_canon))
		return -ENOMEM;
	l = &a->locs.v[a->locs.n];
	l->id = (uint32_t)a->locs.n + 1;
	l->mapping_id = mapping_id;
	l->address = address;
	l->function_id = function_id;
	l->nlines = 0;
	l->lines = NULL;
	l->exact = false;
	a->loc_canon.v[a->loc_canon.n++] = 0;
	a->locs.n++;
	*id = l->id;
	return 0;
}

/*
 * Whether a location in m gets its lines from debug info (later, see
 * aggregate_resolve_lines()); finds m's debug file on first use.
 */
static bool m_has_debuginfo(const struct mapping *m)
{
	return m && m->mod && m->dbg && debuginfo_prepare(m->dbg, m);
}

/* The function fid stands for now (see aggregate.fredir). */
uint32_t func_redirected(const struct aggregate *a, uint32_t fid)
{
	for (int hops = 0; hops < 4 && fid < a->fredir_n && a->fredir[fid]; hops++)
		fid = a->fredir[fid];
	return fid;
}

/* Record that function from is function to (same name, source file known). */
int func_redirect(struct aggregate *a, uint32_t from, uint32_t to)
{
	if (from == to || func_redirected(a, to) == from)
		return 0;
	if (from >= a->fredir_n) {
		size_t n = a->funcs.n + 1 > from + 1 ? a->funcs.n + 1 : from + 1;
		uint32_t *v = realloc(a->fredir, n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + a->fredir_n, 0, (n - a->fredir_n) * sizeof(*v));
		a->fredir = v;
		a->fredir_n = n;
	}
	a->fredir[from] = to;
	return 0;
}

/*
 * A function by its raw symbol: the name shown is the demangled one (C++,
 * Rust), the raw one is kept as system_name. start_line from debug info.
 */
int function_intern_sym(struct aggregate *a, const char *raw, const char *file,
			int64_t start_line, uint32_t *id)
{
	char *dm = demangle(raw);
	struct agg_function *f;
	int err = function_intern(a, dm ? dm : raw, file, id);

	if (!err) {
		f = &a->funcs.v[*id - 1];
		if (dm && !f->system_name)
			f->system_name = str_intern(a, raw);
		if (!f->start_line)
			f->start_line = start_line;
	}
	free(dm);
	return err;
}
/*
 * First sight of an address: name its function, find (or make) its
 * location, and record the address. Returns the address entry's index.
 */
static int address_new(struct aggregate *a, const struct frame *f,
		       const struct loc_key *k, uint32_t h, struct slot *sl,
		       uint32_t *idx)
{
	bool pending = m_has_debuginfo(f->map);
	const struct mapping *m = f->map;
	char buf[256];
	const char *name = f->func, *file = "";
	struct agg_address *ad;
	uint32_t fid, id, canon;
	bool grown;
	int err;

	if (!name) {
		name = symbolize_fallback_name(f, buf, sizeof(buf));
		if (!name)
			name = "";
	}
	if (m) {
		file = m->mod ? module_path(m->mod) : m->path;
		if (!file)
			file = "";
	}
	err = function_intern_sym(a, name, file, 0, &fid);
	if (err)
		return err;
	fid = func_redirected(a, fid);
	if (index_reserve(&a->addr_ix, &grown) || VEC_RESERVE(a->addrs) ||
	    (pending && VEC_RESERVE(a->pending)))
		return -ENOMEM;
	err = location_push(a, k->mapping_id, k->address, fid, &id);
	if (err)
		return err;
	/* No symbol: a location per address until debug info names it. */
	a->locs.v[id - 1].exact = !f->func;
	/* An interpreter's frame (a Python function): its one line is known now. */
	if (f->src_line && !pending) {
		struct agg_line *ln = arena_alloc(&a->arena, sizeof(*ln), alignof(struct agg_line));

		if (!ln) {
			a->locs.n--;
			a->loc_canon.n--;
			return -ENOMEM;
		}
		ln->function_id = fid;
		ln->line = f->src_line;
		a->locs.v[id - 1].lines = ln;
		a->locs.v[id - 1].nlines = 1;
	}
	canon = id;
	if (!pending) {
		/* No lines to wait for: its position is known now. */
		err = pos_canonical(a, id, &canon);
		if (err) {
			a->locs.n--;
			a->loc_canon.n--;
			return err;
		}
		if (canon != id) {
			a->locs.n--; /* an address of a known location */
			a->loc_canon.n--;
		}
	}
	if (!f->func && !pending && k->mapping_id)
		a->maps.v[k->mapping_id - 1].has_functions = false;
	/*
	 * Lines from nowhere (no debug info, no interpreter line): say so. A
	 * source file's mapping (Python code) has its file and lines.
	 */
	if (!pending && k->mapping_id) {
		struct agg_mapping *am = &a->maps.v[k->mapping_id - 1];

		if (!f->src_line)
			am->has_filenames = am->has_line_numbers = am->has_inline_frames = false;
		else if (!m->mod)
			am->has_filenames = am->has_line_numbers = true;
	}
	/* DWARF later (aggregate_resolve_lines): it can take long on first use. */
	if (pending)
		a->pending.v[a->pending.n++] = (struct pending_loc){
			id, (uint32_t)a->addrs.n, !f->func, f->map, f->addr };
	ad = &a->addrs.v[a->addrs.n];
	ad->mapping_id = k->mapping_id;
	ad->address = k->address;
	ad->loc_id = canon;
	ad->leaf_samples = 0;
	memset(ad->leaf_weights, 0, sizeof(ad->leaf_weights));
	index_insert(&a->addr_ix, sl, grown, h, (uint32_t)a->addrs.n);
	*idx = (uint32_t)a->addrs.n++;
	return 0;
}

/* The address entry of a frame (its location: addrs.v[*idx].loc_id). */
static inline int address_intern(struct aggregate *a, const struct frame *f,
				 uint32_t *idx)
{
	struct loc_key k = { 0, f->addr };
	struct slot *sl;
	uint32_t h;
	int err;

	if (f->map) {
		err = mapping_intern(a, f->map, &k.mapping_id);
		if (err)
			return err;
	}
	h = addr_hash(&k);
	sl = index_probe(&a->addr_ix, h, addr_eq, a, &k);
	if (sl->ref) {
		*idx = sl->ref - 1;
		return 0;
	}
	return address_new(a, f, &k, h, sl, idx);
}

int address_index(struct aggregate *a, uint32_t entry)
{
	struct loc_key k = { a->addrs.v[entry].mapping_id, a->addrs.v[entry].address };
	uint32_t h = addr_hash(&k);
	struct slot *sl = index_probe(&a->addr_ix, h, addr_eq, a, &k);
	bool grown;

	if (index_reserve(&a->addr_ix, &grown))
		return -ENOMEM;
	index_insert(&a->addr_ix, sl, grown, h, entry);
	return 0;
}

/* ---- threads ---- */

static bool thread_eq(const struct aggregate *a, uint32_t e, const void *key)
{
	return a->threads.v[e].tid == *(const uint32_t *)key;
}

static inline uint32_t thread_hash(uint32_t tid)
{
	return hash_final(hash_round(0x746964, tid));
}

struct agg_thread *thread_get(struct aggregate *a, uint32_t tid)
{
	uint32_t h = thread_hash(tid);
	struct slot *sl = index_probe(&a->thread_ix, h, thread_eq, a, &tid);
	struct agg_thread *t;
	bool grown;

	if (sl->ref)
		return &a->threads.v[sl->ref - 1];
	if (index_reserve(&a->thread_ix, &grown) || VEC_RESERVE(a->threads))
		return NULL;
	t = &a->threads.v[a->threads.n];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->nthreads = 1;
	index_insert(&a->thread_ix, sl, grown, h, (uint32_t)a->threads.n);
	a->threads.n++;
	return t;
}

uint32_t thread_find(const struct aggregate *a, uint32_t tid)
{
	return index_probe(&a->thread_ix, thread_hash(tid), thread_eq, a, &tid)->ref;
}

/* ---- the calling-context tree ---- */

struct node_key {
	uint32_t parent, loc;
};

static bool node_eq(const struct aggregate *a, uint32_t e, const void *key)
{
	const struct node_key *k = key;

	return a->nodes.v[e].parent == k->parent && a->nodes.v[e].loc == k->loc;
}

static inline uint32_t node_hash(uint32_t parent, uint32_t loc)
{
	return hash_final(hash_round(0x6e6f6465, ((uint64_t)parent << 32) | loc));
}

uint32_t node_get(struct aggregate *a, uint32_t parent, uint32_t loc)
{
	struct node_key k = { parent, loc };
	uint32_t h = node_hash(parent, loc);
	struct slot *sl = index_probe(&a->node_ix, h, node_eq, a, &k);
	struct cct_node *n;
	bool grown;

	if (sl->ref)
		return sl->ref - 1;
	if (index_reserve(&a->node_ix, &grown) || VEC_RESERVE(a->nodes))
		return 0;
	n = &a->nodes.v[a->nodes.n];
	n->parent = parent;
	n->loc = loc;
	n->depth = a->nodes.v[parent].depth + 1;
	n->pruned = 0;
	index_insert(&a->node_ix, sl, grown, h, (uint32_t)a->nodes.n);
	return (uint32_t)a->nodes.n++;
}

/* ---- stack records: (thread, node) -> counts ---- */

struct stack_key {
	uint32_t tid, node;
};

static bool stack_eq(const struct aggregate *a, uint32_t e, const void *key)
{
	const struct stack_key *k = key;

	return a->stacks.v[e].node == k->node && a->stacks.v[e].tid == k->tid;
}

static inline uint32_t stack_hash(uint32_t tid, uint32_t node)
{
	return hash_final(hash_round(0x737461636b, ((uint64_t)tid << 32) | node));
}

/*
 * Room in every stack for n events (weights, ev_samples). Stacks get as
 * many as the run has events; a run that gains one (an event registered
 * after its first samples, a loaded profile) moves every stack's counts
 * to wider arrays in the arena - rare, and what is left behind goes with
 * the arena at the next rebuild. 0 or -ENOMEM (nothing changed).
 */
int widen(struct aggregate *a, size_t n)
{
	size_t old = a->ev_width;
	uint64_t *w;

	if (n <= old)
		return 0;
	if (n > PMUTOP_MAX_EVENTS)
		return -EINVAL;
	if (!a->stacks.n) {
		a->ev_width = n;
		return 0;
	}
	w = arena_alloc(&a->arena, a->stacks.n * 2 * n * sizeof(*w), alignof(uint64_t));
	if (!w)
		return -ENOMEM;
	for (size_t i = 0; i < a->stacks.n; i++, w += 2 * n) {
		struct agg_stack *s = &a->stacks.v[i];

		memset(w, 0, 2 * n * sizeof(*w));
		memcpy(w, s->weights, old * sizeof(*w));
		memcpy(w + n, s->ev_samples, old * sizeof(*w));
		s->weights = w;
		s->ev_samples = w + n;
	}
	a->ev_width = n;
	return 0;
}

struct agg_stack *stack_get(struct aggregate *a, uint32_t tid, uint32_t node)
{
	struct stack_key k = { tid, node };
	uint32_t h = stack_hash(tid, node);
	struct slot *sl = index_probe(&a->stack_ix, h, stack_eq, a, &k);
	struct agg_stack *s;
	uint64_t *w;
	bool grown;

	if (sl->ref)
		return &a->stacks.v[sl->ref - 1];
	if (widen(a, a->info.nevents) || index_reserve(&a->stack_ix, &grown) ||
	    VEC_RESERVE(a->stacks))
		return NULL;
	w = arena_alloc(&a->arena, 2 * a->ev_width * sizeof(*w), alignof(uint64_t));
	if (!w)
		return NULL;
	memset(w, 0, 2 * a->ev_width * sizeof(*w));
	s = &a->stacks.v[a->stacks.n];
	s->tid = tid;
	s->node = node;
	s->nlocs = a->nodes.v[node].depth;
	s->leaf = a->nodes.v[node].loc;
	s->samples = 0;
	s->weight = 0;
	s->weights = w;
	s->ev_samples = w + a->ev_width;
	index_insert(&a->stack_ix, sl, grown, h, (uint32_t)a->stacks.n);
	a->stacks.n++;
	return s;
}

const uint32_t *aggregate_stack_path(const struct aggregate *a, const struct agg_stack *s,
				     struct agg_path *p)
{
	uint32_t n = s->node, i = 0;

	if (p->cap < (size_t)s->nlocs + 1) {
		size_t cap = (size_t)s->nlocs + 64;
		uint32_t *v = realloc(p->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		p->v = v;
		p->cap = cap;
	}
	for (; n && i < s->nlocs; n = a->nodes.v[n].parent)
		p->v[i++] = a->nodes.v[n].loc;
	return p->v;
}

void agg_path_free(struct agg_path *p)
{
	free(p->v);
	p->v = NULL;
	p->cap = 0;
}

size_t aggregate_nodes(const struct aggregate *a)
{
	return a->nodes.n;
}

/* ---- public interface ---- */

struct aggregate *aggregate_new(void)
{
	struct aggregate *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->info.event = "events";
	a->ev_width = 1;
	a->info.event_unit = "count";
	a->lim = (struct agg_limits){ .max_memory = AGG_DEFAULT_MAX_MEMORY, .max_names = 256 };
	a->info.max_memory = a->lim.max_memory;
	if (index_init(&a->map_ix, 64) || index_init(&a->func_ix, 1024) ||
	    index_init(&a->loc_ix, 4096) || index_init(&a->stack_ix, 4096) ||
	    index_init(&a->node_ix, 4096) ||
	    index_init(&a->thread_ix, 64) || index_init(&a->str_ix, 1024) ||
	    index_init(&a->addr_ix, 4096) || VEC_RESERVE(a->nodes)) {
		aggregate_free(a);
		return NULL;
	}
	/* The root: no location, depth 0. */
	memset(&a->nodes.v[0], 0, sizeof(a->nodes.v[0]));
	a->nodes.n = 1;
	return a;
}

void aggregate_free(struct aggregate *a)
{
	if (!a)
		return;
	free(a->maps.v);
	free(a->map_keys.v);
	free(a->funcs.v);
	free(a->locs.v);
	free(a->stacks.v);
	free(a->nodes.v);
	free(a->threads.v);
	free(a->strs.v);
	free(a->pending.v);
	free(a->addrs.v);
	free(a->loc_canon.v);
	free(a->fredir);
	free(a->addr_ix.slots);
	free(a->map_ix.slots);
	free(a->func_ix.slots);
	free(a->loc_ix.slots);
	free(a->stack_ix.slots);
	free(a->node_ix.slots);
	free(a->thread_ix.slots);
	free(a->str_ix.slots);
	arena_free(&a->arena);
	free(a->scratch);
	free(a->last_locs);
	free(a->last_nodes);
	free(a);
}

int aggregate_add(struct aggregate *a, uint32_t tid, const struct frame *frames,
		  unsigned n, uint64_t weight)
{
	return aggregate_add_event(a, tid, frames, n, 0, weight);
}

int aggregate_add_event(struct aggregate *a, uint32_t tid, const struct frame *frames,
			unsigned n, unsigned event, uint64_t weight)
{
	struct agg_thread *t;
	struct agg_stack *s;
	uint32_t leaf = 0, node = 0;
	unsigned i;
	int err;

	if (event >= PMUTOP_MAX_EVENTS)
		return -EINVAL;
	if (n > a->scratch_cap) {
		uint32_t *ns = realloc(a->scratch, n * sizeof(*ns));
		uint32_t *ll = realloc(a->last_locs, n * sizeof(*ll));
		uint32_t *ln = realloc(a->last_nodes, n * sizeof(*ln));

		if (ns)
			a->scratch = ns;
		if (ll)
			a->last_locs = ll;
		if (ln)
			a->last_nodes = ln;
		if (!ns || !ll || !ln)
			return -ENOMEM;
		a->scratch_cap = n;
	}
	for (i = 0; i < n; i++) {
		uint32_t ai;

		err = address_intern(a, &frames[i], &ai);
		if (err)
			return err;
		a->scratch[i] = a->addrs.v[ai].loc_id;
		if (i == 0)
			leaf = ai;
	}
	/*
	 * Down the tree from the outermost caller: the part shared with the
	 * last sample's path (usually most of it) by comparing ids, the rest
	 * through the index.
	 */
	{
		unsigned d = 0, same = a->last_n < n ? a->last_n : n;

		while (d < same && a->last_locs[d] == a->scratch[n - 1 - d])
			d++;
		node = d ? a->last_nodes[d - 1] : 0;
		for (; d < n; d++) {
			node = node_get(a, node, a->scratch[n - 1 - d]);
			if (!node) {
				a->last_n = 0;
				return -ENOMEM;
			}
			a->last_locs[d] = a->scratch[n - 1 - d];
			a->last_nodes[d] = node;
		}
		a->last_n = n;
	}
	t = thread_get(a, tid);
	if (!t)
		return -ENOMEM;
	s = stack_get(a, tid, node);
	if (!s)
		return -ENOMEM;
	if (event >= a->ev_width && widen(a, event + 1))
		return -ENOMEM;
	if (n) {
		a->addrs.v[leaf].leaf_samples++;
		a->addrs.v[leaf].leaf_weights[event] += weight;
	}
	s->samples++;
	s->weights[event] += weight;
	s->ev_samples[event]++;
	s->weight = s->weights[0];
	t->samples++;
	a->info.samples++;
	return 0;
}

void aggregate_thread_exited(struct aggregate *a, uint32_t tid)
{
	uint32_t ref = thread_find(a, tid);
	struct agg_thread *t;

	if (!ref)
		return; /* never sampled: nothing to fold */
	t = &a->threads.v[ref - 1];
	if (!t->exited && !t->folded) {
		t->exited = true;
		a->exited++;
	}
}

void aggregate_get_limits(const struct aggregate *a, struct agg_limits *lim)
{
	*lim = a->lim;
}

void aggregate_set_limits(struct aggregate *a, const struct agg_limits *lim)
{
	a->lim = *lim;
	a->info.max_memory = lim->max_memory;
}

const struct agg_address *aggregate_addresses(const struct aggregate *a, size_t *n)
{
	*n = a->addrs.n;
	return a->addrs.v;
}

uint32_t address_find(const struct aggregate *a, uint32_t mapping_id, uint64_t address)
{
	struct loc_key k = { mapping_id, address };
	const struct slot *sl;

	if (!a->addrs.n || !a->addr_ix.slots)
		return UINT32_MAX;
	sl = index_probe(&a->addr_ix, addr_hash(&k), addr_eq, a, &k);
	return sl->ref ? sl->ref - 1 : UINT32_MAX;
}
void aggregate_set_thread_process(struct aggregate *a, uint32_t tid, uint32_t pid,
				  const char *comm)
{
	struct agg_thread *t = thread_get(a, tid);

	if (!t)
		return;
	t->pid = pid;
	snprintf(t->comm, sizeof(t->comm), "%s", comm ? comm : "");
}

void aggregate_set_thread_name(struct aggregate *a, uint32_t tid, const char *name)
{
	struct agg_thread *t = thread_get(a, tid);

	if (!t)
		return; /* out of memory: the thread stays unnamed */
	strncpy(t->name, name ? name : "", sizeof(t->name) - 1);
	t->name[sizeof(t->name) - 1] = 0;
}

struct agg_info *aggregate_info(struct aggregate *a)
{
	return &a->info;
}

const struct agg_info *aggregate_info_const(const struct aggregate *a)
{
	return &a->info;
}

const struct agg_stack *aggregate_stacks(const struct aggregate *a, size_t *n)
{
	*n = a->stacks.n;
	return a->stacks.v;
}

const struct agg_location *aggregate_locations(const struct aggregate *a, size_t *n)
{
	*n = a->locs.n;
	return a->locs.v;
}

const struct agg_function *aggregate_functions(const struct aggregate *a, size_t *n)
{
	*n = a->funcs.n;
	return a->funcs.v;
}

const struct agg_mapping *aggregate_mappings(const struct aggregate *a, size_t *n)
{
	*n = a->maps.n;
	return a->maps.v;
}

const struct agg_thread *aggregate_threads(const struct aggregate *a, size_t *n)
{
	*n = a->threads.n;
	return a->threads.v;
}

const struct agg_thread *aggregate_thread(const struct aggregate *a, uint32_t tid)
{
	uint32_t ref = thread_find(a, tid);

	return ref ? &a->threads.v[ref - 1] : NULL;
}

