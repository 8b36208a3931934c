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
 * distinct stack a record, 4 bytes per frame and ~12 bytes of index;
 * strings (function names, paths, build-ids) are stored once in an arena.
 * Stack frames and strings live in arena chunks that never move, so the
 * pointers the read-only views hand out stay valid until the next
 * aggregate_maintain(); the entry arrays may move on the next add.
 *
 * And what is distinct follows the program, not the run (issue 23): an
 * address maps to its location through the address table, and a location
 * is one source position (mapping file, function, lines), so the thousands
 * of addresses of a hot interpreter loop make one location when it has no
 * debug info, and a library reloaded at a new address reuses the old
 * locations. Addresses with debug info get a location of their own until
 * their lines are known (aggregate_resolve_lines), then point to the
 * location with the same lines. aggregate_maintain() rebuilds everything
 * by copying what is alive into a fresh aggregate (a copying collector):
 * merged locations and exited threads fold, and the caps apply - simpler
 * and as fast as editing hash tables in place, and it returns the memory.
 */
#include "pmutop/profile/aggregate.h"

#include <errno.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	uint32_t aidx;            /* its entry in the address table */
	bool unnamed;             /* no symbol: only DWARF can name it */
	const struct mapping *map;
	uint64_t addr;
};

/* A growable array of entries; n doubles as the next id - 1. */
#define VEC(type) struct { type *v; size_t n, cap; }

struct aggregate {
	struct agg_info info;
	uint64_t generation;           /* compact() rebuilds: see aggregate_generation() */

	VEC(struct agg_mapping) maps;
	VEC(uint64_t) map_keys;        /* struct mapping.key of each agg mapping:
	                                  unique across the processes of a run */
	VEC(struct agg_function) funcs;
	VEC(struct agg_location) locs;
	VEC(struct agg_stack) stacks;
	size_t ev_width;               /* events per stack's weights/ev_samples (>= 1) */
	VEC(struct agg_thread) threads;
	VEC(const char *) strs;        /* interned strings */
	VEC(struct agg_address) addrs; /* address table and leaf histogram */
	VEC(uint32_t) loc_canon;       /* per location: 0, or the id it merged into */
	/*
	 * Per function id: 0, or the function debug info showed it to be (the
	 * same name with its source file), so that addresses named from the
	 * symbol table alone and those DWARF resolved are one function in
	 * every output (issue 13.4). Indexed by id; fredir_n entries.
	 */
	uint32_t *fredir;
	size_t fredir_n;
	/*
	 * Locations whose debug info is still to be looked up: the mapping they
	 * were seen in (maps keep every mapping until the session ends).
	 */
	VEC(struct pending_loc) pending;

	struct index map_ix, func_ix, loc_ix, stack_ix, thread_ix, str_ix;
	/* loc_ix: locations by source position (canonical ones only). */
	struct index addr_ix;          /* addrs by (mapping id, address) */
	struct agg_limits lim;
	size_t exited, merged;         /* exited threads, merged locations to fold */
	uint32_t compact_loc;          /* the "[compacted]" location, 0 until needed */
	struct arena arena;

	uint32_t *scratch;             /* location ids of the sample being added */
	unsigned scratch_cap;

	/* Consecutive frames are usually in the same mapping. */
	uint64_t last_map_key;
	uint32_t last_map_id;
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
static int pos_canonical(struct aggregate *a, uint32_t id, uint32_t *canon)
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
static int location_push(struct aggregate *a, uint32_t mapping_id, uint64_t address,
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

/* First sight of an address: name its function and record the location. */
/*
 * Whether a location in m gets its lines from debug info (later, see
 * aggregate_resolve_lines()); finds m's debug file on first use.
 */
static bool m_has_debuginfo(const struct mapping *m)
{
	return m && m->mod && m->dbg && debuginfo_prepare(m->dbg, m);
}

/* The function fid stands for now (see aggregate.fredir). */
static uint32_t func_redirected(const struct aggregate *a, uint32_t fid)
{
	for (int hops = 0; hops < 4 && fid < a->fredir_n && a->fredir[fid]; hops++)
		fid = a->fredir[fid];
	return fid;
}

/* Record that function from is function to (same name, source file known). */
static int func_redirect(struct aggregate *a, uint32_t from, uint32_t to)
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
	if (!pending && k->mapping_id) {
		struct agg_mapping *am = &a->maps.v[k->mapping_id - 1];

		am->has_filenames = am->has_line_numbers = am->has_inline_frames = false;
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
	t->nthreads = 1;
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

/*
 * Room in every stack for n events (weights, ev_samples). Stacks get as
 * many as the run has events; a run that gains one (an event registered
 * after its first samples, a loaded profile) moves every stack's counts
 * to wider arrays in the arena - rare, and what is left behind goes with
 * the arena at the next rebuild. 0 or -ENOMEM (nothing changed).
 */
static int widen(struct aggregate *a, size_t n)
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

static struct agg_stack *stack_get(struct aggregate *a, uint32_t tid,
				   const uint32_t *ids, unsigned n)
{
	struct stack_key k = { tid, n, ids };
	uint32_t h = stack_hash(tid, ids, n);
	struct slot *sl = index_probe(&a->stack_ix, h, stack_eq, a, &k);
	struct agg_stack *s;
	uint32_t *copy = NULL;
	uint64_t *w;
	bool grown;

	if (sl->ref)
		return &a->stacks.v[sl->ref - 1];
	if (widen(a, a->info.nevents) || index_reserve(&a->stack_ix, &grown) ||
	    VEC_RESERVE(a->stacks))
		return NULL;
	if (n) {
		copy = arena_alloc(&a->arena, n * sizeof(*ids), alignof(uint32_t));
		if (!copy)
			return NULL;
		memcpy(copy, ids, n * sizeof(*ids));
	}
	w = arena_alloc(&a->arena, 2 * a->ev_width * sizeof(*w), alignof(uint64_t));
	if (!w)
		return NULL;
	memset(w, 0, 2 * a->ev_width * sizeof(*w));
	s = &a->stacks.v[a->stacks.n];
	s->tid = tid;
	s->nlocs = n;
	s->locs = copy;
	s->samples = 0;
	s->weight = 0;
	s->weights = w;
	s->ev_samples = w + a->ev_width;
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
	a->ev_width = 1;
	a->info.event_unit = "count";
	a->lim = (struct agg_limits){ .max_stacks = 20000, .max_addresses = 65536,
				      .max_exited = 64, .max_names = 256 };
	if (index_init(&a->map_ix, 64) || index_init(&a->func_ix, 1024) ||
	    index_init(&a->loc_ix, 4096) || index_init(&a->stack_ix, 4096) ||
	    index_init(&a->thread_ix, 64) || index_init(&a->str_ix, 1024) ||
	    index_init(&a->addr_ix, 4096)) {
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
	free(a->addrs.v);
	free(a->loc_canon.v);
	free(a->fredir);
	free(a->addr_ix.slots);
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
	uint32_t leaf = 0;
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
		uint32_t ai;

		err = address_intern(a, &frames[i], &ai);
		if (err)
			return err;
		a->scratch[i] = a->addrs.v[ai].loc_id;
		if (i == 0)
			leaf = ai;
	}
	t = thread_get(a, tid);
	if (!t)
		return -ENOMEM;
	s = stack_get(a, tid, a->scratch, n);
	if (!s)
		return -ENOMEM;
	if (event >= PMUTOP_MAX_EVENTS)
		return -EINVAL;
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
	const struct slot *sl = index_probe(&a->thread_ix, thread_hash(tid), thread_eq, a, &tid);
	struct agg_thread *t;

	if (!sl->ref)
		return; /* never sampled: nothing to fold */
	t = &a->threads.v[sl->ref - 1];
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
}

const struct agg_address *aggregate_addresses(const struct aggregate *a, size_t *n)
{
	*n = a->addrs.n;
	return a->addrs.v;
}

/* ---- where each stack's leaf samples landed (annotate, pprof) ---- */

/* The address entry of (mapping_id, address), or UINT32_MAX. */
static uint32_t address_find(const struct aggregate *a, uint32_t mapping_id, uint64_t address)
{
	struct loc_key k = { mapping_id, address };
	const struct slot *sl;

	if (!a->addrs.n || !a->addr_ix.slots)
		return UINT32_MAX;
	sl = index_probe(&a->addr_ix, addr_hash(&k), addr_eq, a, &k);
	return sl->ref ? sl->ref - 1 : UINT32_MAX;
}

static int cmp_u32_pair(const void *p, const void *q)
{
	const uint32_t *x = p, *y = q;

	return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* Split v over parts in proportion to share[0..n) (sum total); exact: largest remainders. */
static void split_exact(uint64_t v, const uint64_t *share, uint64_t total, size_t n,
			uint64_t *out, double *frac)
{
	uint64_t given = 0;

	for (size_t i = 0; i < n; i++) {
		double x = total ? (double)v * (double)share[i] / (double)total : 0;

		out[i] = (uint64_t)x;
		frac[i] = x - (double)out[i];
		given += out[i];
	}
	while (given < v && n) {
		size_t best = 0;

		for (size_t i = 1; i < n; i++)
			if (frac[i] > frac[best])
				best = i;
		out[best]++;
		frac[best] = -1;
		given++;
	}
}

/*
 * The leaf parts one stack at a time. Setting up takes what each address
 * has left once the stacks that name it exactly (a location of its own)
 * have taken theirs; after that a stack's parts depend on nothing but
 * those leftovers, so they are computed when asked, into a buffer the
 * iterator owns, and a caller that streams them (the pprof writer) never
 * holds all of them: 80 bytes a part, 8 MiB at the end of a long run.
 */
struct agg_leaf_iter {
	const struct aggregate *a;
	size_t nev;
	uint64_t *rs;                   /* per address: leaf samples left */
	uint32_t (*byloc)[2];           /* (location id, address index), sorted */
	uint32_t *first;                /* first[L] .. first[L + 1]: location L in byloc */
	uint64_t *sh, *res;             /* split_exact's scratch, per address */
	double *frac;
	struct agg_leaf_part *parts;    /* the current stack's parts */
};

void aggregate_leaf_iter_free(struct agg_leaf_iter *it)
{
	if (!it)
		return;
	free(it->rs);
	free(it->byloc);
	free(it->first);
	free(it->sh);
	free(it->res);
	free(it->frac);
	free(it->parts);
	free(it);
}

/* The leaf of stack st: its location, whether that is one address, and its range in byloc. */
static uint32_t leaf_of(const struct agg_leaf_iter *it, const struct agg_stack *st, bool *exact,
			uint32_t *lo, uint32_t *hi)
{
	const struct aggregate *a = it->a;
	uint32_t leaf = st->nlocs ? st->locs[0] : 0;

	/* A location that was merged into another stands for one address. */
	*exact = leaf && leaf <= a->loc_canon.n && a->loc_canon.v[leaf - 1];
	*lo = leaf ? it->first[leaf] : 0;
	*hi = leaf ? it->first[leaf + 1] : 0;
	return leaf;
}

struct agg_leaf_iter *aggregate_leaf_iter_new(const struct aggregate *a)
{
	struct agg_leaf_iter *it = calloc(1, sizeof(*it));
	size_t na = a->addrs.n, i, k;

	if (!it)
		return NULL;
	it->a = a;
	it->nev = a->info.nevents > 1 ? a->info.nevents : 1;
	it->rs = calloc(na + 1, sizeof(*it->rs));
	it->byloc = calloc(na + 1, sizeof(*it->byloc));
	it->first = calloc(a->locs.n + 2, sizeof(*it->first));
	it->sh = calloc(na + 1, sizeof(*it->sh));
	it->res = calloc(na + 1, sizeof(*it->res));
	it->frac = calloc(na + 1, sizeof(*it->frac));
	it->parts = calloc(na + 1, sizeof(*it->parts));
	if (!it->rs || !it->byloc || !it->first || !it->sh || !it->res || !it->frac ||
	    !it->parts) {
		aggregate_leaf_iter_free(it);
		return NULL;
	}
	for (i = 0; i < na; i++) {
		it->rs[i] = a->addrs.v[i].leaf_samples;
		it->byloc[i][0] = a->addrs.v[i].loc_id;
		it->byloc[i][1] = (uint32_t)i;
	}
	qsort(it->byloc, na, sizeof(*it->byloc), cmp_u32_pair);
	for (i = 0, k = 0; k <= a->locs.n + 1; k++) {
		while (i < na && it->byloc[i][0] < k)
			i++;
		it->first[k] = (uint32_t)i;
	}
	/* The stacks whose leaf is exactly one address take their samples first. */
	for (size_t s = 0; s < a->stacks.n; s++) {
		const struct agg_stack *st = &a->stacks.v[s];
		uint32_t leaf, lo, hi, ai;
		bool exact;

		leaf = leaf_of(it, st, &exact, &lo, &hi);
		if (!leaf || !exact)
			continue;
		ai = address_find(a, a->locs.v[leaf - 1].mapping_id, a->locs.v[leaf - 1].address);
		if (ai != UINT32_MAX)
			it->rs[ai] = it->rs[ai] > st->samples ? it->rs[ai] - st->samples : 0;
	}
	return it;
}

size_t aggregate_leaf_iter_stack(struct agg_leaf_iter *it, size_t s,
				 const struct agg_leaf_part **out)
{
	const struct aggregate *a = it->a;
	const struct agg_stack *st = &a->stacks.v[s];
	struct agg_leaf_part *parts = it->parts;
	size_t nev = it->nev, n, w, k;
	uint32_t leaf, lo, hi, ai;
	bool exact;

	*out = parts;
	leaf = leaf_of(it, st, &exact, &lo, &hi);
	if (!leaf || exact || hi - lo <= 1) {
		const struct agg_location *l = leaf ? &a->locs.v[leaf - 1] : NULL;

		ai = !leaf ? UINT32_MAX :
		     exact || hi == lo ? address_find(a, l->mapping_id, l->address)
				       : it->byloc[lo][1];
		memset(&parts[0], 0, sizeof(parts[0]));
		parts[0].stack = (uint32_t)s;
		parts[0].addr = ai;
		parts[0].samples = st->samples;
		for (k = 0; k < nev; k++)
			parts[0].weights[k] = st->weights[k];
		return 1;
	}
	/* Several addresses: the stack's samples split as the leftovers lie. */
	n = hi - lo;
	memset(parts, 0, n * sizeof(*parts));
	for (uint32_t j = lo; j < hi; j++) {
		parts[j - lo].stack = (uint32_t)s;
		parts[j - lo].addr = it->byloc[j][1];
	}
	/*
	 * Samples first, as the leftovers lie; then each event's weight as
	 * the samples went (else a one-sample stack would become a part per
	 * address of its line, each with a sliver of weight: 20 times the
	 * samples in a written profile).
	 */
	for (size_t kk = 0; kk <= nev; kk++) {
		uint64_t tot = 0, v;

		k = kk == 0 ? nev : kk - 1;
		v = k == nev ? st->samples : st->weights[k];
		for (size_t j = 0; j < n; j++) {
			it->sh[j] = k == nev ? it->rs[parts[j].addr] : parts[j].samples;
			tot += it->sh[j];
		}
		if (!tot) /* nothing left to go by: the first address */
			it->sh[0] = tot = 1;
		split_exact(v, it->sh, tot, n, it->res, it->frac);
		for (size_t j = 0; j < n; j++) {
			if (k == nev)
				parts[j].samples = it->res[j];
			else
				parts[j].weights[k] = it->res[j];
		}
	}
	/* Keep the parts that hold something. */
	for (size_t j = w = 0; j < n; j++) {
		bool any = parts[j].samples != 0;

		for (k = 0; k < nev && !any; k++)
			any = parts[j].weights[k] != 0;
		if (any)
			parts[w++] = parts[j];
	}
	return w;
}

int aggregate_leaf_parts(const struct aggregate *a, struct agg_leaf_part **out, size_t *nout)
{
	struct agg_leaf_iter *it = aggregate_leaf_iter_new(a);
	struct agg_leaf_part *parts = NULL, *v;
	const struct agg_leaf_part *p;
	size_t np = 0, cap = 0, n;

	*out = NULL;
	*nout = 0;
	if (!it)
		return -ENOMEM;
	for (size_t s = 0; s < a->stacks.n; s++) {
		n = aggregate_leaf_iter_stack(it, s, &p);
		if (np + n > cap) {
			cap = 2 * (np + n) + 256;
			v = realloc(parts, cap * sizeof(*v));
			if (!v) {
				free(parts);
				aggregate_leaf_iter_free(it);
				return -ENOMEM;
			}
			parts = v;
		}
		memcpy(&parts[np], p, n * sizeof(*p));
		np += n;
	}
	aggregate_leaf_iter_free(it);
	*out = parts;
	*nout = np;
	return 0;
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
	if (mapping_id > a->maps.n || function_id == 0 || function_id > a->funcs.n)
		return -EINVAL;
	/* Not in loc_ix: one address may carry several (inlined) functions. */
	return location_push(a, mapping_id, address, function_id, id);
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
	if (!t || widen(a, nweights))
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

void aggregate_share_event_samples(struct aggregate *a, const double *per_sample, size_t nev)
{
	if (nev > a->ev_width) /* the rest are zero in every stack */
		nev = a->ev_width;
	for (size_t i = 0; i < a->stacks.n; i++) {
		struct agg_stack *s = &a->stacks.v[i];
		double r[PMUTOP_MAX_EVENTS], sum = 0, frac[PMUTOP_MAX_EVENTS];
		uint64_t given = 0;
		size_t k, nz = 0;
		bool known = true;

		for (k = 0; k < nev; k++) {
			r[k] = 0;
			if (!s->weights[k])
				continue;
			nz++;
			if (per_sample[k] <= 0)
				known = false;
			else
				r[k] = (double)s->weights[k] / per_sample[k];
			sum += r[k];
		}
		if (nz < 2 || !known || sum <= 0)
			continue;
		/* Largest remainder, so the events' counts add up to the stack's. */
		for (k = 0; k < nev; k++) {
			double x = (double)s->samples * r[k] / sum;

			s->ev_samples[k] = (uint64_t)x;
			frac[k] = s->weights[k] ? x - (double)s->ev_samples[k] : -1;
			given += s->ev_samples[k];
		}
		while (given < s->samples) {
			size_t best = 0;

			for (k = 1; k < nev; k++)
				if (frac[k] > frac[best])
					best = k;
			if (frac[best] < 0)
				break;
			s->ev_samples[best]++;
			frac[best] = -1;
			given++;
		}
	}
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
		/* Every stack holds the run's events: readers go up to nevents. */
		if (widen(a, k + 1))
			return -ENOMEM;
		a->info.nevents = k + 1;
	}
	return 0;
}

/* ---- debug info (issue 8) ---- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int resolve(struct aggregate *a, uint64_t budget_ns, bool (*want)(const struct mapping *m),
		   bool (*stop)(void *arg), void *arg);

int aggregate_resolve_lines(struct aggregate *a, bool (*stop)(void *arg), void *arg)
{
	return resolve(a, 0, NULL, stop, arg);
}

int aggregate_resolve_lines_for(struct aggregate *a, uint64_t budget_ns)
{
	return resolve(a, budget_ns, NULL, NULL, NULL);
}

int aggregate_resolve_lines_of(struct aggregate *a, bool (*want)(const struct mapping *m))
{
	return resolve(a, 0, want, NULL, NULL);
}

size_t aggregate_pending_lines(const struct aggregate *a)
{
	return a->pending.n;
}

const struct mapping *aggregate_pending_mapping(const struct aggregate *a, size_t i)
{
	return i < a->pending.n ? a->pending.v[i].map : NULL;
}

/* want (may be NULL): only the locations of the mappings it accepts; the rest stay pending. */
static int resolve(struct aggregate *a, uint64_t budget_ns, bool (*want)(const struct mapping *m),
		   bool (*stop)(void *arg), void *arg)
{
	uint64_t deadline = budget_ns ? mono_ns() + budget_ns : 0;
	bool redirected = false;
	size_t i, kept = 0;
	int err = 0;

	for (i = 0; i < a->pending.n; i++) {
		if (stop && i % 32 == 0 && stop(arg)) {
			err = -EINTR;
			break;
		}
		if (deadline && i && (i % 8) == 0 && mono_ns() >= deadline)
			break; /* the rest next time: the ring buffers need draining */
		const struct pending_loc *p = &a->pending.v[i];
		const struct agg_function *fn;
		struct agg_location *l;
		struct agg_line *lines;
		const char *sym, *modfile;
		uint32_t n;

		if (!p->loc_id || p->loc_id > a->locs.n)
			continue;
		/*
		 * Not asked for, or its debug file is still on its way from
		 * debuginfod, or its DWARF still being loaded or looked up on
		 * the loader's thread (debuginfo.h; this asks for it): later.
		 */
		if ((want && !want(p->map)) || debuginfo_busy(p->map->dbg, p->map, p->addr)) {
			a->pending.v[kept++] = *p;
			continue;
		}
		fn = &a->funcs.v[a->locs.v[p->loc_id - 1].function_id - 1];
		sym = fn->system_name ? fn->system_name : fn->name;
		modfile = module_path(p->map->mod);
		err = lines_intern(a, p->map, p->addr, sym, modfile ? modfile : "", &lines, &n);
		if (err)
			break; /* ENOMEM: the rest stay pending */
		l = &a->locs.v[p->loc_id - 1];
		if (n) {
			uint32_t phys = lines[n - 1].function_id;

			/* The symbol's function is the one DWARF names: one function. */
			if (l->function_id != phys &&
			    (p->unnamed || strcmp(a->funcs.v[l->function_id - 1].name,
						  a->funcs.v[phys - 1].name) == 0) &&
			    (err = func_redirect(a, l->function_id, phys)) != 0)
				break;
			redirected |= l->function_id != phys;
			l->lines = lines;
			l->nlines = n;
			l->function_id = lines[0].function_id;
			l->exact = false;
		} else if (l->mapping_id) {
			struct agg_mapping *am = &a->maps.v[l->mapping_id - 1];

			am->has_filenames = am->has_line_numbers = am->has_inline_frames = false;
			if (p->unnamed)
				am->has_functions = false;
		}
		/* Its position is known now: another address may have it already. */
		{
			uint32_t canon;

			err = pos_canonical(a, p->loc_id, &canon);
			if (err)
				break;
			if (canon != p->loc_id) {
				a->loc_canon.v[p->loc_id - 1] = canon;
				a->addrs.v[p->aidx].loc_id = canon;
				a->merged++;
			}
		}
	}
	/* Keep [0, kept) (not asked for, waiting for debuginfod) and [i, n) (not reached). */
	if (i > kept) /* pending.v is NULL when nothing was ever pending (UB for memmove) */
		memmove(a->pending.v + kept, a->pending.v + i,
			(a->pending.n - i) * sizeof(*a->pending.v));
	a->pending.n -= i - kept;
	/* Locations still named from the symbol alone follow (one row per function). */
	if (redirected)
		for (size_t k = 0; k < a->locs.n; k++)
			if (!a->locs.v[k].nlines)
				a->locs.v[k].function_id = func_redirected(a, a->locs.v[k].function_id);
	return err;
}

/* ---- compaction (issue 23) ---------------------------------------------- */

/*
 * Copying what is alive from a into a fresh aggregate b. The remap arrays
 * give, per old id (index id - 1), the new id or 0 while not copied yet.
 */
struct copy {
	struct aggregate *a, *b;
	uint32_t *map, *func, *loc, *tid; /* tid: per old thread record */
};

static uint32_t canon_root(const struct aggregate *a, uint32_t id)
{
	while (a->loc_canon.v[id - 1])
		id = a->loc_canon.v[id - 1];
	return id;
}

static int copy_mapping(struct copy *c, uint32_t old, uint32_t *id)
{
	const struct agg_mapping *om;
	struct agg_mapping *nm;
	const char *file, *build_id;
	uint64_t key;
	uint32_t h;
	struct slot *sl;
	bool grown;

	if (!old || c->map[old - 1]) {
		*id = old ? c->map[old - 1] : 0;
		return 0;
	}
	om = &c->a->maps.v[old - 1];
	file = str_intern(c->b, om->file);
	build_id = str_intern(c->b, om->build_id);
	if (!file || !build_id || VEC_RESERVE(c->b->maps) || VEC_RESERVE(c->b->map_keys))
		return -ENOMEM;
	key = c->a->map_keys.v[old - 1];
	nm = &c->b->maps.v[c->b->maps.n];
	*nm = *om;
	nm->id = (uint32_t)c->b->maps.n + 1;
	nm->file = file;
	nm->build_id = build_id;
	c->b->map_keys.v[c->b->map_keys.n++] = key;
	if (key) { /* imported mappings have no key and are not indexed */
		h = hash_final(hash_round(0x6d6170, key));
		sl = index_probe(&c->b->map_ix, h, map_eq, c->b, &key);
		if (index_reserve(&c->b->map_ix, &grown))
			return -ENOMEM;
		index_insert(&c->b->map_ix, sl, grown, h, (uint32_t)c->b->maps.n);
	}
	c->b->maps.n++;
	*id = c->map[old - 1] = nm->id;
	return 0;
}

static int copy_function(struct copy *c, uint32_t old, uint32_t *id)
{
	const struct agg_function *of = &c->a->funcs.v[old - 1];
	struct agg_function *nf;
	int err;

	if (c->func[old - 1]) {
		*id = c->func[old - 1];
		return 0;
	}
	err = function_intern(c->b, of->name, of->file, id);
	if (err)
		return err;
	nf = &c->b->funcs.v[*id - 1];
	if (of->system_name && !nf->system_name) {
		nf->system_name = str_intern(c->b, of->system_name);
		if (!nf->system_name)
			return -ENOMEM;
	}
	if (!nf->start_line)
		nf->start_line = of->start_line;
	c->func[old - 1] = *id;
	return 0;
}

/* The new id of old location `old` (merged ones go to their canonical). */
static int copy_location(struct copy *c, uint32_t old, uint32_t *id)
{
	const struct agg_location *ol;
	struct agg_location *nl;
	struct agg_line *lines = NULL;
	uint32_t mid, fid, nid, canon;
	int err;

	old = canon_root(c->a, old);
	if (c->loc[old - 1]) {
		*id = c->loc[old - 1];
		return 0;
	}
	ol = &c->a->locs.v[old - 1];
	err = copy_mapping(c, ol->mapping_id, &mid);
	if (!err)
		err = copy_function(c, ol->function_id, &fid);
	if (err)
		return err;
	if (ol->nlines) {
		lines = arena_alloc(&c->b->arena, ol->nlines * sizeof(*lines),
				    alignof(struct agg_line));
		if (!lines)
			return -ENOMEM;
		for (uint32_t i = 0; i < ol->nlines; i++) {
			err = copy_function(c, ol->lines[i].function_id, &lines[i].function_id);
			if (err)
				return err;
			lines[i].line = ol->lines[i].line;
		}
	}
	err = location_push(c->b, mid, ol->address, fid, &nid);
	if (err)
		return err;
	nl = &c->b->locs.v[nid - 1];
	nl->nlines = ol->nlines;
	nl->lines = lines;
	nl->exact = ol->exact;
	err = pos_canonical(c->b, nid, &canon);
	if (err)
		return err;
	if (canon != nid) { /* cannot happen for a consistent a; merge anyway */
		c->b->locs.n--;
		c->b->loc_canon.n--;
	}
	*id = c->loc[old - 1] = canon;
	return 0;
}

/* The "[compacted]" location of b: the caller of merged stacks. */
static int compacted_location(struct aggregate *b, uint32_t *id)
{
	uint32_t fid;
	int err;

	if (b->compact_loc) {
		*id = b->compact_loc;
		return 0;
	}
	uint32_t nid;

	err = function_intern(b, "[compacted]", "", &fid);
	if (!err)
		err = location_push(b, 0, 0, fid, &nid);
	if (!err)
		err = pos_canonical(b, nid, id);
	if (err)
		return err;
	if (*id != nid) { /* copied from the old aggregate already */
		b->locs.n--;
		b->loc_canon.n--;
	}
	b->compact_loc = *id;
	return 0;
}

/*
 * The group record of exited threads named `name` of process pid in b
 * (created on demand): a process keeps its own groups, so its pid and comm
 * labels survive the folding.
 */
static struct agg_thread *thread_group(struct aggregate *b, const char *name, uint32_t pid,
				       const char *comm)
{
	size_t groups = 0;
	struct agg_thread *t;

	for (size_t i = 0; i < b->threads.n; i++) {
		if (!b->threads.v[i].folded)
			continue;
		groups++;
		if (strcmp(b->threads.v[i].name, name) == 0 && b->threads.v[i].pid == pid)
			return &b->threads.v[i];
	}
	if (groups >= b->lim.max_names && strcmp(name, "[other threads]") != 0)
		return thread_group(b, "[other threads]", 0, "");
	t = thread_get(b, AGG_TID_GROUP + (uint32_t)groups + 1);
	if (!t)
		return NULL;
	t->nthreads = 0;
	t->folded = true;
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->pid = pid;
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	return t;
}

static int copy_threads(struct copy *c, bool fold)
{
	for (size_t i = 0; i < c->a->threads.n; i++) {
		const struct agg_thread *ot = &c->a->threads.v[i];
		struct agg_thread *nt;

		if (ot->folded || (fold && ot->exited)) {
			nt = thread_group(c->b, ot->name[0] ? ot->name : "?", ot->pid, ot->comm);
			if (!nt)
				return -ENOMEM;
			if (!ot->folded)
				c->b->info.threads_folded++;
			/* Threads with samples (COMM records also name unsampled ones). */
			nt->nthreads += ot->folded ? ot->nthreads : ot->samples ? 1 : 0;
		} else {
			nt = thread_get(c->b, ot->tid);
			if (!nt)
				return -ENOMEM;
			memcpy(nt->name, ot->name, sizeof(nt->name));
			nt->pid = ot->pid;
			memcpy(nt->comm, ot->comm, sizeof(nt->comm));
			nt->exited = ot->exited;
			if (nt->exited)
				c->b->exited++;
		}
		nt->samples += ot->samples;
		c->tid[i] = nt->tid;
	}
	return 0;
}

struct rank {
	uint64_t n;
	size_t i;
};

static int rank_desc(const void *x, const void *y)
{
	const struct rank *p = x, *q = y;

	return p->n < q->n ? 1 : p->n > q->n ? -1 : (p->i > q->i) - (p->i < q->i);
}

/*
 * Stack order for the copy: most samples first when the cap forces merging
 * (the common stacks stay whole), else as they are. NULL order: as they are.
 */
static int stack_order(const struct aggregate *a, struct rank **order)
{
	struct rank *r;

	*order = NULL;
	if (a->stacks.n <= a->lim.max_stacks)
		return 0;
	r = malloc(a->stacks.n * sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < a->stacks.n; i++)
		r[i] = (struct rank){ a->stacks.v[i].samples, i };
	qsort(r, a->stacks.n, sizeof(*r), rank_desc);
	*order = r;
	return 0;
}

static int copy_stacks(struct copy *c, uint32_t *ids, size_t idcap)
{
	const struct aggregate *a = c->a;
	struct aggregate *b = c->b;
	size_t keep = a->lim.max_stacks / 2, soft = a->lim.max_stacks * 3 / 4;
	struct rank *order;
	int err = stack_order(a, &order);

	for (size_t k = 0; !err && k < a->stacks.n; k++) {
		const struct agg_stack *os = &a->stacks.v[order ? order[k].i : k];
		const struct slot *sl = index_probe(&a->thread_ix, thread_hash(os->tid),
						    thread_eq, a, &os->tid);
		unsigned n = os->nlocs;
		uint32_t tid = sl->ref ? c->tid[sl->ref - 1] : os->tid;
		struct agg_stack *ns;

		if (order && k >= keep && n > 0) {
			/* Over the cap: the leaf under "[compacted]", later only that. */
			uint32_t cl;
			bool leaf = b->stacks.n < soft;

			err = compacted_location(b, &cl);
			if (!err && leaf)
				err = copy_location(c, os->locs[0], &ids[0]);
			if (err)
				break;
			if (leaf && ids[0] != cl) {
				ids[1] = cl;
				n = 2;
			} else {
				ids[0] = cl;
				n = 1;
			}
			/* Count stacks that lost frames (not those merged before). */
			if (os->nlocs > n || os->locs[n - 1] != a->compact_loc)
				b->info.compacted++;
		} else {
			for (unsigned j = 0; !err && j < n && j < idcap; j++)
				err = copy_location(c, os->locs[j], &ids[j]);
			if (err)
				break;
		}
		ns = stack_get(b, tid, ids, n);
		if (!ns) {
			err = -ENOMEM;
			break;
		}
		ns->samples += os->samples;
		for (size_t e = 0; e < a->ev_width; e++) {
			ns->weights[e] += os->weights[e];
			ns->ev_samples[e] += os->ev_samples[e];
		}
		ns->weight = ns->weights[0];
	}
	free(order);
	return err;
}

/*
 * The address table: entries whose location survived, at most
 * max_addresses of them - caller-only addresses go first (they come back
 * on their next sample), then the rarest leaves (counted as dropped).
 */
static int copy_addresses(struct copy *c)
{
	const struct aggregate *a = c->a;
	struct aggregate *b = c->b;
	size_t nleaf = 0, cap = a->lim.max_addresses;
	uint64_t min_leaf = 0;
	struct rank *r = NULL;
	int err = 0;

	for (size_t i = 0; i < a->addrs.n; i++)
		nleaf += a->addrs.v[i].leaf_samples > 0;
	if (a->addrs.n > cap) {
		min_leaf = 1;
		if (nleaf > cap) {
			size_t k = 0;

			r = malloc(nleaf * sizeof(*r));
			if (!r)
				return -ENOMEM;
			for (size_t i = 0; i < a->addrs.n; i++)
				if (a->addrs.v[i].leaf_samples)
					r[k++] = (struct rank){ a->addrs.v[i].leaf_samples, i };
			qsort(r, nleaf, sizeof(*r), rank_desc);
			/* Keep the top half: the table does not refill at once. */
			min_leaf = r[cap / 2].n + 1;
		}
	}
	for (size_t i = 0; !err && i < a->addrs.n; i++) {
		const struct agg_address *oa = &a->addrs.v[i];
		struct loc_key k;
		struct slot *sl;
		uint32_t h;
		bool grown;

		if (oa->leaf_samples < min_leaf) {
			b->info.leaf_dropped += oa->leaf_samples;
			continue;
		}
		/* Caller-only addresses of locations no stack keeps: forget. */
		if (!oa->leaf_samples && !c->loc[canon_root(a, oa->loc_id) - 1])
			continue;
		k.address = oa->address;
		err = copy_mapping(c, oa->mapping_id, &k.mapping_id);
		if (err || (err = index_reserve(&b->addr_ix, &grown)) ||
		    (err = VEC_RESERVE(b->addrs)))
			break;
		b->addrs.v[b->addrs.n] = *oa;
		b->addrs.v[b->addrs.n].mapping_id = k.mapping_id;
		err = copy_location(c, oa->loc_id, &b->addrs.v[b->addrs.n].loc_id);
		if (err)
			break;
		h = addr_hash(&k);
		sl = index_probe(&b->addr_ix, h, addr_eq, b, &k);
		index_insert(&b->addr_ix, sl, grown, h, (uint32_t)b->addrs.n);
		b->addrs.n++;
	}
	free(r);
	return err;
}

/*
 * Room for n stacks in the fresh aggregate b at once: the copy then never
 * doubles and moves its stack array or rehashes its index (that was half
 * of a compaction's time with 20,000 deep stacks), and neither do the new
 * stacks of the next seconds (the old count and a quarter more: sized to
 * the copy alone, the first new stack moved the whole array again).
 */
static int stacks_presize(struct aggregate *b, size_t n)
{
	size_t cap = b->stack_ix.mask + 1;
	struct agg_stack *v;

	while (cap * 7 < (n + 1) * 10)
		cap *= 2;
	if (cap > b->stack_ix.mask + 1) {
		free(b->stack_ix.slots);
		if (index_init(&b->stack_ix, cap))
			return -ENOMEM;
	}
	if (n > b->stacks.cap) {
		v = realloc(b->stacks.v, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		b->stacks.v = v;
		b->stacks.cap = n;
	}
	return 0;
}

static int compact(struct aggregate *a)
{
	struct aggregate *b = aggregate_new(), tmp;
	struct copy c = { .a = a, .b = b };
	bool fold = a->exited > a->lim.max_exited;
	uint32_t *ids = NULL;
	size_t idcap = 0;
	int err = -ENOMEM;

	for (size_t i = 0; i < a->stacks.n; i++)
		if (a->stacks.v[i].nlocs > idcap)
			idcap = a->stacks.v[i].nlocs;
	if (!b)
		return -ENOMEM;
	b->lim = a->lim;
	b->info = a->info;
	b->info.compactions++;
	b->ev_width = a->ev_width; /* no stacks yet: nothing to move */
	c.map = calloc(a->maps.n + 1, sizeof(*c.map));
	c.func = calloc(a->funcs.n + 1, sizeof(*c.func));
	c.loc = calloc(a->locs.n + 1, sizeof(*c.loc));
	c.tid = calloc(a->threads.n + 1, sizeof(*c.tid));
	ids = calloc(idcap + 2, sizeof(*ids));
	if (!c.map || !c.func || !c.loc || !c.tid || !ids ||
	    stacks_presize(b, a->stacks.n + a->stacks.n / 4))
		goto out;
	if (a->info.event && !(b->info.event = str_intern(b, a->info.event)))
		goto out;
	if (a->info.event_unit && !(b->info.event_unit = str_intern(b, a->info.event_unit)))
		goto out;
	if ((err = copy_threads(&c, fold)) || (err = copy_stacks(&c, ids, idcap + 2)) ||
	    (err = copy_addresses(&c)))
		goto out;
	/* Every redirect: addresses named later must still land on the DWARF function. */
	for (uint32_t f = 1; f < a->fredir_n && f <= a->funcs.n; f++)
		if (a->fredir[f] && a->fredir[f] <= a->funcs.n) {
			uint32_t from, to;
			if ((err = copy_function(&c, f, &from)) ||
			    (err = copy_function(&c, a->fredir[f], &to)) ||
			    (err = func_redirect(b, from, to)))
				goto out;
		}
	/* Swap the insides: a keeps its address, the old contents go. */
	tmp = *a;
	b->generation = a->generation + 1;
	*a = *b;
	*b = tmp;
	err = 0;
out:
	aggregate_free(b);
	free(c.map);
	free(c.func);
	free(c.loc);
	free(c.tid);
	free(ids);
	return err;
}

uint64_t aggregate_generation(const struct aggregate *a)
{
	return a->generation;
}

int aggregate_maintain(struct aggregate *a, bool force, bool lines)
{
	/* 10 ms of DWARF lookups at a time (the sampling loop drains in between). */
	int err = lines ? aggregate_resolve_lines_for(a, 10 * 1000000ULL) : 0;

	if (err || a->pending.n)
		return err; /* pending locations hold ids: rebuild once they are done */
	/*
	 * Merged locations alone wait until they are a good part of the table:
	 * a location merged into another is still a valid location (its lines
	 * are the other's), so outputs stay right, and a reloaded library
	 * (dlopen/dlclose: new addresses, the same lines) merges a few dozen
	 * every second - a rebuild for each copied every stack once a second
	 * (issue 23: 228 rebuilds in 250 s on tests/workloads/longrun, each
	 * 25-55 ms of CPU with 20,000 deep stacks).
	 */
	if (!force && (a->merged == 0 || a->merged * 4 < a->locs.n) &&
	    a->exited <= a->lim.max_exited && a->stacks.n <= a->lim.max_stacks && a->addrs.n <= a->lim.max_addresses)
		return 0;
	return compact(a);
}
