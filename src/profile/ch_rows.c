/*
 * ch_rows.c - a window of the aggregate as ClickHouse JSONEachRow bodies
 * (see ch_rows.h for the model and why ids are hashes).
 *
 * JSONEachRow rather than TSV: ClickHouse 18.16 reads arrays in it as JSON
 * arrays, and JSON's string escaping is one small function, where TSV's
 * array syntax nests a quoting inside another. Bytes that are not ASCII
 * pass through (ClickHouse's String is bytes).
 */
#include "pmutop/profile/ch_rows.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmutop/profile/aggregate.h"

void ch_buf_free(struct ch_buf *b)
{
	free(b->p);
	*b = (struct ch_buf){ 0 };
}

int ch_buf_add(struct ch_buf *b, const void *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return -ENOMEM;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
	return 0;
}

static int buf_str(struct ch_buf *b, const char *s)
{
	return ch_buf_add(b, s, strlen(s));
}

static int buf_fmt(struct ch_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int buf_fmt(struct ch_buf *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -EINVAL;
	return ch_buf_add(b, tmp, (size_t)n);
}

/* A JSON string: quotes, backslash and control bytes escaped. */
static int buf_json(struct ch_buf *b, const char *s)
{
	const char *run = s;
	int rc = buf_str(b, "\"");

	for (s = s ? s : ""; !rc && *s; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[8];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		rc = ch_buf_add(b, run, (size_t)(s - run));
		snprintf(esc, sizeof(esc), c == '"' ? "\\\"" : c == '\\' ? "\\\\" : "\\u%04x", c);
		if (!rc)
			rc = buf_str(b, esc);
		run = s + 1;
	}
	if (!rc && run)
		rc = buf_str(b, run);
	return rc ? rc : buf_str(b, "\"");
}

void ch_batch_free(struct ch_batch *b)
{
	if (!b)
		return;
	ch_buf_free(&b->mappings);
	ch_buf_free(&b->stacks);
	ch_buf_free(&b->samples);
}

uint64_t ch_hash(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *c = p;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;

	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 0x100000001b3ULL;
	}
	/* splitmix64's finalizer: FNV's low bits alone mix poorly */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

static uint64_t hash_str(const char *s, uint64_t seed)
{
	s = s ? s : "";
	return ch_hash(s, strlen(s) + 1, seed);
}

static uint64_t hash_u64(uint64_t v, uint64_t seed)
{
	return ch_hash(&v, sizeof(v), seed);
}

/* An open-addressing set of 64-bit ids (0 is never an id: ids are made odd-free of 0). */
struct ch_seen {
	uint64_t *slots;
	size_t mask, n;
};

struct ch_seen *ch_seen_new(void)
{
	return calloc(1, sizeof(struct ch_seen));
}

void ch_seen_clear(struct ch_seen *s)
{
	if (!s)
		return;
	free(s->slots);
	s->slots = NULL;
	s->mask = s->n = 0;
}

void ch_seen_free(struct ch_seen *s)
{
	ch_seen_clear(s);
	free(s);
}

static bool seen_has(const struct ch_seen *s, uint64_t id)
{
	if (!s || !s->slots)
		return false;
	for (size_t i = id & s->mask;; i = (i + 1) & s->mask) {
		if (s->slots[i] == id)
			return true;
		if (!s->slots[i])
			return false;
	}
}

/* 0, or -ENOMEM (the id then is not remembered: it is sent again, harmless). */
static int seen_add(struct ch_seen *s, uint64_t id)
{
	if (!s)
		return 0;
	if (2 * (s->n + 1) > s->mask + 1 || !s->slots) {
		size_t cap = s->slots ? 2 * (s->mask + 1) : 1024;
		uint64_t *nv = calloc(cap, sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		for (size_t i = 0; s->slots && i <= s->mask; i++)
			if (s->slots[i])
				for (size_t j = s->slots[i] & (cap - 1);; j = (j + 1) & (cap - 1))
					if (!nv[j]) {
						nv[j] = s->slots[i];
						break;
					}
		free(s->slots);
		s->slots = nv;
		s->mask = cap - 1;
	}
	for (size_t i = id & s->mask;; i = (i + 1) & s->mask) {
		if (s->slots[i] == id)
			return 0;
		if (!s->slots[i]) {
			s->slots[i] = id;
			s->n++;
			return 0;
		}
	}
}

/* Ids are never 0 (0 marks an empty slot, and "no mapping"). */
static uint64_t nonzero(uint64_t h)
{
	return h ? h : 1;
}

static uint64_t mapping_id(const struct agg_mapping *m)
{
	return nonzero(hash_str(m->build_id, hash_str(m->file, 0x6d6170)));
}

struct enc {
	const struct aggregate *a;
	const struct agg_location *locs;
	const struct agg_function *funcs;
	const struct agg_mapping *maps;
	size_t nlocs, nfuncs, nmaps;
	uint64_t *loc_hash;      /* by location id - 1: 0 = not computed yet */
};

static const struct agg_function *func_of(const struct enc *e, uint32_t id)
{
	return id && id <= e->nfuncs ? &e->funcs[id - 1] : NULL;
}

static const struct agg_mapping *map_of(const struct enc *e, uint32_t id)
{
	return id && id <= e->nmaps ? &e->maps[id - 1] : NULL;
}

/* The module-relative address: the same code in every process. */
static uint64_t rel_addr(const struct agg_location *l, const struct agg_mapping *m)
{
	return m && l->address >= m->start ? l->address - m->start + m->offset : l->address;
}

/* A location's frames: one per line, innermost first; one when no lines. */
static size_t loc_frames(const struct agg_location *l, uint32_t *fn, int64_t *line, size_t max)
{
	size_t n = 0;

	if (!l->nlines) {
		fn[0] = l->function_id;
		line[0] = 0;
		return 1;
	}
	for (uint32_t i = 0; i < l->nlines && n < max; i++, n++) {
		fn[n] = l->lines[i].function_id;
		line[n] = l->lines[i].line;
	}
	return n;
}

#define MAX_INLINE 64

static uint64_t loc_hash(struct enc *e, uint32_t id)
{
	const struct agg_location *l;
	const struct agg_mapping *m;
	uint32_t fn[MAX_INLINE];
	int64_t line[MAX_INLINE];
	uint64_t h;
	size_t n;

	if (!id || id > e->nlocs)
		return 0x6e6f6e65;
	if (e->loc_hash[id - 1])
		return e->loc_hash[id - 1];
	l = &e->locs[id - 1];
	m = map_of(e, l->mapping_id);
	h = hash_u64(m ? mapping_id(m) : 0, 0x6c6f63);
	h = hash_u64(rel_addr(l, m), h);
	n = loc_frames(l, fn, line, MAX_INLINE);
	for (size_t i = 0; i < n; i++) {
		const struct agg_function *f = func_of(e, fn[i]);

		h = hash_str(f ? f->name : "", h);
		h = hash_str(f ? f->file : "", h);
		h = hash_u64((uint64_t)line[i], h);
	}
	return e->loc_hash[id - 1] = nonzero(h);
}

/* One stacks row: {"stack_id":N,"frames.func":[...],...}. */
static int stack_row(struct enc *e, struct ch_buf *b, uint64_t sid, const uint32_t *path,
		     uint32_t n)
{
	static const char *const cols[] = { "func", "file", "line", "mapping_id", "address" };
	int rc = buf_fmt(b, "{\"stack_id\":%" PRIu64, sid);

	for (size_t c = 0; !rc && c < 5; c++) {
		bool first = true;

		rc = buf_fmt(b, ",\"frames.%s\":[", cols[c]);
		for (uint32_t i = 0; !rc && i < n; i++) {
			const struct agg_location *l = path[i] && path[i] <= e->nlocs ?
				&e->locs[path[i] - 1] : NULL;
			const struct agg_mapping *m = l ? map_of(e, l->mapping_id) : NULL;
			uint32_t fn[MAX_INLINE];
			int64_t line[MAX_INLINE];
			size_t nf = l ? loc_frames(l, fn, line, MAX_INLINE) : 0;

			for (size_t j = 0; !rc && j < nf; j++) {
				const struct agg_function *f = func_of(e, fn[j]);

				if (!first)
					rc = buf_str(b, ",");
				first = false;
				if (rc)
					break;
				switch (c) {
				case 0: rc = buf_json(b, f ? f->name : ""); break;
				case 1: rc = buf_json(b, f ? f->file : ""); break;
				case 2: rc = buf_fmt(b, "%" PRId64, line[j]); break;
				case 3: rc = buf_fmt(b, "%" PRIu64, m ? mapping_id(m) : 0); break;
				default: rc = buf_fmt(b, "%" PRIu64, rel_addr(l, m)); break;
				}
			}
		}
		if (!rc)
			rc = buf_str(b, "]");
	}
	return rc ? rc : buf_str(b, "}\n");
}

static int mapping_rows(struct enc *e, struct ch_seen *seen, struct ch_batch *out)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < e->nmaps; i++) {
		const struct agg_mapping *m = &e->maps[i];
		uint64_t id = mapping_id(m);

		if (seen_has(seen, id))
			continue;
		rc = buf_fmt(&out->mappings, "{\"mapping_id\":%" PRIu64 ",\"file\":", id);
		if (!rc)
			rc = buf_json(&out->mappings, m->file);
		if (!rc)
			rc = buf_str(&out->mappings, ",\"build_id\":");
		if (!rc)
			rc = buf_json(&out->mappings, m->build_id);
		if (!rc)
			rc = buf_str(&out->mappings, "}\n");
		if (!rc)
			rc = seen_add(seen, id);
		out->rows++;
	}
	return rc;
}

/* The part of a samples row before event/stack/value: window and labels. */
static int row_prefix(struct ch_buf *b, uint64_t wid, const struct agg_info *info,
		      const struct ch_labels *l, const struct agg_thread *t, uint32_t tid)
{
	int rc = buf_fmt(b, "{\"window_id\":%" PRIu64 ",\"ts\":%" PRIu64 ",\"start_ns\":%" PRIu64
			 ",\"duration_ns\":%" PRIu64 ",\"host\":", wid, (uint64_t)(info->start_ns / 1000000000u),
			 info->start_ns, info->duration_ns);

	if (!rc)
		rc = buf_json(b, l->host);
	if (!rc)
		rc = buf_fmt(b, ",\"pid\":%u,\"comm\":", t ? t->pid : 0);
	if (!rc)
		rc = buf_json(b, t ? t->comm : "");
	if (!rc)
		rc = buf_fmt(b, ",\"tid\":%u,\"thread\":", tid >= AGG_TID_GROUP ? 0 : tid);
	if (!rc)
		rc = buf_json(b, t ? t->name : "");
	for (int part = 0; part < 2 && !rc; part++) {
		rc = buf_str(b, part ? ",\"labels.value\":[" : ",\"labels.key\":[");
		for (size_t i = 0; !rc && i < l->n; i++) {
			if (i)
				rc = buf_str(b, ",");
			if (!rc)
				rc = buf_json(b, part ? l->values[i] : l->keys[i]);
		}
		if (!rc)
			rc = buf_str(b, "]");
	}
	return rc;
}

int ch_rows_encode(const struct aggregate *a, uint64_t window_id, const struct ch_labels *l,
		   struct ch_seen *seen, struct ch_batch *out)
{
	const struct agg_info *info = aggregate_info_const(a);
	size_t nev = info->nevents ? info->nevents : 1, nstacks;
	const struct agg_stack *st = aggregate_stacks(a, &nstacks);
	struct agg_path path = { 0 };
	struct ch_buf prefix = { 0 };
	struct enc e = { .a = a };
	int rc = 0;

	*out = (struct ch_batch){ .window_id = window_id, .start_ns = info->start_ns };
	e.locs = aggregate_locations(a, &e.nlocs);
	e.funcs = aggregate_functions(a, &e.nfuncs);
	e.maps = aggregate_mappings(a, &e.nmaps);
	e.loc_hash = calloc(e.nlocs + 1, sizeof(*e.loc_hash));
	if (!e.loc_hash)
		return -ENOMEM;
	rc = mapping_rows(&e, seen, out);
	for (size_t i = 0; !rc && i < nstacks; i++) {
		const struct agg_stack *s = &st[i];
		const uint32_t *locs = s->nlocs ? aggregate_stack_path(a, s, &path) : NULL;
		uint64_t sid = 0x737461636b;

		if (s->nlocs && !locs) {
			rc = -ENOMEM;
			break;
		}
		for (uint32_t k = 0; k < s->nlocs; k++)
			sid = hash_u64(loc_hash(&e, locs[k]), sid);
		sid = nonzero(hash_u64(s->nlocs, sid));
		if (!seen_has(seen, sid)) {
			rc = stack_row(&e, &out->stacks, sid, locs, s->nlocs);
			if (!rc)
				rc = seen_add(seen, sid);
			out->rows++;
		}
		prefix.len = 0;
		if (!rc)
			rc = row_prefix(&prefix, window_id, info, l, aggregate_thread(a, s->tid),
					s->tid);
		for (size_t k = 0; !rc && k < nev; k++) {
			uint64_t v = s->weights ? s->weights[k] : (k ? 0 : s->weight);
			uint64_t n = s->ev_samples ? s->ev_samples[k] : (k ? 0 : s->samples);
			const char *ev = info->nevents ? info->events[k].name : info->event;
			const char *unit = info->nevents ? info->events[k].unit : info->event_unit;

			if (!v && !n)
				continue;
			rc = ch_buf_add(&out->samples, prefix.p, prefix.len);
			if (!rc)
				rc = buf_str(&out->samples, ",\"event\":");
			if (!rc)
				rc = buf_json(&out->samples, ev ? ev : "");
			if (!rc)
				rc = buf_str(&out->samples, ",\"unit\":");
			if (!rc)
				rc = buf_json(&out->samples, unit ? unit : "");
			if (!rc)
				rc = buf_fmt(&out->samples, ",\"stack_id\":%" PRIu64 ",\"samples\":%" PRIu64
					     ",\"value\":%" PRIu64 "}\n", sid, n, v);
			out->rows++;
			out->samples_total += n;
		}
	}
	agg_path_free(&path);
	ch_buf_free(&prefix);
	free(e.loc_hash);
	if (rc)
		ch_batch_free(out);
	return rc == -EINVAL ? -ENOMEM : rc;
}

/* Backticks would be needed for odd names; the database name is checked by the URL parser. */
char *ch_rows_ddl(const char *db, unsigned i, int *end)
{
	static const char *const ddl[] = {
		"CREATE DATABASE IF NOT EXISTS %s",
		"CREATE TABLE IF NOT EXISTS %s." CH_T_SAMPLES " ("
		"window_id UInt64, ts DateTime, start_ns UInt64, duration_ns UInt64, "
		"host String, pid UInt32, comm String, tid UInt32, thread String, "
		"labels Nested(key String, value String), event String, unit String, "
		"stack_id UInt64, samples UInt64, value UInt64) "
		/* the key is a row's identity: exited threads folded by name share
		 * tid 0, so the thread name is in it */
		"ENGINE = ReplacingMergeTree() PARTITION BY toDate(ts) "
		"ORDER BY (host, ts, window_id, event, stack_id, pid, tid, thread)",
		"CREATE TABLE IF NOT EXISTS %s." CH_T_STACKS " ("
		"stack_id UInt64, frames Nested(func String, file String, line Int64, "
		"mapping_id UInt64, address UInt64)) "
		"ENGINE = ReplacingMergeTree() ORDER BY stack_id",
		"CREATE TABLE IF NOT EXISTS %s." CH_T_MAPPINGS " ("
		"mapping_id UInt64, file String, build_id String) "
		"ENGINE = ReplacingMergeTree() ORDER BY mapping_id",
		"CREATE TABLE IF NOT EXISTS %s." CH_T_SCHEMA " (version UInt32, created DateTime) "
		"ENGINE = ReplacingMergeTree() ORDER BY version",
		"INSERT INTO %s." CH_T_SCHEMA " SELECT 1, now() WHERE (SELECT count() FROM %s."
		CH_T_SCHEMA " WHERE version = 1) = 0",
	};
	char *s;

	*end = i >= sizeof(ddl) / sizeof(ddl[0]);
	if (*end)
		return NULL;
	if (asprintf(&s, ddl[i], db, db) < 0)
		return NULL;
	return s;
}
