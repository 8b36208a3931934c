/*
 * agg_index.c - the aggregate's storage primitives: string hashing, the
 * open-addressing index every lookup table uses, the arena that keeps
 * strings and count arrays at fixed addresses, and growable arrays.
 *
 * The index stores (hash, entry number) pairs only: the entries live in
 * dense arrays the views hand out as they are, so a lookup table costs 8
 * bytes a slot at most 70% full, and growing it never re-hashes a key.
 */
#include "agg_int.h"

#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

uint32_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return hash_final(h);
}

int index_init(struct index *ix, size_t cap)
{
	ix->slots = calloc(cap, sizeof(*ix->slots));
	if (!ix->slots)
		return -ENOMEM;
	ix->mask = cap - 1;
	ix->count = 0;
	return 0;
}

/* Move every slot into a table of ncap slots (a power of two). */
static int index_resize(struct index *ix, size_t ncap)
{
	size_t cap = ix->mask + 1, i;
	struct slot *ns = calloc(ncap, sizeof(*ns));

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
	return 0;
}

int index_reserve(struct index *ix, bool *grown)
{
	size_t cap = ix->mask + 1;
	int err;

	*grown = false;
	if ((ix->count + 1) * 10 <= cap * 7)
		return 0;
	err = index_resize(ix, cap * 2);
	if (!err)
		*grown = true;
	return err;
}

int index_presize(struct index *ix, size_t n)
{
	size_t cap = ix->mask + 1;

	while (cap * 7 < (n + 1) * 10)
		cap *= 2;
	return cap > ix->mask + 1 ? index_resize(ix, cap) : 0;
}

void index_insert(struct index *ix, struct slot *s, bool grown, uint32_t hash, uint32_t entry)
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

/* ---- arena ---- */

#define ARENA_CHUNK (64 * 1024)

struct chunk {
	struct chunk *next;
	size_t used, cap;
	alignas(max_align_t) unsigned char data[];
};

void *arena_alloc(struct arena *ar, size_t size, size_t align)
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
	ar->bytes += sizeof(*c) + off;
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

void arena_free(struct arena *ar)
{
	struct chunk *c = ar->head, *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	ar->head = NULL;
	ar->bytes = 0;
}

void *vec_grow(void *v, size_t *cap, size_t elsize)
{
	size_t ncap = *cap ? *cap * 2 : 64;
	void *nv = realloc(v, ncap * elsize);

	if (!nv)
		return v;
	*cap = ncap;
	return nv;
}
