/*
 * gopclntab.c - reader of Go's .gopclntab (see gopclntab.h).
 *
 * The layout, as the Go runtime defines it (runtime/symtab.go, runtime2.go):
 * a pcHeader (magic, instruction quantum, pointer size, function and file
 * counts, [textStart,] offsets of the name, CU, file, pc-value and function
 * tables), then a sorted function table of (entry, _func offset) pairs
 * whose last entry is the end of the text, then the _func records: entry,
 * name offset, offsets of the pcsp/pcfile/pcln value tables, the CU's
 * first file index, funcID, flag, and the pcdata/funcdata arrays. A
 * pc-value table is a sequence of (zig-zag value delta, pc delta) varint
 * pairs. Inlined calls are the funcdata FUNCDATA_InlTree (an array of
 * inlinedCall records: name offset, parentPc) indexed by the pcdata
 * PCDATA_InlTreeIndex.
 */
#include "pmutop/target/gopclntab.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCDATA_INLTREE 2
#define FUNCDATA_INLTREE 3
#define MAX_INLINE_STEPS 64

struct gopclntab {
	struct gopclntab_src src;
	int ver;
	unsigned ptrsize, quantum;
	uint64_t nfunc, nfiles, text_start;
	uint64_t funcname_off, cu_off, filetab_off, pctab_off, functab_off;
	unsigned ftab_size;       /* bytes per function-table entry */
	uint64_t gofunc;          /* funcdata base vaddr (1.18+), 0 = unknown */
};

/* ---- bounds-checked reads --------------------------------------------- */

static bool rd32(const struct gopclntab *t, uint64_t off, uint32_t *v)
{
	if (off > t->src.len || t->src.len - off < 4)
		return false;
	memcpy(v, t->src.data + off, 4);
	return true;
}

static bool rdptr(const struct gopclntab *t, uint64_t off, uint64_t *v)
{
	uint32_t w;

	if (t->ptrsize == 4) {
		if (!rd32(t, off, &w))
			return false;
		*v = w;
		return true;
	}
	if (off > t->src.len || t->src.len - off < 8)
		return false;
	memcpy(v, t->src.data + off, 8);
	return true;
}

/* A NUL-terminated string at off inside the table, or NULL. */
static const char *str_at(const struct gopclntab *t, uint64_t off)
{
	const void *nul;

	if (off >= t->src.len)
		return NULL;
	nul = memchr(t->src.data + off, '\0', t->src.len - off);
	return nul ? (const char *)t->src.data + off : NULL;
}

/* ---- header ------------------------------------------------------------ */

static uint64_t find_gofunc(const struct gopclntab *t);

struct gopclntab *gopclntab_new(const struct gopclntab_src *src, char *err, size_t errlen)
{
	struct gopclntab *t;
	uint32_t magic;
	uint64_t h[8];
	unsigned nh, i;

	if (!src->data || src->len < 8) {
		snprintf(err, errlen, ".gopclntab is %zu bytes: truncated", src->len);
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	t->src = *src;
	memcpy(&magic, src->data, 4);
	switch (magic) {
	case 0xfffffffa: t->ver = 116; break;
	case 0xfffffff0: t->ver = 118; break;
	case 0xfffffff1: t->ver = 120; break;
	default:
		snprintf(err, errlen, "Go pclntab magic %#x not supported (%s); "
			 "Go 1.16 or later is read", magic,
			 magic == 0xfffffffb ? "Go 1.2-1.15" : "unknown layout");
		goto fail;
	}
	t->quantum = src->data[6];
	t->ptrsize = src->data[7];
	if (src->data[4] || src->data[5] || (t->ptrsize != 4 && t->ptrsize != 8) ||
	    (t->quantum != 1 && t->quantum != 2 && t->quantum != 4)) {
		snprintf(err, errlen, "Go pclntab header is corrupt (quantum %u, pointer size %u)",
			 t->quantum, t->ptrsize);
		goto fail;
	}
	/* nfunc, nfiles, [textStart,] funcname, cu, filetab, pctab, pcln. */
	nh = t->ver >= 118 ? 8 : 7;
	for (i = 0; i < nh; i++)
		if (!rdptr(t, 8 + (uint64_t)i * t->ptrsize, &h[i])) {
			snprintf(err, errlen, "Go pclntab header is truncated (%zu bytes)", src->len);
			goto fail;
		}
	t->nfunc = h[0];
	t->nfiles = h[1];
	i = 2;
	if (t->ver >= 118)
		t->text_start = h[i++];
	if (!t->text_start)
		t->text_start = src->text_vaddr;
	t->funcname_off = h[i++];
	t->cu_off = h[i++];
	t->filetab_off = h[i++];
	t->pctab_off = h[i++];
	t->functab_off = h[i++];
	t->ftab_size = t->ver >= 118 ? 8 : 2 * t->ptrsize;
	if (t->funcname_off >= src->len || t->cu_off >= src->len || t->filetab_off >= src->len ||
	    t->pctab_off >= src->len || t->functab_off >= src->len || t->nfunc == 0 ||
	    (src->len - t->functab_off) / t->ftab_size < t->nfunc + 1) {
		snprintf(err, errlen, "Go pclntab is truncated or corrupt (%llu functions, "
			 "function table at %#llx of %zu bytes)", (unsigned long long)t->nfunc,
			 (unsigned long long)t->functab_off, src->len);
		goto fail;
	}
	t->gofunc = t->ver >= 118 ? (src->gofunc_vaddr ? src->gofunc_vaddr : find_gofunc(t)) : 0;
	return t;
fail:
	free(t);
	return NULL;
}

void gopclntab_free(struct gopclntab *t)
{
	free(t);
}

int gopclntab_version(const struct gopclntab *t)
{
	return t->ver;
}

uint64_t gopclntab_nfunc(const struct gopclntab *t)
{
	return t->nfunc;
}

/*
 * go:func.* of a stripped binary, from runtime.firstmoduledata in
 * .noptrdata: its first word points at the pcHeader, its funcnametab slice
 * at the name table; gofunc is word 38 (Go 1.18/1.19) or 40 (1.20+, after
 * the coverage counters), checked against the words around it.
 */
static uint64_t find_gofunc(const struct gopclntab *t)
{
	const uint8_t *d = t->src.mdata;
	unsigned slot = t->ver >= 120 ? 40 : 38;
	uint64_t w[41];

	if (!d || t->ptrsize != 8)
		return 0;
	for (size_t off = 0; off + sizeof(w) <= t->src.mdata_len; off += 8) {
		uint64_t first;

		memcpy(&first, d + off, 8);
		if (first != t->src.vaddr)
			continue;
		memcpy(w, d + off, sizeof(w));
		if (w[1] != t->src.vaddr + t->funcname_off)
			continue;
		/* rodata (slot - 1) <= gofunc, both non-zero. */
		if (w[slot] && w[slot - 1] && w[slot] >= w[slot - 1])
			return w[slot];
	}
	return 0;
}

/* ---- functions --------------------------------------------------------- */

/* Entry vaddr and _func offset of function-table entry i (0..nfunc). */
static bool ftab(const struct gopclntab *t, uint64_t i, uint64_t *entry, uint64_t *funcoff)
{
	uint64_t off = t->functab_off + i * t->ftab_size;
	uint32_t a, b;

	if (t->ver >= 118) {
		if (!rd32(t, off, &a) || !rd32(t, off + 4, &b))
			return false;
		*entry = t->text_start + a;
		*funcoff = b;
		return true;
	}
	return rdptr(t, off, entry) && rdptr(t, off + t->ptrsize, funcoff);
}

/* Field offsets in a _func record. */
static unsigned fld_pcsp(const struct gopclntab *t) { return t->ver >= 118 ? 16 : 20; }
static unsigned fld_npcdata(const struct gopclntab *t) { return t->ver >= 118 ? 28 : 32; }
static unsigned fld_cu(const struct gopclntab *t) { return t->ver >= 118 ? 32 : 36; }
static unsigned fld_funcid(const struct gopclntab *t)
{
	return t->ver >= 120 ? 40 : t->ver >= 118 ? 36 : 40;
}
static unsigned func_size(const struct gopclntab *t) { return fld_funcid(t) + 4; }

int gopclntab_func(const struct gopclntab *t, uint64_t pc, struct gofunc *f)
{
	uint64_t lo = 0, hi = t->nfunc, e0, eN, foff, funcrec;
	uint32_t nameoff;
	const char *name;

	if (!ftab(t, 0, &e0, &foff) || !ftab(t, t->nfunc, &eN, &foff) || pc < e0 || pc >= eN)
		return -ENOENT;
	/* The last entry with entry <= pc. */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2, e;

		if (!ftab(t, mid, &e, &foff))
			return -EINVAL;
		if (e <= pc)
			lo = mid;
		else
			hi = mid;
	}
	if (!ftab(t, lo, &f->entry, &foff) || !ftab(t, lo + 1, &f->end, &funcrec))
		return -EINVAL;
	funcrec = t->functab_off + foff;
	if (f->entry > pc || f->end <= pc || foff > UINT32_MAX ||
	    funcrec > t->src.len || t->src.len - funcrec < func_size(t))
		return -EINVAL;
	f->off = (uint32_t)funcrec;
	if (!rd32(t, funcrec + (t->ver >= 118 ? 4 : t->ptrsize), &nameoff))
		return -EINVAL;
	name = str_at(t, t->funcname_off + nameoff);
	f->name = name ? name : "";
	f->funcid = t->src.data[funcrec + fld_funcid(t)];
	f->flag = t->src.data[funcrec + fld_funcid(t) + 1]; /* a zero pad in Go 1.16 */
	return 0;
}

bool gopclntab_is_top(const struct gofunc *f)
{
	return (f->flag & GOFUNC_FLAG_TOPFRAME) || !strcmp(f->name, "runtime.goexit") ||
	       !strcmp(f->name, "runtime.mstart") || !strcmp(f->name, "runtime.rt0_go");
}

/* ---- pc-value tables --------------------------------------------------- */

static bool uvarint(const struct gopclntab *t, uint64_t *off, uint32_t *v)
{
	uint32_t r = 0;

	for (unsigned shift = 0; shift < 35; shift += 7) {
		uint8_t b;

		if (*off >= t->src.len)
			return false;
		b = t->src.data[(*off)++];
		r |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

/*
 * The value of pc-value table tab (an offset into pctab) at pc, for a
 * function starting at entry. 0 or -EINVAL (corrupt, or pc not covered).
 */
static int pcvalue(const struct gopclntab *t, uint32_t tab, uint64_t entry, uint64_t pc,
		   int32_t *out)
{
	uint64_t off = t->pctab_off + tab, cur = entry;
	int32_t val = -1;

	if (tab == 0 || off >= t->src.len)
		return -EINVAL;
	for (unsigned steps = 0; steps < 1u << 20; steps++) {
		uint32_t uv, pcd;

		if (!uvarint(t, &off, &uv))
			return -EINVAL;
		if (uv == 0 && steps > 0)
			return -EINVAL; /* end of table before pc */
		/* Zig-zag delta, added modulo 2^32 as Go does (a corrupt table
		 * must not overflow a signed int). */
		val = (int32_t)((uint32_t)val + ((uv >> 1) ^ (0u - (uv & 1))));
		if (!uvarint(t, &off, &pcd))
			return -EINVAL;
		cur += (uint64_t)pcd * t->quantum;
		if (pc < cur) {
			*out = val;
			return 0;
		}
	}
	return -EINVAL;
}

static bool func_u32(const struct gopclntab *t, const struct gofunc *f, unsigned fld,
		     uint32_t *v)
{
	return rd32(t, (uint64_t)f->off + fld, v);
}

int gopclntab_spdelta(const struct gopclntab *t, const struct gofunc *f, uint64_t pc,
		      int32_t *sp)
{
	uint32_t tab;

	if (!func_u32(t, f, fld_pcsp(t), &tab))
		return -EINVAL;
	return pcvalue(t, tab, f->entry, pc, sp);
}

/* file:line of pc in f (pcfile, pcln), where the CU's file table says. */
static void pos_at(const struct gopclntab *t, const struct gofunc *f, uint64_t pc,
		   struct goline *l)
{
	uint32_t pcfile, pcln, cu, foff;
	int32_t fno, line;

	l->file = NULL;
	l->line = 0;
	if (!func_u32(t, f, fld_pcsp(t) + 4, &pcfile) || !func_u32(t, f, fld_pcsp(t) + 8, &pcln) ||
	    !func_u32(t, f, fld_cu(t), &cu))
		return;
	if (pcvalue(t, pcln, f->entry, pc, &line) == 0 && line > 0)
		l->line = line;
	if (pcvalue(t, pcfile, f->entry, pc, &fno) != 0 || fno < 0 ||
	    !rd32(t, t->cu_off + ((uint64_t)cu + (uint64_t)fno) * 4, &foff) || foff == UINT32_MAX)
		return;
	l->file = str_at(t, t->filetab_off + foff);
}

/* The inline tree's location (vaddr), or 0 when f has none. */
static uint64_t inltree(const struct gopclntab *t, const struct gofunc *f, uint32_t *pcdata_tab)
{
	uint32_t npcdata, nfuncdata, fd;
	uint64_t base = (uint64_t)f->off + func_size(t), fdoff, addr;

	nfuncdata = t->src.data[f->off + fld_funcid(t) + 3];
	if (!func_u32(t, f, fld_npcdata(t), &npcdata) || npcdata <= PCDATA_INLTREE ||
	    nfuncdata <= FUNCDATA_INLTREE || npcdata > 1024 ||
	    !rd32(t, base + PCDATA_INLTREE * 4, pcdata_tab) || *pcdata_tab == 0)
		return 0;
	fdoff = base + (uint64_t)npcdata * 4;
	if (t->ver >= 118) {
		if (!t->gofunc || !rd32(t, fdoff + FUNCDATA_INLTREE * 4, &fd) || fd == UINT32_MAX)
			return 0;
		return t->gofunc + fd;
	}
	/* Go 1.16/1.17: pointer-aligned absolute addresses. */
	fdoff = (fdoff + t->ptrsize - 1) & ~(uint64_t)(t->ptrsize - 1);
	if (!rdptr(t, fdoff + (uint64_t)FUNCDATA_INLTREE * t->ptrsize, &addr))
		return 0;
	return addr;
}

unsigned gopclntab_lines(const struct gopclntab *t, const struct gofunc *f, uint64_t pc,
			 struct goline *out, unsigned max)
{
	uint64_t tree;
	uint32_t itab;
	unsigned n = 0;

	if (!max)
		return 0;
	tree = t->src.read ? inltree(t, f, &itab) : 0;
	/* Innermost first: each inlined call's name, and the position of the call in its parent. */
	for (unsigned steps = 0; tree && n + 1 < max && steps < MAX_INLINE_STEPS; steps++) {
		int32_t ix, parent_pc;
		uint8_t rec[20];
		unsigned size = t->ver >= 120 ? 16 : 20;
		uint32_t nameoff;
		const char *name;

		if (pcvalue(t, itab, f->entry, pc, &ix) != 0 || ix < 0 ||
		    t->src.read(t->src.arg, tree + (uint64_t)ix * size, rec, size) != 0)
			break;
		memcpy(&nameoff, rec + (t->ver >= 120 ? 4 : 12), 4);
		memcpy(&parent_pc, rec + (t->ver >= 120 ? 8 : 16), 4);
		name = str_at(t, t->funcname_off + nameoff);
		if (!name || parent_pc < 0 || f->entry + (uint64_t)parent_pc >= f->end)
			break;
		out[n].func = name;
		pos_at(t, f, pc, &out[n]);
		n++;
		pc = f->entry + (uint64_t)parent_pc;
	}
	out[n].func = f->name;
	pos_at(t, f, pc, &out[n]);
	return n + 1;
}
