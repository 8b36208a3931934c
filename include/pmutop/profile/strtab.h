/*
 * strtab.h - a string table: strings by dense index, each stored once.
 *
 * What pprof's string_table and the flame graph page's string list both
 * are. The table only points at the strings (they must outlive it: they
 * belong to the aggregate or the caller); lookups go through a small
 * open-addressing set kept at most half full.
 */
#ifndef PMUTOP_STRTAB_H
#define PMUTOP_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct strtab {
	const char **v;   /* v[i]: the string of index i */
	size_t n, cap;
	uint32_t *slots;  /* string index + 1; 0 = empty */
	size_t mask;
};

/* Index of s in t (added if new; NULL is ""), or -1 when out of memory. */
int64_t strtab_add(struct strtab *t, const char *s);

/* Free t's arrays (not the strings); a zeroed table is empty and needs no free. */
void strtab_free(struct strtab *t);

#endif
