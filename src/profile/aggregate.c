/*
 * aggregate.c - the profile being built: samples folded into distinct stacks.
 *
 * aggregate_add() is on the sampling hot path, so everything is interned
 * once and afterwards found by hashing small integers:
 *
 *   frame  --(mapping id, address)-->  location id  (string work only the
 *                                                    first time an address
 *                                                    is seen)
 *   (tid, location ids)  -->  stack     (one hash over the ids, one memcmp)
 *
 * A sample whose stack was seen before costs a few hash probes and no
 * allocation. All lookup tables are one open-addressing index type (linear
 * probing, power-of-two size, at most 70% full) over dense entry arrays;
 * an index slot stores the entry's hash next to its number, so most
 * mismatches are rejected without touching the entry and growing never
 * re-hashes keys.
 *
 * Memory grows with what is distinct, never with the sample count: per
 * distinct stack 32 bytes of record, 4 bytes per frame and ~12 bytes of
 * index; strings (function names, paths, build-ids) are stored once in an
 * arena. Stack frames and strings live in arena chunks that never move, so
 * the pointers the read-only views hand out stay valid; the entry arrays
 * themselves may move on the next aggregate_add().
 */
#include "pmutop/profile/aggregate.h"

#include <errno.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "pmutop/symbols/debuginfo.h"
#include "pmutop/symbols/demangle.h"
#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"
#include "pmutop/symbols/symbolize.h"

/* ---- hashing ------------------------------------------------------------ */

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

static uint32_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return hash_final(h);
}

/* ---- open-addressing index ---------------------------------------------- */

struct slot {
	uint32_t hash;
	uint32_t ref;  /* entry number + 1; 0 = empty */
};

struct index {
	struct slot *slots;
	size_t mask;   /* capacity - 1 */
	size_t count;
};

static int index_init(struct index *ix, size_t cap)
{
	ix->slots = calloc(cap, sizeof(*ix->slots));
	if (!ix->slots)
		return -ENOMEM;
	ix->mask = cap - 1;
	ix->count = 0;
	return 0;
}

typedef bool (*index_eq_fn)(const struct aggregate *a, uint32_t entry, const void *key);

/*
 * The slot holding key, or the empty slot where it would go. Static and
 * small so that the compiler inlines it with eq as a direct call.
 */
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
 * Make room for one more entry. Returns 0 or -ENOMEM; after growing, a
 * slot found earlier by index_probe() is stale and must be looked up again
 * (index_insert does that).
 */
static int index_reserve(struct index *ix, bool *grown)
{
	size_t cap = ix->mask + 1, ncap = cap * 2, i;
	struct slot *ns;

	*grown = false;
	if ((ix->count + 1) * 10 <= cap * 7)
		return 0;
	ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (i = 0; i < cap; i++) {
		const struct slot *s = &ix->slots[i];
		size_t j;

		if (!s->ref)
			continue;
		for (j = s->hash & (ncap - 1); ns[j].ref; j = (j + 1) & (ncap - 1))
			;
		ns[j] = *s;
	}
	free(ix->slots);
	ix->slots = ns;
	ix->mask = ncap - 1;
	*grown = true;
	return 0;
}

/* Put entry (0-based) with hash into the first free slot of its chain. */
static void index_insert(struct index *ix, struct slot *s, bool grown,
			 uint32_t hash, uint32_t entry)
{
	if (grown) {
		size_t i = hash & ix->mask;

		while (ix->slots[i].ref)
			i = (i + 1) & ix->mask;
		s = &ix->slots[i];
	}
	s->hash = hash;
	s->ref = entry + 1;
	ix->count++;
}

/* ---- arena: stable storage for strings and stack frames ----------------- */

#define ARENA_CHUNK (64 * 1024)

struct chunk {
	struct chunk *next;
	size_t used, cap;
	alignas(max_align_t) unsigned char data[];
};

struct arena {
	struct chunk *head;
};

static void *arena_alloc(struct arena *ar, size_t size, size_t align)
{
	struct chunk *c = ar->head;
	size_t off;

	if (c) {
		off = (c->used + align - 1) & ~(align - 1);
		if (off + size <= c->cap) {
			c->used = off + size;
			return c->data + off;
		}
	}
	/* A new chunk; oversized requests get a chunk of their own. */
	off = size > ARENA_CHUNK ? size : ARENA_CHUNK;
	c = malloc(sizeof(*c) + off);
	if (!c)
		return NULL;
	c->cap = off;
	c->used = size;
	if (ar->head && size > ARENA_CHUNK) {
		/* Keep filling the current chunk afterwards. */
		c->next = ar->head->next;
		ar->head->next = c;
	} else {
		c->next = ar->head;
		ar->head = c;
	}
	return c->data;
}

static void arena_free(struct arena *ar)
{
	struct chunk *c = ar->head, *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	ar->head = NULL;
}

/* ---- the aggregate ------------------------------------------------------- */

struct pending_loc {
	uint32_t loc_id;
	bool unnamed;             /* no symbol: only DWARF can name it */
	const struct mapping *map;
	uint64_t addr;
};

/* A growable array of entries; n doubles as the next id - 1. */
#define VEC(type) struct { type *v; size_t n, cap; }

struct aggregate {
	struct agg_info info;

	VEC(struct agg_mapping) maps;
	VEC(uint32_t) map_keys;        /* struct mapping.id of each agg mapping */
	VEC(struct agg_function) funcs;
	VEC(struct agg_location) locs;
	VEC(struct agg_stack) stacks;
	VEC(struct agg_thread) threads;
	VEC(const char *) strs;        /* interned strings */
	/*
	 * Locations whose debug info is still to be looked up: the mapping they
	 * were seen in (maps keep every mapping until the session ends).
	 */
	VEC(struct pending_loc) pending;

	struct index map_ix, func_ix, loc_ix, stack_ix, thread_ix, str_ix;
	struct arena arena;

	uint32_t *scratch;             /* location ids of the sample being added */
	unsigned scratch_cap;

	/* Consecutive frames are usually in the same mapping. */
	uint32_t last_map_key, last_map_id;
};

/*
 * Double a VEC's storage; returns the (possibly moved) array, or the old one
 * with *cap unchanged when out of memory.
 */
static void *vec_grow(void *v, size_t *cap, size_t elsize)
{
	size_t ncap = *cap ? *cap * 2 : 64;
	void *nv = realloc(v, ncap * elsize);

	if (!nv)
		return v;
	*cap = ncap;
	return nv;
}

/* Make room for one more element in a VEC: 0 or -ENOMEM. */
#define VEC_RESERVE(vec)                                                      \
	((vec).n < (vec).cap ? 0 :                                            \
	 ((vec).v = vec_grow((vec).v, &(vec).cap, sizeof(*(vec).v)),          \
	  (vec).n < (vec).cap ? 0 : -ENOMEM))

/* ---- strings ---- */

static bool str_eq(const struct aggregate *a, uint32_t e, const void *key)
{
	return strcmp(a->strs.v[e], key) == 0;
}

/* The interned copy of s (compare interned strings by pointer), or NULL. */
static const char *str_intern(struct aggregate *a, const char *s)
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
	return a->map_keys.v[e] == *(const uint32_t *)key;
}

static int mapping_intern(struct aggregate *a, const struct mapping *m, uint32_t *id)
{
	uint32_t key = m->id, h;
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
		build_id = str_intern(a, m->mod ? module_build_id(m->mod) : "");
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

/* ---- functions ---- */

struct func_key {
	const char *name, *file;  /* interned */
};

static bool func_eq(const struct aggregate *a, uint32_t e, const void *key)
{
	const struct func_key *k = key;

	return a->funcs.v[e].name == k->name && a->funcs.v[e].file == k->file;
}

static int function_intern(struct aggregate *a, const char *name, const char *file,
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

struct loc_key {
	uint32_t mapping_id;
	uint64_t address;
};

static bool loc_eq(const struct aggregate *a, uint32_t e, const void *key)
{
	const struct loc_key *k = key;

	return a->locs.v[e].address == k->address &&
	       a->locs.v[e].mapping_id == k->mapping_id;
}

/* First sight of an address: name its function and record the location. */
/*
 * Whether a location in m gets its lines from debug info (later, see
 * aggregate_resolve_lines()); finds m's debug file on first use.
 */
static bool m_has_debuginfo(const struct mapping *m)
{
	return m && m->mod && m->dbg && debuginfo_prepare(m->dbg, m);
}

static bool is_mangled(const char *s)
{
	return s[0] == '_' && (s[1] == 'Z' || s[1] == 'R');
}

/*
 * A function by its raw symbol: the name shown is the demangled one (C++,
 * Rust), the raw one is kept as system_name. start_line from debug info.
 */
static int function_intern_sym(struct aggregate *a, const char *raw, const char *file,
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
 * The inline chain of a location from the mapping's debug info (DWARF
 * lookups are cached per module and address in debuginfo.c), as interned
 * lines in *out; *n = 0 when there is no debug info for the address.
 */
static int lines_intern(struct aggregate *a, const struct mapping *m, uint64_t addr,
			const char *symname, const char *modfile, struct agg_line **out,
			uint32_t *n)
{
	const struct src_line *src;
	struct agg_line *lines;
	unsigned ns, i;
	int err;

	*out = NULL;
	*n = 0;
	if (!m || !m->mod || !m->dbg)
		return 0;
	ns = debuginfo_lookup(m->dbg, m, addr, &src);
	if (!ns)
		return 0;
	lines = arena_alloc(&a->arena, ns * sizeof(*lines), alignof(struct agg_line));
	if (!lines)
		return -ENOMEM;
	for (i = 0; i < ns; i++) {
		const char *raw = src[i].func;

		/*
		 * The function that holds the code is the ELF symbol: prefer its
		 * mangled name (with parameter types) to DWARF's plain one.
		 */
		if (i == ns - 1 && symname && is_mangled(symname) && !(raw && is_mangled(raw)))
			raw = symname;
		if (!raw || !*raw)
			raw = i == ns - 1 && symname ? symname : "[inlined]";
		err = function_intern_sym(a, raw, src[i].file ? src[i].file : modfile,
					  src[i].decl_line, &lines[i].function_id);
		if (err)
			return err;
		lines[i].line = src[i].line;
	}
	*out = lines;
	*n = ns;
	return 0;
}

static int location_new(struct aggregate *a, const struct frame *f,
			const struct loc_key *k, uint32_t h, struct slot *sl,
			uint32_t *id)
{
	bool pending = m_has_debuginfo(f->map);
	const struct mapping *m = f->map;
	char buf[256];
	const char *name = f->func, *file = "";
	struct agg_location *l;
	uint32_t fid;
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
	if (index_reserve(&a->loc_ix, &grown) || VEC_RESERVE(a->locs) ||
	    (pending && VEC_RESERVE(a->pending)))
		return -ENOMEM;
	if (!f->func && !pending && k->mapping_id)
		a->maps.v[k->mapping_id - 1].has_functions = false;
	if (!pending && k->mapping_id) {
		struct agg_mapping *am = &a->maps.v[k->mapping_id - 1];

		am->has_filenames = am->has_line_numbers = am->has_inline_frames = false;
	}
	l = &a->locs.v[a->locs.n];
	l->id = (uint32_t)a->locs.n + 1;
	l->mapping_id = k->mapping_id;
	l->address = k->address;
	l->function_id = fid;
	l->nlines = 0;
	l->lines = NULL;
	/* DWARF later (aggregate_resolve_lines): it can take long on first use. */
	if (pending)
		a->pending.v[a->pending.n++] = (struct pending_loc){ l->id, !f->func, f->map, f->addr };
	index_insert(&a->loc_ix, sl, grown, h, (uint32_t)a->locs.n);
	a->locs.n++;
	*id = l->id;
	return 0;
}

static inline int location_intern(struct aggregate *a, const struct frame *f,
				  uint32_t *id)
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
	h = hash_final(hash_round(hash_round(0x6c6f63, k.mapping_id), k.address));
	sl = index_probe(&a->loc_ix, h, loc_eq, a, &k);
	if (sl->ref) {
		*id = sl->ref;
		return 0;
	}
	return location_new(a, f, &k, h, sl, id);
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

static struct agg_thread *thread_get(struct aggregate *a, uint32_t tid)
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
	index_insert(&a->thread_ix, sl, grown, h, (uint32_t)a->threads.n);
	a->threads.n++;
	return t;
}

/* ---- stacks ---- */

struct stack_key {
	uint32_t tid;
	unsigned n;
	const uint32_t *ids;
};

static bool stack_eq(const struct aggregate *a, uint32_t e, const void *key)
{
	const struct stack_key *k = key;
	const struct agg_stack *s = &a->stacks.v[e];

	return s->tid == k->tid && s->nlocs == k->n &&
	       (k->n == 0 || memcmp(s->locs, k->ids, k->n * sizeof(*k->ids)) == 0);
}

static inline uint32_t stack_hash(uint32_t tid, const uint32_t *ids, unsigned n)
{
	uint64_t h = hash_round(0x737461636b, ((uint64_t)n << 32) | tid);
	unsigned i = 0;

	for (; i + 1 < n; i += 2)
		h = hash_round(h, ((uint64_t)ids[i] << 32) | ids[i + 1]);
	if (i < n)
		h = hash_round(h, ids[i]);
	return hash_final(h);
}

static struct agg_stack *stack_get(struct aggregate *a, uint32_t tid,
				   const uint32_t *ids, unsigned n)
{
	struct stack_key k = { tid, n, ids };
	uint32_t h = stack_hash(tid, ids, n);
	struct slot *sl = index_probe(&a->stack_ix, h, stack_eq, a, &k);
	struct agg_stack *s;
	uint32_t *copy = NULL;
	bool grown;

	if (sl->ref)
		return &a->stacks.v[sl->ref - 1];
	if (index_reserve(&a->stack_ix, &grown) || VEC_RESERVE(a->stacks))
		return NULL;
	if (n) {
		copy = arena_alloc(&a->arena, n * sizeof(*ids), alignof(uint32_t));
		if (!copy)
			return NULL;
		memcpy(copy, ids, n * sizeof(*ids));
	}
	s = &a->stacks.v[a->stacks.n];
	s->tid = tid;
	s->nlocs = n;
	s->locs = copy;
	s->samples = 0;
	s->weight = 0;
	memset(s->weights, 0, sizeof(s->weights));
	memset(s->ev_samples, 0, sizeof(s->ev_samples));
	index_insert(&a->stack_ix, sl, grown, h, (uint32_t)a->stacks.n);
	a->stacks.n++;
	return s;
}

/* ---- public interface ---- */

struct aggregate *aggregate_new(void)
{
	struct aggregate *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->info.event = "events";
	a->info.event_unit = "count";
	if (index_init(&a->map_ix, 64) || index_init(&a->func_ix, 1024) ||
	    index_init(&a->loc_ix, 4096) || index_init(&a->stack_ix, 4096) ||
	    index_init(&a->thread_ix, 64) || index_init(&a->str_ix, 1024)) {
		aggregate_free(a);
		return NULL;
	}
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
	free(a->threads.v);
	free(a->strs.v);
	free(a->pending.v);
	free(a->map_ix.slots);
	free(a->func_ix.slots);
	free(a->loc_ix.slots);
	free(a->stack_ix.slots);
	free(a->thread_ix.slots);
	free(a->str_ix.slots);
	arena_free(&a->arena);
	free(a->scratch);
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
	unsigned i;
	int err;

	if (n > a->scratch_cap) {
		uint32_t *ns = realloc(a->scratch, n * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		a->scratch = ns;
		a->scratch_cap = n;
	}
	for (i = 0; i < n; i++) {
		err = location_intern(a, &frames[i], &a->scratch[i]);
		if (err)
			return err;
	}
	t = thread_get(a, tid);
	if (!t)
		return -ENOMEM;
	s = stack_get(a, tid, a->scratch, n);
	if (!s)
		return -ENOMEM;
	if (event >= PMUTOP_MAX_EVENTS)
		return -EINVAL;
	s->samples++;
	s->weights[event] += weight;
	s->ev_samples[event]++;
	s->weight = s->weights[0];
	t->samples++;
	a->info.samples++;
	return 0;
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
	const struct slot *sl = index_probe(&a->thread_ix, thread_hash(tid),
					    thread_eq, a, &tid);

	return sl->ref ? &a->threads.v[sl->ref - 1] : NULL;
}

/* ---- import (pprof_read.c) ---- */

int aggregate_import_mapping(struct aggregate *a, uint64_t start, uint64_t limit,
			     uint64_t offset, const char *file, const char *build_id,
			     bool has_functions, uint32_t *id)
{
	const char *f = str_intern(a, file ? file : "");
	const char *b = str_intern(a, build_id ? build_id : "");
	struct agg_mapping *am;

	if (!f || !b || VEC_RESERVE(a->maps) || VEC_RESERVE(a->map_keys))
		return -ENOMEM;
	/* Not in map_ix: live frames never look imported mappings up. */
	am = &a->maps.v[a->maps.n];
	am->id = (uint32_t)a->maps.n + 1;
	am->start = start;
	am->limit = limit;
	am->offset = offset;
	am->file = f;
	am->build_id = b;
	am->has_functions = has_functions;
	am->has_filenames = am->has_line_numbers = am->has_inline_frames = false;
	a->map_keys.v[a->map_keys.n++] = 0;
	a->maps.n++;
	*id = am->id;
	return 0;
}

int aggregate_import_function(struct aggregate *a, const char *name, const char *file,
			      uint32_t *id)
{
	return function_intern(a, name ? name : "", file ? file : "", id);
}

int aggregate_import_location(struct aggregate *a, uint32_t mapping_id, uint64_t address,
			      uint32_t function_id, uint32_t *id)
{
	struct agg_location *l;

	if (mapping_id > a->maps.n || function_id == 0 || function_id > a->funcs.n)
		return -EINVAL;
	if (VEC_RESERVE(a->locs))
		return -ENOMEM;
	/* Not in loc_ix: one address may carry several (inlined) functions. */
	l = &a->locs.v[a->locs.n];
	l->id = (uint32_t)a->locs.n + 1;
	l->mapping_id = mapping_id;
	l->address = address;
	l->function_id = function_id;
	l->nlines = 0;
	l->lines = NULL;
	a->locs.n++;
	*id = l->id;
	return 0;
}

int aggregate_import_stack(struct aggregate *a, uint32_t tid, const uint32_t *locs,
			   unsigned n, uint64_t samples, const uint64_t *weights, size_t nweights)
{
	struct agg_thread *t;
	struct agg_stack *s;
	unsigned i;

	if (nweights == 0 || nweights > PMUTOP_MAX_EVENTS)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (locs[i] == 0 || locs[i] > a->locs.n)
			return -EINVAL;
	t = thread_get(a, tid);
	if (!t)
		return -ENOMEM;
	s = stack_get(a, tid, locs, n);
	if (!s)
		return -ENOMEM;
	s->samples += samples;
	for (i = 0; i < nweights; i++) {
		s->weights[i] += weights[i];
		/* The file counts samples per stack, not per event: a stack's
		 * count goes to every event it has weight in. */
		if (weights[i])
			s->ev_samples[i] += samples;
	}
	s->weight = s->weights[0];
	t->samples += samples;
	a->info.samples += samples;
	return 0;
}

int aggregate_set_event_k(struct aggregate *a, size_t k, const char *event, const char *unit,
			  uint64_t period)
{
	const char *e = str_intern(a, event ? event : "");
	const char *u = str_intern(a, unit ? unit : "");

	if (k >= PMUTOP_MAX_EVENTS)
		return -EINVAL;
	if (!e || !u)
		return -ENOMEM;
	a->info.events[k].name = e;
	a->info.events[k].unit = u;
	a->info.events[k].period = period;
	a->info.events[k].scale = 1.0;
	if (k == 0) {
		a->info.event = e;
		a->info.event_unit = u;
	} else if (a->info.nevents < k + 1) {
		a->info.nevents = k + 1;
	}
	return 0;
}

/* ---- debug info (issue 8) ---- */

int aggregate_resolve_lines(struct aggregate *a, bool (*stop)(void *arg), void *arg)
{
	size_t i;
	int err = 0;

	for (i = 0; i < a->pending.n; i++) {
		if (stop && i % 32 == 0 && stop(arg)) {
			err = -EINTR;
			break;
		}
		const struct pending_loc *p = &a->pending.v[i];
		const struct agg_function *fn;
		struct agg_location *l;
		struct agg_line *lines;
		const char *sym, *modfile;
		uint32_t n;

		if (!p->loc_id || p->loc_id > a->locs.n)
			continue;
		fn = &a->funcs.v[a->locs.v[p->loc_id - 1].function_id - 1];
		sym = fn->system_name ? fn->system_name : fn->name;
		modfile = module_path(p->map->mod);
		err = lines_intern(a, p->map, p->addr, sym, modfile ? modfile : "", &lines, &n);
		if (err)
			break; /* ENOMEM: the rest stay pending */
		l = &a->locs.v[p->loc_id - 1];
		if (n) {
			l->lines = lines;
			l->nlines = n;
			l->function_id = lines[0].function_id;
		} else if (l->mapping_id) {
			struct agg_mapping *am = &a->maps.v[l->mapping_id - 1];

			am->has_filenames = am->has_line_numbers = am->has_inline_frames = false;
			if (p->unnamed)
				am->has_functions = false;
		}
	}
	if (i) /* pending.v is NULL when nothing was ever pending (UB for memmove) */
		memmove(a->pending.v, a->pending.v + i, (a->pending.n - i) * sizeof(*a->pending.v));
	a->pending.n -= i;
	return err;
}

size_t aggregate_pending_lines(const struct aggregate *a)
{
	return a->pending.n;
}
