/*
 * test_fuzz_replay.c - replay every fuzz input we keep, in every `make test`.
 *
 * The libFuzzer targets in tests/fuzz/ are included here with their entry
 * points renamed, built with the suite's own compiler and flags (so under
 * ASan/UBSan in `make check-asan`), and fed each file of
 * tests/fuzz/corpus/<target>/: the seeds, and every input a fuzzer found
 * (crash-*, leak-*, timeout-*, named for what they did), which is how a
 * fuzzer finding becomes a regression test. The corpus is looked up in
 * $PMUTOP_FUZZ_CORPUS, else tests/fuzz/corpus relative to the current
 * directory or to this source file.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

int fuzz_module_one(const uint8_t *data, size_t size);
int fuzz_perf_record_one(const uint8_t *data, size_t size);
int fuzz_unwind_one(const uint8_t *data, size_t size);
int fuzz_gopclntab_one(const uint8_t *data, size_t size);

#define LLVMFuzzerTestOneInput fuzz_module_one
#include "fuzz/fuzz_module.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_perf_record_one
#include "fuzz/fuzz_perf_record.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_unwind_one
#include "fuzz/fuzz_unwind.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_gopclntab_one
#include "fuzz/fuzz_gopclntab.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_maps_one
int fuzz_maps_one(const uint8_t *data, size_t size);
#include "fuzz/fuzz_maps.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_perfmap_one
int fuzz_perfmap_one(const uint8_t *data, size_t size);
#include "fuzz/fuzz_perfmap.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_http_one
int fuzz_http_one(const uint8_t *data, size_t size);
#include "fuzz/fuzz_http.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_unwind_elf_one
int fuzz_unwind_elf_one(const uint8_t *data, size_t size);
#include "fuzz/fuzz_unwind_elf.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_debuginfo_one
int fuzz_debuginfo_one(const uint8_t *data, size_t size);
#include "fuzz/fuzz_debuginfo.c"
#undef LLVMFuzzerTestOneInput
/* (was "pmutop/pprof_read.h" before the layout move: the replay was silently off) */
#if __has_include("pmutop/profile/pprof_read.h")
#define HAVE_PPROF_READ 1
int fuzz_pprof_read_one(const uint8_t *data, size_t size);
#define LLVMFuzzerTestOneInput fuzz_pprof_read_one
#include "fuzz/fuzz_pprof_read.c"
#undef LLVMFuzzerTestOneInput
#endif

typedef int (*fuzz_fn)(const uint8_t *, size_t);

static const char *corpus_root(void)
{
	static char buf[4096];
	const char *env = getenv("PMUTOP_FUZZ_CORPUS");
	struct stat st;
	char *slash;

	if (env && *env)
		return env;
	if (stat("tests/fuzz/corpus", &st) == 0 && S_ISDIR(st.st_mode))
		return "tests/fuzz/corpus";
	snprintf(buf, sizeof(buf), "%s", __FILE__);
	slash = strrchr(buf, '/');
	if (slash) {
		snprintf(slash, sizeof(buf) - (size_t)(slash - buf), "/../fuzz/corpus");
		return buf;
	}
	return "../fuzz/corpus";
}

static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		p = malloc((size_t)n ? (size_t)n : 1);
		if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
			free(p);
			p = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return p;
}

/* Feed every file of corpus/<target>; returns how many. */
static unsigned replay_dir(const char *target, fuzz_fn fn)
{
	char dir[4096], path[8192];
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%.3000s/%.64s", corpus_root(), target);
	d = opendir(dir);
	if (!d)
		fail_msg("cannot open fuzz corpus %s: %s (set PMUTOP_FUZZ_CORPUS)", dir,
			 strerror(errno));
	while ((de = readdir(d))) {
		struct stat st;
		uint8_t *data;
		size_t len = 0;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%.4096s/%.255s", dir, de->d_name);
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		data = read_all(path, &len);
		if (!data)
			fail_msg("cannot read %s", path);
		assert_int_equal(fn(data, len), 0);
		free(data);
		n++;
	}
	closedir(d);
	print_message("replayed %u inputs of %s\n", n, target);
	return n;
}

static void replay_module(void **state)
{
	(void)state;
	assert_true(replay_dir("fuzz_module", fuzz_module_one) > 0);
}

static void replay_perf_record(void **state)
{
	(void)state;
	assert_true(replay_dir("fuzz_perf_record", fuzz_perf_record_one) > 0);
}

static void replay_unwind(void **state)
{
	(void)state;
	assert_true(replay_dir("fuzz_unwind", fuzz_unwind_one) > 0);
}

static void replay_unwind_elf(void **state)
{
	(void)state;
	assert_true(replay_dir("fuzz_unwind_elf", fuzz_unwind_elf_one) > 0);
}

static void replay_maps(void **state)
{
	(void)state;
	assert_true(replay_dir("fuzz_maps", fuzz_maps_one) > 0);
}

static void replay_perfmap(void **state)
{
	(void)state;
	assert_true(replay_dir("fuzz_perfmap", fuzz_perfmap_one) > 0);
}

static void replay_http(void **state)
{
	(void)state;
	assert_true(replay_dir("fuzz_http", fuzz_http_one) > 0);
}

static void replay_debuginfo(void **state)
{
	(void)state;
	assert_true(replay_dir("fuzz_debuginfo", fuzz_debuginfo_one) > 0);
}

static void replay_gopclntab(void **state)
{
	(void)state;
	assert_true(replay_dir("fuzz_gopclntab", fuzz_gopclntab_one) > 0);
}

#ifdef HAVE_PPROF_READ
static void replay_pprof_read(void **state)
{
	(void)state;
	assert_true(replay_dir("fuzz_pprof_read", fuzz_pprof_read_one) > 0);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(replay_module),
		cmocka_unit_test(replay_perf_record),
		cmocka_unit_test(replay_unwind),
		cmocka_unit_test(replay_unwind_elf),
		cmocka_unit_test(replay_maps),
		cmocka_unit_test(replay_perfmap),
		cmocka_unit_test(replay_http),
		cmocka_unit_test(replay_debuginfo),
		cmocka_unit_test(replay_gopclntab),
#ifdef HAVE_PPROF_READ
		cmocka_unit_test(replay_pprof_read),
#endif
	};
	return cmocka_run_group_tests_name("fuzz_replay", tests, NULL, NULL);
}
