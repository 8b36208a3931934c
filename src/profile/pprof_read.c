/*
 * pprof_read.c - a pprof profile back into an aggregate (see pprof_read.h).
 *
 * Three steps, each distrusting its input: gunzip with a size cap (zlib),
 * unpack the message (protobuf-c, generated from proto/profile.proto), then
 * check every id and string index before anything reaches the aggregate
 * through its import API. Ids in a pprof file are arbitrary non-zero
 * numbers; they are mapped to the aggregate's dense ids through sorted
 * (id, index) tables, with a direct path for the usual 1..n numbering.
 */
#include "pmutop/profile/pprof_read.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "profile.pb-c.h"

#include "pmutop/profile/aggregate.h"
#include "pmutop/unwind/unwind.h"

typedef Perftools__Profiles__Profile Profile;

/* ---- gunzip ---------------------------------------------------------------- */

/*
 * Decompress every gzip member of in[0..len) into a malloc'd buffer of at
 * most max bytes. Returns 0, -EINVAL (bad/truncated/too large;
 * err says which) or -ENOMEM.
 */
static int gunzip(const unsigned char *in, size_t len, size_t max, unsigned char **out,
		  size_t *outlen, char *err, size_t errlen)
{
	size_t cap = len < (1u << 20) ? (1u << 20) : len * 4, used = 0;
	unsigned char *buf, *nb;
	z_stream zs;
	int rc, ret = -EINVAL;

	if (len > max) {
		snprintf(err, errlen, "file larger than %zu MiB", max >> 20);
		return -EINVAL;
	}
	if (cap > max)
		cap = max;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 16) != Z_OK) {
		free(buf);
		return -ENOMEM;
	}
	zs.next_in = (unsigned char *)in;
	zs.avail_in = (uInt)len;  /* len <= PPROF_READ_MAX_BYTES fits in uInt */
	for (;;) {
		if (used == cap) {
			size_t ncap = cap * 2;

			if (cap >= max) {
				snprintf(err, errlen, "decompresses to more than %zu MiB", max >> 20);
				goto out;
			}
			if (ncap > max)
				ncap = max;
			nb = realloc(buf, ncap);
			if (!nb) {
				ret = -ENOMEM;
				goto out;
			}
			buf = nb;
			cap = ncap;
		}
		zs.next_out = buf + used;
		zs.avail_out = (uInt)(cap - used);
		rc = inflate(&zs, Z_NO_FLUSH);
		used = cap - zs.avail_out;
		if (rc == Z_STREAM_END) {
			/* Another member follows (concatenated gzip), or the end. */
			if (zs.avail_in == 0)
				break;
			if (inflateReset(&zs) != Z_OK)
				goto bad;
			continue;
		}
		if (rc == Z_MEM_ERROR) {
			ret = -ENOMEM;
			goto out;
		}
		if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
			snprintf(err, errlen, "truncated gzip data");
			goto out;
		}
		if (rc != Z_OK && rc != Z_BUF_ERROR)
			goto bad;
	}
	*out = buf;
	*outlen = used;
	buf = NULL;
	ret = 0;
	goto out;
bad:
	snprintf(err, errlen, "corrupt gzip data (%s)", zs.msg ? zs.msg : "inflate failed");
out:
	inflateEnd(&zs);
	free(buf);
	return ret;
}

/* ---- ids ----------------------------------------------------------------- */

struct id_entry {
	uint64_t id;
	size_t index;
};

/* id -> index into a message array; direct when ids are 1..n in order. */
struct id_map {
	struct id_entry *e;  /* sorted by id; NULL when direct */
	size_t n;
};

static int cmp_id(const void *p, const void *q)
{
	const struct id_entry *x = p, *y = q;

	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * Build the map of n ids (ids(i) gives the i-th). Rejects id 0 and
 * duplicates with a message naming `what`.
 */
static int id_map_build(struct id_map *m, size_t n, uint64_t (*ids)(const Profile *, size_t),
			const Profile *p, const char *what, char *err, size_t errlen)
{
	size_t i;
	bool direct = true;

	m->e = NULL;
	m->n = n;
	for (i = 0; i < n; i++) {
		uint64_t id = ids(p, i);

		if (id == 0) {
			snprintf(err, errlen, "%s #%zu has the reserved id 0", what, i + 1);
			return -EINVAL;
		}
		if (id != i + 1)
			direct = false;
	}
	if (direct)
		return 0;
	m->e = malloc(n * sizeof(*m->e));
	if (!m->e)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		m->e[i].id = ids(p, i);
		m->e[i].index = i;
	}
	qsort(m->e, n, sizeof(*m->e), cmp_id);
	for (i = 1; i < n; i++) {
		if (m->e[i].id == m->e[i - 1].id) {
			snprintf(err, errlen, "two %ss have id %" PRIu64, what, m->e[i].id);
			return -EINVAL;
		}
	}
	return 0;
}

/* The index of id, or SIZE_MAX. */
static size_t id_map_find(const struct id_map *m, uint64_t id)
{
	struct id_entry key = { id, 0 }, *hit;

	if (!m->e)
		return id >= 1 && id <= m->n ? (size_t)(id - 1) : SIZE_MAX;
	hit = bsearch(&key, m->e, m->n, sizeof(*m->e), cmp_id);
	return hit ? hit->index : SIZE_MAX;
}

static uint64_t mapping_id_of(const Profile *p, size_t i) { return p->mapping[i]->id; }
static uint64_t function_id_of(const Profile *p, size_t i) { return p->function[i]->id; }
static uint64_t location_id_of(const Profile *p, size_t i) { return p->location[i]->id; }

/* ---- the reader -------------------------------------------------------------- */

struct reader {
	const Profile *p;
	struct aggregate *a;
	struct id_map maps, funcs, locs;
	uint32_t *map_ids;       /* agg mapping id per pprof mapping index */
	uint32_t *func_ids;      /* agg function id per pprof function index */
	uint32_t *loc_first;     /* first agg location id per pprof location index */
	uint32_t *loc_count;     /* agg locations it expanded to (inlined frames) */
	uint32_t *stack;         /* scratch for one sample */
	size_t stack_cap;
	uint64_t frames;         /* frames imported so far, against PPROF_READ_MAX_FRAMES */
	char *err;
	size_t errlen;
};

/* String i of the table, or NULL (message in err) when out of range. */
static const char *str_at(struct reader *r, int64_t i, const char *what)
{
	if (i < 0 || (uint64_t)i >= r->p->n_string_table || !r->p->string_table[i]) {
		snprintf(r->err, r->errlen, "%s: string index %" PRId64 " outside the string table "
			 "(%zu strings)", what, i, r->p->n_string_table);
		return NULL;
	}
	return r->p->string_table[i];
}

/*
 * Which sample values become events: the one pprof shows first
 * (default_sample_type, else the last), then every other type in file order,
 * at most PMUTOP_MAX_EVENTS; a type named "samples" is the sample count,
 * not an event.
 */
struct types {
	size_t ev[PMUTOP_MAX_EVENTS]; /* value index of event k */
	size_t nev;
	size_t count;                 /* value index of "samples", or SIZE_MAX */
};

static int pick_types(struct reader *r, struct types *t)
{
	const Profile *p = r->p;
	const char *want = NULL;
	size_t i, first;

	if (p->n_sample_type == 0) {
		snprintf(r->err, r->errlen, "no sample types");
		return -EINVAL;
	}
	for (i = 0; i < p->n_sample_type; i++) {
		if (!p->sample_type[i]) {
			snprintf(r->err, r->errlen, "sample type #%zu missing", i + 1);
			return -EINVAL;
		}
		if (!str_at(r, p->sample_type[i]->type, "sample type") ||
		    !str_at(r, p->sample_type[i]->unit, "sample unit"))
			return -EINVAL;
	}
	first = p->n_sample_type - 1;
	if (p->default_sample_type) {
		want = str_at(r, p->default_sample_type, "default sample type");
		if (!want)
			return -EINVAL;
		for (i = 0; i < p->n_sample_type; i++)
			if (!strcmp(p->string_table[p->sample_type[i]->type], want))
				first = i;
	}
	t->count = SIZE_MAX;
	for (i = 0; i < p->n_sample_type; i++)
		if (!strcmp(p->string_table[p->sample_type[i]->type], "samples"))
			t->count = i;
	t->ev[0] = first;
	t->nev = 1;
	for (i = 0; i < p->n_sample_type && t->nev < PMUTOP_MAX_EVENTS; i++)
		if (i != first && i != t->count)
			t->ev[t->nev++] = i;
	return 0;
}

static int import_mappings(struct reader *r)
{
	const Profile *p = r->p;
	size_t i;
	int rc;

	rc = id_map_build(&r->maps, p->n_mapping, mapping_id_of, p, "mapping", r->err, r->errlen);
	if (rc)
		return rc;
	r->map_ids = calloc(p->n_mapping + 1, sizeof(*r->map_ids));
	if (!r->map_ids)
		return -ENOMEM;
	for (i = 0; i < p->n_mapping; i++) {
		const Perftools__Profiles__Mapping *m = p->mapping[i];
		const char *file = str_at(r, m->filename, "mapping file name");
		const char *bid = str_at(r, m->build_id, "mapping build id");

		if (!file || !bid)
			return -EINVAL;
		rc = aggregate_import_mapping(r->a, m->memory_start, m->memory_limit, m->file_offset,
					      file, bid, m->has_functions, &r->map_ids[i]);
		if (rc)
			return rc;
	}
	return 0;
}

static int import_functions(struct reader *r)
{
	const Profile *p = r->p;
	size_t i;
	int rc;

	rc = id_map_build(&r->funcs, p->n_function, function_id_of, p, "function", r->err,
			  r->errlen);
	if (rc)
		return rc;
	r->func_ids = calloc(p->n_function + 1, sizeof(*r->func_ids));
	if (!r->func_ids)
		return -ENOMEM;
	for (i = 0; i < p->n_function; i++) {
		const Perftools__Profiles__Function *f = p->function[i];
		const char *name = str_at(r, f->name, "function name");
		const char *sys = str_at(r, f->system_name, "function system name");
		const char *file = str_at(r, f->filename, "function file name");

		if (!name || !sys || !file)
			return -EINVAL;
		if (!*name)
			name = *sys ? sys : "?";
		rc = aggregate_import_function(r->a, name, file, &r->func_ids[i]);
		if (rc)
			return rc;
	}
	return 0;
}

/* The name of a location without Lines: "module+0xOFF", else "0xADDR". */
static int anonymous_function(struct reader *r, const Perftools__Profiles__Location *l,
			      size_t mi, uint32_t *fid)
{
	char name[320];
	const char *file = "";

	if (mi != SIZE_MAX) {
		const Perftools__Profiles__Mapping *m = r->p->mapping[mi];
		const char *base;

		file = r->p->string_table[m->filename];
		base = strrchr(file, '/');
		base = base ? base + 1 : file;
		snprintf(name, sizeof(name), "%s+0x%" PRIx64, *base ? base : "[anon]",
			 l->address - m->memory_start + m->file_offset);
	} else {
		snprintf(name, sizeof(name), "0x%" PRIx64, l->address);
	}
	return aggregate_import_function(r->a, name, file, fid);
}

static int import_locations(struct reader *r)
{
	const Profile *p = r->p;
	size_t i, j;
	int rc;

	rc = id_map_build(&r->locs, p->n_location, location_id_of, p, "location", r->err,
			  r->errlen);
	if (rc)
		return rc;
	r->loc_first = calloc(p->n_location + 1, sizeof(*r->loc_first));
	r->loc_count = calloc(p->n_location + 1, sizeof(*r->loc_count));
	if (!r->loc_first || !r->loc_count)
		return -ENOMEM;
	for (i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		size_t mi = SIZE_MAX;
		uint32_t mid = 0, fid, lid;

		if (l->mapping_id) {
			mi = id_map_find(&r->maps, l->mapping_id);
			if (mi == SIZE_MAX) {
				snprintf(r->err, r->errlen, "location %" PRIu64 " refers to mapping %"
					 PRIu64 ", which does not exist", l->id, l->mapping_id);
				return -EINVAL;
			}
			mid = r->map_ids[mi];
		}
		if (l->n_line == 0) {
			rc = anonymous_function(r, l, mi, &fid);
			if (!rc)
				rc = aggregate_import_location(r->a, mid, l->address, fid, &lid);
			if (rc)
				return rc;
			r->loc_first[i] = lid;
			r->loc_count[i] = 1;
			continue;
		}
		if (l->n_line > PPROF_READ_MAX_LINES) {
			snprintf(r->err, r->errlen, "location %" PRIu64 " has %zu lines (inlined frames); "
				 "at most %u are read", l->id, l->n_line, PPROF_READ_MAX_LINES);
			return -EINVAL;
		}
		/* Line[0] is the innermost inlined frame: it comes first, as a leaf. */
		for (j = 0; j < l->n_line; j++) {
			size_t fi = l->line[j] ? id_map_find(&r->funcs, l->line[j]->function_id)
					       : SIZE_MAX;

			if (fi == SIZE_MAX) {
				snprintf(r->err, r->errlen, "location %" PRIu64 " refers to function %"
					 PRIu64 ", which does not exist", l->id,
					 l->line[j] ? l->line[j]->function_id : 0);
				return -EINVAL;
			}
			rc = aggregate_import_location(r->a, mid, l->address, r->func_ids[fi], &lid);
			if (rc)
				return rc;
			if (j == 0)
				r->loc_first[i] = lid;
		}
		r->loc_count[i] = (uint32_t)l->n_line;
	}
	return 0;
}

/* tid and thread name from the labels; 0 / NULL when absent. */
static int sample_thread(struct reader *r, const Perftools__Profiles__Sample *s,
			 uint32_t *tid, const char **name)
{
	size_t i;

	*tid = 0;
	*name = NULL;
	for (i = 0; i < s->n_label; i++) {
		const Perftools__Profiles__Label *l = s->label[i];
		const char *key;

		if (!l)
			continue;
		key = str_at(r, l->key, "label key");
		if (!key || !str_at(r, l->str, "label value") ||
		    !str_at(r, l->num_unit, "label unit"))
			return -EINVAL;
		if (!strcmp(key, "tid") && l->num > 0 && l->num <= UINT32_MAX)
			*tid = (uint32_t)l->num;
		else if (!strcmp(key, "thread") && l->str)
			*name = r->p->string_table[l->str];
	}
	return 0;
}

static int import_samples(struct reader *r, const struct types *t)
{
	const Profile *p = r->p;
	uint64_t weights[PMUTOP_MAX_EVENTS];
	size_t i, j, k;
	bool any;
	int rc;

	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		const char *tname;
		uint64_t samples;
		size_t depth = 0;
		uint32_t tid;

		if (!s) {
			snprintf(r->err, r->errlen, "sample #%zu missing", i + 1);
			return -EINVAL;
		}
		if (s->n_value != p->n_sample_type) {
			snprintf(r->err, r->errlen, "sample #%zu has %zu values for %zu sample types",
				 i + 1, s->n_value, p->n_sample_type);
			return -EINVAL;
		}
		rc = sample_thread(r, s, &tid, &tname);
		if (rc)
			return rc;
		for (j = 0; j < s->n_location_id; j++) {
			size_t li = id_map_find(&r->locs, s->location_id[j]);

			if (li == SIZE_MAX) {
				snprintf(r->err, r->errlen, "sample #%zu refers to location %" PRIu64
					 ", which does not exist", i + 1, s->location_id[j]);
				return -EINVAL;
			}
			depth += r->loc_count[li];
			if (depth > PPROF_READ_MAX_DEPTH) {
				snprintf(r->err, r->errlen, "sample #%zu is deeper than %u frames",
					 i + 1, PPROF_READ_MAX_DEPTH);
				return -EINVAL;
			}
		}
		/* Negative values (a diff profile's) and zeros have nothing to show. */
		for (k = 0, any = false; k < t->nev; k++) {
			weights[k] = s->value[t->ev[k]] > 0 ? (uint64_t)s->value[t->ev[k]] : 0;
			any |= weights[k] > 0;
		}
		if (!any)
			continue;
		/* A few KB of gzip can name a deep stack a million times: cap the sum. */
		r->frames += depth;
		if (r->frames > PPROF_READ_MAX_FRAMES) {
			snprintf(r->err, r->errlen, "the samples expand to more than %u frames in all "
				 "(at sample #%zu of %zu): not loaded", PPROF_READ_MAX_FRAMES, i + 1,
				 p->n_sample);
			return -E2BIG;
		}
		if (depth > r->stack_cap) {
			uint32_t *ns = realloc(r->stack, depth * sizeof(*ns));

			if (!ns)
				return -ENOMEM;
			r->stack = ns;
			r->stack_cap = depth;
		}
		for (j = 0, depth = 0; j < s->n_location_id; j++) {
			size_t li = id_map_find(&r->locs, s->location_id[j]);

			for (k = 0; k < r->loc_count[li]; k++)
				r->stack[depth++] = r->loc_first[li] + (uint32_t)k;
		}
		samples = t->count == SIZE_MAX ? 1 : s->value[t->count] > 0 ?
			  (uint64_t)s->value[t->count] : 0;
		rc = aggregate_import_stack(r->a, tid, r->stack, (unsigned)depth, samples,
					    weights, t->nev);
		if (rc)
			return rc;
		if (tname && !aggregate_thread(r->a, tid)->name[0])
			aggregate_set_thread_name(r->a, tid, tname);
	}
	return 0;
}

/* Run facts: event, period, times, and pmutop's own counters from comments. */
static int import_info(struct reader *r, const struct types *t)
{
	const Profile *p = r->p;
	struct agg_info *info = aggregate_info(r->a);
	const char *period_type = NULL;
	double per_sample[PMUTOP_MAX_EVENTS] = { 0 };
	size_t i;
	int rc;

	if (p->period_type && p->period_type->type > 0 &&
	    (uint64_t)p->period_type->type < p->n_string_table)
		period_type = p->string_table[p->period_type->type];
	for (i = 0; i < t->nev; i++) {
		const Perftools__Profiles__ValueType *vt = p->sample_type[t->ev[i]];

		/* The period is period_type's; without one, the shown event's. */
		bool has_period = period_type ? !strcmp(period_type, p->string_table[vt->type])
					      : i == 0;

		rc = aggregate_set_event_k(r->a, i, p->string_table[vt->type],
					   p->string_table[vt->unit],
					   has_period && p->period > 0 ? (uint64_t)p->period : 0);
		if (rc)
			return rc;
	}
	info->period = p->period > 0 ? (uint64_t)p->period : 0;
	info->start_ns = p->time_nanos > 0 ? (uint64_t)p->time_nanos : 0;
	info->duration_ns = p->duration_nanos > 0 ? (uint64_t)p->duration_nanos : 0;
	for (i = 0; i < p->n_comment; i++) {
		const char *c = str_at(r, p->comment[i], "comment");
		unsigned long long smp, lost, thr, v;
		unsigned ek;
		double wps;
		char name[32];

		if (!c)
			return -EINVAL;
		if (sscanf(c, "pmutop: samples=%llu lost=%llu throttled=%llu", &smp, &lost, &thr) == 3) {
			info->lost = lost;
			info->throttled = thr;
		} else if (sscanf(c, "pmutop: event %u weight_per_sample=%lf", &ek, &wps) == 2) {
			if (ek < t->nev && wps > 0)
				per_sample[ek] = wps;
		} else if (sscanf(c, "unwind %31[^:]: %llu", name, &v) == 2) {
			for (int o = 0; o < UNWIND_NOUTCOMES; o++) {
				const char *on = unwind_outcome_name((enum unwind_outcome)o);

				if (on && !strcmp(on, name))
					info->outcomes[o] = v;
			}
		}
	}
	if (t->nev > 1)
		aggregate_share_event_samples(r->a, per_sample, t->nev);
	return 0;
}

static void reader_free(struct reader *r)
{
	free(r->maps.e);
	free(r->funcs.e);
	free(r->locs.e);
	free(r->map_ids);
	free(r->func_ids);
	free(r->loc_first);
	free(r->loc_count);
	free(r->stack);
}

/* Pointers protobuf-c hands out for repeated messages are never NULL; check anyway. */
static int check_arrays(struct reader *r)
{
	const Profile *p = r->p;
	size_t i;

	if (p->n_string_table == 0 || !p->string_table[0] || p->string_table[0][0]) {
		snprintf(r->err, r->errlen, "the string table does not start with \"\"");
		return -EINVAL;
	}
	for (i = 0; i < p->n_mapping; i++)
		if (!p->mapping[i])
			goto missing;
	for (i = 0; i < p->n_function; i++)
		if (!p->function[i])
			goto missing;
	for (i = 0; i < p->n_location; i++)
		if (!p->location[i])
			goto missing;
	return 0;
missing:
	snprintf(r->err, r->errlen, "empty message in the profile");
	return -EINVAL;
}

int pprof_read_buf(const void *buf, size_t len, struct aggregate **out,
		   char *err, size_t errlen)
{
	return pprof_read_buf_max(buf, len, PPROF_READ_MAX_BYTES, out, err, errlen);
}

/* Whether buf starts with the bytes of lit (case-insensitive for letters). */
static bool starts(const unsigned char *buf, size_t len, const char *lit)
{
	size_t n = strlen(lit);

	return len >= n && !strncasecmp((const char *)buf, lit, n);
}

/* Folded stacks: printable lines, each ending in a space and a count. */
static bool looks_folded(const unsigned char *buf, size_t len)
{
	size_t i = 0, lines = 0;

	while (i < len && lines < 8) {
		size_t e = i, k;

		while (e < len && buf[e] != '\n')
			if (buf[e++] < 0x09)
				return false;
		k = e;
		while (k > i && buf[k - 1] >= '0' && buf[k - 1] <= '9')
			k--;
		if (k == e || k == i || buf[k - 1] != ' ')
			return false;
		lines++;
		i = e + 1;
	}
	return lines > 0;
}

/*
 * Files people give --load that are not pprof, each with what reads it:
 * what perf and pmutop's other formats write. NULL when buf is none of them.
 */
static const char *known_format(const unsigned char *buf, size_t len)
{
	size_t skip = 0;

	if (starts(buf, len, "PERFILE2") || starts(buf, len, "PERFFILE"))
		return "a perf.data file (perf record's): read it with perf report, or record "
		       "with pmutop itself (pmutop -p PID / pmutop -- COMMAND)";
	while (skip < len && skip < 64 && (buf[skip] == ' ' || buf[skip] == '\n' ||
					   buf[skip] == '\r' || buf[skip] == '\t'))
		skip++;
	buf += skip;
	len -= skip;
	if (starts(buf, len, "<!DOCTYPE html") || starts(buf, len, "<html"))
		return "an HTML page (pmutop's flame graph page is one): open it in a browser; "
		       "--load reads the pprof profile written with --dump FILE.pb.gz";
	if (starts(buf, len, "<?xml") || starts(buf, len, "<svg"))
		return "an SVG file (a flame graph?): open it in a browser; --load reads the pprof "
		       "profile written with --dump FILE.pb.gz";
	if (starts(buf, len, "{") && memmem(buf, len < 4096 ? len : 4096, "speedscope", 10))
		return "a speedscope file: open it at https://www.speedscope.app or with "
		       "speedscope FILE; --load reads the pprof profile written with --dump FILE.pb.gz";
	if (looks_folded(buf, len))
		return "folded stacks (one 'frame;frame;... COUNT' per line): draw them with "
		       "flamegraph.pl FILE > flame.svg; --load reads the pprof profile written "
		       "with --dump FILE.pb.gz";
	return NULL;
}

int pprof_read_buf_max(const void *buf, size_t len, size_t max, struct aggregate **out,
		       char *err, size_t errlen)
{
	const unsigned char *in = buf;
	unsigned char *raw = NULL;
	size_t rawlen = len;
	struct types types = { .nev = 0 };
	struct reader r = { .err = err, .errlen = errlen };
	Profile *p = NULL;
	char why[200] = "";
	int rc;

	*out = NULL;
	if (errlen)
		err[0] = 0;
	if (max > PPROF_READ_MAX_BYTES)
		max = PPROF_READ_MAX_BYTES;
	if (len >= 2 && in[0] == 0x1f && in[1] == 0x8b) {
		rc = gunzip(in, len, max, &raw, &rawlen, why, sizeof(why));
		if (rc) {
			snprintf(err, errlen, "not a pprof profile: %s",
				 rc == -ENOMEM ? strerror(ENOMEM) : why);
			return rc;
		}
		in = raw;
	} else {
		const char *what = known_format(in, len);

		if (what) {
			snprintf(err, errlen, "not a pprof profile: this is %s", what);
			return -EINVAL;
		}
		if (len > max) {
			snprintf(err, errlen, "not a pprof profile: larger than %zu MiB", max >> 20);
			return -EINVAL;
		}
	}
	p = perftools__profiles__profile__unpack(NULL, rawlen, in);
	free(raw);
	if (!p) {
		snprintf(err, errlen, "not a pprof profile (neither gzip nor a valid profile message)");
		return -EINVAL;
	}
	r.p = p;
	r.a = aggregate_new();
	rc = -ENOMEM;
	if (!r.a)
		goto out;
	rc = check_arrays(&r);
	if (!rc)
		rc = pick_types(&r, &types);
	if (!rc)
		rc = import_mappings(&r);
	if (!rc)
		rc = import_functions(&r);
	if (!rc)
		rc = import_locations(&r);
	if (!rc)
		rc = import_samples(&r, &types);
	if (!rc)
		rc = import_info(&r, &types);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory reading the profile");
	else if (rc == -EINVAL && !err[0])
		snprintf(err, errlen, "malformed profile");
out:
	if (rc) {
		aggregate_free(r.a);
		r.a = NULL;
	}
	*out = r.a;
	reader_free(&r);
	perftools__profiles__profile__free_unpacked(p, NULL);
	return rc;
}

int pprof_read_file(const char *path, struct aggregate **out, char *err, size_t errlen)
{
	unsigned char *buf = NULL;
	char why[400];
	struct stat st;
	size_t got = 0;
	int fd, rc;

	*out = NULL;
	/* O_NONBLOCK: a FIFO must not block the open (it is refused below). */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot read profile '%s': %s", path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot read profile '%s': %s", path, strerror(-rc));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		snprintf(err, errlen, "cannot read profile '%s': %s", path,
			 rc == -EISDIR ? "is a directory" : "not a regular file");
		goto out;
	}
	if ((uint64_t)st.st_size > PPROF_READ_MAX_BYTES) {
		rc = -EINVAL;
		snprintf(err, errlen, "cannot read profile '%s': larger than %u MiB", path,
			 PPROF_READ_MAX_BYTES >> 20);
		goto out;
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		rc = -ENOMEM;
		snprintf(err, errlen, "cannot read profile '%s': %s", path, strerror(ENOMEM));
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			snprintf(err, errlen, "cannot read profile '%s': %s", path,
				 n < 0 ? strerror(-rc) : "file shrank while reading");
			goto out;
		}
		got += (size_t)n;
	}
	if (got == 0) {
		rc = -EINVAL;
		snprintf(err, errlen, "cannot read profile '%s': empty file", path);
		goto out;
	}
	why[0] = 0;
	rc = pprof_read_buf(buf, got, out, why, sizeof(why));
	if (rc)
		snprintf(err, errlen, "cannot read profile '%s': %s", path, why);
out:
	free(buf);
	close(fd);
	return rc;
}
