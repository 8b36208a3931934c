/*
 * pyline.c - decode CPython 3.11+'s location table (see pyline.h).
 *
 * The format (CPython Objects/locations.md, decoded as Objects/codeobject.c
 * does in PyCode_Addr2Line): each entry is a first byte 1CCCCLLL - code
 * CCCC, LLL + 1 code units covered - followed by the code's operands:
 *   15     no location: the units have no line (the running line is kept)
 *   14     long form: signed varint line delta, varints end line delta,
 *          column + 1, end column + 1
 *   13     no columns: signed varint line delta
 *   10-12  one line: line delta code - 10, then two column bytes
 *   0-9    short form: same line, one column byte
 * Varints are little-endian groups of six bits, bit 6 set on all but the
 * last; a signed varint keeps its sign in bit 0. Operand bytes never have
 * the top bit set, which is how a reader resynchronises - here it is how a
 * corrupt table is caught.
 */
#include "pmutop/target/pyline.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>

/* One varint at tab[*i], bounded by len; false when it runs off or is too long. */
static bool varint(const uint8_t *tab, size_t len, size_t *i, uint32_t *out)
{
	uint32_t v = 0;
	unsigned shift = 0;

	for (;;) {
		uint8_t b;

		if (*i >= len || shift > 30)
			return false;
		b = tab[(*i)++];
		if (b & 0x80)
			return false; /* an entry's first byte: the operand was cut short */
		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	*out = v;
	return true;
}

static bool svarint(const uint8_t *tab, size_t len, size_t *i, int64_t *out)
{
	uint32_t v;

	if (!varint(tab, len, i, &v))
		return false;
	*out = (v & 1) ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
	return true;
}

/* Skip n operand bytes (no marker bit among them). */
static bool skip(const uint8_t *tab, size_t len, size_t *i, unsigned n)
{
	for (; n; n--) {
		if (*i >= len || (tab[*i] & 0x80))
			return false;
		(*i)++;
	}
	return true;
}

int pyline_addr2line(const uint8_t *tab, size_t len, int firstlineno, int addr, int *line)
{
	int64_t computed = firstlineno, delta;
	uint64_t start = 0, end;
	size_t i = 0;
	uint32_t unused;

	if (addr < 0) {
		*line = firstlineno;
		return 0;
	}
	while (i < len) {
		uint8_t first = tab[i++];
		unsigned code = (first >> 3) & 15;
		bool noline = false;

		if (!(first & 0x80))
			return -EINVAL;
		end = start + 2 * ((first & 7) + 1u);
		delta = 0;
		switch (code) {
		case 15:
			noline = true;
			break;
		case 14:
			if (!svarint(tab, len, &i, &delta) || !varint(tab, len, &i, &unused) ||
			    !varint(tab, len, &i, &unused) || !varint(tab, len, &i, &unused))
				return -EINVAL;
			break;
		case 13:
			if (!svarint(tab, len, &i, &delta))
				return -EINVAL;
			break;
		case 10:
		case 11:
		case 12:
			delta = code - 10;
			if (!skip(tab, len, &i, 2))
				return -EINVAL;
			break;
		default:
			if (!skip(tab, len, &i, 1))
				return -EINVAL;
			break;
		}
		computed += delta;
		if (computed < INT_MIN || computed > INT_MAX)
			return -EINVAL;
		if ((uint64_t)addr < end) {
			*line = noline ? -1 : (int)computed;
			return 0;
		}
		start = end;
	}
	return -EINVAL;
}
