/*
 * symbolize.c - raw addresses to frames (mapping + function), and names for
 * frames that have no symbol.
 *
 * Runs at sample time because mappings change under a live target. Per frame
 * it is one binary search in the maps and one in the module's symbol table;
 * nothing here allocates.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "pmutop/maps.h"
#include "pmutop/module.h"
#include "pmutop/perfmap.h"
#include "pmutop/symbolize.h"

void symbolize_stack(const struct maps *maps, const uint64_t *ips, unsigned n,
		     struct frame *out)
{
	for (unsigned i = 0; i < n; i++) {
		struct frame *f = &out[i];
		uint64_t addr = ips[i];
		const struct mapping *map;

		/* A return address points after the call; the call is what ran. */
		if (i > 0 && addr > 0)
			addr--;
		f->addr = addr;
		f->func = NULL;
		f->func_off = 0;
		f->map = map = maps ? maps_find(maps, addr) : NULL;
		if (map && map->mod)
			f->func = module_symbolize(map->mod, addr - map->bias, &f->func_off);
		/* JIT code: anonymous (or not yet known) memory named by a perf map. */
		else if (maps && addr)
			f->func = perfmap_lookup(maps_perfmap(maps), addr, &f->func_off);
	}
}

static bool is_anon_path(const char *path)
{
	return path[0] == '\0' || strncmp(path, "//anon", 6) == 0;
}

const char *symbolize_fallback_name(const struct frame *f, char *buf, size_t len)
{
	const struct mapping *map = f->map;
	const char *base;

	if (!buf || len == 0)
		return buf;
	if (!map) {
		snprintf(buf, len, "0x%" PRIx64, f->addr);
	} else if (is_anon_path(map->path)) {
		snprintf(buf, len, "[anon]+0x%" PRIx64, f->addr - map->start);
	} else if (map->path[0] != '/') {
		/* "[heap]", "[stack]", "[vdso]", "[anon:name]": already bracketed. */
		snprintf(buf, len, "%s+0x%" PRIx64, map->path, f->addr - map->start);
	} else {
		base = strrchr(map->path, '/') + 1;
		snprintf(buf, len, "%s+0x%" PRIx64, *base ? base : map->path,
			 f->addr - map->start + map->pgoff);
	}
	return buf;
}
