/*
 * u64map.c - an open-addressing map from 64-bit keys to dense indices (see
 * u64map.h): the call-tree writers' child and frame lookups.
 */
#include "pmutop/profile/u64map.h"

#include <errno.h>
#include <stdlib.h>

static uint64_t hash_u64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

static int u64map_grow(struct u64map *m)
{
	uint32_t ncap = m->cap ? m->cap * 2 : 1024;
	uint64_t *nk = malloc(ncap * sizeof(*nk));
	uint32_t *nv = calloc(ncap, sizeof(*nv));

	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < m->cap; i++) {
		uint32_t j;

		if (!m->vals[i])
			continue;
		j = (uint32_t)hash_u64(m->keys[i]) & (ncap - 1);
		while (nv[j])
			j = (j + 1) & (ncap - 1);
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = ncap;
	return 0;
}

int64_t u64map_slot(struct u64map *m, uint64_t key, bool *found)
{
	uint32_t j;

	if ((m->n + 1) * 2 > m->cap && u64map_grow(m))
		return -ENOMEM;
	j = (uint32_t)hash_u64(key) & (m->cap - 1);
	while (m->vals[j] && m->keys[j] != key)
		j = (j + 1) & (m->cap - 1);
	*found = m->vals[j] != 0;
	return j;
}

void u64map_put(struct u64map *m, int64_t slot, uint64_t key, uint32_t value)
{
	m->keys[slot] = key;
	m->vals[slot] = value + 1;
	m->n++;
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
	m->n = m->cap = 0;
}
