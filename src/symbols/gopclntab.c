/*
 * symbols/gopclntab.c - Go's function table as a symbol source (see
 * symbols/gopclntab.h): a thin adapter from target/gopclntab.h's records to
 * the symbolizer's names and debuginfo's src_line chains.
 */
#include "pmutop/symbols/gopclntab.h"

#include "pmutop/target/gopclntab.h"
#include "pmutop/target/module.h"

#define MAX_GO_INLINE 64

const char *gosym_name(const struct module *mod, uint64_t vaddr, uint64_t *off)
{
	const char *err;
	const struct gopclntab *t = module_gopclntab(mod, &err);
	struct gofunc f;

	if (!t || gopclntab_func(t, vaddr, &f) != 0 || !*f.name)
		return NULL;
	*off = vaddr - f.entry;
	return f.name;
}

unsigned gosym_lines(const struct module *mod, uint64_t vaddr, struct src_line *out,
		     unsigned max)
{
	const char *err;
	const struct gopclntab *t = module_gopclntab(mod, &err);
	struct goline gl[MAX_GO_INLINE];
	struct gofunc f;
	unsigned n;

	if (!t || !max || gopclntab_func(t, vaddr, &f) != 0 || !*f.name)
		return 0;
	n = gopclntab_lines(t, &f, vaddr, gl, max < MAX_GO_INLINE ? max : MAX_GO_INLINE);
	for (unsigned i = 0; i < n; i++)
		out[i] = (struct src_line){ .func = gl[i].func, .file = gl[i].file,
					    .line = gl[i].line > 0 ? (uint32_t)gl[i].line : 0 };
	return n;
}

bool gosym_is_entry(const struct module *mod, uint64_t vaddr)
{
	const char *err;
	const struct gopclntab *t = module_gopclntab(mod, &err);
	struct gofunc f;

	return t && gopclntab_func(t, vaddr, &f) == 0 && f.entry == vaddr;
}

const char *gosym_problem(const struct module *mod)
{
	const char *err = NULL;

	module_gopclntab(mod, &err);
	return err;
}
