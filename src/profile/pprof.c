/*
 * pprof.c - the aggregate as a gzip-compressed pprof profile.
 *
 * The aggregate already has the pprof shape (dense ids from 1 for mappings,
 * functions and locations; stacks as location ids leaf first), so encoding
 * is a translation, and it streams: each mapping, location, function and
 * sample is built in one reused protobuf-c message, packed as one element
 * of the Profile's repeated field straight into zlib, and only the gzip
 * output grows in memory. A protobuf message is the concatenation of its
 * fields in any order (repeated ones append), so the elements go first and
 * one last Profile message carries the header and the string table, which
 * is complete only once every element has interned its strings. Building
 * the whole message before packing it cost about 170 bytes per sample
 * plus the packed copy: 10-18 MiB on top of the aggregate at the end of an
 * hour-long run, above the 64 MiB a long run is held to (issue 23).
 *
 * Per sample the profile carries the values [samples, <event>...] and the
 * labels of its thread and process: "tid" and "pid" (numbers), "thread"
 * and "comm" (names), so `go tool pprof -tagfocus=thread=worker`,
 * `-tagfocus=comm=make`, `-tagfocus=pid=1234` and `-tags` work. Run facts (lost and throttled
 * samples, how unwinding ended) go into the profile's comments, which
 * `go tool pprof -comments` prints.
 *
 * Writing is atomic: the bytes go to a temp file next to the target, which
 * is fsync'd and renamed over it, so a full disk or a crash leaves either
 * the old file or none, never a truncated profile that a reader chokes on.
 */
#include "pmutop/profile/pprof.h"
#include "pmutop/profile/atomic_write.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ZLIB_CONST
#include <zlib.h>

#include "profile.pb-c.h"
#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/strtab.h"
#include "pmutop/unwind/unwind.h"

/* ---- the message --------------------------------------------------------- */

#define NCOMMENTS (5 + UNWIND_NOUTCOMES + PMUTOP_MAX_EVENTS) /* counts, compaction, since start,
								      the note, unnamed code, outcomes,
								      per event */

/* Everything the Profile message points to, freed in one place. */
struct build {
	Perftools__Profiles__Profile prof;
	struct strtab st;

	Perftools__Profiles__ValueType types[1 + PMUTOP_MAX_EVENTS], period_type;
	Perftools__Profiles__ValueType *typep[1 + PMUTOP_MAX_EVENTS];
	size_t ntypes;          /* 1 + events written */
	int only;               /* write only this event (--dump-split), or -1 */
	uint32_t pid;           /* write only this process's samples (HTTP ?pid=), or 0 */

	Perftools__Profiles__Label *labels, **labelp; /* LABEL_SLOTS per thread */
	uint8_t *nlab;          /* labels per thread (its first run) */

	/* One element at a time: its buffers, grown to the largest seen. */
	Perftools__Profiles__Line *lines, **linep;
	size_t lines_cap;
	uint64_t *ids;          /* a sample's location ids */
	size_t ids_cap;
	struct agg_path path;           /* a stack's locations (aggregate_stack_path) */

	int64_t comments[NCOMMENTS];
	char comment_text[NCOMMENTS][256];

	/* One sample per leaf part (aggregate_leaf_iter): a stack whose leaf
	 * line ran at several instructions keeps them, each a location of its
	 * own with that line (a variant of the stack's leaf location). The
	 * parts are computed twice, stack by stack, never all held: once for
	 * the variants (locations, written before the samples), once for the
	 * samples. */
	struct agg_leaf_iter *parts;
	struct variant { uint32_t loc, addr; uint64_t id; } *variants;
	size_t nvariants;
};

/* calloc that never returns NULL for n == 0 (so NULL always means ENOMEM). */
static void *xcalloc(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

/* Room for n elements in a buffer that grows; false on ENOMEM. */
static bool reserve(void **v, size_t *cap, size_t n, size_t size)
{
	void *nv;

	if (n <= *cap)
		return true;
	nv = realloc(*v, n * size);
	if (!nv)
		return false;
	*v = nv;
	*cap = n;
	return true;
}

static void build_free(struct build *b)
{
	strtab_free(&b->st);
	free(b->lines);
	free(b->linep);
	free(b->ids);
	agg_path_free(&b->path);
	free(b->labels);
	free(b->labelp);
	free(b->nlab);
	aggregate_leaf_iter_free(b->parts);
	free(b->variants);
}

/* Adds a string to the table; on ENOMEM sets *failed and returns 0. */
static int64_t str(struct build *b, const char *s, bool *failed)
{
	int64_t i = strtab_add(&b->st, s);

	if (i < 0) {
		*failed = true;
		return 0;
	}
	return i;
}

/* Event k of the run, whether it had one event or several. */
static void event_desc(const struct agg_info *info, size_t k, const char **name,
		       const char **unit, uint64_t *period)
{
	if (info->nevents) {
		*name = info->events[k].name;
		*unit = info->events[k].unit;
		*period = info->events[k].period;
	} else {
		*name = info->event;
		*unit = info->event_unit;
		*period = info->period;
	}
	if (!*name)
		*name = "events";
	if (!*unit)
		*unit = "count";
}

/* Multiplexing correction for event k (1 when the counter always ran). */
static double event_scale(const struct agg_info *info, size_t k)
{
	return info->nevents && info->events[k].scale > 1.0 ? info->events[k].scale : 1.0;
}

/*
 * pprof has one samples column for all events, so a stack sampled by two
 * events cannot say how many samples each had. Each event's mean weight per
 * sample lets a reader (pprof_read.c) share a stack's count out again:
 * "pmutop: event K weight_per_sample=W". Only for runs of several events.
 */
static size_t event_sample_comments(struct build *b, const struct aggregate *a,
				    const struct agg_info *info, size_t nc, bool *failed)
{
	size_t nev = info->nevents, n, i, k;
	const struct agg_stack *st;

	if (nev < 2 || b->only >= 0)
		return nc;
	st = aggregate_stacks(a, &n);
	for (k = 0; k < nev; k++) {
		double w = 0, cnt = 0;

		for (i = 0; i < n; i++) {
			w += (double)st[i].weights[k];
			cnt += (double)st[i].ev_samples[k];
		}
		if (cnt <= 0 || w <= 0)
			continue;
		snprintf(b->comment_text[nc], sizeof(b->comment_text[nc]),
			 "pmutop: event %zu weight_per_sample=%.9g", k,
			 w * event_scale(info, k) / cnt);
		b->comments[nc] = str(b, b->comment_text[nc], failed);
		nc++;
	}
	return nc;
}

/*
 * Every mapping is written as symbolized (put_tables), so pprof never
 * symbolizes on its own; this comment says which files had code pmutop
 * could not name (their locations are "module+0xOFF", with the address and
 * the mapping's build id kept) and how to have pprof try them itself.
 */
static size_t unnamed_comment(struct build *b, const struct aggregate *a, size_t nc,
			      bool *failed)
{
	char *t = b->comment_text[nc];
	size_t cap = sizeof(b->comment_text[nc]), nm, i, n = 0, len;
	const struct agg_mapping *am = aggregate_mappings(a, &nm);

	len = (size_t)snprintf(t, cap, "pmutop: code without a name (module+0xOFFSET, address "
			       "and build id kept; go tool pprof -symbolize=force retries) in:");
	for (i = 0; i < nm; i++) {
		const char *base = strrchr(am[i].file, '/');

		size_t j;

		if (am[i].has_functions || !base)
			continue;
		for (j = 0; j < i && (am[j].has_functions || strcmp(am[j].file, am[i].file)); j++)
			;
		if (j < i)
			continue; /* named already (a file mapped twice) */
		n++;
		if (len < cap)
			len += (size_t)snprintf(t + len, cap - len, " %s", base + 1);
	}
	if (!n)
		return nc;
	if (len >= cap)
		memcpy(t + cap - 4, "...", 4);
	b->comments[nc] = str(b, t, failed);
	return nc + 1;
}

static void build_header(struct build *b, const struct aggregate *a, const struct agg_info *info,
			 bool *failed)
{
	size_t nev = info->nevents ? info->nevents : 1, nc = 0, nstacks;
	const char *event, *unit;
	uint64_t period = 0;
	int i;

	aggregate_stacks(a, &nstacks);
	perftools__profiles__value_type__init(&b->types[0]);
	b->types[0].type = str(b, "samples", failed);
	b->types[0].unit = str(b, "count", failed);
	b->typep[0] = &b->types[0];
	b->ntypes = 1;
	for (size_t k = 0; k < nev; k++) {
		uint64_t p;
		if (b->only >= 0 && (size_t)b->only != k)
			continue;
		event_desc(info, k, &event, &unit, &p);
		if (b->ntypes == 1)
			period = p;
		perftools__profiles__value_type__init(&b->types[b->ntypes]);
		b->types[b->ntypes].type = str(b, event, failed);
		b->types[b->ntypes].unit = str(b, unit, failed);
		b->typep[b->ntypes] = &b->types[b->ntypes];
		b->ntypes++;
	}
	b->prof.n_sample_type = b->ntypes;
	b->prof.sample_type = b->typep;

	perftools__profiles__value_type__init(&b->period_type);
	b->period_type.type = b->types[1].type;
	b->period_type.unit = b->types[1].unit;
	b->prof.period_type = &b->period_type;
	b->prof.period = (int64_t)period;
	b->prof.time_nanos = (int64_t)info->start_ns;
	b->prof.duration_nanos = (int64_t)info->duration_ns;
	b->prof.default_sample_type = b->types[1].type;

	snprintf(b->comment_text[nc], sizeof(b->comment_text[nc]),
		 "pmutop: samples=%" PRIu64 " lost=%" PRIu64 " throttled=%" PRIu64,
		 info->samples, info->lost, info->throttled);
	b->comments[nc] = str(b, b->comment_text[nc], failed);
	nc++;
	/* What the memory budget merged (issue 31): zeros below the budget. */
	snprintf(b->comment_text[nc], sizeof(b->comment_text[nc]),
		 "pmutop: max_memory=%" PRIu64 " bytes=%zu nodes=%zu stacks=%zu pruned_frames=%" PRIu64
		 " pruned_samples=%" PRIu64 " threads_folded=%" PRIu64
		 " leaf_addresses_dropped=%" PRIu64 " modules_evicted=%" PRIu64
		 " modules_parsed_max=%" PRIu64, info->max_memory, aggregate_bytes(a),
		 aggregate_nodes(a), nstacks, info->pruned, info->pruned_samples, info->threads_folded,
		 info->leaf_dropped, info->modules_evicted, info->modules_parsed_max);
	b->comments[nc] = str(b, b->comment_text[nc], failed);
	nc++;
	/* Since the run started: the same over windows and live-view resets. */
	snprintf(b->comment_text[nc], sizeof(b->comment_text[nc]),
		 "pmutop: since start: run_samples=%" PRIu64 " run_lost=%" PRIu64 " run_throttled=%" PRIu64
		 " run_pruned_frames=%" PRIu64 " window=%" PRIu64,
		 info->run_samples > info->samples ? info->run_samples : info->samples,
		 info->run_lost > info->lost ? info->run_lost : info->lost,
		 info->run_throttled > info->throttled ? info->run_throttled : info->throttled,
		 info->run_pruned > info->pruned ? info->run_pruned : info->pruned,
		 info->window);
	b->comments[nc] = str(b, b->comment_text[nc], failed);
	nc++;
	if (info->note) {
		/* Not through comment_text: the note may be longer than a counter line. */
		b->comments[nc] = str(b, info->note, failed);
		nc++;
	}
	nc = unnamed_comment(b, a, nc, failed);
	for (i = 0; i < UNWIND_NOUTCOMES; i++) {
		const char *name = unwind_outcome_name((enum unwind_outcome)i);

		snprintf(b->comment_text[nc], sizeof(b->comment_text[nc]),
			 "unwind %s: %" PRIu64, name ? name : "?", info->outcomes[i]);
		b->comments[nc] = str(b, b->comment_text[nc], failed);
		nc++;
	}
	nc = event_sample_comments(b, a, info, nc, failed);
	b->prof.n_comment = nc;
	b->prof.comment = b->comments;
}

/* A shared object by its name: "libc.so.6", "ld-linux-x86-64.so.2", "x.so". */
static bool is_shared_object(const char *file)
{
	const char *base = strrchr(file, '/'), *so;

	base = base ? base + 1 : file;
	so = strstr(base, ".so");
	return so && (so[3] == 0 || so[3] == '.');
}

/*
 * pprof takes the first mapping listed for the main binary (the "File:"
 * and "Build ID:" header lines, symbolization defaults). Mappings are
 * interned in order of first sight, which is often the dynamic loader, so
 * list the first file-backed mapping that is not a shared object first.
 * Ids are unchanged; only the order in the message differs.
 */
static size_t main_mapping(const struct agg_mapping *am, size_t nm)
{
	size_t i;

	for (i = 0; i < nm; i++)
		if (am[i].file[0] == '/' && !is_shared_object(am[i].file))
			return i;
	return 0;
}

static int cmp_variant(const void *p, const void *q)
{
	const struct variant *x = p, *y = q;

	if (x->loc != y->loc)
		return x->loc < y->loc ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The address a part puts the stack's leaf at, when it is not the location's own. */
static bool part_moves_leaf(const struct aggregate *a, const struct agg_leaf_part *p,
			    uint32_t *loc)
{
	size_t ns, nl, na;
	const struct agg_stack *st = aggregate_stacks(a, &ns);
	const struct agg_location *al = aggregate_locations(a, &nl);
	const struct agg_address *ad = aggregate_addresses(a, &na);

	*loc = st[p->stack].leaf;
	return *loc && p->addr < na && ad[p->addr].address != al[*loc - 1].address;
}

/* Whether stack st is written: every one, or those of process b->pid (HTTP ?pid=). */
static bool stack_wanted(const struct build *b, const struct aggregate *a,
			 const struct agg_stack *st)
{
	const struct agg_thread *t;

	if (!b->pid)
		return true;
	t = aggregate_thread(a, st->tid);
	return t && t->pid == b->pid;
}

/* The extra locations the leaf parts need (ids after the aggregate's). */
static int build_parts(struct build *b, const struct aggregate *a)
{
	const struct agg_stack *st;
	const struct agg_leaf_part *p;
	size_t nl, ns, i, n = 0, cap = 0, np;
	uint32_t loc;

	aggregate_locations(a, &nl);
	st = aggregate_stacks(a, &ns);
	b->parts = aggregate_leaf_iter_new(a);
	if (!b->parts)
		return -ENOMEM;
	for (size_t s = 0; s < ns; s++) {
		if (!stack_wanted(b, a, &st[s]))
			continue;
		np = aggregate_leaf_iter_stack(b->parts, s, &p);
		for (i = 0; i < np; i++) {
			if (!part_moves_leaf(a, &p[i], &loc))
				continue;
			if (n == cap && !reserve((void **)&b->variants, &cap, cap ? 2 * cap : 256,
						 sizeof(*b->variants)))
				return -ENOMEM;
			b->variants[n++] = (struct variant){ loc, p[i].addr, 0 };
		}
	}
	if (n)
		qsort(b->variants, n, sizeof(*b->variants), cmp_variant);
	b->nvariants = 0;
	for (i = 0; i < n; i++)
		if (!b->nvariants || cmp_variant(&b->variants[b->nvariants - 1], &b->variants[i]))
			b->variants[b->nvariants++] = b->variants[i];
	for (i = 0; i < b->nvariants; i++)
		b->variants[i].id = nl + 1 + i;
	return 0;
}

/* The location id a part's sample starts with. */
static uint64_t part_leaf_id(const struct build *b, const struct aggregate *a,
			     const struct agg_leaf_part *p)
{
	struct variant key, *v;
	uint32_t loc;

	if (!part_moves_leaf(a, p, &loc))
		return loc;
	key.loc = loc;
	key.addr = p->addr;
	v = bsearch(&key, b->variants, b->nvariants, sizeof(*v), cmp_variant);
	return v ? v->id : loc;
}

/* ---- the stream ---------------------------------------------------------- */

/*
 * A ProtobufCBuffer that deflates what protobuf-c packs into it. Appends
 * are small (a field's tag, a varint, a string), so they are staged and
 * handed to zlib STAGE bytes at a time; the gzip output grows by doubling.
 */
#define STAGE (64 * 1024)

struct zsink {
	ProtobufCBuffer base;   /* first: protobuf-c calls base.append */
	z_stream zs;
	bool zs_live;
	unsigned char *stage;
	size_t staged;
	unsigned char *out;
	size_t cap;
	int err;                /* the first error, -ENOMEM or -EIO */
};

/* Room for more output: the buffer doubles. False on ENOMEM (z->err set). */
static bool zsink_grow(struct zsink *z)
{
	size_t used = z->out ? (size_t)(z->zs.next_out - z->out) : 0;
	size_t ncap = z->cap ? 2 * z->cap : STAGE;
	unsigned char *nb = realloc(z->out, ncap);

	if (!nb) {
		z->err = -ENOMEM;
		return false;
	}
	z->out = nb;
	z->cap = ncap;
	z->zs.next_out = nb + used;
	z->zs.avail_out = (uInt)(ncap - used < UINT_MAX ? ncap - used : UINT_MAX);
	return true;
}

static void zsink_deflate(struct zsink *z, const uint8_t *in, size_t n, int flush)
{
	z->zs.next_in = in;
	for (;;) {
		uInt ain = (uInt)(n < UINT_MAX ? n : UINT_MAX);
		int rc;

		if (z->zs.avail_out == 0 && !zsink_grow(z))
			return;
		z->zs.avail_in = ain;
		rc = deflate(&z->zs, ain == n ? flush : Z_NO_FLUSH);
		n -= ain - z->zs.avail_in;
		if (rc == Z_STREAM_END)
			return;
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			z->err = -EIO;
			return;
		}
		/* Without Z_FINISH: done once zlib took everything with room to spare. */
		if (n == 0 && flush != Z_FINISH && z->zs.avail_out != 0)
			return;
	}
}

static void zsink_append(ProtobufCBuffer *buf, size_t len, const uint8_t *data)
{
	struct zsink *z = (struct zsink *)buf;

	if (z->err)
		return;
	if (z->staged + len > STAGE) {
		zsink_deflate(z, z->stage, z->staged, Z_NO_FLUSH);
		z->staged = 0;
		if (len > STAGE) {
			zsink_deflate(z, data, len, Z_NO_FLUSH);
			return;
		}
	}
	memcpy(z->stage + z->staged, data, len);
	z->staged += len;
}

static int zsink_init(struct zsink *z)
{
	int rc;

	memset(z, 0, sizeof(*z));
	z->base.append = zsink_append;
	z->stage = malloc(STAGE);
	if (!z->stage)
		return -ENOMEM;
	rc = deflateInit2(&z->zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			  Z_DEFAULT_STRATEGY);
	if (rc != Z_OK)
		return rc == Z_MEM_ERROR ? -ENOMEM : -EIO;
	z->zs_live = true;
	return 0;
}

/* Flush and finish the gzip stream; the output moves to *out. */
static int zsink_finish(struct zsink *z, unsigned char **out, size_t *outlen)
{
	if (!z->err)
		zsink_deflate(z, z->stage, z->staged, Z_FINISH);
	z->staged = 0;
	if (z->err)
		return z->err;
	*out = z->out;
	*outlen = z->zs.total_out;
	z->out = NULL;
	return 0;
}

static void zsink_free(struct zsink *z)
{
	if (z->zs_live)
		deflateEnd(&z->zs);
	free(z->stage);
	free(z->out);
}

static void put_varint(struct zsink *z, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	while (v >= 0x80) {
		b[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b[n++] = (uint8_t)v;
	zsink_append(&z->base, n, b);
}

/* The number of the Profile's field called name (from the generated descriptor). */
static unsigned profile_field(const char *name)
{
	const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(
		&perftools__profiles__profile__descriptor, name);

	return f ? f->id : 0;
}

/* One element of a repeated message field of the Profile: tag, length, bytes. */
static void put_element(struct zsink *z, unsigned field, const ProtobufCMessage *m)
{
	put_varint(z, (uint64_t)field << 3 | PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
	put_varint(z, protobuf_c_message_get_packed_size(m));
	protobuf_c_message_pack_to_buffer(m, &z->base);
}

/* Location id with address addr and the lines of aggregate location al. */
static int put_location(struct build *b, struct zsink *z, unsigned field,
			const struct agg_location *al, uint64_t id, uint64_t addr)
{
	Perftools__Profiles__Location l;
	size_t nli = al->nlines && al->lines ? al->nlines : 1, cap = b->lines_cap;

	if (!reserve((void **)&b->lines, &cap, nli, sizeof(*b->lines)) ||
	    !reserve((void **)&b->linep, &b->lines_cap, nli, sizeof(*b->linep)))
		return -ENOMEM;
	perftools__profiles__location__init(&l);
	l.id = id;
	l.mapping_id = al->mapping_id;
	l.address = addr;
	l.n_line = nli;
	l.line = b->linep;
	for (size_t j = 0; j < nli; j++) {
		perftools__profiles__line__init(&b->lines[j]);
		if (al->nlines && al->lines) {
			b->lines[j].function_id = al->lines[j].function_id;
			b->lines[j].line = al->lines[j].line;
		} else {
			b->lines[j].function_id = al->function_id;
		}
		b->linep[j] = &b->lines[j];
	}
	put_element(z, field, &l.base);
	return 0;
}

/* Mappings (the main binary's first), functions and locations. */
static int put_tables(struct build *b, const struct aggregate *a, struct zsink *z, bool *failed)
{
	const struct agg_mapping *am;
	const struct agg_function *af;
	const struct agg_location *al;
	const struct agg_address *ad;
	size_t nm, nf, nl, na, i, first;
	unsigned f_map = profile_field("mapping"), f_fn = profile_field("function"),
		 f_loc = profile_field("location");
	int rc;

	am = aggregate_mappings(a, &nm);
	af = aggregate_functions(a, &nf);
	al = aggregate_locations(a, &nl);
	ad = aggregate_addresses(a, &na);
	first = main_mapping(am, nm);
	for (size_t k = 0; k < nm; k++) {
		Perftools__Profiles__Mapping m;

		/* pprof takes the first mapping listed for the main binary. */
		i = k == 0 ? first : k <= first ? k - 1 : k;
		perftools__profiles__mapping__init(&m);
		m.id = am[i].id;
		m.memory_start = am[i].start;
		m.memory_limit = am[i].limit;
		m.file_offset = am[i].offset;
		m.filename = str(b, am[i].file, failed);
		m.build_id = str(b, am[i].build_id, failed);
		/* Every location written has a function (unnamed code its
		 * "module+0xOFF"), so the mapping is symbolized: pprof re-symbolizes
		 * a mapping none of whose has_* flags is set, each location through
		 * its own DWARF reader, and that took minutes (issue 31). */
		m.has_functions = true;
		m.has_filenames = am[i].has_filenames;
		m.has_line_numbers = am[i].has_line_numbers;
		m.has_inline_frames = am[i].has_inline_frames;
		put_element(z, f_map, &m.base);
	}
	for (i = 0; i < nf; i++) {
		Perftools__Profiles__Function f;

		perftools__profiles__function__init(&f);
		f.id = af[i].id;
		f.name = str(b, af[i].name, failed);
		f.system_name = af[i].system_name ? str(b, af[i].system_name, failed) : f.name;
		f.filename = str(b, af[i].file, failed);
		f.start_line = af[i].start_line;
		put_element(z, f_fn, &f.base);
	}
	for (i = 0; i < nl; i++)
		if ((rc = put_location(b, z, f_loc, &al[i], al[i].id, al[i].address)))
			return rc;
	/* The variants: the same lines at another address of the line. */
	for (i = 0; i < b->nvariants; i++)
		if ((rc = put_location(b, z, f_loc, &al[b->variants[i].loc - 1], b->variants[i].id,
				       ad[b->variants[i].addr].address)))
			return rc;
	return z->err;
}

/*
 * Labels are shared per thread: labelp[LABEL_SLOTS * t ...] holds three
 * runs of its "tid" (number), "pid" (number) and "thread" / "comm" (names),
 * those it has; a sample points at one run (so `-tagfocus pid=1234` and
 * `-tagfocus comm=make` select processes as `thread=` selects threads).
 * The second and third runs add "switch" = "voluntary" / "preempted" for
 * off-CPU time (-e offcpu): the kernel's word on why the thread left the
 * CPU (PERF_RECORD_MISC_SWITCH_OUT_PREEMPT, shown as the "[preempted]"
 * leaf frame), so `-tagfocus switch=preempted` selects CPU contention and
 * `switch=voluntary` the waits. Every sample with off-CPU time carries it;
 * it speaks of that time (read it with -sample_index=offcpu): a stack can
 * also have on-CPU samples (a kernel pipe read's CPU time before it blocks).
 */
#define LABEL_RUN 5                     /* tid, pid, thread, comm, switch */
#define LABEL_SLOTS (3 * LABEL_RUN)

/* Which of a thread's label runs a sample takes: 0 none, 1 voluntary, 2 preempted. */
static int switch_run(const struct aggregate *a, const struct agg_stack *st, const int64_t *v,
		      int offcpu_col)
{
	const struct agg_location *locs;
	const struct agg_function *funcs;
	size_t nl, nf;

	if (offcpu_col < 0 || v[offcpu_col] <= 0 || !st->nlocs)
		return 0;
	locs = aggregate_locations(a, &nl);
	funcs = aggregate_functions(a, &nf);
	if (st->leaf - 1 < nl) {
		uint32_t fid = locs[st->leaf - 1].function_id;

		if (fid && fid - 1 < nf && funcs[fid - 1].name &&
		    !strcmp(funcs[fid - 1].name, "[preempted]"))
			return 2;
	}
	return 1;
}

/* The label runs of every thread (see LABEL_RUN). */
static int build_labels(struct build *b, const struct aggregate *a, bool *failed)
{
	const struct agg_thread *threads;
	size_t nt, i, j;
	int64_t key_thread, key_tid, key_threads, key_pid, key_comm, key_switch, val_switch[2];

	threads = aggregate_threads(a, &nt);
	b->labels = xcalloc(nt * LABEL_SLOTS, sizeof(*b->labels));
	b->labelp = xcalloc(nt * LABEL_SLOTS, sizeof(*b->labelp));
	b->nlab = xcalloc(nt, 1);
	if (!b->labels || !b->labelp || !b->nlab)
		return -ENOMEM;

	key_thread = str(b, "thread", failed);
	key_tid = str(b, "tid", failed);
	key_threads = str(b, "threads", failed);
	key_pid = str(b, "pid", failed);
	key_comm = str(b, "comm", failed);
	key_switch = str(b, "switch", failed);
	val_switch[0] = str(b, "voluntary", failed);
	val_switch[1] = str(b, "preempted", failed);
	for (i = 0; i < nt; i++) {
		Perftools__Profiles__Label *l = &b->labels[LABEL_SLOTS * i];
		size_t k = 0;

		perftools__profiles__label__init(&l[k]);
		l[k].key = key_tid;
		l[k++].num = threads[i].tid;
		if (threads[i].folded) {
			/* Exited threads folded into their name: how many, no tid. */
			l[k - 1].key = key_threads;
			l[k - 1].num = threads[i].nthreads;
		}
		if (threads[i].pid) {
			perftools__profiles__label__init(&l[k]);
			l[k].key = key_pid;
			l[k++].num = threads[i].pid;
		}
		if (threads[i].name[0]) {
			perftools__profiles__label__init(&l[k]);
			l[k].key = key_thread;
			l[k++].str = str(b, threads[i].name, failed);
		}
		if (threads[i].comm[0]) {
			perftools__profiles__label__init(&l[k]);
			l[k].key = key_comm;
			l[k++].str = str(b, threads[i].comm, failed);
		}
		for (size_t run = 1; run < 3; run++) {
			Perftools__Profiles__Label *sw = &l[LABEL_RUN * run + k];

			perftools__profiles__label__init(sw);
			sw->key = key_switch;
			sw->str = val_switch[run - 1];
		}
		for (size_t run = 0; run < 3; run++)
			for (j = 0; j < k + (run > 0); j++)
				b->labelp[LABEL_SLOTS * i + LABEL_RUN * run + j] =
					j < k ? &l[j] : &l[LABEL_RUN * run + k];
		b->nlab[i] = (uint8_t)k;
	}
	return 0;
}

/* One sample per leaf part, each packed as it is built. */
static int put_samples(struct build *b, const struct aggregate *a, struct zsink *z)
{
	const struct agg_info *info = aggregate_info_const(a);
	const struct agg_thread *threads;
	const struct agg_stack *stacks;
	const uint32_t *path;
	size_t ns, nt, i, j;
	size_t nev = info->nevents ? info->nevents : 1;
	uint64_t split_given = 0;
	unsigned f_sample = profile_field("sample");
	int offcpu_col = -1;
	int64_t v[1 + PMUTOP_MAX_EVENTS];

	stacks = aggregate_stacks(a, &ns);
	threads = aggregate_threads(a, &nt);
	/* Value columns: samples, then one per event (all of them, unless --dump-split). */
	for (size_t k = 0, col = 1; k < nev; k++) {
		if (b->only >= 0 && (size_t)b->only != k)
			continue;
		const char *name = info->nevents ? info->events[k].name : info->event;

		if (name && !strcmp(name, "offcpu"))
			offcpu_col = (int)col;
		col++;
	}
	for (size_t si = 0; si < ns && !z->err; si++) {
		const struct agg_stack *st = &stacks[si];
		const struct agg_thread *t = aggregate_thread(a, st->tid);
		const struct agg_leaf_part *parts;
		size_t np;

		if (!stack_wanted(b, a, st))
			continue;
		np = aggregate_leaf_iter_stack(b->parts, si, &parts);
		if (!reserve((void **)&b->ids, &b->ids_cap, st->nlocs, sizeof(*b->ids)) ||
		    !(path = aggregate_stack_path(a, st, &b->path)))
			return -ENOMEM;
		for (i = 0; i < np && !z->err; i++) {
			const struct agg_leaf_part *pt = &parts[i];
			bool last = i + 1 == np;
			Perftools__Profiles__Sample s;
			size_t col = 1;

			perftools__profiles__sample__init(&s);
			for (j = 0; j < st->nlocs; j++)
				b->ids[j] = j ? path[j] : part_leaf_id(b, a, pt);
			s.n_location_id = st->nlocs;
			s.location_id = b->ids;
			if (b->only >= 0) {
				/* --dump-split: this event's samples, shared out like the rest. */
				uint64_t evs = st->ev_samples[b->only];
				uint64_t share = st->samples ? evs * pt->samples / st->samples : 0;

				if (i == 0)
					split_given = 0;
				if (last)
					share = evs > split_given ? evs - split_given : 0;
				split_given += share;
				v[0] = (int64_t)share;
			} else {
				v[0] = (int64_t)pt->samples;
			}
			for (size_t k = 0; k < nev; k++) {
				if (b->only >= 0 && (size_t)b->only != k)
					continue;
				v[col++] = (int64_t)((double)pt->weights[k] * event_scale(info, k) + 0.5);
			}
			s.n_value = b->ntypes;
			s.value = v;
			if (t) {
				size_t ti = (size_t)(t - threads);
				int run = switch_run(a, st, v, offcpu_col);

				s.n_label = b->nlab[ti] + (run > 0);
				s.label = &b->labelp[LABEL_SLOTS * ti + LABEL_RUN * (size_t)run];
			}
			put_element(z, f_sample, &s.base);
		}
	}
	return z->err;
}

/* ---- encoding ------------------------------------------------------------ */

int pprof_encode(const struct aggregate *a, unsigned char **out, size_t *outlen)
{
	return pprof_encode_event(a, -1, out, outlen);
}

/* The profile of event (-1: all) and process pid (0: all). */
static int encode(const struct aggregate *a, int event, uint32_t pid, unsigned char **out,
		  size_t *outlen)
{
	struct build *b;
	struct zsink z;
	bool failed = false;
	int rc;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	rc = zsink_init(&z);
	if (rc)
		goto out;
	perftools__profiles__profile__init(&b->prof);
	b->only = event;
	b->pid = pid;
	str(b, "", &failed); /* string_table[0] must be "" */
	build_header(b, a, aggregate_info_const(a), &failed);
	rc = build_parts(b, a);
	if (!rc)
		rc = build_labels(b, a, &failed);
	if (!rc)
		rc = put_tables(b, a, &z, &failed);
	if (!rc)
		rc = put_samples(b, a, &z);
	if (!rc && failed)
		rc = -ENOMEM;
	if (rc)
		goto out;
	/* Last, the header and every string the elements interned. protobuf-c
	 * wants char **; it only reads the strings. */
	b->prof.n_string_table = b->st.n;
	b->prof.string_table = (char **)b->st.v;
	perftools__profiles__profile__pack_to_buffer(&b->prof, &z.base);
	rc = zsink_finish(&z, out, outlen);
out:
	zsink_free(&z);
	build_free(b);
	free(b);
	return rc;
}

int pprof_encode_event(const struct aggregate *a, int event, unsigned char **out, size_t *outlen)
{
	return encode(a, event, 0, out, outlen);
}

int pprof_encode_process(const struct aggregate *a, uint32_t pid, unsigned char **out,
			 size_t *outlen)
{
	return encode(a, -1, pid, out, outlen);
}

/* ---- files --------------------------------------------------------------- */

int pprof_check_writable(const char *path, char *err, size_t errlen)
{
	return atomic_write_check(path, "profile", err, errlen);
}

int pprof_write(const struct aggregate *a, const char *path, char *err, size_t errlen)
{
	return pprof_write_event(a, -1, path, err, errlen);
}

int pprof_write_event(const struct aggregate *a, int event, const char *path, char *err,
		      size_t errlen)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	int rc;

	rc = pprof_encode_event(a, event, &buf, &len);
	if (rc) {
		snprintf(err, errlen, "cannot write profile to '%s': encoding failed: %s",
			 path, strerror(-rc));
		return rc;
	}
	rc = atomic_write_file(path, buf, len, "profile", err, errlen);
	free(buf);
	return rc;
}
