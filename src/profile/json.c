/*
 * json.c - JSON string literals from untrusted C strings (see json.h).
 */
#include "pmutop/profile/json.h"

#include <stdbool.h>
#include <stdint.h>

/* Length of the valid UTF-8 sequence at s, or 0 if it is not one; *cp gets it. */
static int utf8_len(const unsigned char *s, uint32_t *cp)
{
	int n;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		*cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		*cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		*cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = *cp << 6 | (s[i] & 0x3f);
	}
	/* No overlong forms, surrogates or values past U+10FFFF. */
	if ((n == 2 && *cp < 0x80) || (n == 3 && *cp < 0x800) || (n == 4 && *cp < 0x10000) ||
	    *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff))
		return 0;
	return n;
}

static void write_string(FILE *out, const char *str, bool html)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	fputc('"', out);
	while (*s) {
		uint32_t cp;
		int n;

		switch (*s) {
		case '"': fputs("\\\"", out); s++; continue;
		case '\\': fputs("\\\\", out); s++; continue;
		case '\n': fputs("\\n", out); s++; continue;
		case '\r': fputs("\\r", out); s++; continue;
		case '\t': fputs("\\t", out); s++; continue;
		case '\b': fputs("\\b", out); s++; continue;
		case '\f': fputs("\\f", out); s++; continue;
		default: break;
		}
		if (*s < 0x20 || *s == 0x7f ||
		    (html && (*s == '<' || *s == '>' || *s == '&' || *s == '\''))) {
			fprintf(out, "\\u%04x", *s);
			s++;
			continue;
		}
		n = utf8_len(s, &cp);
		if (!n) {
			fputs("\\ufffd", out); /* not UTF-8: JSON text must be */
			s++;
			continue;
		}
		if (html && (cp == 0x2028 || cp == 0x2029))
			fprintf(out, "\\u%04x", (unsigned)cp); /* line terminators in old JS */
		else
			fwrite(s, 1, (size_t)n, out);
		s += n;
	}
	fputc('"', out);
}

void json_write_string(FILE *out, const char *s)
{
	write_string(out, s, false);
}

void json_write_string_html(FILE *out, const char *s)
{
	write_string(out, s, true);
}
