/*
 * test_pprof_read.c - the pprof reader: an aggregate round-trips through
 * pprof_encode -> pprof_read_buf with the same stacks, threads, counts and
 * run facts; a Go-style profile (several sample types, default_sample_type,
 * sparse ids, inlined frames, locations without lines, no tid label) is
 * read the way pprof shows it; and corrupt input - every truncation, byte
 * flips, dangling ids, string indices out of the table, gzip bombs - is
 * rejected with a message and without crashing (run it under ASan:
 * `make check-asan`).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "pmutop/profile/aggregate.h"
#include "pmutop/target/maps.h"
#include "pmutop/profile/pprof.h"
#include "pmutop/profile/pprof_read.h"
#include "pmutop/symbols/symbolize.h"
#include "pmutop/unwind/unwind.h"

typedef Perftools__Profiles__Profile Profile;

static char err[512];

static struct mapping map_exe = {
	.id = 3, .key = 3, .start = 0x400000, .end = 0x480000, .pgoff = 0x1000,
	.exec = true, .path = "/usr/bin/app",
};
static struct mapping map_lib = {
	.id = 4, .key = 4, .start = 0x7f0000000000, .end = 0x7f0000100000, .pgoff = 0x2000,
	.exec = true, .path = "/usr/lib/libx.so",
};

/*
 * tid 100 "worker": hot <- libfn <- main   x2, 3000 events
 * tid 101 "io":     hot <- main           x1, 1000 events
 * tid 100 "worker": <unnamed> <- main      x1,  500 events
 * tid 102 (no name): (empty stack)         x1,  250 events
 */
static struct aggregate *sample_aggregate(void)
{
	struct frame a[3] = {
		{ .addr = 0x401000, .map = &map_exe, .func = "hot" },
		{ .addr = 0x7f0000000100, .map = &map_lib, .func = "libfn" },
		{ .addr = 0x402000, .map = &map_exe, .func = "main" },
	};
	struct frame b[2] = { a[0], a[2] };
	struct frame c[2] = { { .addr = 0x403000, .map = &map_exe, .func = NULL }, a[2] };
	struct aggregate *agg = aggregate_new();
	struct agg_info *info;

	assert_non_null(agg);
	assert_int_equal(aggregate_add(agg, 100, a, 3, 1500), 0);
	assert_int_equal(aggregate_add(agg, 100, a, 3, 1500), 0);
	assert_int_equal(aggregate_add(agg, 101, b, 2, 1000), 0);
	assert_int_equal(aggregate_add(agg, 100, c, 2, 500), 0);
	assert_int_equal(aggregate_add(agg, 102, NULL, 0, 250), 0);
	aggregate_set_thread_name(agg, 100, "worker");
	aggregate_set_thread_name(agg, 101, "io");
	info = aggregate_info(agg);
	info->event = "cycles";
	info->event_unit = "count";
	info->period = 1500;
	info->start_ns = 1700000000123456789ULL;
	info->duration_ns = 2500000000ULL;
	info->lost = 7;
	info->throttled = 2;
	info->outcomes[UNWIND_ROOT] = 4;
	return agg;
}

static int cmp_str(const void *p, const void *q)
{
	return strcmp(*(char *const *)p, *(char *const *)q);
}

/* "tid|samples|weight|leaf;...;root" per stack, sorted, one per line. */
static char *describe_sorted(const struct aggregate *a)
{
	const struct agg_function *f;
	const struct agg_location *l;
	const struct agg_stack *s;
	size_t nf, nl, ns, i, j, n = 0;
	char **lines, *out;
	size_t total = 1;
	struct agg_path path = { 0 };

	f = aggregate_functions(a, &nf);
	l = aggregate_locations(a, &nl);
	s = aggregate_stacks(a, &ns);
	lines = calloc(ns + 1, sizeof(*lines));
	assert_non_null(lines);
	for (i = 0; i < ns; i++) {
		char buf[1024];
		int o = snprintf(buf, sizeof(buf), "%u|%llu|%llu|", s[i].tid,
				 (unsigned long long)s[i].samples, (unsigned long long)s[i].weight);
		const uint32_t *p = aggregate_stack_path(a, &s[i], &path);

		assert_non_null(p);
		for (j = 0; j < s[i].nlocs; j++) {
			const struct agg_location *loc = &l[p[j] - 1];

			o += snprintf(buf + o, sizeof(buf) - (size_t)o, "%s%s", j ? ";" : "",
				      f[loc->function_id - 1].name);
		}
		lines[n++] = strdup(buf);
	}
	agg_path_free(&path);
	qsort(lines, n, sizeof(*lines), cmp_str);
	for (i = 0; i < n; i++)
		total += strlen(lines[i]) + 1;
	out = calloc(total, 1);
	assert_non_null(out);
	for (i = 0; i < n; i++) {
		strcat(out, lines[i]);
		strcat(out, "\n");
		free(lines[i]);
	}
	free(lines);
	return out;
}

static void encode(const struct aggregate *a, unsigned char **gz, size_t *len)
{
	assert_int_equal(pprof_encode(a, gz, len), 0);
}

/* gunzip with zlib (what the writer made) into a malloc'd buffer. */
static unsigned char *gunzip(const unsigned char *in, size_t len, size_t *outlen)
{
	size_t cap = 1 << 20;
	unsigned char *out = malloc(cap);
	z_stream zs;

	memset(&zs, 0, sizeof(zs));
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (unsigned char *)in;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	*outlen = cap - zs.avail_out;
	inflateEnd(&zs);
	return out;
}

static unsigned char *pack(const Profile *p, size_t *len)
{
	unsigned char *buf;

	*len = perftools__profiles__profile__get_packed_size(p);
	buf = malloc(*len ? *len : 1);
	assert_non_null(buf);
	perftools__profiles__profile__pack(p, buf);
	return buf;
}

static int read_buf(const void *buf, size_t len, struct aggregate **a)
{
	err[0] = 0;
	return pprof_read_buf(buf, len, a, err, sizeof(err));
}

/* ---- round trip ---------------------------------------------------------------- */

static void round_trip(void **state)
{
	struct aggregate *a = sample_aggregate(), *b = NULL;
	const struct agg_info *ia, *ib;
	const struct agg_mapping *m;
	const struct agg_thread *t;
	unsigned char *gz;
	size_t len, n, i;
	char *da, *db;
	bool exe = false, lib = false;

	(void)state;
	encode(a, &gz, &len);
	assert_int_equal(read_buf(gz, len, &b), 0);
	assert_non_null(b);

	da = describe_sorted(a);
	db = describe_sorted(b);
	assert_string_equal(da, db);
	assert_non_null(strstr(db, "100|2|3000|hot;libfn;main\n"));
	assert_non_null(strstr(db, "102|1|250|\n"));
	assert_non_null(strstr(db, "100|1|500|app+0x4000;main\n"));

	ia = aggregate_info_const(a);
	ib = aggregate_info_const(b);
	assert_string_equal(ib->event, "cycles");
	assert_string_equal(ib->event_unit, "count");
	assert_int_equal(ib->period, ia->period);
	assert_int_equal(ib->start_ns, ia->start_ns);
	assert_int_equal(ib->duration_ns, ia->duration_ns);
	assert_int_equal(ib->samples, ia->samples);
	assert_int_equal(ib->samples, 5);
	assert_int_equal(ib->lost, 7);
	assert_int_equal(ib->throttled, 2);
	assert_int_equal(ib->outcomes[UNWIND_ROOT], 4);

	t = aggregate_thread(b, 100);
	assert_non_null(t);
	assert_string_equal(t->name, "worker");
	assert_int_equal(t->samples, 3);
	assert_string_equal(aggregate_thread(b, 101)->name, "io");
	assert_string_equal(aggregate_thread(b, 102)->name, "");
	aggregate_threads(b, &n);
	assert_int_equal(n, 3);

	m = aggregate_mappings(b, &n);
	assert_int_equal(n, 2);
	for (i = 0; i < n; i++) {
		if (!strcmp(m[i].file, "/usr/bin/app")) {
			exe = true;
			assert_int_equal(m[i].start, 0x400000);
			assert_int_equal(m[i].limit, 0x480000);
			assert_int_equal(m[i].offset, 0x1000);
			/* One location had no symbol, but the file marks every mapping
			 * symbolized (issue 31: pprof must not symbolize again). */
			assert_true(m[i].has_functions);
		} else if (!strcmp(m[i].file, "/usr/lib/libx.so")) {
			lib = true;
			assert_true(m[i].has_functions);
		}
	}
	assert_true(exe && lib);

	/* Encoding what was read gives the same profile again. */
	{
		struct aggregate *c = NULL;
		unsigned char *gz2;
		size_t len2;
		char *dc;

		encode(b, &gz2, &len2);
		assert_int_equal(read_buf(gz2, len2, &c), 0);
		dc = describe_sorted(c);
		assert_string_equal(da, dc);
		free(dc);
		free(gz2);
		aggregate_free(c);
	}
	free(da);
	free(db);
	free(gz);
	aggregate_free(a);
	aggregate_free(b);
}

/*
 * Two events on one stack: pprof keeps one samples count per stack, and the
 * reader shares it out again by each event's weight per sample (the
 * writer's comment), instead of giving every event the whole count.
 */
static void multi_event_samples_shared(void **state)
{
	struct frame f[2] = {
		{ .addr = 0x401000, .map = &map_exe, .func = "hot" },
		{ .addr = 0x402000, .map = &map_exe, .func = "main" },
	};
	struct frame g[1] = { { .addr = 0x402000, .map = &map_exe, .func = "main" } };
	struct aggregate *a = aggregate_new(), *b = NULL;
	const struct agg_stack *st;
	unsigned char *gz;
	size_t len, n, i;
	unsigned found = 0;

	(void)state;
	assert_non_null(a);
	assert_int_equal(aggregate_set_event_k(a, 0, "task-clock", "nanoseconds", 1000), 0);
	assert_int_equal(aggregate_set_event_k(a, 1, "cpu-clock", "nanoseconds", 4000), 0);
	/* hot<-main: 30 task-clock samples and 10 cpu-clock samples (40 in all);
	 * main alone: 5 task-clock samples only. */
	for (i = 0; i < 30; i++)
		assert_int_equal(aggregate_add_event(a, 7, f, 2, 0, 1000), 0);
	for (i = 0; i < 10; i++)
		assert_int_equal(aggregate_add_event(a, 7, f, 2, 1, 4000), 0);
	for (i = 0; i < 5; i++)
		assert_int_equal(aggregate_add_event(a, 7, g, 1, 0, 1000), 0);
	encode(a, &gz, &len);
	assert_int_equal(pprof_read_buf(gz, len, &b, err, sizeof(err)), 0);
	st = aggregate_stacks(b, &n);
	for (i = 0; i < n; i++) {
		if (st[i].nlocs == 2) {
			assert_int_equal(st[i].samples, 40);
			assert_int_equal(st[i].ev_samples[0], 30);
			assert_int_equal(st[i].ev_samples[1], 10);
			found++;
		} else if (st[i].nlocs == 1) {
			assert_int_equal(st[i].samples, 5);
			assert_int_equal(st[i].ev_samples[0], 5);
			assert_int_equal(st[i].ev_samples[1], 0);
			found++;
		}
	}
	assert_int_equal(found, 2);
	aggregate_free(b);
	aggregate_free(a);
	free(gz);
}

static void uncompressed_and_files(void **state)
{
	struct aggregate *a = sample_aggregate(), *b = NULL;
	char dir[] = "/tmp/pmutop-test-read.XXXXXX", path[300], *da, *db;
	unsigned char *gz, *raw;
	size_t len, rawlen;
	FILE *f;

	(void)state;
	encode(a, &gz, &len);
	raw = gunzip(gz, len, &rawlen);
	assert_int_equal(read_buf(raw, rawlen, &b), 0); /* pprof reads plain protobuf too */
	da = describe_sorted(a);
	db = describe_sorted(b);
	assert_string_equal(da, db);
	free(db);
	aggregate_free(b);

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/p.pb.gz", dir);
	assert_int_equal(pprof_write(a, path, err, sizeof(err)), 0);
	assert_int_equal(pprof_read_file(path, &b, err, sizeof(err)), 0);
	db = describe_sorted(b);
	assert_string_equal(da, db);
	free(db);
	aggregate_free(b);

	/* Errors name the file. */
	assert_int_equal(pprof_read_file(dir, &b, err, sizeof(err)), -EISDIR);
	assert_null(b);
	assert_non_null(strstr(err, dir));
	snprintf(path, sizeof(path), "%s/missing.pb.gz", dir);
	assert_int_equal(pprof_read_file(path, &b, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "missing.pb.gz"));
	snprintf(path, sizeof(path), "%s/empty", dir);
	f = fopen(path, "w");
	fclose(f);
	assert_int_equal(pprof_read_file(path, &b, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "empty"));
	unlink(path);
	snprintf(path, sizeof(path), "%s/text", dir);
	f = fopen(path, "w");
	fputs("this is not a profile\n", f);
	fclose(f);
	assert_int_equal(pprof_read_file(path, &b, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a pprof profile"));
	unlink(path);
	snprintf(path, sizeof(path), "%s/p.pb.gz", dir);
	unlink(path);
	rmdir(dir);

	free(da);
	free(raw);
	free(gz);
	aggregate_free(a);
}

/* ---- hand-built profiles ------------------------------------------------------------- */

/*
 * A Go-style heap profile: four sample types with default "alloc_space",
 * sparse ids, an inlined location, a location without lines, no labels.
 */
struct go_profile {
	Profile p;
	Perftools__Profiles__ValueType types[4], *typep[4];
	Perftools__Profiles__Mapping map, *mapp[1];
	Perftools__Profiles__Function fn[3], *fnp[3];
	Perftools__Profiles__Line lines[3], *linep[3];
	Perftools__Profiles__Location loc[3], *locp[3];
	Perftools__Profiles__Sample smp[3], *smpp[3];
	Perftools__Profiles__Label lab, *labp[1];
	uint64_t ids0[2], ids1[3], ids2[1];
	int64_t v0[4], v1[4], v2[4];
	char *strings[20];
};

enum {
	S_EMPTY, S_ALLOC_OBJ, S_COUNT, S_ALLOC_SPACE, S_BYTES, S_INUSE_OBJ, S_INUSE_SPACE,
	S_MALLOC, S_INLINED, S_MAIN, S_BIN, S_GOFILE, S_BUILDID, S_KEY, S_VAL, S_N,
};

static void go_profile(struct go_profile *g)
{
	static const char *strs[S_N] = {
		"", "alloc_objects", "count", "alloc_space", "bytes", "inuse_objects",
		"inuse_space", "runtime.malg", "main.inlined", "main.main", "/usr/bin/gobin",
		"/src/main.go", "abcdef", "goroutine", "7",
	};
	size_t i;

	memset(g, 0, sizeof(*g));
	perftools__profiles__profile__init(&g->p);
	for (i = 0; i < S_N; i++)
		g->strings[i] = (char *)strs[i];
	g->p.string_table = g->strings;
	g->p.n_string_table = S_N;
	for (i = 0; i < 4; i++) {
		perftools__profiles__value_type__init(&g->types[i]);
		g->typep[i] = &g->types[i];
	}
	g->types[0].type = S_ALLOC_OBJ, g->types[0].unit = S_COUNT;
	g->types[1].type = S_ALLOC_SPACE, g->types[1].unit = S_BYTES;
	g->types[2].type = S_INUSE_OBJ, g->types[2].unit = S_COUNT;
	g->types[3].type = S_INUSE_SPACE, g->types[3].unit = S_BYTES;
	g->p.sample_type = g->typep;
	g->p.n_sample_type = 4;
	g->p.default_sample_type = S_ALLOC_SPACE;
	g->p.period = 524288;

	perftools__profiles__mapping__init(&g->map);
	g->map.id = 9;
	g->map.memory_start = 0x400000;
	g->map.memory_limit = 0x800000;
	g->map.filename = S_BIN;
	g->map.build_id = S_BUILDID;
	g->mapp[0] = &g->map;
	g->p.mapping = g->mapp;
	g->p.n_mapping = 1;

	for (i = 0; i < 3; i++) {
		perftools__profiles__function__init(&g->fn[i]);
		g->fnp[i] = &g->fn[i];
		g->fn[i].filename = S_GOFILE;
		perftools__profiles__line__init(&g->lines[i]);
		g->linep[i] = &g->lines[i];
		perftools__profiles__location__init(&g->loc[i]);
		g->locp[i] = &g->loc[i];
		perftools__profiles__sample__init(&g->smp[i]);
		g->smpp[i] = &g->smp[i];
	}
	g->fn[0].id = 50, g->fn[0].name = S_MALLOC;
	g->fn[1].id = 20, g->fn[1].name = S_INLINED;
	g->fn[2].id = 30, g->fn[2].name = S_MAIN;
	g->p.function = g->fnp;
	g->p.n_function = 3;

	/* loc 1000: runtime.malg; loc 2000: main.inlined inlined into main.main */
	g->lines[0].function_id = 50;
	g->loc[0].id = 1000, g->loc[0].mapping_id = 9, g->loc[0].address = 0x401000;
	g->loc[0].n_line = 1, g->loc[0].line = &g->linep[0];
	g->lines[1].function_id = 20;
	g->lines[2].function_id = 30;
	g->loc[1].id = 2000, g->loc[1].mapping_id = 9, g->loc[1].address = 0x402000;
	g->loc[1].n_line = 2, g->loc[1].line = &g->linep[1];
	/* loc 3000: no lines (unsymbolized) */
	g->loc[2].id = 3000, g->loc[2].mapping_id = 9, g->loc[2].address = 0x403010;
	g->p.location = g->locp;
	g->p.n_location = 3;

	g->ids0[0] = 1000, g->ids0[1] = 2000;
	g->smp[0].location_id = g->ids0, g->smp[0].n_location_id = 2;
	g->v0[0] = 3, g->v0[1] = 3000, g->v0[2] = 1, g->v0[3] = 1000;
	g->smp[0].value = g->v0, g->smp[0].n_value = 4;
	perftools__profiles__label__init(&g->lab);
	g->lab.key = S_KEY, g->lab.str = S_VAL;
	g->labp[0] = &g->lab;
	g->smp[0].label = g->labp, g->smp[0].n_label = 1;

	g->ids1[0] = 3000, g->ids1[1] = 2000, g->ids1[2] = 1000;
	g->smp[1].location_id = g->ids1, g->smp[1].n_location_id = 3;
	g->v1[0] = 1, g->v1[1] = 700, g->v1[2] = 0, g->v1[3] = 0;
	g->smp[1].value = g->v1, g->smp[1].n_value = 4;

	/* Nothing allocated: skipped. */
	g->ids2[0] = 2000;
	g->smp[2].location_id = g->ids2, g->smp[2].n_location_id = 1;
	g->smp[2].value = g->v2, g->smp[2].n_value = 4;
	g->p.sample = g->smpp;
	g->p.n_sample = 3;
}

static void go_style_profile(void **state)
{
	struct go_profile g;
	struct aggregate *a = NULL;
	const struct agg_info *info;
	unsigned char *buf;
	size_t len;
	char *d;

	(void)state;
	go_profile(&g);
	buf = pack(&g.p, &len);
	assert_int_equal(read_buf(buf, len, &a), 0);
	info = aggregate_info_const(a);
	assert_string_equal(info->event, "alloc_space");
	assert_string_equal(info->event_unit, "bytes");
	assert_int_equal(info->period, 524288);
	/* No "samples" type: each sample message counts 1; the zero one is skipped. */
	assert_int_equal(info->samples, 2);
	d = describe_sorted(a);
	/* Inlined frames expanded, innermost first; no tid label: thread 0. */
	assert_string_equal(d,
			    "0|1|3000|runtime.malg;main.inlined;main.main\n"
			    "0|1|700|gobin+0x3010;main.inlined;main.main;runtime.malg\n");
	free(d);
	/* Every type is an event, the default first, then the others in order. */
	assert_int_equal(info->nevents, 4);
	assert_string_equal(info->events[0].name, "alloc_space");
	assert_string_equal(info->events[1].name, "alloc_objects");
	assert_string_equal(info->events[2].name, "inuse_objects");
	assert_string_equal(info->events[3].name, "inuse_space");
	assert_string_equal(info->events[3].unit, "bytes");
	assert_int_equal(info->events[0].period, 524288);  /* the period type's */
	assert_int_equal(info->events[1].period, 0);
	aggregate_free(a);
	free(buf);

	/* Without default_sample_type: the last type (inuse_space), like pprof.
	 * A message with nothing in use is still kept for its allocations. */
	g.p.default_sample_type = 0;
	buf = pack(&g.p, &len);
	assert_int_equal(read_buf(buf, len, &a), 0);
	assert_string_equal(aggregate_info_const(a)->event, "inuse_space");
	d = describe_sorted(a);
	assert_string_equal(d, "0|1|0|gobin+0x3010;main.inlined;main.main;runtime.malg\n"
			       "0|1|1000|runtime.malg;main.inlined;main.main\n");
	free(d);
	aggregate_free(a);
	free(buf);

	/* A default naming no type falls back to the last one too. */
	g.p.default_sample_type = S_MAIN;
	buf = pack(&g.p, &len);
	assert_int_equal(read_buf(buf, len, &a), 0);
	assert_string_equal(aggregate_info_const(a)->event, "inuse_space");
	aggregate_free(a);
	free(buf);
}

/* Each broken variant must be rejected with a message naming the problem. */
static void expect_rejected(struct go_profile *g, const char *what)
{
	struct aggregate *a = (struct aggregate *)1;
	unsigned char *buf;
	size_t len;

	buf = pack(&g->p, &len);
	assert_int_equal(read_buf(buf, len, &a), -EINVAL);
	assert_null(a);
	if (!strstr(err, what))
		fail_msg("error \"%s\" does not mention \"%s\"", err, what);
	free(buf);
}

static void dangling_references_rejected(void **state)
{
	struct go_profile g;

	(void)state;
	go_profile(&g);
	g.fn[1].name = S_N;  /* one past the string table */
	expect_rejected(&g, "string index");

	go_profile(&g);
	g.fn[0].filename = -1;
	expect_rejected(&g, "string index");

	go_profile(&g);
	g.map.build_id = 1 << 30;
	expect_rejected(&g, "string index");

	go_profile(&g);
	g.lab.str = 999;
	expect_rejected(&g, "label");

	go_profile(&g);
	g.lines[2].function_id = 31;
	expect_rejected(&g, "function 31");

	go_profile(&g);
	g.loc[0].mapping_id = 8;
	expect_rejected(&g, "mapping 8");

	go_profile(&g);
	g.ids1[1] = 2001;
	expect_rejected(&g, "location 2001");

	go_profile(&g);
	g.loc[2].id = 1000;
	expect_rejected(&g, "id 1000");

	go_profile(&g);
	g.fn[2].id = 0;
	expect_rejected(&g, "id 0");

	go_profile(&g);
	g.smp[1].n_value = 3;
	expect_rejected(&g, "3 values");

	go_profile(&g);
	g.p.n_sample_type = 0;
	expect_rejected(&g, "sample types");

	go_profile(&g);
	g.types[2].unit = 77;
	expect_rejected(&g, "string index");

	go_profile(&g);
	g.p.default_sample_type = 100;
	expect_rejected(&g, "string index");

	go_profile(&g);
	g.strings[0] = "x";
	expect_rejected(&g, "string table");

	go_profile(&g);
	g.p.n_string_table = 0;
	expect_rejected(&g, "string table");
}

static void garbage_rejected(void **state)
{
	static const unsigned char gzip_header_only[] = { 0x1f, 0x8b, 0x08, 0x00 };
	static const char text[] = "hello, I am not a profile";
	struct aggregate *a = NULL;

	(void)state;
	assert_int_equal(read_buf("", 0, &a), -EINVAL);
	assert_null(a);
	assert_int_equal(read_buf(text, sizeof(text) - 1, &a), -EINVAL);
	assert_non_null(strstr(err, "not a pprof profile"));
	assert_int_equal(read_buf(gzip_header_only, sizeof(gzip_header_only), &a), -EINVAL);
	assert_non_null(strstr(err, "gzip"));
	assert_null(a);
}

static void every_truncation_rejected(void **state)
{
	struct aggregate *a = sample_aggregate(), *b;
	unsigned char *gz, *raw;
	size_t len, rawlen, cut;
	int rc;

	(void)state;
	encode(a, &gz, &len);
	/* Any prefix of the gzip file misses its end: always an error. */
	for (cut = 0; cut < len; cut++) {
		b = NULL;
		assert_int_equal(read_buf(gz, cut, &b), -EINVAL);
		assert_null(b);
		assert_true(err[0]);
	}
	/* A prefix of the message may be a valid (smaller) message: no crash either way. */
	raw = gunzip(gz, len, &rawlen);
	for (cut = 0; cut < rawlen; cut++) {
		b = NULL;
		rc = read_buf(raw, cut, &b);
		assert_true(rc == 0 || rc == -EINVAL);
		assert_true(rc == 0 ? b != NULL : b == NULL);
		aggregate_free(b);
	}
	free(raw);
	free(gz);
	aggregate_free(a);
}

/* xorshift: a fixed sequence, so failures reproduce. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void byte_flips_never_crash(void **state)
{
	struct aggregate *a = sample_aggregate(), *b;
	struct go_profile g;
	unsigned char *gz, *raw, *bufs[2];
	size_t len, rawlen, lens[2], k, i;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	int rc, ok = 0, bad = 0;

	(void)state;
	encode(a, &gz, &len);
	raw = gunzip(gz, len, &rawlen);
	go_profile(&g);
	bufs[0] = raw;
	lens[0] = rawlen;
	bufs[1] = pack(&g.p, &lens[1]);
	for (k = 0; k < 2; k++) {
		unsigned char *m = malloc(lens[k]);

		for (i = 0; i < 3000; i++) {
			unsigned flips = 1 + (unsigned)(rnd(&seed) % 4), f;

			memcpy(m, bufs[k], lens[k]);
			for (f = 0; f < flips; f++)
				m[rnd(&seed) % lens[k]] ^= (unsigned char)(1u << (rnd(&seed) % 8));
			b = NULL;
			rc = read_buf(m, lens[k], &b);
			assert_true(rc == 0 || rc == -EINVAL);
			if (rc == 0) {
				/* Whatever was accepted is consistent enough to encode again. */
				unsigned char *again;
				size_t alen;

				assert_int_equal(pprof_encode(b, &again, &alen), 0);
				free(again);
				ok++;
			} else {
				bad++;
			}
			aggregate_free(b);
		}
		free(m);
	}
	/* Both outcomes happen: the test exercises the checks, not only the decoder. */
	assert_true(ok > 0);
	assert_true(bad > 0);
	/* Flips in the compressed file: the CRC or the inflater catches them. */
	for (i = 0; i < 500; i++) {
		unsigned char *m = malloc(len);

		memcpy(m, gz, len);
		m[2 + rnd(&seed) % (len - 2)] ^= (unsigned char)(1u << (rnd(&seed) % 8));
		b = NULL;
		rc = read_buf(m, len, &b);
		assert_true(rc == 0 || rc == -EINVAL);
		aggregate_free(b);
		free(m);
	}
	free(bufs[1]);
	free(raw);
	free(gz);
	aggregate_free(a);
}

static void gzip_bomb_rejected(void **state)
{
	/*
	 * 40 MiB of zeros compress to ~40 KiB; with a 16 MiB cap the reader
	 * stops there (the default cap, PPROF_READ_MAX_BYTES, works the same).
	 */
	size_t total = (size_t)40 << 20, cap = 1 << 20, used = 0;
	unsigned char *zeros = calloc(total, 1), *out = malloc(cap);
	struct aggregate *a = NULL;
	z_stream zs;

	(void)state;
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = zeros;
	zs.avail_in = (uInt)total;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	used = cap - zs.avail_out;
	deflateEnd(&zs);
	err[0] = 0;
	assert_int_equal(pprof_read_buf_max(out, used, (size_t)16 << 20, &a, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "more than 16 MiB"));
	assert_null(a);
	/* The input itself over the cap. */
	assert_int_equal(pprof_read_buf_max(zeros, (size_t)17 << 20, (size_t)16 << 20, &a, err,
					    sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "larger than 16 MiB"));
	/* Under the default cap the same bytes are only a bad profile. */
	assert_int_equal(read_buf(out, used, &a), -EINVAL);
	assert_null(a);
	free(out);
	free(zeros);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(uncompressed_and_files),
		cmocka_unit_test(multi_event_samples_shared),
		cmocka_unit_test(go_style_profile),
		cmocka_unit_test(dangling_references_rejected),
		cmocka_unit_test(garbage_rejected),
		cmocka_unit_test(every_truncation_rejected),
		cmocka_unit_test(byte_flips_never_crash),
		cmocka_unit_test(gzip_bomb_rejected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
