/*
 * fde.c - function ranges read straight from .eh_frame, .eh_frame_hdr and
 * .debug_frame (see fde.h for why not through libdw).
 *
 * The formats (DWARF 5 section 6.4.1, the LSB's .eh_frame chapter): a
 * section is a sequence of CIEs and FDEs, each a length and an id. An FDE
 * names its CIE (.eh_frame: by distance back from the id field;
 * .debug_frame: by section offset); the CIE's augmentation says how the
 * FDE's initial location is encoded ('R'), and the address range that
 * follows it uses the same value format without the pc-relative part.
 * .eh_frame_hdr holds a table of (initial location, FDE address) sorted
 * by location, both as 4-byte offsets from the header.
 *
 * Only what a range needs is decoded: nothing here runs CFI instructions.
 */
#include "pmutop/target/fde.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* DW_EH_PE_* (the LSB's pointer encodings). */
#define PE_OMIT    0xff
#define PE_ABSPTR  0x00
#define PE_ULEB    0x01
#define PE_UDATA2  0x02
#define PE_UDATA4  0x03
#define PE_UDATA8  0x04
#define PE_SLEB    0x09
#define PE_SDATA2  0x0a
#define PE_SDATA4  0x0b
#define PE_SDATA8  0x0c
#define PE_PCREL   0x10
#define PE_DATAREL 0x30
#define PE_APPLY   0x70
#define PE_INDIRECT 0x80

/* A read position in a span, bounded by end (<= the span's length). */
struct cur {
	const struct fde_span *s;
	uint64_t pos, end;
	bool bad;          /* a read ran past end */
};

static uint64_t rd_fixed(struct cur *c, unsigned n)
{
	uint64_t v = 0;

	if (c->bad || c->pos > c->end || c->end - c->pos < n) {
		c->bad = true;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)c->s->data[c->pos + i] << (8 * i);
	c->pos += n;
	return v;
}

static uint64_t rd_leb(struct cur *c, bool sign)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (c->bad || c->pos >= c->end) {
			c->bad = true;
			return 0;
		}
		b = c->s->data[c->pos++];
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (sign && shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	return v;
}

/* A value in encoding enc's format (low nibble), sign-extended. false: unknown format. */
static bool rd_format(struct cur *c, uint8_t enc, uint64_t *v)
{
	switch (enc & 0x0f) {
	case PE_ABSPTR: *v = rd_fixed(c, 8); break; /* x86-64: pointers are 8 bytes */
	case PE_ULEB: *v = rd_leb(c, false); break;
	case PE_UDATA2: *v = rd_fixed(c, 2); break;
	case PE_UDATA4: *v = rd_fixed(c, 4); break;
	case PE_UDATA8: *v = rd_fixed(c, 8); break;
	case PE_SLEB: *v = rd_leb(c, true); break;
	case PE_SDATA2: *v = (uint64_t)(int64_t)(int16_t)rd_fixed(c, 2); break;
	case PE_SDATA4: *v = (uint64_t)(int64_t)(int32_t)rd_fixed(c, 4); break;
	case PE_SDATA8: *v = rd_fixed(c, 8); break;
	default: return false;
	}
	return !c->bad;
}

/*
 * A pointer in encoding enc: absolute, relative to where it is stored
 * (pcrel) or, with datarel set, to datarel_base (.eh_frame_hdr's own
 * address). Indirect and text/function-relative pointers: false.
 */
static bool rd_pointer(struct cur *c, uint8_t enc, uint64_t datarel_base, uint64_t *v)
{
	uint64_t at = c->s->vaddr + c->pos;

	if (enc == PE_OMIT || (enc & PE_INDIRECT) || !rd_format(c, enc, v))
		return false;
	switch (enc & PE_APPLY) {
	case 0: return true;
	case PE_PCREL: *v += at; return true;
	case PE_DATAREL:
		if (!datarel_base)
			return false;
		*v += datarel_base;
		return true;
	default: return false;
	}
}

/*
 * An entry's header at off: its id field's offset, the end of the entry
 * and whether it uses 64-bit DWARF. false: a terminator or out of bounds.
 */
static bool entry_header(const struct fde_span *s, uint64_t off, struct cur *c, bool *dwarf64)
{
	uint64_t len;

	*c = (struct cur){ .s = s, .pos = off, .end = s->len };
	if (off >= s->len)
		return false;
	len = rd_fixed(c, 4);
	*dwarf64 = len == 0xffffffffu;
	if (*dwarf64)
		len = rd_fixed(c, 8);
	if (c->bad || len == 0 || len > s->len - c->pos)
		return false;
	c->end = c->pos + len;
	return true;
}

/* The FDE pointer encoding its CIE at off gives. 0, or -ENOENT. */
static int cie_encoding(const struct fde_span *s, uint64_t off, uint8_t *enc)
{
	struct cur c;
	bool dwarf64;
	uint64_t id;
	uint8_t version, addr_size = 8;
	const char *aug;
	size_t auglen;

	if (!entry_header(s, off, &c, &dwarf64))
		return -ENOENT;
	id = rd_fixed(&c, s->eh || !dwarf64 ? 4 : 8);
	if (s->eh ? id != 0 : id != (dwarf64 ? ~0ULL : 0xffffffffu))
		return -ENOENT;
	version = (uint8_t)rd_fixed(&c, 1);
	if (c.bad || (version != 1 && version != 3 && version != 4))
		return -ENOENT;
	aug = (const char *)s->data + c.pos;
	auglen = strnlen(aug, c.end - c.pos);
	if (auglen == c.end - c.pos)
		return -ENOENT;
	c.pos += auglen + 1;
	if (version == 4) {
		addr_size = (uint8_t)rd_fixed(&c, 1);
		if (rd_fixed(&c, 1) != 0 || (addr_size != 4 && addr_size != 8))
			return -ENOENT; /* a segment selector: not on x86-64 */
	}
	*enc = s->eh ? PE_ABSPTR : addr_size == 4 ? PE_UDATA4 : PE_UDATA8;
	if (strncmp(aug, "eh", 2) == 0) {
		(void)rd_fixed(&c, 8); /* an old GCC's exception table pointer */
		aug += 2;
	}
	(void)rd_leb(&c, false);   /* code alignment */
	(void)rd_leb(&c, true);    /* data alignment */
	if (version == 1)
		(void)rd_fixed(&c, 1); /* return address register */
	else
		(void)rd_leb(&c, false);
	if (aug[0] == 'z') {
		uint64_t data_len = rd_leb(&c, false), v;

		if (c.bad || data_len > c.end - c.pos)
			return -ENOENT;
		c.end = c.pos + data_len;
		for (const char *a = aug + 1; *a; a++) {
			if (*a == 'R') {
				*enc = (uint8_t)rd_fixed(&c, 1);
			} else if (*a == 'P') {
				uint8_t penc = (uint8_t)rd_fixed(&c, 1);

				if (!rd_format(&c, penc, &v))
					return -ENOENT;
			} else if (*a == 'L') {
				(void)rd_fixed(&c, 1);
			} else if (*a != 'S' && *a != 'B' && *a != 'G') {
				break; /* the rest of the data is of no use to us */
			}
		}
	} else if (aug[0]) {
		return -ENOENT; /* an augmentation we cannot skip */
	}
	return c.bad ? -ENOENT : 0;
}

int fde_decode(const struct fde_span *s, uint64_t off, uint64_t *start, uint64_t *end,
	       uint64_t *next)
{
	struct cur c;
	bool dwarf64;
	uint64_t id_pos, id, cie, begin, range;
	uint8_t enc;

	if (next)
		*next = 0;
	if (!s || !s->data || !entry_header(s, off, &c, &dwarf64))
		return -ENOENT;
	if (next)
		*next = c.end;
	id_pos = c.pos;
	id = rd_fixed(&c, s->eh || !dwarf64 ? 4 : 8);
	if (c.bad)
		return -EINVAL;
	if (s->eh) {
		if (id == 0 || id > id_pos)
			return -ENOENT; /* a CIE, or a pointer out of the span */
		cie = id_pos - id;
	} else {
		if (id == (dwarf64 ? ~0ULL : 0xffffffffu))
			return -ENOENT;
		cie = id;
	}
	if (cie_encoding(s, cie, &enc))
		return -ENOENT;
	if (!rd_pointer(&c, enc, 0, &begin) || !rd_format(&c, enc & 0x0f, &range))
		return c.bad ? -EINVAL : -ENOENT;
	if (range == 0 || begin + range < begin)
		return -ENOENT;
	*start = begin;
	*end = begin + range;
	return 0;
}

/* ---- .eh_frame_hdr ------------------------------------------------------ */

/* The header's fields: where .eh_frame is, the table's offset and its entry count. */
static bool hdr_parse(const struct fde_span *hdr, uint64_t *eh_frame, uint64_t *table,
		      uint64_t *count)
{
	struct cur c = { .s = hdr, .pos = 0, .end = hdr ? hdr->len : 0 };
	uint8_t version, ptr_enc, count_enc, table_enc;

	if (!hdr || !hdr->data || hdr->len < 4)
		return false;
	version = hdr->data[0];
	ptr_enc = hdr->data[1];
	count_enc = hdr->data[2];
	table_enc = hdr->data[3];
	c.pos = 4;
	/* The usual table: datarel | sdata4, binary-searchable. */
	if (version != 1 || table_enc != (PE_DATAREL | PE_SDATA4) ||
	    !rd_pointer(&c, ptr_enc, hdr->vaddr, eh_frame) ||
	    !rd_pointer(&c, count_enc, hdr->vaddr, count))
		return false;
	*table = c.pos;
	return *count > 0 && *count <= (hdr->len - c.pos) / 8;
}

bool fde_hdr_usable(const struct fde_span *hdr, uint64_t *eh_frame_vaddr)
{
	uint64_t table, count;

	return hdr_parse(hdr, eh_frame_vaddr, &table, &count);
}

static uint64_t hdr_entry(const struct fde_span *hdr, uint64_t at)
{
	struct cur c = { .s = hdr, .pos = at, .end = hdr->len };

	return hdr->vaddr + (uint64_t)(int64_t)(int32_t)rd_fixed(&c, 4);
}

int fde_hdr_lookup(const struct fde_span *hdr, uint64_t vaddr, uint64_t *fde_start,
		   uint64_t *fde_vaddr)
{
	uint64_t eh_frame, table, count, lo = 0, hi;

	if (!hdr_parse(hdr, &eh_frame, &table, &count))
		return -ENOENT;
	/* The last entry whose start is <= vaddr: binary search on [lo, hi). */
	hi = count;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (hdr_entry(hdr, table + 8 * mid) <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -ENOENT;
	*fde_start = hdr_entry(hdr, table + 8 * (lo - 1));
	*fde_vaddr = hdr_entry(hdr, table + 8 * (lo - 1) + 4);
	return 0;
}

/* ---- an index of whole sections ----------------------------------------- */

struct fde_range {
	uint64_t start, end;
	unsigned prio;     /* the section it came from: lower wins a tie */
};

struct fde_index {
	struct fde_range *r;
	size_t n;
};

static int range_cmp(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->prio < y->prio ? -1 : x->prio > y->prio;
}

struct fde_index *fde_index_build(const struct fde_span *secs, unsigned n)
{
	struct fde_index *ix = calloc(1, sizeof(*ix));
	size_t cap = 0, k = 0;

	if (!ix)
		return NULL;
	for (unsigned i = 0; i < n; i++) {
		uint64_t off = 0, next, a, b;

		while (secs[i].data && off < secs[i].len) {
			if (fde_decode(&secs[i], off, &a, &b, &next) == 0) {
				if (ix->n == cap) {
					size_t ncap = cap ? cap * 2 : 256;
					struct fde_range *nr = realloc(ix->r, ncap * sizeof(*nr));

					if (!nr) {
						fde_index_free(ix);
						return NULL;
					}
					ix->r = nr;
					cap = ncap;
				}
				ix->r[ix->n++] = (struct fde_range){ a, b, i };
			}
			if (next <= off)
				break; /* a terminator, or an entry we cannot step over */
			off = next;
		}
	}
	if (ix->n)
		qsort(ix->r, ix->n, sizeof(*ix->r), range_cmp);
	/* One range per start: the preferred section's. */
	for (size_t j = 0; j < ix->n; j++)
		if (k == 0 || ix->r[j].start != ix->r[k - 1].start)
			ix->r[k++] = ix->r[j];
	ix->n = k;
	return ix;
}

void fde_index_free(struct fde_index *ix)
{
	if (!ix)
		return;
	free(ix->r);
	free(ix);
}

int fde_index_find(const struct fde_index *ix, uint64_t vaddr, uint64_t *start, uint64_t *end)
{
	size_t lo = 0, hi;

	if (!ix)
		return -ENOENT;
	hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->r[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || vaddr >= ix->r[lo - 1].end)
		return -ENOENT;
	*start = ix->r[lo - 1].start;
	*end = ix->r[lo - 1].end;
	return 0;
}

size_t fde_index_count(const struct fde_index *ix)
{
	return ix ? ix->n : 0;
}
