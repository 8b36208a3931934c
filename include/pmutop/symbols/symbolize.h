/*
 * symbolize.h - turn raw addresses into frames: the mapping an address was
 * in and the function it belongs to.
 *
 * Done at sample time (the mapping may be gone by the time the profile is
 * written); names come from the module's symbol table, so the cost is two
 * binary searches per frame.
 */
#ifndef PMUTOP_SYMBOLIZE_H
#define PMUTOP_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct maps;
struct mapping;

struct frame {
	uint64_t addr;                 /* runtime address (return addr - 1 for callers) */
	const struct mapping *map;     /* NULL when no mapping contains addr */
	const char *func;              /* function name; NULL when unknown */
	uint64_t func_off;             /* addr - function start, when func or func_start */
	/*
	 * No symbol, but the unwind tables (.eh_frame/.debug_frame FDE) know
	 * the function around addr: its runtime start (func_off is addr minus
	 * it). 0 when unknown. Unnamed code is named and grouped by it.
	 */
	uint64_t func_start;
	/*
	 * A frame an interpreter names, not an ELF symbol (a Python function,
	 * pyframes.h): its source line, 0 for native frames. map is then a
	 * mapping standing for the source file (path = the file, no module).
	 */
	uint32_t src_line;
};

/*
 * Symbolize n addresses (leaf first, as the unwinder returns them) into
 * frames. For every frame but the leaf, the caller's call instruction
 * (addr - 1) is what is looked up and recorded.
 */
void symbolize_stack(const struct maps *maps, const uint64_t *ips, unsigned n,
		     struct frame *out);

/*
 * The same through a cache of recent addresses (valid while the maps'
 * generation does not change): the profiler's hot path, where most frames
 * repeat from sample to sample. NULL cache from symbol_cache_new() = ENOMEM.
 */
struct symbol_cache;
struct symbol_cache *symbol_cache_new(void);
void symbol_cache_free(struct symbol_cache *c);
/* Drop every entry filled from maps (about to be freed). */
void symbol_cache_forget(struct symbol_cache *c, const struct maps *maps);
void symbolize_stack_cached(struct symbol_cache *c, const struct maps *maps,
			    const uint64_t *ips, unsigned n, struct frame *out);

/*
 * Why frames of a Go binary stayed unnamed ("PATH: Go pclntab magic ...
 * not supported ...": its .gopclntab is corrupt, truncated or of an
 * unknown layout), for the first such binary the cache met; "" when none.
 */
const char *symbol_cache_note(const struct symbol_cache *c);

/*
 * Name for a frame without a symbol: "module+0xOFF" (module basename and
 * file-relative offset) - of the enclosing function's start when the unwind
 * tables give one (func_start), so all of an unnamed function's addresses
 * share one name - "[anon]+0x..." or "0xADDR". Every output names unnamed
 * frames through this. Returns buf.
 */
const char *symbolize_fallback_name(const struct frame *f, char *buf, size_t len);

#endif
