/*
 * annotate.c - build the instruction-level view of one function (see
 * annotate.h).
 *
 * The steps, in order: find the profile's functions that match the name;
 * for each location of theirs, open the binary its mapping names (checked
 * by build-id) and find the code's extent (its ELF symbol, else the
 * .eh_frame/.debug_frame FDE that covers it, which is how stripped code
 * still has function boundaries); keep the extent with the most samples;
 * decode it; then put every leaf sample whose address falls in that extent
 * of that binary on its instruction, and derive basic blocks, CPI and
 * source lines.
 *
 * Why leaf samples by address rather than by function name: an inlined
 * callee's samples are physically inside its caller's code, and a function
 * name can be spread over several binaries; an address in a binary is what
 * a row of disassembly is.
 *
 * Every file opened here is named by a profile, which may come from
 * anywhere: only regular files are opened (no FIFO can block us, no device
 * is read), debug files without following symlinks, and a binary whose
 * build-id differs from the profile's is refused. Source files are named
 * by the code's DWARF, which a hostile target writes as it likes (`#line 1
 * "/root/secret"`): a live target's are opened only inside its root and
 * with its own rights (safe_open_as), so root never reads a file for it
 * that it could not read itself (issue 32).
 */
#include "pmutop/profile/annotate.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/ratios.h"
#include "pmutop/symbols/debuginfo.h"
#include "pmutop/symbols/debuginfod.h"
#include "pmutop/symbols/gopclntab.h"
#include "pmutop/target/gopclntab.h"
#include "pmutop/target/module.h"
#include "pmutop/target/safe_open.h"

/* Source files larger than this are not shown inline. */
#define SRC_MAX_BYTES (8u << 20)
/* Candidate code extents considered for one name. */
#define MAX_HOMES 64

struct ann_src {
	char *file;
	char *text;               /* NULL: not readable here */
	size_t nlines;
	char **lines;             /* pointers into text */
};

/* One place the asked-for function's code lives: a binary and an extent. */
struct home {
	const struct agg_mapping *map;
	struct module *mod;
	uint64_t bias;
	uint64_t start, size;     /* ELF vaddr */
	const char *symbol;       /* NULL: named by its FDE start */
	uint64_t weight, samples; /* leaf samples of event 0 in it */
};

/* Samples whose leaf was at one address (of a mapping), for one location. */
struct leaf {
	uint32_t mapping_id;
	uint32_t loc_id;          /* the stack's leaf location (for its names) */
	uint64_t address;
	uint64_t samples;
	uint64_t w[PMUTOP_MAX_EVENTS];
};

struct builder {
	const struct aggregate *a;
	const struct annotate_opts *o;
	struct module_cache *mc;
	struct annotation *an;
	const struct agg_mapping *maps;
	const struct agg_function *funcs;
	const struct agg_location *locs;
	const struct agg_stack *stacks;
	size_t nmaps, nfuncs, nlocs, nstacks;
	/* Every stack's leaf samples by address (aggregate_leaf_parts). */
	struct leaf *leaves;
	size_t nleaves;
	/* Per mapping id - 1: its module (NULL: none), bias, and why not. */
	struct module **mods;
	uint64_t *bias;
	int *mod_rc;
	char *err;
	size_t errlen;
};

static void note(struct annotation *an, const char *fmt, const char *arg)
{
	if (an->nnotes < ANN_MAX_NOTES)
		snprintf(an->notes[an->nnotes++], sizeof(an->notes[0]), fmt, arg);
}

/* ---- finding the function ----------------------------------------------- */

static const char *fname(const struct builder *b, uint32_t id)
{
	return id && id <= b->nfuncs ? b->funcs[id - 1].name : "";
}

/* Does location l carry function name `want` (itself or an inlined frame)? */
static bool loc_has(const struct builder *b, const struct agg_location *l, const char *want,
		    bool substring)
{
	const char *n = fname(b, l->function_id);

	if (substring ? strstr(n, want) != NULL : !strcmp(n, want))
		return true;
	for (uint32_t i = 0; i < l->nlines; i++) {
		n = fname(b, l->lines[i].function_id);
		if (substring ? strstr(n, want) != NULL : !strcmp(n, want))
			return true;
	}
	return false;
}

/*
 * The profile's name for the function: an exact match, else the only name
 * containing want. Fills err with candidates (or with near names) otherwise.
 */
static int resolve_name(struct builder *b, const char *want, const char **name)
{
	const char *found[8];
	size_t nfound = 0, i, k;
	int len;

	for (i = 0; i < b->nfuncs; i++)
		if (!strcmp(b->funcs[i].name, want)) {
			*name = b->funcs[i].name;
			return 0;
		}
	for (i = 0; i < b->nfuncs && nfound < 8; i++) {
		const char *n = b->funcs[i].name;

		if (!strstr(n, want))
			continue;
		for (k = 0; k < nfound && strcmp(found[k], n); k++)
			;
		if (k == nfound)
			found[nfound++] = n;
	}
	if (nfound == 1) {
		*name = found[0];
		return 0;
	}
	if (nfound > 1) {
		len = snprintf(b->err, b->errlen, "\"%s\" matches several functions:", want);
		for (k = 0; k < nfound && len > 0 && (size_t)len < b->errlen; k++)
			len += snprintf(b->err + len, b->errlen - (size_t)len, "%s %s",
					k ? "," : "", found[k]);
		if (len > 0 && (size_t)len < b->errlen)
			snprintf(b->err + len, b->errlen - (size_t)len, "%s; give the whole name",
				 nfound == 8 ? ", ..." : "");
		return -EEXIST;
	}
	snprintf(b->err, b->errlen, "no function \"%s\" in this profile (the table lists "
		 "the names it has: pmutop --load FILE --no-tui)", want);
	return -ENOENT;
}

/* ---- binaries ----------------------------------------------------------- */

/* A regular file at path (never a FIFO or device named by a profile). */
static bool regular_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static const char *why_not_binary(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return "not found";
	if (!S_ISREG(st.st_mode))
		return "not a regular file (pmutop opens no FIFO or device a profile names)";
	return "not a readable ELF file";
}

/*
 * The same build from debuginfod (debuginfod.h; DEBUGINFOD_URLS): how a
 * profile is annotated on a machine that never had the binary. The file is
 * verified by build-id before it is used. 0, or -ENOENT with the reason
 * added to b->err.
 */
static int fetch_binary(struct builder *b, const struct agg_mapping *map, const char *bid,
			struct module **out)
{
	char why[400], *path = NULL;
	size_t l = strlen(b->err);
	struct module *c = NULL;
	int fd;

	if (b->o->offline)
		return -ENOENT;
	if (!debuginfod_enabled()) {
		snprintf(b->err + l, b->errlen - l, " (DEBUGINFOD_URLS would let pmutop fetch "
			 "it from a debuginfod server by its build-id)");
		return -ENOENT;
	}
	fd = dfd_fetch_now(DFD_EXECUTABLE, bid, &path, why, sizeof(why));
	if (fd >= 0) {
		close(fd);
		c = path ? module_cache_get(b->mc, path, map->file, 0, 0) : NULL;
	}
	free(path);
	if (c && !strcmp(module_build_id(c), bid)) {
		*out = c;
		note(b->an, "%s is not here: its code came from debuginfod, by build-id",
		     map->file);
		return 0;
	}
	snprintf(b->err + l, b->errlen - l, "; debuginfod: %s", fd >= 0 ? "unreadable" : why);
	return -ENOENT;
}

/*
 * The binary behind mapping `map`, checked against the profile's build-id:
 * its path (under o->root), else DIR/.build-id/xx/rest for the debug
 * directories, else debuginfod. Returns 0, -ENODEV (nothing found) or
 * -ESTALE (found, but another build); the first failure's reason in err.
 */
static int open_binary(struct builder *b, const struct agg_mapping *map, struct module **out)
{
	const char *root = b->o && b->o->root ? b->o->root : "";
	const char *bid = map->build_id ? map->build_id : "";
	char path[PATH_MAX], dirs[PATH_MAX];
	const char *env = getenv("PMUTOP_DEBUGINFO_PATH");
	struct module *m;
	char *save = NULL, *d;

	*out = NULL;
	if (!map->file || map->file[0] != '/') {
		snprintf(b->err, b->errlen, "%s: no file to read code from",
			 map->file && *map->file ? map->file : "anonymous memory");
		return -ENODEV;
	}
	snprintf(path, sizeof(path), "%s%s", root, map->file);
	m = regular_file(path) ? module_cache_get(b->mc, path, map->file, 0, 0) : NULL;
	if (!m && *root) {
		snprintf(path, sizeof(path), "%s", map->file);
		m = regular_file(path) ? module_cache_get(b->mc, path, map->file, 0, 0) : NULL;
	}
	if (m && (!*bid || !strcmp(module_build_id(m), bid))) {
		*out = m;
		return 0;
	}
	if (m)
		snprintf(b->err, b->errlen, "%s has build-id %s, the profile's has %s: the "
			 "binary changed since the profile was taken", path,
			 *module_build_id(m) ? module_build_id(m) : "(none)", bid);
	else
		snprintf(b->err, b->errlen, "%s: %s", path, why_not_binary(path));
	if (strlen(bid) < 4)
		return m ? -ESTALE : -ENODEV;
	/* Another copy of the same build: DIR/.build-id/ab/cdef... */
	snprintf(dirs, sizeof(dirs), "%s", env && *env ? env : "/usr/lib/debug");
	for (d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		struct module *c;

		if (d[0] != '/')
			continue;
		snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s", d, bid, bid + 2);
		if (!regular_file(path))
			continue;
		c = module_cache_get(b->mc, path, map->file, 0, 0);
		/* A .debug file has no code (NOBITS .text): module_read will say. */
		if (c && !strcmp(module_build_id(c), bid)) {
			*out = c;
			return 0;
		}
	}
	return fetch_binary(b, map, bid, out) == 0 ? 0 : m ? -ESTALE : -ENODEV;
}

static void debug_symbols(struct module *m, bool offline);

static int mapping_module(struct builder *b, uint32_t map_id, struct module **m, uint64_t *bias)
{
	size_t i = map_id - 1;

	if (!map_id || map_id > b->nmaps)
		return -ENODEV;
	if (!b->mod_rc[i] && !b->mods[i]) {
		const struct agg_mapping *map = &b->maps[i];
		int rc = open_binary(b, map, &b->mods[i]);

		if (!rc)
			debug_symbols(b->mods[i], b->o->offline);

		if (!rc && module_bias(b->mods[i], map->start, map->offset, &b->bias[i]))
			b->bias[i] = map->start - map->offset; /* no PT_LOAD at offset: best guess */
		b->mod_rc[i] = rc ? rc : 1;
	}
	*m = b->mods[i];
	*bias = b->bias[i];
	return b->mod_rc[i] < 0 ? b->mod_rc[i] : 0;
}

/* The FDE (call frame information) covering vaddr: a function's extent. */
static bool fde_extent(struct module *m, uint64_t vaddr, uint64_t *start, uint64_t *size)
{
	uint64_t lo, hi;

	if (module_fde_range(m, vaddr, &lo, &hi) != 0)
		return false;
	*start = lo;
	*size = hi - lo;
	return true;
}

/* Go code: its function's extent and name in .gopclntab (a stripped Go binary has no other). */
static const char *go_extent(struct module *m, uint64_t vaddr, uint64_t *start, uint64_t *size)
{
	const struct gopclntab *t;
	const char *why;
	struct gofunc f;

	if (!module_is_go(m) || !(t = module_gopclntab(m, &why)) ||
	    gopclntab_func(t, vaddr, &f) != 0 || !f.name[0] || f.end <= f.entry)
		return NULL;
	*start = f.entry;
	*size = f.end - f.entry;
	return f.name;
}

static bool same_binary(const struct agg_mapping *x, const struct agg_mapping *y)
{
	return x == y || (!strcmp(x->file ? x->file : "", y->file ? y->file : "") &&
			  !strcmp(x->build_id ? x->build_id : "", y->build_id ? y->build_id : ""));
}

/* Where does the code of every location named `name` live? */
static int find_homes(struct builder *b, const char *name, struct home *homes, size_t *nhomes,
		      int *why)
{
	size_t i, k;

	*nhomes = 0;
	*why = 0;
	for (i = 0; i < b->nlocs; i++) {
		const struct agg_location *l = &b->locs[i];
		struct module *m;
		uint64_t bias, va, s, z;
		const char *sym;
		int rc;

		if (!loc_has(b, l, name, false))
			continue;
		rc = mapping_module(b, l->mapping_id, &m, &bias);
		if (rc) {
			if (!*why)
				*why = rc;
			continue;
		}
		va = l->address - bias;
		sym = go_extent(m, va, &s, &z);
		if (!sym)
			sym = module_symbol_extent(m, va, &s, &z);
		if (!sym && va && !fde_extent(m, va, &s, &z)) {
			/* A caller's return address may sit just past its end. */
			sym = module_symbol_extent(m, va - 1, &s, &z);
			if (!sym && !fde_extent(m, va - 1, &s, &z))
				continue;
		}
		for (k = 0; k < *nhomes; k++)
			if (homes[k].mod == m && homes[k].start == s)
				break;
		if (k == *nhomes) {
			if (*nhomes == MAX_HOMES)
				continue;
			homes[k] = (struct home){ .map = &b->maps[l->mapping_id - 1], .mod = m,
						  .bias = bias, .start = s, .size = z, .symbol = sym };
			(*nhomes)++;
		}
	}
	/* Weigh each home by the leaf samples in it. */
	for (i = 0; i < b->nleaves; i++) {
		const struct leaf *lf = &b->leaves[i];
		const struct agg_mapping *map;

		if (!lf->mapping_id)
			continue;
		map = &b->maps[lf->mapping_id - 1];
		for (k = 0; k < *nhomes; k++) {
			uint64_t va = lf->address - homes[k].bias;

			if (same_binary(map, homes[k].map) && va >= homes[k].start &&
			    va - homes[k].start < homes[k].size) {
				homes[k].weight += lf->w[0];
				homes[k].samples += lf->samples;
			}
		}
	}
	return 0;
}

/* ---- code without a binary (JIT, anonymous) ----------------------------- */

static int cmp_addr(const void *p, const void *q)
{
	const struct ann_addr *x = p, *y = q;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Addresses only: the leaf samples of `name` by address. */
static int addresses_only(struct builder *b, const char *name)
{
	struct annotation *an = b->an;
	size_t i, k;

	for (i = 0; i < b->nleaves; i++) {
		const struct leaf *lf = &b->leaves[i];
		struct ann_addr *x;

		if (!loc_has(b, &b->locs[lf->loc_id - 1], name, false))
			continue;
		for (k = 0; k < an->naddrs && an->addrs[k].addr != lf->address; k++)
			;
		if (k == an->naddrs) {
			x = realloc(an->addrs, (an->naddrs + 1) * sizeof(*x));
			if (!x)
				return -ENOMEM;
			an->addrs = x;
			memset(&x[an->naddrs++], 0, sizeof(*x));
			x[k].addr = lf->address;
		}
		for (size_t e = 0; e < an->nev; e++) {
			an->addrs[k].w[e] += lf->w[e];
			an->total[e] += lf->w[e];
		}
		an->addrs[k].samples += lf->samples;
		an->samples += lf->samples;
	}
	if (an->naddrs)
		qsort(an->addrs, an->naddrs, sizeof(*an->addrs), cmp_addr);
	return 0;
}

/* ---- the listing -------------------------------------------------------- */

static long insn_at(const struct annotation *an, uint64_t va)
{
	size_t lo = 0, hi = an->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (an->insns[mid].in.addr < va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < an->n && an->insns[lo].in.addr == va ? (long)lo : -1;
}

/* Decode the chosen extent into the annotation's instruction lines. */
static int list_code(struct annotation *an, const struct home *h, char *err, size_t errlen)
{
	struct insn *v;
	size_t n, i;
	int rc;

	an->start = h->start;
	an->size = h->size;
	rc = disasm_range(h->mod, h->start, h->size, &v, &n, err, errlen);
	if (rc)
		return rc;
	an->insns = calloc(n ? n : 1, sizeof(*an->insns));
	if (!an->insns) {
		free(v);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		an->insns[i].in = v[i];
		disasm_format(h->mod, &v[i], an->insns[i].text, sizeof(an->insns[i].text));
	}
	an->n = n;
	free(v);
	return 0;
}

static void place_samples(struct builder *b, const struct home *h)
{
	struct annotation *an = b->an;

	for (size_t i = 0; i < b->nleaves; i++) {
		const struct leaf *lf = &b->leaves[i];
		uint64_t va;
		long at;

		if (!lf->mapping_id || !same_binary(&b->maps[lf->mapping_id - 1], h->map))
			continue;
		va = lf->address - h->bias;
		if (va < h->start || va - h->start >= h->size)
			continue;
		for (size_t e = 0; e < an->nev; e++)
			an->total[e] += lf->w[e];
		an->samples += lf->samples;
		at = insn_at(an, va);
		if (at < 0) {
			an->unplaced += lf->samples;
			continue;
		}
		for (size_t e = 0; e < an->nev; e++)
			an->insns[at].w[e] += lf->w[e];
		an->insns[at].samples += lf->samples;
	}
}

/* The leaves of every stack, by address (see struct leaf). */
static int collect_leaves(struct builder *b)
{
	const struct agg_address *addrs;
	struct agg_leaf_part *parts;
	size_t np, na, i;
	int rc = aggregate_leaf_parts(b->a, &parts, &np);

	if (rc)
		return rc;
	addrs = aggregate_addresses(b->a, &na);
	b->leaves = calloc(np ? np : 1, sizeof(*b->leaves));
	if (!b->leaves) {
		free(parts);
		return -ENOMEM;
	}
	for (i = 0; i < np; i++) {
		const struct agg_stack *st = &b->stacks[parts[i].stack];
		const struct agg_location *l;
		struct leaf *lf;

		if (!st->nlocs)
			continue;
		l = &b->locs[st->leaf - 1];
		lf = &b->leaves[b->nleaves++];

		lf->loc_id = st->leaf;
		if (parts[i].addr < na) {
			lf->mapping_id = addrs[parts[i].addr].mapping_id;
			lf->address = addrs[parts[i].addr].address;
		} else {
			lf->mapping_id = l->mapping_id;
			lf->address = l->address;
		}
		lf->samples = parts[i].samples;
		memcpy(lf->w, parts[i].weights, sizeof(lf->w));
	}
	free(parts);
	return 0;
}

/* Basic blocks: a block starts at the entry, at a branch target, after a branch or return. */
static int build_blocks(struct annotation *an)
{
	size_t i, nb = 0;
	struct ann_block *bl;

	for (i = 0; i < an->n; i++) {
		const struct insn *in = &an->insns[i].in;
		long t;

		if ((in->kind == INSN_JUMP || in->kind == INSN_CJUMP) && in->target &&
		    (t = insn_at(an, in->target)) >= 0)
			an->insns[t].jump_target = true;
	}
	for (i = 0; i < an->n; i++) {
		bool leader = i == 0 || an->insns[i].jump_target;

		if (i > 0) {
			enum insn_kind k = an->insns[i - 1].in.kind;

			leader |= k == INSN_JUMP || k == INSN_CJUMP || k == INSN_RET;
		}
		if (leader)
			nb++;
		an->insns[i].block = (uint32_t)(nb - 1);
	}
	bl = calloc(nb ? nb : 1, sizeof(*bl));
	if (!bl)
		return -ENOMEM;
	for (i = 0; i < an->n; i++) {
		struct ann_block *x = &bl[an->insns[i].block];

		if (!x->n)
			x->first = i;
		x->n++;
		for (size_t e = 0; e < an->nev; e++)
			x->w[e] += an->insns[i].w[e];
	}
	for (i = 0; i < nb && an->cycles_ev >= 0; i++) {
		uint64_t ins = bl[i].w[an->instr_ev];

		if (ins) {
			bl[i].cpi = (double)bl[i].w[an->cycles_ev] / (double)ins;
			bl[i].has_cpi = true;
		}
	}
	an->blocks = bl;
	an->nblocks = nb;
	return 0;
}

/*
 * m's separate debug file by build-id: DIR/.build-id/xx/rest.debug (no
 * symlinks, regular files only), else debuginfod's (verified by build-id)
 * unless offline. With dw, only a file with DWARF, opened in *dw. The fd
 * or -1.
 */
static int debug_file(struct module *m, bool offline, Dwarf **dw)
{
	const char *bid = module_build_id(m), *env = getenv("PMUTOP_DEBUGINFO_PATH");
	char dirs[PATH_MAX], path[PATH_MAX], *save = NULL, *d;
	int f;

	if (strlen(bid) < 4)
		return -1;
	snprintf(dirs, sizeof(dirs), "%s", env && *env ? env : "/usr/lib/debug");
	for (d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		struct stat st;

		if (d[0] != '/')
			continue;
		snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", d, bid, bid + 2);
		f = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (f < 0)
			continue;
		if (fstat(f, &st) == 0 && S_ISREG(st.st_mode) &&
		    (!dw || (*dw = dwarf_begin(f, DWARF_C_READ))))
			return f;
		close(f);
	}
	f = offline ? -1 : dfd_fetch_now(DFD_DEBUGINFO, bid, NULL, NULL, 0);
	if (f >= 0 && dw && !(*dw = dwarf_begin(f, DWARF_C_READ))) {
		close(f);
		f = -1;
	}
	return f < 0 ? -1 : f;
}

/* DWARF for m: its own sections, else its debug file's (debug_file()). */
static Dwarf *open_dwarf(struct module *m, bool offline, int *fd)
{
	Dwarf *dw = dwarf_begin_elf(module_elf(m), DWARF_C_READ, NULL);

	*fd = -1;
	if (!dw)
		*fd = debug_file(m, offline, &dw);
	return *fd >= 0 || dw ? dw : NULL;
}

/*
 * A binary stripped of .symtab takes its debug file's, so that the
 * function's extent and name are its symbol's rather than an FDE's.
 */
static void debug_symbols(struct module *m, bool offline)
{
	int fd;

	if (module_has_symtab(m))
		return;
	fd = debug_file(m, offline, NULL);
	if (fd >= 0) {
		module_add_debug_symbols(m, fd);
		close(fd);
	}
}

/* x's source position is f:ln; f is copied once per file. Returns 0 or -ENOMEM. */
static int set_line(struct annotation *an, struct ann_insn *x, const char *f, int ln)
{
	for (size_t s = 0; s < an->nsrc; s++)
		if (!strcmp(an->src[s].file, f)) {
			x->file = an->src[s].file;
			break;
		}
	if (!x->file) {
		struct ann_src *v = realloc(an->src, (an->nsrc + 1) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		an->src = v;
		memset(&v[an->nsrc], 0, sizeof(*v));
		v[an->nsrc].file = strdup(f);
		if (!v[an->nsrc].file)
			return -ENOMEM;
		x->file = v[an->nsrc++].file;
	}
	x->line = ln > 0 ? (uint32_t)ln : 0;
	return 0;
}

/*
 * Go code's lines from Go's own table (.gopclntab), as the profile has
 * them: Go's DWARF has no .debug_aranges, so dwarf_addrdie() finds no CU
 * for it. The innermost position of each instruction (an inlined callee's
 * line where one was inlined). Returns how many instructions got a line.
 */
static size_t go_lines(struct annotation *an, struct module *m)
{
	size_t named = 0;

	for (size_t i = 0; i < an->n; i++) {
		struct src_line src[16];
		unsigned n = gosym_lines(m, an->insns[i].in.addr, src, 16);

		if (!n || !src[0].file || !src[0].line)
			continue;
		if (set_line(an, &an->insns[i], src[0].file, (int)src[0].line))
			break;
		named++;
	}
	return named;
}

static void add_lines(struct annotation *an, struct module *m, bool offline)
{
	char full[PATH_MAX];
	Dwarf_Die cu;
	Dwarf *dw;
	size_t i, named = 0;
	int fd;

	if (module_is_go(m) && go_lines(an, m))
		return;
	dw = open_dwarf(m, offline, &fd);
	if (!dw) {
		note(an, "no debug info for %s: no source lines (install its -dbgsym "
		     "package or build with -g)", an->path);
		return;
	}
	for (i = 0; i < an->n; i++) {
		struct ann_insn *x = &an->insns[i];
		Dwarf_Line *l;
		const char *f;
		int ln;

		if (!dwarf_addrdie(dw, x->in.addr, &cu))
			continue;
		l = dwarf_getsrc_die(&cu, x->in.addr);
		if (!l || dwarf_lineno(l, &ln) || !(f = dwarf_linesrc(l, NULL, NULL)))
			continue;
		if (f[0] != '/') {
			/* Relative to the compilation directory (a build with relative paths). */
			Dwarf_Attribute at;
			const char *dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &at));

			if (dir) {
				snprintf(full, sizeof(full), "%s/%s", dir, f);
				f = full;
			}
		}
		/* Strings stay valid until dwarf_end: keep our own copies. */
		if (set_line(an, x, f, ln))
			break;
		named++;
	}
	if (!named)
		note(an, "%s's debug info has no lines for this code", an->path);
	dwarf_end(dw);
	if (fd >= 0)
		close(fd);
}

/* Which events pair for cycles per instruction (the IPC pair of ratios.h). */
static void find_cpi_events(struct annotation *an)
{
	struct ratio r[RATIOS_MAX];
	size_t n = ratios_find(an->ev_name, an->nev, r);

	an->cycles_ev = an->instr_ev = -1;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(r[i].label, "IPC~")) {
			an->instr_ev = (int)r[i].num;
			an->cycles_ev = (int)r[i].den;
		}
}

static void describe_events(struct annotation *an, const struct aggregate *a)
{
	const struct agg_info *info = aggregate_info_const(a);
	size_t n;
	const struct agg_stack *st = aggregate_stacks(a, &n);

	an->nev = info->nevents > 1 ? info->nevents : 1;
	for (size_t e = 0; e < an->nev; e++) {
		const char *name = info->nevents > 1 ? info->events[e].name : info->event;
		const char *unit = info->nevents > 1 ? info->events[e].unit : info->event_unit;

		snprintf(an->ev_text[e][0], sizeof(an->ev_text[e][0]), "%s", name ? name : "samples");
		snprintf(an->ev_text[e][1], sizeof(an->ev_text[e][1]), "%s", unit ? unit : "count");
		an->ev_name[e] = an->ev_text[e][0];
		an->ev_unit[e] = an->ev_text[e][1];
	}
	for (size_t i = 0; i < n; i++)
		for (size_t e = 0; e < an->nev; e++)
			an->profile_total[e] += st[i].weights[e];
	find_cpi_events(an);
}

static void skid_note(struct annotation *an)
{
	bool timer = false;

	for (size_t e = 0; e < an->nev; e++)
		timer |= !strcmp(an->ev_unit[e], "nanoseconds");
	if (timer)
		note(an, "%s", "skid: a clock event's sample lands where the timer interrupt found "
		     "the program, often one or more instructions after the one executing; "
		     "trust regions (blocks, loops), not single lines");
	else
		note(an, "%s", "skid: a sample lands a few instructions after the one that caused "
		     "the event unless the event was precise (:p/:pp/:ppp with PEBS or IBS); "
		     "read loads and branches together with what follows them");
}

/*
 * How source files will be read (annotate_opts.sources_of): a live
 * target's root and rights are taken now, while it lives. When they cannot
 * be, no source is read and a note says why.
 */
static void sources_of(struct annotation *an, int pid)
{
	char path[64], why[160];
	int rc;

	an->src_policy = pid > 0 ? 1 : pid == 0 ? 0 : -1;
	if (pid <= 0)
		return;
	an->src_policy = -1;
	an->src_cred = malloc(sizeof(*an->src_cred));
	if (!an->src_cred)
		return;
	snprintf(path, sizeof(path), "/proc/%d/root", pid);
	an->src_root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	rc = an->src_root < 0 ? (errno == ENOENT ? -ESRCH : -errno)
			      : safe_open_cred_of(pid, an->src_cred);
	if (rc) {
		snprintf(why, sizeof(why), "no source lines: the files of process %d cannot be read "
			 "with its rights (%s)", pid, rc == -ESRCH ? "it has exited"
			 : rc == -EPERM ? "its user and group ids differ: a set-user-ID program"
			 : strerror(-rc));
		note(an, "%s", why);
		return;
	}
	an->src_policy = 1;
}

int annotate_build(const struct aggregate *a, const char *func, const struct annotate_opts *o,
		   struct annotation **out, char *err, size_t errlen)
{
	static const struct annotate_opts none = { .root = NULL };
	struct builder b = { .a = a, .o = o ? o : &none, .err = err, .errlen = errlen };
	struct home *homes = NULL, *best = NULL;
	struct annotation *an;
	const char *name = NULL;
	size_t nhomes = 0, i;
	int rc, why;

	*out = NULL;
	if (errlen)
		err[0] = 0;
	b.maps = aggregate_mappings(a, &b.nmaps);
	b.funcs = aggregate_functions(a, &b.nfuncs);
	b.locs = aggregate_locations(a, &b.nlocs);
	b.stacks = aggregate_stacks(a, &b.nstacks);
	rc = resolve_name(&b, func, &name);
	if (rc)
		return rc;
	an = calloc(1, sizeof(*an));
	if (an)
		an->src_root = -1;
	b.mc = module_cache_new();
	b.mods = calloc(b.nmaps + 1, sizeof(*b.mods));
	b.bias = calloc(b.nmaps + 1, sizeof(*b.bias));
	b.mod_rc = calloc(b.nmaps + 1, sizeof(*b.mod_rc));
	homes = calloc(MAX_HOMES, sizeof(*homes));
	rc = -ENOMEM;
	if (!an || !b.mc || !b.mods || !b.bias || !b.mod_rc || !homes)
		goto fail;
	b.an = an;
	an->func = strdup(name);
	if (!an->func)
		goto fail;
	sources_of(an, b.o->sources_of);
	describe_events(an, a);
	rc = collect_leaves(&b);
	if (rc)
		goto fail;

	rc = find_homes(&b, name, homes, &nhomes, &why);
	if (rc)
		goto fail;
	for (i = 0; i < nhomes; i++)
		if (!best || homes[i].weight > best->weight ||
		    (homes[i].weight == best->weight && homes[i].samples > best->samples))
			best = &homes[i];
	if (!best) {
		bool anon = true;

		/* JIT code or anonymous memory: there are no bytes to list. */
		for (i = 0; i < b.nlocs && anon; i++) {
			const struct agg_location *l = &b.locs[i];

			if (loc_has(&b, l, name, false) && l->mapping_id &&
			    b.maps[l->mapping_id - 1].file && b.maps[l->mapping_id - 1].file[0] == '/' &&
			    strncmp(b.maps[l->mapping_id - 1].file, "/tmp/perf-", 10))
				anon = false;
		}
		if (!anon) {
			rc = why ? why : -ENODEV;
			if (!err[0])
				snprintf(err, errlen, "%s: no symbol or unwind entry gives its extent",
					 name);
			goto fail;
		}
		an->path = strdup("");
		an->build_id = strdup("");
		an->symbol = strdup(name);
		rc = -ENOMEM;
		if (!an->path || !an->build_id || !an->symbol || addresses_only(&b, name))
			goto fail;
		note(an, "%s is JIT code or anonymous memory: pmutop has no bytes to "
		     "disassemble, so only the sampled addresses are listed", name);
		skid_note(an);
		goto done;
	}
	err[0] = 0;
	an->path = strdup(best->map->file);
	an->build_id = strdup(module_build_id(best->mod));
	an->symbol = best->symbol ? strdup(best->symbol) : NULL;
	if (!an->symbol) {
		char s[64];

		snprintf(s, sizeof(s), "+0x%" PRIx64, best->start);
		an->symbol = malloc(strlen(best->map->file) + sizeof(s));
		if (an->symbol) {
			const char *base = strrchr(best->map->file, '/');

			strcpy(an->symbol, base ? base + 1 : best->map->file);
			strcat(an->symbol, s);
		}
	}
	rc = -ENOMEM;
	if (!an->path || !an->build_id || !an->symbol)
		goto fail;
	rc = list_code(an, best, err, errlen);
	if (rc)
		goto fail;
	place_samples(&b, best);
	rc = build_blocks(an);
	if (rc)
		goto fail;
	add_lines(an, best->mod, b.o->offline);
	if (strcmp(an->symbol, name))
		note(an, "%s has no code of its own here: it was inlined; this is the "
		     "function it was inlined into", name);
	if (nhomes > 1)
		note(an, "%s has code in more than one place; this is the one with the most "
		     "samples", name);
	skid_note(an);
done:
	*out = an;
	an = NULL;
	rc = 0;
fail:
	if (rc == -ENOMEM && errlen && !err[0])
		snprintf(err, errlen, "out of memory");
	free(b.leaves);
	free(homes);
	free(b.mods);
	free(b.bias);
	free(b.mod_rc);
	module_cache_free(b.mc);
	annotation_free(an);
	return rc;
}

void annotation_free(struct annotation *an)
{
	if (!an)
		return;
	for (size_t i = 0; i < an->nsrc; i++) {
		free(an->src[i].file);
		free(an->src[i].text);
		free(an->src[i].lines);
	}
	free(an->src);
	if (an->src_root >= 0)
		close(an->src_root);
	free(an->src_cred);
	free(an->func);
	free(an->symbol);
	free(an->path);
	free(an->build_id);
	free(an->insns);
	free(an->blocks);
	free(an->addrs);
	free(an);
}

long annotation_hottest(const struct annotation *an, size_t ev)
{
	long best = -1;

	if (ev >= an->nev)
		return -1;
	for (size_t i = 0; i < an->n; i++)
		if (an->insns[i].w[ev] && (best < 0 || an->insns[i].w[ev] > an->insns[best].w[ev]))
			best = (long)i;
	return best;
}

/*
 * Read a source file once (regular files only, bounded), the way
 * an->src_policy says: inside the target's root with its rights, or on the
 * host with pmutop's, or not at all.
 */
static void load_source(const struct annotation *an, struct ann_src *s)
{
	struct safe_open_want want = { .max_size = SRC_MAX_BYTES };
	struct stat st;
	size_t n = 0, cap = 0;
	ssize_t got;
	char *p;
	int fd;

	s->nlines = 0;
	if (an->src_policy > 0)
		fd = safe_open_as(an->src_root, s->file, an->src_cred, &want, &st);
	else if (an->src_policy == 0)
		fd = safe_open(s->file, &want, &st);
	else
		fd = -EPERM;
	if (fd < 0)
		return;
	cap = (size_t)st.st_size;
	s->text = malloc(cap + 1);
	while (s->text && n < cap && (got = read(fd, s->text + n, cap - n)) > 0)
		n += (size_t)got;
	close(fd);
	if (!s->text)
		return;
	s->text[n] = 0;
	for (p = s->text; *p; p++)
		s->nlines += *p == '\n';
	s->lines = calloc(s->nlines + 2, sizeof(*s->lines));
	if (!s->lines)
		return;
	s->nlines = 0;
	for (p = s->text; *p;) {
		char *e = strchr(p, '\n');

		s->lines[s->nlines++] = p;
		if (!e)
			break;
		*e = 0;
		p = e + 1;
	}
}

const char *annotation_source_line(struct annotation *an, const char *file, uint32_t line)
{
	for (size_t i = 0; i < an->nsrc; i++) {
		struct ann_src *s = &an->src[i];

		if (strcmp(s->file, file))
			continue;
		if (!s->text && !s->lines && s->nlines != SIZE_MAX) {
			load_source(an, s);
			if (!s->lines)
				s->nlines = SIZE_MAX; /* tried: not readable */
		}
		if (!s->lines || !line || line > s->nlines)
			return NULL;
		return s->lines[line - 1];
	}
	return NULL;
}
