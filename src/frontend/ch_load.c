/*
 * ch_load.c - --load clickhouse://...: the matching windows merged by
 * ClickHouse into one aggregate (see ch_load.h).
 *
 * Three queries: the samples summed per (stack id, event) with FINAL (a
 * window re-sent after an unknown outcome has the same rows, which FINAL
 * counts once even before the table merged them); the frames of those
 * stacks, one row per frame (ARRAY JOIN) in order; the mappings they name.
 * Answers come as TSV, unescaped here. The aggregate is built with the
 * import API pprof_read.c uses: a frame becomes a location (module +
 * module-relative address, function), identical frames shared; a
 * function is a name in a module (line numbers are not read back).
 */
#include "pmutop/frontend/ch_load.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pmutop/frontend/clickhouse.h"
#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/ch_rows.h"

#define LOAD_TIMEOUT_S 300.0

/* ---- the WHERE clause from the URL's query ---- */

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* URL-decode s[0..n) ('+' is a space) into out. */
static int url_decode(const char *s, size_t n, char *out, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i] == '+' ? ' ' : s[i];

		if (c == '%') {
			if (i + 2 >= n)
				return -EINVAL;
			if (hexval(s[i + 1]) < 0 || hexval(s[i + 2]) < 0)
				return -EINVAL;
			c = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
		}
		if (o + 1 >= len)
			return -EINVAL;
		out[o++] = c;
	}
	out[o] = 0;
	return 0;
}

/* A ClickHouse string literal: quotes and backslashes escaped. */
static int sql_str(struct ch_buf *b, const char *s)
{
	int rc = ch_buf_add(b, "'", 1);

	for (; !rc && *s; s++) {
		if (*s == '\'' || *s == '\\')
			rc = ch_buf_add(b, "\\", 1);
		if (!rc)
			rc = ch_buf_add(b, s, 1);
	}
	return rc ? rc : ch_buf_add(b, "'", 1);
}

static int add(struct ch_buf *b, const char *s)
{
	return ch_buf_add(b, s, strlen(s));
}

/* now, -90s, -30m, -1h, -2d, or Unix seconds -> Unix seconds. */
static int parse_time(const char *v, long long *out)
{
	long long now = (long long)time(NULL), n;
	char *end;

	if (!strcmp(v, "now")) {
		*out = now;
		return 0;
	}
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || end == v)
		return -EINVAL;
	if (v[0] == '-') {
		long long mul = !strcmp(end, "s") || !*end ? 1 : !strcmp(end, "m") ? 60 :
				!strcmp(end, "h") ? 3600 : !strcmp(end, "d") ? 86400 : 0;
		if (!mul)
			return -EINVAL;
		*out = now + n * mul;
		return 0;
	}
	if (*end || n < 0)
		return -EINVAL;
	*out = n;
	return 0;
}

static const char *const columns[] = { "host", "comm", "thread", "event", NULL };
static const char *const numeric[] = { "pid", "tid", NULL };

static bool in_list(const char *const *l, const char *k)
{
	for (; *l; l++)
		if (!strcmp(*l, k))
			return true;
	return false;
}

/*
 * The condition for one key=value: a column, a time bound, or a label.
 * Keys given twice are OR'ed: the caller groups by key (see build_where).
 */
static int cond(struct ch_buf *w, const char *k, const char *v, char *err, size_t errlen)
{
	char num[64];

	if (in_list(columns, k)) {
		return add(w, k) || add(w, " = ") || sql_str(w, v);
	}
	if (in_list(numeric, k)) {
		char *end;
		unsigned long long n;

		errno = 0;
		n = strtoull(v, &end, 10);
		if (errno || *end || end == v || n > UINT32_MAX) {
			snprintf(err, errlen, "bad %s=%s in the ClickHouse URL (a number)", k, v);
			return -EINVAL;
		}
		snprintf(num, sizeof(num), "%s = %llu", k, n);
		return add(w, num);
	}
	if (!strcmp(k, "from") || !strcmp(k, "to")) {
		long long t;

		if (parse_time(v, &t)) {
			snprintf(err, errlen, "bad %s=%s in the ClickHouse URL (now, -90s, -30m, -1h, "
				 "-2d or Unix seconds)", k, v);
			return -EINVAL;
		}
		snprintf(num, sizeof(num), "ts %s toDateTime(%lld)", k[0] == 'f' ? ">=" : "<=", t);
		return add(w, num);
	}
	for (const char *c = k; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_') {
			snprintf(err, errlen, "bad key \"%s\" in the ClickHouse URL (host, comm, thread, "
				 "pid, tid, event, from, to, or a --label key)", k);
			return -EINVAL;
		}
	return add(w, "labels.value[indexOf(labels.key, ") || sql_str(w, k) || add(w, ")] = ") ||
	       sql_str(w, v);
}

/* The SQL expression of label k (a column, or a --label's value). */
static int label_expr(struct ch_buf *b, const char *k, char *err, size_t errlen)
{
	if (in_list(columns, k) || in_list(numeric, k))
		return add(b, k) ? -ENOMEM : 0;
	for (const char *c = k; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_') {
			snprintf(err, errlen, "bad label \"%s\" for --by (host, comm, thread, pid, tid, "
				 "event, or a --label key)", k);
			return -EINVAL;
		}
	return add(b, "labels.value[indexOf(labels.key, ") || sql_str(b, k) || add(b, ")]") ?
	       -ENOMEM : 0;
}

void ch_load_stats_free(struct ch_load_stats *st)
{
	for (size_t i = 0; st && i < st->nby; i++)
		free(st->by_values[i]);
	if (st)
		free(st->by_values);
}

struct kv {
	char k[128], v[1024];
};

static int build_where(const char *query, struct ch_buf *w, char *err, size_t errlen)
{
	struct kv kv[64];
	size_t n = 0;
	bool done[64] = { false };
	const char *p = query;
	int rc = add(w, "1");

	while (*p) {
		const char *amp = strchr(p, '&'), *e = amp ? amp : p + strlen(p);
		const char *eq = memchr(p, '=', (size_t)(e - p));

		if (e == p) {
			p++;
			continue;
		}
		if (!eq || n == 64 || url_decode(p, (size_t)(eq - p), kv[n].k, sizeof(kv[n].k)) ||
		    url_decode(eq + 1, (size_t)(e - eq - 1), kv[n].v, sizeof(kv[n].v)) || !kv[n].k[0]) {
			snprintf(err, errlen, "bad query in the ClickHouse URL near \"%.*s\" (expected "
				 "KEY=VALUE&..., e.g. host=a&from=-1h)", (int)(e - p), p);
			return -EINVAL;
		}
		n++;
		p = amp ? amp + 1 : e;
	}
	for (size_t i = 0; !rc && i < n; i++) {
		if (done[i])
			continue;
		rc = add(w, " AND (");
		for (size_t j = i; !rc && j < n; j++) {
			if (done[j] || strcmp(kv[i].k, kv[j].k))
				continue;
			if (j != i)
				rc = add(w, " OR ");
			if (!rc)
				rc = cond(w, kv[j].k, kv[j].v, err, errlen);
			done[j] = true;
		}
		if (!rc)
			rc = add(w, ")");
	}
	return rc;
}

/* ---- TSV answers ---- */

/* Split the next line of TSV into fields (unescaped in place). */
static size_t tsv_fields(char **cur, char **f, size_t max)
{
	char *s = *cur, *o, *line_end = strchr(s, '\n');
	size_t n = 0;

	if (!*s)
		return 0;
	if (!line_end)
		line_end = s + strlen(s);
	*cur = *line_end ? line_end + 1 : line_end;
	*line_end = 0;
	f[n++] = o = s;
	for (; *s; s++) {
		if (*s == '\t') {
			*o++ = 0;
			if (n < max)
				f[n++] = o;
			continue;
		}
		if (*s == '\\' && s[1]) {
			s++;
			switch (*s) {
			case 't': *o++ = '\t'; break;
			case 'n': *o++ = '\n'; break;
			case 'r': *o++ = '\r'; break;
			case '0': *o++ = 0; break;
			case 'b': *o++ = '\b'; break;
			case 'f': *o++ = '\f'; break;
			default: *o++ = *s; break;
			}
			continue;
		}
		*o++ = *s;
	}
	*o = 0;
	return n;
}

/* ---- ids: ClickHouse's 64-bit ids -> the aggregate's dense ones ---- */

struct idmap {
	uint64_t *k;
	uint32_t *v;
	size_t mask, n;
};

static uint32_t idmap_get(const struct idmap *m, uint64_t k)
{
	if (!m->k)
		return 0;
	for (size_t i = k & m->mask;; i = (i + 1) & m->mask) {
		if (m->k[i] == k)
			return m->v[i];
		if (!m->k[i])
			return 0;
	}
}

static int idmap_put(struct idmap *m, uint64_t k, uint32_t v)
{
	if (!k)
		k = 1;
	if (!m->k || 2 * (m->n + 1) > m->mask + 1) {
		size_t cap = m->k ? 2 * (m->mask + 1) : 1024;
		uint64_t *nk = calloc(cap, sizeof(*nk));
		uint32_t *nv = calloc(cap, sizeof(*nv));

		if (!nk || !nv) {
			free(nk);
			free(nv);
			return -ENOMEM;
		}
		for (size_t i = 0; m->k && i <= m->mask; i++)
			if (m->k[i])
				for (size_t j = m->k[i] & (cap - 1);; j = (j + 1) & (cap - 1))
					if (!nk[j]) {
						nk[j] = m->k[i];
						nv[j] = m->v[i];
						break;
					}
		free(m->k);
		free(m->v);
		m->k = nk;
		m->v = nv;
		m->mask = cap - 1;
	}
	for (size_t i = k & m->mask;; i = (i + 1) & m->mask) {
		if (!m->k[i] || m->k[i] == k) {
			m->n += !m->k[i];
			m->k[i] = k;
			m->v[i] = v;
			return 0;
		}
	}
}

static void idmap_free(struct idmap *m)
{
	free(m->k);
	free(m->v);
}

/* A stack's frames as location ids, leaf first. */
struct stack {
	uint64_t id;
	uint32_t *locs;
	unsigned n, cap;
};

static int cmp_stack(const void *a, const void *b)
{
	uint64_t x = ((const struct stack *)a)->id, y = ((const struct stack *)b)->id;

	return x < y ? -1 : x > y;
}

struct loader {
	struct ch_url u;
	struct ch_buf where, sql, resp;
	struct aggregate *a;
	struct idmap maps, locs;
	struct stack *st;
	size_t nst;
	char *err;
	size_t errlen;
};

static int query(struct loader *l)
{
	enum ch_status s;

	l->resp.len = 0;
	s = ch_exec(&l->u, l->sql.p, NULL, 0, LOAD_TIMEOUT_S, NULL, NULL, &l->resp, l->err,
		    l->errlen);
	if (s != CH_OK)
		return -EIO;
	if (!l->resp.p && ch_buf_add(&l->resp, "", 0))
		return -ENOMEM;
	return 0;
}

static int sqlf(struct loader *l, const char *a, const char *b, const char *c)
{
	l->sql.len = 0;
	return add(&l->sql, a) || add(&l->sql, b) || add(&l->sql, c) ? -ENOMEM : 0;
}

static struct stack *find_stack(struct loader *l, uint64_t id)
{
	struct stack key = { .id = id };

	return bsearch(&key, l->st, l->nst, sizeof(*l->st), cmp_stack);
}

int ch_load_read(const char *url, const char *by, struct aggregate **out,
		 struct ch_load_stats *stats, char *err, size_t errlen)
{
	struct ch_buf byx = { 0 };
	char **byv = NULL;
	size_t nby = 0;
	struct loader l = { .err = err, .errlen = errlen };
	struct timespec t0, t1;
	char tbl[1024], *cur, *f[8];
	char evname[PMUTOP_MAX_EVENTS][64];
	size_t nev = 0;
	struct { uint64_t id; size_t ev, by; uint64_t samples, value; } *rows = NULL;
	size_t nrows = 0, caprows = 0;
	unsigned long long windows = 0, hosts = 0;
	uint64_t tmin = 0, tmax = 0;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	*out = NULL;
	rc = ch_url_parse(url, &l.u, err, errlen);
	if (!rc)
		rc = build_where(l.u.query, &l.where, err, errlen);
	if (!rc)
		rc = by ? label_expr(&byx, by, err, errlen) : add(&byx, "''") ? -ENOMEM : 0;
	if (rc)
		goto out;
	l.a = aggregate_new();
	if (!l.a) {
		rc = -ENOMEM;
		goto out;
	}
	/* What matched: windows, hosts, the time covered (duplicates change none: no FINAL). */
	snprintf(tbl, sizeof(tbl), " FROM %s." CH_T_SAMPLES " WHERE ", l.u.db);
	if ((rc = sqlf(&l, "SELECT uniqExact(window_id), uniqExact(host), min(start_ns), "
		       "max(start_ns + duration_ns)", tbl, l.where.p)) ||
	    (rc = add(&l.sql, " FORMAT TSV") ? -ENOMEM : 0) || (rc = query(&l)))
		goto out;
	snprintf(tbl, sizeof(tbl), " FROM %s." CH_T_SAMPLES " FINAL WHERE ", l.u.db);
	cur = l.resp.p;
	if (tsv_fields(&cur, f, 8) != 4) {
		snprintf(err, errlen, "unexpected answer from %s: \"%.60s\"", l.u.host, l.resp.p);
		rc = -EIO;
		goto out;
	}
	windows = strtoull(f[0], NULL, 10);
	hosts = strtoull(f[1], NULL, 10);
	tmin = strtoull(f[2], NULL, 10);
	tmax = strtoull(f[3], NULL, 10);
	if (!windows) {
		char shown[700];
		ch_url_show(&l.u, shown, sizeof(shown));
		snprintf(err, errlen, "nothing in %s matches %s", shown,
			 l.u.query[0] ? l.u.query : "(no query)");
		rc = -ENOENT;
		goto out;
	}
	/* The merge: one row per (stack, event[, by label's value]). */
	if ((rc = sqlf(&l, "SELECT stack_id, event, any(unit), sum(samples), sum(value), toString(",
		       byx.p, ") AS by_value")) || (rc = add(&l.sql, tbl) ? -ENOMEM : 0) ||
	    (rc = add(&l.sql, l.where.p) ? -ENOMEM : 0) ||
	    (rc = add(&l.sql, " GROUP BY stack_id, event, by_value ORDER BY event FORMAT TSV") ?
		  -ENOMEM : 0) ||
	    (rc = query(&l)))
		goto out;
	for (cur = l.resp.p; *cur;) {
		size_t k, b = 0, nf = tsv_fields(&cur, f, 8);

		if (nf != 6)
			continue;
		if (by) {
			for (b = 0; b < nby && strcmp(byv[b], f[5]); b++)
				;
			if (b == nby) {
				char **nv = realloc(byv, (nby + 1) * sizeof(*nv));
				if (!nv || !(nv[nby] = strdup(f[5]))) {
					if (nv)
						byv = nv;
					rc = -ENOMEM;
					goto out;
				}
				byv = nv;
				nby++;
			}
		}
		for (k = 0; k < nev && strcmp(evname[k], f[1]); k++)
			;
		if (k == nev) {
			if (nev == PMUTOP_MAX_EVENTS)
				continue;
			snprintf(evname[nev], sizeof(evname[nev]), "%s", f[1]);
			if ((rc = aggregate_set_event_k(l.a, nev, f[1], f[2], 0)))
				goto out;
			nev++;
		}
		if (nrows == caprows) {
			size_t cap = caprows ? 2 * caprows : 1024;
			void *nr = realloc(rows, cap * sizeof(*rows));
			if (!nr) {
				rc = -ENOMEM;
				goto out;
			}
			rows = nr;
			caprows = cap;
		}
		rows[nrows].id = strtoull(f[0], NULL, 10);
		rows[nrows].ev = k;
		rows[nrows].by = b;
		rows[nrows].samples = strtoull(f[3], NULL, 10);
		rows[nrows].value = strtoull(f[4], NULL, 10);
		nrows++;
	}
	/* The mappings the matching stacks name. */
	snprintf(tbl, sizeof(tbl), " FROM %s." CH_T_MAPPINGS " FINAL WHERE mapping_id GLOBAL IN (SELECT "
		 "arrayJoin(frames.mapping_id) FROM %s." CH_T_STACKS " WHERE stack_id GLOBAL IN (SELECT "
		 "stack_id FROM %s." CH_T_SAMPLES " WHERE ", l.u.db, l.u.db, l.u.db);
	if ((rc = sqlf(&l, "SELECT mapping_id, file, build_id", tbl, l.where.p)) ||
	    (rc = add(&l.sql, ")) FORMAT TSV") ? -ENOMEM : 0) || (rc = query(&l)))
		goto out;
	for (cur = l.resp.p; *cur;) {
		uint32_t id;

		if (tsv_fields(&cur, f, 8) != 3)
			continue;
		if ((rc = aggregate_import_mapping(l.a, 0, UINT64_MAX, 0, f[1], f[2], true, &id)) ||
		    (rc = idmap_put(&l.maps, strtoull(f[0], NULL, 10), id)))
			goto out;
	}
	/* The frames, in order: one row each. */
	snprintf(tbl, sizeof(tbl), " FROM %s." CH_T_STACKS " FINAL ARRAY JOIN frames, "
		 "arrayEnumerate(frames.func) AS i WHERE stack_id GLOBAL IN (SELECT stack_id FROM %s."
		 CH_T_SAMPLES " WHERE ", l.u.db, l.u.db);
	if ((rc = sqlf(&l, "SELECT stack_id, i, frames.func, frames.file, frames.mapping_id, "
		       "frames.address", tbl, l.where.p)) ||
	    (rc = add(&l.sql, ") ORDER BY stack_id, i FORMAT TSV") ? -ENOMEM : 0) ||
	    (rc = query(&l)))
		goto out;
	for (cur = l.resp.p; *cur;) {
		uint64_t sid, fkey, mid, addr;
		uint32_t fn, loc;
		struct stack *s;

		if (tsv_fields(&cur, f, 8) != 6)
			continue;
		sid = strtoull(f[0], NULL, 10);
		mid = strtoull(f[4], NULL, 10);
		addr = strtoull(f[5], NULL, 10);
		if (!l.nst || l.st[l.nst - 1].id != sid) {
			void *ns = realloc(l.st, (l.nst + 1) * sizeof(*l.st));
			if (!ns) {
				rc = -ENOMEM;
				goto out;
			}
			l.st = ns;
			l.st[l.nst++] = (struct stack){ .id = sid };
		}
		s = &l.st[l.nst - 1];
		/* One location per distinct (mapping, address, function, file). */
		fkey = ch_hash(f[2], strlen(f[2]) + 1, ch_hash(f[3], strlen(f[3]) + 1,
							       ch_hash(&addr, 8, mid)));
		loc = idmap_get(&l.locs, fkey);
		if (!loc) {
			/*
			 * A function is its name in its module: a window whose debug
			 * info was not read yet names the module, a later one the
			 * source file - the same function all the same.
			 */
			uint32_t mi = idmap_get(&l.maps, mid);
			size_t nm;
			const struct agg_mapping *am = aggregate_mappings(l.a, &nm);
			const char *file = mi && mi <= nm && am[mi - 1].file[0] ? am[mi - 1].file : f[3];

			if ((rc = aggregate_import_function(l.a, f[2], file, &fn)) ||
			    (rc = aggregate_import_location(l.a, idmap_get(&l.maps, mid), addr, fn,
							    &loc)) ||
			    (rc = idmap_put(&l.locs, fkey, loc)))
				goto out;
		}
		if (s->n == s->cap) {
			unsigned cap = s->cap ? 2 * s->cap : 16;
			uint32_t *nl = realloc(s->locs, cap * sizeof(*nl));
			if (!nl) {
				rc = -ENOMEM;
				goto out;
			}
			s->locs = nl;
			s->cap = cap;
		}
		s->locs[s->n++] = loc;
	}
	/* ORDER BY stack_id is ClickHouse's UInt64 order: already sorted for bsearch. */
	for (size_t i = 0; i < nrows; i++) {
		struct stack *s = find_stack(&l, rows[i].id);
		uint64_t w[PMUTOP_MAX_EVENTS] = { 0 };

		w[rows[i].ev] = rows[i].value;
		rc = aggregate_import_stack(l.a, by ? (uint32_t)rows[i].by + 1 : 0,
					    s ? s->locs : NULL, s ? s->n : 0, rows[i].samples, w,
					    nev ? nev : 1);
		if (rc)
			goto out;
	}
	for (size_t b = 0; b < nby; b++) {
		aggregate_set_thread_name(l.a, (uint32_t)b + 1, byv[b]);
		aggregate_set_thread_process(l.a, (uint32_t)b + 1, (uint32_t)b + 1, byv[b]);
	}
	{
		struct agg_info *info = aggregate_info(l.a);

		info->start_ns = tmin;
		info->duration_ns = tmax > tmin ? tmax - tmin : 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (stats) {
		*stats = (struct ch_load_stats){ .windows = windows, .hosts = hosts, .rows = nrows,
			.stacks = l.nst, .seconds = (double)(t1.tv_sec - t0.tv_sec) +
			(double)(t1.tv_nsec - t0.tv_nsec) / 1e9, .by_values = byv, .nby = nby };
		byv = NULL;
		nby = 0;
	}
	*out = l.a;
	l.a = NULL;
	rc = 0;
out:
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory loading from ClickHouse");
	aggregate_free(l.a);
	for (size_t i = 0; i < l.nst; i++)
		free(l.st[i].locs);
	free(l.st);
	free(rows);
	for (size_t i = 0; i < nby; i++)
		free(byv[i]);
	free(byv);
	ch_buf_free(&byx);
	idmap_free(&l.maps);
	idmap_free(&l.locs);
	ch_buf_free(&l.where);
	ch_buf_free(&l.sql);
	ch_buf_free(&l.resp);
	return rc;
}
