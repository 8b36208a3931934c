/*
 * duration.c - "500ms", "5s", "2m", "1h", "1m30s" or bare seconds into
 * seconds (duration.h).
 *
 * Hand-rolled rather than strtod: strtod takes signs, exponents, hex,
 * "inf", leading spaces and the locale's decimal point, none of which is a
 * duration a user means; here a number is digits with an optional '.' and
 * fraction, and the unit is one of four words.
 */
#include "pmutop/frontend/duration.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

/* Units, longest first where one is a prefix of another ("ms" before "m"). */
static const struct unit {
	const char *name;
	double seconds;
} units[] = {
	{ "ms", 1e-3 },
	{ "s", 1 },
	{ "m", 60 },
	{ "h", 3600 },
};

/* The decimal number at *p (advanced past it); false when there is none. */
static bool parse_number(const char **p, double *v)
{
	const char *s = *p;
	double scale = 1;
	bool digits = false;

	*v = 0;
	for (; *s >= '0' && *s <= '9'; s++, digits = true)
		*v = *v * 10 + (*s - '0');
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, digits = true) {
			scale /= 10;
			*v += (*s - '0') * scale;
		}
	}
	*p = s;
	return digits;
}

/* The unit at *p (advanced past it), or NULL. */
static const struct unit *parse_unit(const char **p)
{
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t n = strlen(units[i].name);

		if (!strncmp(*p, units[i].name, n)) {
			*p += n;
			return &units[i];
		}
	}
	return NULL;
}

int duration_parse(const char *s, double *seconds)
{
	const char *p = s;
	double total = 0, v;

	if (!s || !*s)
		return -EINVAL;
	while (*p) {
		const char *start = p;
		const struct unit *u;

		if (!parse_number(&p, &v))
			return -EINVAL;
		u = parse_unit(&p);
		if (!u) {
			/* A bare number is seconds, and only as the whole string. */
			if (start != s || *p)
				return -EINVAL;
			total = v;
			break;
		}
		total += v * u->seconds;
	}
	if (!isfinite(total))
		return -EINVAL;
	*seconds = total;
	return 0;
}
