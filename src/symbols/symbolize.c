/*
 * symbolize.c - raw addresses to frames (mapping + function), and names for
 * frames that have no symbol.
 *
 * Runs at sample time because mappings change under a live target. Per frame
 * it is one binary search in the maps and one in the module's symbol table;
 * the session goes through a direct-mapped cache of recent addresses first,
 * so a frame seen before costs one probe.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"
#include "pmutop/symbols/debuginfo.h"
#include "pmutop/symbols/gopclntab.h"
#include "pmutop/symbols/perfmap.h"
#include "pmutop/symbols/symbolize.h"

/* Look up one address (already adjusted for callers) into f. */
static void symbolize_one(const struct maps *maps, uint64_t addr, struct frame *f)
{
	const struct mapping *map;
	uint64_t lo, hi;

	f->func = NULL;
	f->func_off = 0;
	f->func_start = 0;
	f->map = map = maps ? maps_find(maps, addr) : NULL;
	/*
	 * A caller's return address minus one that falls just before a Go
	 * function: the frame is the PC Go saves for a goroutine that switched
	 * stacks (runtime.systemstack_switch's entry), not the function before.
	 */
	if (map && map->mod && addr + 1 < map->end && gosym_is_entry(map->mod, addr + 1 - map->bias))
		addr++;
	f->addr = addr;
	if (map && map->mod) {
		/*
		 * Stripped of .symtab: its debug file's (found here, or come from
		 * debuginfod) names it, once debuginfo has opened the module.
		 */
		if (map->dbg && !module_has_symtab(map->mod))
			debuginfo_prepare(map->dbg, map);
		/*
		 * Go code by Go's own table first: its names are the ones Go's
		 * profiles and the lines (.gopclntab) give - runtime.goexit, not
		 * the linker's ABI wrapper symbol runtime.goexit.abi0 - so a frame
		 * has one name in --stacks and in profiles, before and after its
		 * lines. Go binaries without .symtab have only that table.
		 */
		f->func = module_is_go(map->mod) ?
			  gosym_name(map->mod, addr - map->bias, &f->func_off) : NULL;
		if (!f->func)
			f->func = module_symbolize(map->mod, addr - map->bias, &f->func_off);
		/* No symbol (a stripped local function): its FDE's range. */
		if (!f->func && module_fde_range(map->mod, addr - map->bias, &lo, &hi) == 0 &&
		    lo + map->bias >= map->start && lo + map->bias < map->end) {
			f->func_start = lo + map->bias;
			f->func_off = addr - f->func_start;
		}
	}
	/* JIT code: anonymous (or not yet known) memory named by a perf map. */
	else if (maps && addr)
		f->func = perfmap_lookup(maps_perfmap(maps), addr, &f->func_off);
}

/* A return address points after the call; the call is what ran. */
static uint64_t lookup_addr(const uint64_t *ips, unsigned i)
{
	return i > 0 && ips[i] > 0 ? ips[i] - 1 : ips[i];
}

void symbolize_stack(const struct maps *maps, const uint64_t *ips, unsigned n,
		     struct frame *out)
{
	for (unsigned i = 0; i < n; i++)
		symbolize_one(maps, lookup_addr(ips, i), &out[i]);
}

/*
 * The cache: direct-mapped by address. An entry is valid for the maps
 * generation it was filled in (any mmap, exec or reload changes it) of the
 * maps it was filled from (one cache serves every process of a session), and
 * only file-backed frames are cached — perf-map names for JIT code can
 * appear later and are looked up each time.
 */
#define SYMCACHE_SIZE (1u << 14)

struct symcache_entry {
	uint64_t addr;
	uint64_t gen;           /* maps generation + 1; 0 = empty */
	const struct maps *maps;
	struct frame frame;
};

struct symbol_cache {
	struct symcache_entry e[SYMCACHE_SIZE];
	char note[400];         /* the first Go binary whose .gopclntab could not be used */
};

const char *symbol_cache_note(const struct symbol_cache *c)
{
	return c->note;
}

/* A frame left unnamed in a Go binary whose own table is unusable: say why, once. */
static void note_go_problem(struct symbol_cache *c, const struct frame *f)
{
	const char *why;

	if (c->note[0] || f->func || !f->map || !f->map->mod || !(why = gosym_problem(f->map->mod)))
		return;
	snprintf(c->note, sizeof(c->note), "%s: %s: its Go functions are shown as addresses",
		 f->map->path, why);
}

struct symbol_cache *symbol_cache_new(void)
{
	return calloc(1, sizeof(struct symbol_cache));
}

void symbol_cache_free(struct symbol_cache *c)
{
	free(c);
}

void symbolize_stack_cached(struct symbol_cache *c, const struct maps *maps,
			    const uint64_t *ips, unsigned n, struct frame *out)
{
	uint64_t gen = maps_generation(maps) + 1;

	for (unsigned i = 0; i < n; i++) {
		uint64_t addr = lookup_addr(ips, i);
		struct symcache_entry *e =
			&c->e[(addr * 0x9E3779B97F4A7C15ULL) >> 50 & (SYMCACHE_SIZE - 1)];

		if (e->gen == gen && e->addr == addr && e->maps == maps) {
			out[i] = e->frame;
			continue;
		}
		symbolize_one(maps, addr, &out[i]);
		note_go_problem(c, &out[i]);
		if (out[i].map && out[i].map->mod) {
			e->addr = addr;
			e->gen = gen;
			e->maps = maps;
			e->frame = out[i];
		}
	}
}

void symbol_cache_forget(struct symbol_cache *c, const struct maps *maps)
{
	for (size_t i = 0; i < SYMCACHE_SIZE; i++)
		if (c->e[i].maps == maps)
			c->e[i].gen = 0;
}

static bool is_anon_path(const char *path)
{
	return path[0] == '\0' || strncmp(path, "//anon", 6) == 0;
}

const char *symbolize_fallback_name(const struct frame *f, char *buf, size_t len)
{
	const struct mapping *map = f->map;
	uint64_t addr = f->func_start ? f->func_start : f->addr;
	const char *base;

	if (!buf || len == 0)
		return buf;
	if (!map) {
		snprintf(buf, len, "0x%" PRIx64, addr);
	} else if (is_anon_path(map->path)) {
		snprintf(buf, len, "[anon]+0x%" PRIx64, addr - map->start);
	} else if (map->path[0] != '/') {
		/* "[heap]", "[stack]", "[vdso]", "[anon:name]": already bracketed. */
		snprintf(buf, len, "%s+0x%" PRIx64, map->path, addr - map->start);
	} else {
		base = strrchr(map->path, '/') + 1;
		snprintf(buf, len, "%s+0x%" PRIx64, *base ? base : map->path,
			 addr - map->start + map->pgoff);
	}
	return buf;
}
