/*
 * term_text.c - escape control characters in target-controlled text (see
 * term_text.h).
 *
 * Multi-byte UTF-8 passes through (names in any script stay readable);
 * what is escaped: bytes below 0x20, 0x7f, C1 controls encoded as UTF-8
 * (0xc2 0x80..0x9f: 0x9b is CSI, as ESC [ is), and raw 0x80..0x9f bytes
 * that do not continue a UTF-8 sequence (an 8-bit terminal reads them as
 * C1). A backslash is doubled so that the escaping is unambiguous.
 */
#include "pmutop/profile/term_text.h"

#include <string.h>

/* The bytes to emit for s[i..]; *adv = how many input bytes they stand for. */
static size_t one(const unsigned char *s, char out[8], size_t *adv)
{
	static const char hex[] = "0123456789abcdef";
	unsigned c = s[0];

	*adv = 1;
	if (c == '\\') {
		memcpy(out, "\\\\", 2);
		return 2;
	}
	if (c == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f) {
		c = s[1];
		*adv = 2;
	} else if (c >= 0x20 && c != 0x7f) {
		out[0] = (char)c; /* printable ASCII, or a byte of no valid sequence (Latin-1) */
		return 1;
	}
	out[0] = '\\';
	out[1] = 'x';
	out[2] = hex[c >> 4];
	out[3] = hex[c & 15];
	return 4;
}

/* Length of the valid UTF-8 sequence at s (2..4), or 0. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;

	if (s[0] >= 0xf5 || s[0] < 0xc2)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* Emit s through put(piece, n, ctx) until put returns non-zero. */
static void walk(const char *str, int (*put)(const char *, size_t, void *), void *ctx)
{
	const unsigned char *s = (const unsigned char *)str;
	char out[8];

	while (*s) {
		size_t adv, n, u = utf8_len(s);

		if (u && !(s[0] == 0xc2 && s[1] <= 0x9f)) {
			n = u;
			memcpy(out, s, u);
			adv = u;
		} else if (s[0] >= 0x80 && s[0] <= 0x9f) {
			/* a stray continuation byte: an 8-bit C1 control */
			static const char hex[] = "0123456789abcdef";

			out[0] = '\\';
			out[1] = 'x';
			out[2] = hex[s[0] >> 4];
			out[3] = hex[s[0] & 15];
			n = 4;
			adv = 1;
		} else {
			n = one(s, out, &adv);
		}
		if (put(out, n, ctx))
			return;
		s += adv;
	}
}

struct bufctx {
	char *buf;
	size_t len, used;
};

static int put_buf(const char *p, size_t n, void *arg)
{
	struct bufctx *b = arg;

	if (b->used + n + 1 > b->len)
		return 1; /* whole pieces only: never half an escape */
	memcpy(b->buf + b->used, p, n);
	b->used += n;
	return 0;
}

const char *term_text(const char *s, char *buf, size_t len)
{
	struct bufctx b = { buf, len, 0 };

	if (!len)
		return buf;
	walk(s ? s : "", put_buf, &b);
	buf[b.used] = '\0';
	return buf;
}

static int put_file(const char *p, size_t n, void *arg)
{
	return fwrite(p, 1, n, arg) != n;
}

void term_fputs(const char *s, FILE *out)
{
	walk(s ? s : "", put_file, out);
}
