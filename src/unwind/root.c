/*
 * root.c - the outermost frame of a finished walk, classified (root.h).
 *
 * Cheap enough for every sample: a map lookup, the CFI rule the fast path
 * has cached for the address anyway, and at most a symbol, a .gopclntab
 * and an FDE lookup (binary searches) - no allocation.
 */
#include "pmutop/unwind/root.h"

#include <string.h>

#include "pmutop/target/gopclntab.h"
#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"

/*
 * Where threads start: the C runtime's entry (glibc, musl), the dynamic
 * loader's, the clone system call's child side, glibc's thread start, and
 * the Go runtime's goroutine and thread entries (their .symtab names may
 * carry Go's ABI suffix, taken off below).
 */
static const char *const root_names[] = {
	"_start", "__start", "_start_c", "__libc_start_main", "__libc_start_main_impl",
	"__libc_start_call_main", "_dl_start", "_dl_start_user", "_dl_start_final",
	"clone", "__clone", "clone3", "__clone3", "start_thread", "__thread_start",
	"thread_start", "runtime.goexit", "runtime.mstart",
	"runtime.rt0_go",
};

bool unwind_root_name(const char *name)
{
	size_t len;

	if (!name)
		return false;
	/* glibc's internal aliases, as its debug file names them: __GI___clone3. */
	if (strncmp(name, "__GI_", 5) == 0)
		name += 5;
	len = strlen(name);
	if (len > 5 && strcmp(name + len - 5, ".abi0") == 0)
		len -= 5;
	for (size_t i = 0; i < sizeof(root_names) / sizeof(root_names[0]); i++)
		if (strlen(root_names[i]) == len && strncmp(root_names[i], name, len) == 0)
			return true;
	return false;
}

#define ENTRY_REACH 64 /* bytes after an entry point without FDE or symbol */

/* Whether ELF vaddr v is in the function at the file's entry point (a stripped _start). */
static bool in_entry_function(const struct module *mod, uint64_t v)
{
	uint64_t entry = module_entry(mod), lo, hi, size;

	if (!entry)
		return false;
	if (module_fde_range(mod, entry, &lo, &hi) == 0)
		return lo <= v && v < hi;
	if (module_symbol_extent(mod, entry, &lo, &size))
		return lo <= v && v - lo < size;
	/*
	 * Neither knows it: assembly without CFI, such as the dynamic
	 * loader's _start (RTLD_START: mov %rsp,%rdi; call _dl_start), where
	 * every program's stacks start while it is being loaded. Its first
	 * call comes within a few instructions of the entry.
	 */
	return v >= entry && v - entry < ENTRY_REACH;
}

enum unwind_outcome unwind_root_classify(const struct maps *maps, uint64_t addr,
					 bool (*cfi_root)(void *arg, uint64_t addr), void *arg)
{
	const struct mapping *m;
	const struct gopclntab *gt;
	const char *err;
	struct gofunc gf;
	uint64_t v;

	if (addr >> 63)
		return UNWIND_ROOT; /* the kernel's own stack (a kernel thread) */
	m = maps ? maps_find(maps, addr) : NULL;
	if (!m || !m->exec)
		return UNWIND_BAD_FRAME;
	if (cfi_root && cfi_root(arg, addr))
		return UNWIND_ROOT;
	if (!m->mod)
		return UNWIND_NO_ROOT; /* JIT or other anonymous code: no thread starts there */
	v = addr - m->bias;
	if ((gt = module_gopclntab(m->mod, &err)) && gopclntab_func(gt, v, &gf) == 0 &&
	    gopclntab_is_top(&gf))
		return UNWIND_ROOT;
	if (unwind_root_name(module_symbolize(m->mod, v, NULL)) || in_entry_function(m->mod, v))
		return UNWIND_ROOT;
	return UNWIND_NO_ROOT;
}
