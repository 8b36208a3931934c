/*
 * agg_lines.c - file:line and inlined frames for the aggregate's
 * locations, looked up after the fact.
 *
 * aggregate_add() records a location with debug info as pending instead of
 * looking its lines up: opening a large debug file takes long enough (100+
 * ms for libc) to overflow the ring buffers if done at sample time. The
 * session asks for them in slices between drains (a budget in ns) or all
 * at once before writing; DWARF itself is read on the loader's thread
 * (debuginfo.h), and a location whose answer is not ready stays pending.
 * Once its lines are known a location may turn out to be the same source
 * position as another: it then points to that one (loc_canon), and the
 * next rebuild folds the two.
 */
#include "agg_int.h"

#include <errno.h>
#include <stdalign.h>
#include <string.h>
#include <time.h>

#include "pmutop/symbols/debuginfo.h"
#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"

static bool is_mangled(const char *s)
{
	return s[0] == '_' && (s[1] == 'Z' || s[1] == 'R');
}

/*
 * The inline chain of a location from the mapping's debug info (DWARF
 * lookups are cached per module and address in debuginfo.c), as interned
 * lines in *out; *n = 0 when there is no debug info for the address.
 */
static int lines_intern(struct aggregate *a, const struct mapping *m, uint64_t addr,
			const char *symname, const char *modfile, struct agg_line **out,
			uint32_t *n)
{
	const struct src_line *src;
	struct agg_line *lines;
	unsigned ns, i;
	int err;

	*out = NULL;
	*n = 0;
	if (!m || !m->mod || !m->dbg)
		return 0;
	ns = debuginfo_lookup(m->dbg, m, addr, &src);
	if (!ns)
		return 0;
	lines = arena_alloc(&a->arena, ns * sizeof(*lines), alignof(struct agg_line));
	if (!lines)
		return -ENOMEM;
	for (i = 0; i < ns; i++) {
		const char *raw = src[i].func;

		/*
		 * The function that holds the code is the ELF symbol: prefer its
		 * mangled name (with parameter types) to DWARF's plain one.
		 */
		if (i == ns - 1 && symname && is_mangled(symname) && !(raw && is_mangled(raw)))
			raw = symname;
		if (!raw || !*raw)
			raw = i == ns - 1 && symname ? symname : "[inlined]";
		err = function_intern_sym(a, raw, src[i].file ? src[i].file : modfile,
					  src[i].decl_line, &lines[i].function_id);
		if (err)
			return err;
		lines[i].line = src[i].line;
	}
	*out = lines;
	*n = ns;
	return 0;
}

/* ---- looking lines up ---- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int resolve(struct aggregate *a, uint64_t budget_ns, bool (*want)(const struct mapping *m),
		   bool (*stop)(void *arg), void *arg);

int aggregate_resolve_lines(struct aggregate *a, bool (*stop)(void *arg), void *arg)
{
	return resolve(a, 0, NULL, stop, arg);
}

int aggregate_resolve_lines_for(struct aggregate *a, uint64_t budget_ns)
{
	return resolve(a, budget_ns, NULL, NULL, NULL);
}

int aggregate_resolve_lines_of(struct aggregate *a, bool (*want)(const struct mapping *m))
{
	return resolve(a, 0, want, NULL, NULL);
}

size_t aggregate_pending_lines(const struct aggregate *a)
{
	return a->pending.n;
}

const struct mapping *aggregate_pending_mapping(const struct aggregate *a, size_t i)
{
	return i < a->pending.n ? a->pending.v[i].map : NULL;
}

/* want (may be NULL): only the locations of the mappings it accepts; the rest stay pending. */
static int resolve(struct aggregate *a, uint64_t budget_ns, bool (*want)(const struct mapping *m),
		   bool (*stop)(void *arg), void *arg)
{
	uint64_t deadline = budget_ns ? mono_ns() + budget_ns : 0;
	bool redirected = false;
	size_t i, kept = 0;
	int err = 0;

	for (i = 0; i < a->pending.n; i++) {
		if (stop && i % 32 == 0 && stop(arg)) {
			err = -EINTR;
			break;
		}
		if (deadline && i && (i % 8) == 0 && mono_ns() >= deadline)
			break; /* the rest next time: the ring buffers need draining */
		const struct pending_loc *p = &a->pending.v[i];
		const struct agg_function *fn;
		struct agg_location *l;
		struct agg_line *lines;
		const char *sym, *modfile;
		uint32_t n;

		if (!p->loc_id || p->loc_id > a->locs.n)
			continue;
		/*
		 * Not asked for, or its debug file is still on its way from
		 * debuginfod, or its DWARF still being loaded or looked up on
		 * the loader's thread (debuginfo.h; this asks for it): later.
		 */
		if ((want && !want(p->map)) || debuginfo_busy(p->map->dbg, p->map, p->addr)) {
			a->pending.v[kept++] = *p;
			continue;
		}
		fn = &a->funcs.v[a->locs.v[p->loc_id - 1].function_id - 1];
		sym = fn->system_name ? fn->system_name : fn->name;
		modfile = module_path(p->map->mod);
		err = lines_intern(a, p->map, p->addr, sym, modfile ? modfile : "", &lines, &n);
		if (err)
			break; /* ENOMEM: the rest stay pending */
		l = &a->locs.v[p->loc_id - 1];
		if (n) {
			uint32_t phys = lines[n - 1].function_id;

			/* The symbol's function is the one DWARF names: one function. */
			if (l->function_id != phys &&
			    (p->unnamed || strcmp(a->funcs.v[l->function_id - 1].name,
						  a->funcs.v[phys - 1].name) == 0) &&
			    (err = func_redirect(a, l->function_id, phys)) != 0)
				break;
			redirected |= l->function_id != phys;
			l->lines = lines;
			l->nlines = n;
			l->function_id = lines[0].function_id;
			l->exact = false;
		} else if (l->mapping_id) {
			struct agg_mapping *am = &a->maps.v[l->mapping_id - 1];

			am->has_filenames = am->has_line_numbers = am->has_inline_frames = false;
			if (p->unnamed)
				am->has_functions = false;
		}
		/* Its position is known now: another address may have it already. */
		{
			uint32_t canon;

			err = pos_canonical(a, p->loc_id, &canon);
			if (err)
				break;
			if (canon != p->loc_id) {
				a->loc_canon.v[p->loc_id - 1] = canon;
				a->addrs.v[p->aidx].loc_id = canon;
				a->merged++;
			}
		}
	}
	/* Keep [0, kept) (not asked for, waiting for debuginfod) and [i, n) (not reached). */
	if (i > kept) /* pending.v is NULL when nothing was ever pending (UB for memmove) */
		memmove(a->pending.v + kept, a->pending.v + i,
			(a->pending.n - i) * sizeof(*a->pending.v));
	a->pending.n -= i - kept;
	/* Locations still named from the symbol alone follow (one row per function). */
	if (redirected)
		for (size_t k = 0; k < a->locs.n; k++)
			if (!a->locs.v[k].nlines)
				a->locs.v[k].function_id = func_redirected(a, a->locs.v[k].function_id);
	return err;
}
