/*
 * demangle.c - symbol demangling through libiberty (see demangle.h).
 *
 * Only names that look mangled are handed to the demangler, so the common
 * case (C and Go symbols) costs two character compares. libiberty's
 * demangler is reentrant: it keeps no global state.
 */
#include "pmutop/symbols/demangle.h"

#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

char *demangle(const char *sym)
{
	char *out;

	if (!sym || sym[0] != '_')
		return NULL;
	/* _Z (C++ and Rust legacy), __Z (Mach-O style), _R (Rust v0). */
	if (sym[1] != 'Z' && sym[1] != 'R' && !(sym[1] == '_' && sym[2] == 'Z'))
		return NULL;
	out = cplus_demangle(sym, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	if (out && strcmp(out, sym) == 0) {
		free(out);
		out = NULL;
	}
	return out;
}
