/*
 * fuzz_maps.c - fuzz target: arbitrary bytes as /proc/PID/maps.
 *
 * The target controls its mapping paths (spaces, newlines in file names,
 * " (deleted)", huge offsets), and maps are re-read during sampling. The
 * input is parsed by maps_load_stream() (twice: the second pass reuses
 * unchanged mappings), then every address the input mentions and the
 * edges of the address space are looked up, and a few PERF_RECORD_MMAP2
 * style additions are made on top. No module cache: no file the input
 * names is opened (safe_open is covered by e2e tests on real files).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "pmutop/target/maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct maps *m = maps_new(getpid(), NULL);
	volatile size_t sink = 0;
	uint64_t probe[8] = { 0, 1, 0x1000, 0x7fffffffffff, UINT64_MAX, 0, 0, 0 };

	if (!m)
		return 0;
	for (int pass = 0; pass < 2; pass++) {
		FILE *f = fmemopen((void *)data, size ? size : 1, "r");

		if (!f)
			break;
		(void)maps_load_stream(m, f);
		fclose(f);
	}
	if (size >= 16) {
		memcpy(&probe[5], data, 8);
		memcpy(&probe[6], data + size - 8, 8);
		probe[7] = probe[5] + (probe[6] & 0xffff);
	}
	for (int i = 0; i < 8; i++) {
		const struct mapping *map = maps_find(m, probe[i]);

		if (map)
			sink += strlen(map->path) + (size_t)(map->end - map->start);
	}
	if (size >= 24) {
		uint64_t a, l;

		memcpy(&a, data + 8, 8);
		memcpy(&l, data + 16, 8);
		(void)maps_add(m, a, l, 0, 0, 0, true, "/fuzz (deleted)");
		(void)maps_add(m, a + 0x1000, l >> 4, l, 1, 2, false, "");
		sink += maps_find(m, a) != NULL;
	}
	maps_reset(m);
	sink += maps_find(m, probe[5]) != NULL;
	(void)sink;
	maps_free(m);
	return 0;
}
