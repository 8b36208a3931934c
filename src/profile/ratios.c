/*
 * ratios.c - which derived ratios a run's events allow, and their values
 * (see ratios.h).
 *
 * Event names arrive as the user spelled them when they carry modifiers
 * ("cpu-cycles:u" stays so, to be shown as typed), so matching normalises
 * here: the modifier group goes, case and '-'/'_' are ignored, and a short
 * alias list maps perf's spellings onto pmutop's.
 */
#include "pmutop/profile/ratios.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

enum kind {
	K_NONE = -1,
	K_CYCLES,
	K_INSTRUCTIONS,
	K_CACHE_REFS,
	K_CACHE_MISSES,
	K_BRANCHES,
	K_BRANCH_MISSES,
	K_COUNT
};

/* Privilege levels an event counts: both (no :u/:k, or :uk), user or kernel only. */
enum priv { PRIV_BOTH, PRIV_USER, PRIV_KERNEL };

/* Normalised spellings (lower case, no '-' or '_'). */
static const struct {
	const char *name;
	enum kind kind;
} spellings[] = {
	{ "cycles", K_CYCLES },
	{ "cpucycles", K_CYCLES },
	{ "instructions", K_INSTRUCTIONS },
	{ "cachereferences", K_CACHE_REFS },
	{ "cachemisses", K_CACHE_MISSES },
	{ "branches", K_BRANCHES },
	{ "branchinstructions", K_BRANCHES },
	{ "branchmisses", K_BRANCH_MISSES },
};

static const struct {
	const char *label;
	enum kind num, den;
	bool percent;
} pairs[RATIOS_MAX] = {
	{ "IPC~", K_INSTRUCTIONS, K_CYCLES, false },
	{ "miss%~", K_CACHE_MISSES, K_CACHE_REFS, true },
	{ "br-miss%~", K_BRANCH_MISSES, K_BRANCHES, true },
};

/*
 * The kind of event `name` is, and the privilege levels its modifiers
 * select. A modifier group is a final ":" followed only by u, k, p, P (as
 * events.c parses them); anything else is part of the name.
 */
static enum kind classify(const char *name, enum priv *priv)
{
	const char *colon = strrchr(name, ':');
	size_t len = strlen(name), i, o = 0;
	bool u = false, k = false;
	char norm[64];

	if (colon && colon[1] && strspn(colon + 1, "ukpP") == strlen(colon + 1)) {
		u = strchr(colon + 1, 'u') != NULL;
		k = strchr(colon + 1, 'k') != NULL;
		len = (size_t)(colon - name);
	}
	*priv = u == k ? PRIV_BOTH : u ? PRIV_USER : PRIV_KERNEL;
	for (i = 0; i < len; i++) {
		if (name[i] == '-' || name[i] == '_')
			continue;
		if (o + 1 >= sizeof(norm))
			return K_NONE;
		norm[o++] = (char)tolower((unsigned char)name[i]);
	}
	norm[o] = 0;
	for (i = 0; i < ARRAY_SIZE(spellings); i++)
		if (!strcmp(norm, spellings[i].name))
			return spellings[i].kind;
	return K_NONE;
}

size_t ratios_find(const char *const *names, size_t n, struct ratio out[RATIOS_MAX])
{
	enum kind kinds[64];
	enum priv privs[64];
	size_t i, j, p, found = 0;

	if (n > ARRAY_SIZE(kinds))
		n = ARRAY_SIZE(kinds);
	for (i = 0; i < n; i++)
		kinds[i] = names && names[i] ? classify(names[i], &privs[i]) : K_NONE;
	for (p = 0; p < RATIOS_MAX; p++) {
		bool done = false;

		/* The first numerator that has a denominator counting the same levels. */
		for (i = 0; i < n && !done; i++) {
			if (kinds[i] != pairs[p].num)
				continue;
			for (j = 0; j < n; j++) {
				if (kinds[j] != pairs[p].den || privs[j] != privs[i])
					continue;
				out[found].label = pairs[p].label;
				out[found].num = (unsigned)i;
				out[found].den = (unsigned)j;
				out[found].percent = pairs[p].percent;
				found++;
				done = true;
				break;
			}
		}
	}
	return found;
}

bool ratio_value(const struct ratio *r, const uint64_t *flat, double *v)
{
	*v = 0;
	if (!flat[r->den])
		return false;
	*v = (double)flat[r->num] / (double)flat[r->den] * (r->percent ? 100.0 : 1.0);
	return true;
}

const char *ratio_format(const struct ratio *r, const uint64_t *flat, char *buf, size_t len)
{
	double v;

	if (!ratio_value(r, flat, &v))
		snprintf(buf, len, "-");
	else if (r->percent)
		snprintf(buf, len, v >= 999.95 ? "%.0f%%" : "%.1f%%", v);
	else
		snprintf(buf, len, v >= 999.995 ? "%.0f" : "%.2f", v);
	return buf;
}
