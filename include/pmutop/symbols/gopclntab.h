/*
 * symbols/gopclntab.h - Go's function table as a symbol source: names,
 * file:line and inlined calls for Go code that has no ELF symbol or DWARF
 * (binaries built with -ldflags='-s -w'). The table itself is read by
 * target/gopclntab.h; symbolize.c asks here when the ELF symbol table has
 * no name, debuginfo.c when there is no DWARF.
 */
#ifndef PMUTOP_SYMBOLS_GOPCLNTAB_H
#define PMUTOP_SYMBOLS_GOPCLNTAB_H

#include <stdbool.h>
#include <stdint.h>

#include "pmutop/symbols/debuginfo.h"

struct module;

/*
 * Name of the Go function containing ELF vaddr in mod (a string owned by
 * the module), *off = vaddr - its entry; NULL when mod has no usable
 * .gopclntab or vaddr is not in it.
 */
const char *gosym_name(const struct module *mod, uint64_t vaddr, uint64_t *off);

/*
 * The source positions at vaddr: the functions inlined there innermost
 * first, then the function itself, each with file:line (strings owned by
 * the module), at most max into out. Returns the count, 0 when mod has no
 * usable .gopclntab or vaddr is not in it.
 */
unsigned gosym_lines(const struct module *mod, uint64_t vaddr, struct src_line *out,
		     unsigned max);

/* Whether ELF vaddr is the first byte of a Go function in mod's .gopclntab. */
bool gosym_is_entry(const struct module *mod, uint64_t vaddr);

/*
 * Why mod's .gopclntab cannot be used (corrupt, truncated, unknown
 * layout), or NULL when it has none or it is fine.
 */
const char *gosym_problem(const struct module *mod);

#endif
