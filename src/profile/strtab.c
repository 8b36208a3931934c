/*
 * strtab.c - a string table with dense indices (see strtab.h).
 */
#include "pmutop/profile/strtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t strtab_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

static int strtab_grow(struct strtab *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 256, i, j;
	const char **nv = realloc(t->v, ncap * sizeof(*nv));
	uint32_t *ns;

	if (!nv)
		return -ENOMEM;
	t->v = nv;
	ns = calloc(ncap * 2, sizeof(*ns)); /* the set is at most half full */
	if (!ns)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		for (j = strtab_hash(t->v[i]) & (ncap * 2 - 1); ns[j];
		     j = (j + 1) & (ncap * 2 - 1))
			;
		ns[j] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = ns;
	t->mask = ncap * 2 - 1;
	t->cap = ncap;
	return 0;
}

int64_t strtab_add(struct strtab *t, const char *s)
{
	size_t j;

	if (!s)
		s = "";
	if (t->n == t->cap && strtab_grow(t))
		return -1;
	for (j = strtab_hash(s) & t->mask; t->slots[j]; j = (j + 1) & t->mask)
		if (strcmp(t->v[t->slots[j] - 1], s) == 0)
			return t->slots[j] - 1;
	t->slots[j] = (uint32_t)t->n + 1;
	t->v[t->n] = s;
	return (int64_t)t->n++;
}

void strtab_free(struct strtab *t)
{
	free(t->v);
	free(t->slots);
}
