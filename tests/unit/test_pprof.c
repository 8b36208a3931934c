/*
 * test_pprof.c - unit tests of the pprof writer: the encoded profile is
 * gunzipped and decoded with protobuf-c and checked field by field; the
 * file writer is checked for atomicity (no temp files left behind, target
 * untouched on error) and the pre-flight check for its error messages.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "pmutop/profile/aggregate.h"
#include "pmutop/target/maps.h"
#include "pmutop/profile/pprof.h"
#include "pmutop/symbols/symbolize.h"
#include "pmutop/unwind/unwind.h"

typedef Perftools__Profiles__Profile Profile;

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
 * tid 101 (no name): hot <- main           x1, 1000 events
 * tid 100 "worker": <unnamed> <- main      x1,  500 events
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
	assert_int_equal(aggregate_add(agg, 100, a, 3, 1000), 0);
	assert_int_equal(aggregate_add(agg, 100, a, 3, 2000), 0);
	assert_int_equal(aggregate_add(agg, 101, b, 2, 1000), 0);
	assert_int_equal(aggregate_add(agg, 100, c, 2, 500), 0);
	aggregate_set_thread_name(agg, 100, "worker");
	info = aggregate_info(agg);
	info->event = "cycles";
	info->event_unit = "count";
	info->period = 1000;
	info->start_ns = 1700000000123456789ULL;
	info->duration_ns = 2500000000ULL;
	info->lost = 3;
	info->throttled = 1;
	info->outcomes[UNWIND_ROOT] = 3;
	info->outcomes[UNWIND_STACK_CUT] = 1;
	return agg;
}

/* gunzip (gzip framing only) and unpack. */
static Profile *decode(const unsigned char *gz, size_t len)
{
	size_t cap = 64 << 20;
	unsigned char *raw = malloc(cap);
	z_stream zs;
	Profile *p;

	assert_non_null(raw);
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (unsigned char *)gz;
	zs.avail_in = (unsigned)len;
	zs.next_out = raw;
	zs.avail_out = (unsigned)cap;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	assert_int_equal(zs.avail_in, 0);
	p = perftools__profiles__profile__unpack(NULL, zs.total_out, raw);
	inflateEnd(&zs);
	free(raw);
	assert_non_null(p);
	return p;
}

static Profile *decode_file(const char *path)
{
	unsigned char *buf = malloc(1 << 20);
	Profile *p;
	size_t n;
	FILE *f;

	assert_non_null(buf);
	f = fopen(path, "rb");
	assert_non_null(f);
	n = fread(buf, 1, 1 << 20, f);
	fclose(f);
	assert_true(n > 20);
	assert_int_equal(buf[0], 0x1f); /* gzip magic */
	assert_int_equal(buf[1], 0x8b);
	p = decode(buf, n);
	free(buf);
	return p;
}

static const char *S(const Profile *p, int64_t i)
{
	assert_in_range(i, 0, p->n_string_table - 1);
	return p->string_table[i];
}

static const char *label_str(const Profile *p, const Perftools__Profiles__Sample *s,
			     const char *key)
{
	size_t i;

	for (i = 0; i < s->n_label; i++)
		if (!strcmp(S(p, s->label[i]->key), key) && s->label[i]->str)
			return S(p, s->label[i]->str);
	return NULL;
}

static int64_t label_num(const Profile *p, const Perftools__Profiles__Sample *s,
			 const char *key)
{
	size_t i;

	for (i = 0; i < s->n_label; i++)
		if (!strcmp(S(p, s->label[i]->key), key))
			return s->label[i]->num;
	return -1;
}

static const Perftools__Profiles__Location *loc(const Profile *p, uint64_t id)
{
	assert_in_range(id, 1, p->n_location);
	assert_int_equal(p->location[id - 1]->id, id);
	return p->location[id - 1];
}

static const Perftools__Profiles__Function *func(const Profile *p, uint64_t id)
{
	assert_in_range(id, 1, p->n_function);
	assert_int_equal(p->function[id - 1]->id, id);
	return p->function[id - 1];
}

/* Mappings are not necessarily listed in id order (main binary first). */
static const Perftools__Profiles__Mapping *mapping(const Profile *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->n_mapping; i++)
		if (p->mapping[i]->id == id)
			return p->mapping[i];
	fail_msg("no mapping %" PRIu64, id);
	return NULL;
}

/* "hot;libfn;main" - function names of a sample, leaf first. */
static void stack_names(const Profile *p, const Perftools__Profiles__Sample *s,
			char *buf, size_t len)
{
	size_t i, used = 0;

	buf[0] = 0;
	for (i = 0; i < s->n_location_id; i++) {
		const Perftools__Profiles__Location *l = loc(p, s->location_id[i]);

		assert_int_equal(l->n_line, 1);
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ";" : "",
					 S(p, func(p, l->line[0]->function_id)->name));
	}
}

/* Checks everything sample_aggregate() put in. */
static void check_profile(const Profile *p)
{
	char names[256], expect[256], fallback[64];
	struct frame unnamed = { .addr = 0x403000, .map = &map_exe };
	bool seen[3] = { false, false, false };
	size_t i, j, bytes = 0, nodes = 0, stacks = 0;

	assert_true(p->n_string_table > 0);
	assert_string_equal(p->string_table[0], "");
	for (i = 1; i < p->n_string_table; i++)
		for (j = i + 1; j < p->n_string_table; j++)
			assert_string_not_equal(p->string_table[i], p->string_table[j]);

	assert_int_equal(p->n_sample_type, 2);
	assert_string_equal(S(p, p->sample_type[0]->type), "samples");
	assert_string_equal(S(p, p->sample_type[0]->unit), "count");
	assert_string_equal(S(p, p->sample_type[1]->type), "cycles");
	assert_string_equal(S(p, p->sample_type[1]->unit), "count");
	assert_non_null(p->period_type);
	assert_string_equal(S(p, p->period_type->type), "cycles");
	assert_string_equal(S(p, p->period_type->unit), "count");
	assert_int_equal(p->period, 1000);
	assert_int_equal(p->time_nanos, 1700000000123456789LL);
	assert_int_equal(p->duration_nanos, 2500000000LL);
	assert_string_equal(S(p, p->default_sample_type), "cycles");

	assert_int_equal(p->n_comment, 4 + UNWIND_NOUTCOMES);
	assert_string_equal(S(p, p->comment[0]), "pmutop: samples=4 lost=3 throttled=1");
	/* The aggregate's size: bytes and tree nodes, which depend on the tables. */
	assert_true(sscanf(S(p, p->comment[1]), "pmutop: max_memory=268435456 bytes=%zu nodes=%zu "
			   "stacks=%zu", &bytes, &nodes, &stacks) == 3);
	assert_int_equal(stacks, p->n_sample);
	assert_true(bytes > 0 && nodes > 1);
	assert_non_null(strstr(S(p, p->comment[1]),
			       " pruned_frames=0 pruned_samples=0 threads_folded=0 "
			       "leaf_addresses_dropped=0 modules_evicted=0 modules_parsed_max=0"));
	/* Without a session's run counts, the profile's own are the run's. */
	assert_string_equal(S(p, p->comment[2]), "pmutop: since start: run_samples=4 run_lost=3 "
			    "run_throttled=1 run_pruned_frames=0 window=0");
	/* The file with code pmutop could not name, and how to have pprof try (issue 31). */
	assert_string_equal(S(p, p->comment[3]), "pmutop: code without a name (module+0xOFFSET, "
			    "address and build id kept; go tool pprof -symbolize=force retries) in: app");
	for (i = 0; i < UNWIND_NOUTCOMES; i++) {
		snprintf(expect, sizeof(expect), "unwind %s: %d",
			 unwind_outcome_name((enum unwind_outcome)i),
			 i == UNWIND_ROOT ? 3 : i == UNWIND_STACK_CUT ? 1 : 0);
		assert_string_equal(S(p, p->comment[4 + i]), expect);
	}

	symbolize_fallback_name(&unnamed, fallback, sizeof(fallback));
	assert_int_equal(p->n_sample, 3);
	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		int64_t tid = label_num(p, s, "tid");
		const char *thread = label_str(p, s, "thread");

		assert_int_equal(s->n_value, 2);
		stack_names(p, s, names, sizeof(names));
		if (!strcmp(names, "hot;libfn;main")) {
			seen[0] = true;
			assert_int_equal(tid, 100);
			assert_non_null(thread);
			assert_string_equal(thread, "worker");
			assert_int_equal(s->value[0], 2);
			assert_int_equal(s->value[1], 3000);
		} else if (!strcmp(names, "hot;main")) {
			seen[1] = true;
			assert_int_equal(tid, 101);
			assert_null(thread);
			assert_int_equal(s->value[0], 1);
			assert_int_equal(s->value[1], 1000);
		} else {
			snprintf(expect, sizeof(expect), "%s;main", fallback);
			assert_string_equal(names, expect);
			seen[2] = true;
			assert_int_equal(tid, 100);
			assert_string_equal(thread, "worker");
			assert_int_equal(s->value[0], 1);
			assert_int_equal(s->value[1], 500);
		}
	}
	assert_true(seen[0] && seen[1] && seen[2]);

	assert_int_equal(p->n_mapping, 2);
	assert_int_equal(p->n_location, 4);
	assert_int_equal(p->n_function, 4);
	for (i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = loc(p, i + 1);
		const Perftools__Profiles__Mapping *m = mapping(p, l->mapping_id);
		const Perftools__Profiles__Function *f = func(p, l->line[0]->function_id);

		assert_true(l->address >= m->memory_start && l->address < m->memory_limit);
		assert_int_equal(f->name, f->system_name);
		assert_string_equal(S(p, f->filename), S(p, m->filename));
		if (l->address == 0x7f0000000100) {
			assert_string_equal(S(p, f->name), "libfn");
			assert_int_equal(m->memory_start, 0x7f0000000000);
			assert_int_equal(m->memory_limit, 0x7f0000100000);
			assert_int_equal(m->file_offset, 0x2000);
			assert_string_equal(S(p, m->filename), "/usr/lib/libx.so");
			assert_string_equal(S(p, m->build_id), "");
			assert_true(m->has_functions);
		} else {
			assert_int_equal(m->memory_start, 0x400000);
			assert_int_equal(m->memory_limit, 0x480000);
			assert_int_equal(m->file_offset, 0x1000);
			assert_string_equal(S(p, m->filename), "/usr/bin/app");
			/* One of its locations had no symbol: it is its "app+0xOFF", and
			 * the mapping is still marked symbolized, or pprof would look every
			 * location of it up again in its own DWARF reader (issue 31). */
			assert_true(m->has_functions);
		}
	}
}

static void test_encode(void **state)
{
	struct aggregate *a = sample_aggregate();
	unsigned char *buf = NULL;
	size_t len = 0;
	Profile *p;

	(void)state;
	assert_int_equal(pprof_encode(a, &buf, &len), 0);
	assert_non_null(buf);
	assert_true(len > 20);
	assert_int_equal(buf[0], 0x1f);
	assert_int_equal(buf[1], 0x8b);
	p = decode(buf, len);
	check_profile(p);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);
	aggregate_free(a);
}

static void test_encode_empty(void **state)
{
	struct aggregate *a = aggregate_new();
	unsigned char *buf = NULL;
	size_t len = 0;
	Profile *p;

	(void)state;
	assert_int_equal(pprof_encode(a, &buf, &len), 0);
	p = decode(buf, len);
	assert_string_equal(p->string_table[0], "");
	assert_int_equal(p->n_sample, 0);
	assert_int_equal(p->n_sample_type, 2);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);
	aggregate_free(a);
}

/*
 * A profile far larger than the writer's 64 KiB staging buffer and its
 * first output buffer: the elements are packed one by one into zlib, the
 * output grows, and the header with the string table comes last. Every
 * stack must come back once, with its thread, its weight and its names.
 */
static void test_encode_large(void **state)
{
	enum { NSTACKS = 20000, DEPTH = 6, NTHREADS = 40 };
	struct aggregate *a = aggregate_new();
	static char names[NSTACKS + DEPTH][16];
	unsigned char *buf = NULL;
	uint64_t want = 0, got = 0;
	size_t len = 0, i, j, nl;
	Profile *p;

	(void)state;
	assert_non_null(a);
	for (i = 0; i < NSTACKS + DEPTH; i++)
		snprintf(names[i], sizeof(names[i]), "fn_%05zu_%x", i, (unsigned)(i * 2654435761u));
	for (i = 0; i < NSTACKS; i++) {
		struct frame f[DEPTH];

		for (j = 0; j < DEPTH; j++)
			f[j] = (struct frame){ .addr = 0x400000 + 16 * (i + j), .map = &map_exe,
					       .func = names[i + j] };
		assert_int_equal(aggregate_add(a, (uint32_t)(1000 + i % NTHREADS), f, DEPTH,
					       1000 + i), 0);
		want += 1000 + i;
	}
	aggregate_info(a)->event = "cycles";
	aggregate_locations(a, &nl);
	assert_int_equal(pprof_encode(a, &buf, &len), 0);
	assert_true(len > 2 * 64 * 1024); /* the fixture is as large as it means to be */
	p = decode(buf, len);
	assert_string_equal(p->string_table[0], "");
	assert_int_equal(p->n_sample, NSTACKS);
	assert_int_equal(p->n_location, nl);
	assert_int_equal(p->n_sample_type, 2);
	assert_string_equal(S(p, p->sample_type[1]->type), "cycles");
	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		const Perftools__Profiles__Location *l;
		int64_t tid = label_num(p, s, "tid");
		unsigned k;

		assert_int_equal(s->n_location_id, DEPTH);
		assert_int_equal(s->n_value, 2);
		assert_int_equal(s->value[0], 1);
		got += (uint64_t)s->value[1];
		/* The leaf names the stack: fn_K with weight 1000 + K, on thread 1000 + K % 40. */
		l = loc(p, s->location_id[0]);
		assert_int_equal(sscanf(S(p, func(p, l->line[0]->function_id)->name), "fn_%u", &k),
				 1);
		assert_int_equal(s->value[1], 1000 + k);
		assert_int_equal(tid, 1000 + k % NTHREADS);
		l = loc(p, s->location_id[DEPTH - 1]);
		assert_int_equal(l->address, 0x400000 + 16 * (k + DEPTH - 1));
	}
	assert_int_equal(got, want);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);
	aggregate_free(a);
}

/* pprof reads the first mapping as the main binary: not the loader or libc. */
static void test_main_mapping_first(void **state)
{
	struct mapping ld = {
		.id = 1, .key = 1, .start = 0x7f1000000000, .end = 0x7f1000030000,
		.path = "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
	};
	struct mapping libc = {
		.id = 2, .key = 2, .start = 0x7f2000000000, .end = 0x7f2000200000,
		.path = "/usr/lib/x86_64-linux-gnu/libc.so.6",
	};
	struct frame f[3] = {
		{ .addr = 0x7f1000000100, .map = &ld, .func = "_dl_start" },
		{ .addr = 0x7f2000000100, .map = &libc, .func = "__libc_start_main" },
		{ .addr = 0x401000, .map = &map_exe, .func = "main" },
	};
	struct aggregate *a = aggregate_new();
	unsigned char *buf = NULL;
	size_t len = 0, i;
	uint64_t ids = 0;
	Profile *p;

	(void)state;
	assert_int_equal(aggregate_add(a, 1, f, 3, 1), 0);
	assert_int_equal(pprof_encode(a, &buf, &len), 0);
	p = decode(buf, len);
	assert_int_equal(p->n_mapping, 3);
	assert_string_equal(S(p, p->mapping[0]->filename), "/usr/bin/app");
	assert_int_equal(p->mapping[0]->id, 3);
	for (i = 0; i < p->n_mapping; i++)
		ids |= 1u << p->mapping[i]->id;
	assert_int_equal(ids, 0xe); /* each of 1, 2, 3 once */
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);
	aggregate_free(a);
}

/* ---- files ---- */

static char tmpdir[256];

static int setup_dir(void **state)
{
	const char *base = getenv("TMPDIR");

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "%s/pmutop-test-pprof-XXXXXX",
		 base && *base ? base : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
	char cmd[512];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Names in dir, sorted, joined with ' '. */
static void list_dir(const char *dir, char *buf, size_t len)
{
	struct dirent **ents;
	size_t used = 0;
	int n, i;

	buf[0] = 0;
	n = scandir(dir, &ents, NULL, alphasort);
	assert_true(n >= 0);
	for (i = 0; i < n; i++) {
		if (strcmp(ents[i]->d_name, ".") && strcmp(ents[i]->d_name, ".."))
			used += (size_t)snprintf(buf + used, len - used, "%s%s",
						 used ? " " : "", ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
}

static void test_write(void **state)
{
	struct aggregate *a = sample_aggregate();
	char path[512], err[512], names[512];
	struct stat st;
	mode_t old = umask(022);
	Profile *p;

	(void)state;
	snprintf(path, sizeof(path), "%s/out.pb.gz", tmpdir);
	assert_int_equal(pprof_write(a, path, err, sizeof(err)), 0);
	list_dir(tmpdir, names, sizeof(names));
	assert_string_equal(names, "out.pb.gz");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	p = decode_file(path);
	check_profile(p);
	perftools__profiles__profile__free_unpacked(p, NULL);

	/* Overwriting keeps the file's permissions. */
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(pprof_write(a, path, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	list_dir(tmpdir, names, sizeof(names));
	assert_string_equal(names, "out.pb.gz");
	umask(old);
	aggregate_free(a);
}

static void test_write_missing_dir(void **state)
{
	struct aggregate *a = sample_aggregate();
	char path[512], err[512] = "", names[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/nope/out.pb.gz", tmpdir);
	assert_int_equal(pprof_write(a, path, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "does not exist"));
	list_dir(tmpdir, names, sizeof(names));
	assert_string_equal(names, "");
	aggregate_free(a);
}

static void test_write_over_dir(void **state)
{
	struct aggregate *a = sample_aggregate();
	char path[512], err[512] = "", names[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/d", tmpdir);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(pprof_write(a, path, err, sizeof(err)), -EISDIR);
	assert_non_null(strstr(err, path));
	list_dir(tmpdir, names, sizeof(names));
	assert_string_equal(names, "d");
	aggregate_free(a);
}

/*
 * A write that fails half-way (here: the file size limit, which fails like
 * a full disk would) removes the temp file and leaves the old profile.
 */
static void test_write_error_keeps_old(void **state)
{
	struct aggregate *a = sample_aggregate();
	char path[512], err[512] = "", names[512], buf[16];
	struct rlimit old, small;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/out.pb.gz", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("old", f);
	fclose(f);

	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = old;
	small.rlim_cur = 16;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	assert_int_equal(pprof_write(a, path, err, sizeof(err)), -EFBIG);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);

	assert_non_null(strstr(err, path));
	list_dir(tmpdir, names, sizeof(names));
	assert_string_equal(names, "out.pb.gz");
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "old");
	aggregate_free(a);
}

static void test_check_writable(void **state)
{
	char path[512], err[512], names[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/out.pb.gz", tmpdir);
	err[0] = 0;
	assert_int_equal(pprof_check_writable(path, err, sizeof(err)), 0);
	list_dir(tmpdir, names, sizeof(names));
	assert_string_equal(names, ""); /* the probe file is gone */

	/* Relative path in the current directory. */
	if (access(".", W_OK) == 0)
		assert_int_equal(pprof_check_writable("pmutop-relative.pb.gz", err,
						      sizeof(err)), 0);

	snprintf(path, sizeof(path), "%s/missing/out.pb.gz", tmpdir);
	assert_int_equal(pprof_check_writable(path, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "does not exist"));

	assert_int_equal(pprof_check_writable(tmpdir, err, sizeof(err)), -EISDIR);
	assert_non_null(strstr(err, tmpdir));
	assert_non_null(strstr(err, "directory"));

	snprintf(path, sizeof(path), "%s/", tmpdir);
	assert_int_equal(pprof_check_writable(path, err, sizeof(err)), -EISDIR);

	/* A path component that is a file. */
	snprintf(path, sizeof(path), "%s/file", tmpdir);
	fclose(fopen(path, "w"));
	snprintf(path, sizeof(path), "%s/file/out.pb.gz", tmpdir);
	assert_int_equal(pprof_check_writable(path, err, sizeof(err)), -ENOTDIR);
	assert_non_null(strstr(err, path));
	snprintf(path, sizeof(path), "%s/file", tmpdir);
	unlink(path);

	/* A device node is written in place (never renamed over): accepted. */
	assert_int_equal(pprof_check_writable("/dev/null", err, sizeof(err)), 0);

	assert_int_equal(pprof_check_writable("", err, sizeof(err)), -EINVAL);
}

static void test_check_readonly_dir(void **state)
{
	char dir[512], path[600], err[512];

	(void)state;
	if (geteuid() == 0) {
		print_message("skipped: root can write to read-only directories\n");
		skip();
	}
	snprintf(dir, sizeof(dir), "%s/ro", tmpdir);
	assert_int_equal(mkdir(dir, 0555), 0);
	snprintf(path, sizeof(path), "%s/out.pb.gz", dir);
	assert_int_equal(pprof_check_writable(path, err, sizeof(err)), -EACCES);
	assert_non_null(strstr(err, path));
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_encode_empty),
		cmocka_unit_test(test_encode_large),
		cmocka_unit_test(test_main_mapping_first),
		cmocka_unit_test_setup_teardown(test_write, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_write_missing_dir, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_write_over_dir, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_write_error_keeps_old, setup_dir,
						teardown_dir),
		cmocka_unit_test_setup_teardown(test_check_writable, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_check_readonly_dir, setup_dir,
						teardown_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
