/*
 * u64map.h - an open-addressing map from 64-bit keys to dense indices,
 * for the writers that build their own call trees (flame graph page, SVG):
 * (parent << 32 | name) -> node, and the like. Linear probing, power-of-two
 * size, at most half full; a value is stored plus one, 0 meaning empty.
 */
#ifndef PMUTOP_U64MAP_H
#define PMUTOP_U64MAP_H

#include <stdbool.h>
#include <stdint.h>

struct u64map {
	uint64_t *keys;
	uint32_t *vals;        /* value + 1; 0 = empty */
	uint32_t n, cap;
};

/*
 * The slot of key: *found says whether it holds key already (its value is
 * vals[slot] - 1); else it is the empty slot to fill with u64map_put().
 * -ENOMEM when the map cannot grow. A zeroed map is an empty one.
 */
int64_t u64map_slot(struct u64map *m, uint64_t key, bool *found);

/* Fill the empty slot u64map_slot() returned for key with value. */
void u64map_put(struct u64map *m, int64_t slot, uint64_t key, uint32_t value);

void u64map_free(struct u64map *m);

#endif
