/*
 * test_debuginfod.c - files by build-id through libdebuginfod, served from
 * a file:// "server" (a directory laid out as debuginfod's web API:
 * DIR/buildid/BID/{debuginfo,executable}) so that no network is needed:
 * off without DEBUGINFOD_URLS; this test binary fetched by its own
 * build-id; random bytes and another build's ELF rejected and removed from
 * the cache; the background fetcher answers every request once (a
 * duplicate is not fetched twice), counts fetched / rejected / not found,
 * and refuses what is not a build-id.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include "pmutop/symbols/debuginfod.h"
#include "pmutop/target/module.h"

#define OTHER_BID "00112233445566778899aabbccddeeff00112233"
#define JUNK_BID  "ffeeddccbbaa99887766554433221100ffeeddcc"
#define NONE_BID  "0123456789abcdef0123456789abcdef01234567"

static char dir[64], self_bid[130];
static unsigned ncache;

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t r;

	assert_true(in >= 0 && out >= 0);
	while ((r = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)r), r);
	close(in);
	close(out);
}

/* DIR/srv/buildid/BID/KIND holding src (a path) or n random bytes. */
static void serve(const char *bid, const char *kind, const char *src, size_t n)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/srv/buildid/%s", dir, bid);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/srv/buildid/%s/%s", dir, bid, kind);
	if (src) {
		copy_file(src, p);
	} else {
		FILE *f = fopen(p, "w");

		assert_non_null(f);
		for (size_t i = 0; i < n; i++)
			fputc((int)((i * 2654435761u) >> 13 & 0xff), f);
		fclose(f);
	}
}

/* A fresh client cache (404s are remembered) and the file:// server. */
static void fresh_env(void)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/cache%u", dir, ncache++);
	setenv("DEBUGINFOD_CACHE_PATH", p, 1);
	snprintf(p, sizeof(p), "file://%s/srv", dir);
	setenv("DEBUGINFOD_URLS", p, 1);
}

static int setup(void **state)
{
	char p[PATH_MAX];
	struct module_cache *mc = module_cache_new();
	struct module *m;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_debuginfod.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/srv", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/srv/buildid", dir);
	mkdir(p, 0755);
	assert_non_null(mc);
	m = module_cache_get(mc, "/proc/self/exe", "self", 0, 0);
	assert_non_null(m);
	snprintf(self_bid, sizeof(self_bid), "%s", module_build_id(m));
	module_cache_free(mc);
	assert_true(strlen(self_bid) >= 16); /* Debian's gcc links with --build-id */
	serve(self_bid, "executable", "/proc/self/exe", 0);
	serve(self_bid, "debuginfo", "/proc/self/exe", 0);
	serve(OTHER_BID, "debuginfo", "/proc/self/exe", 0);  /* another build-id */
	serve(JUNK_BID, "debuginfo", NULL, 30000);          /* not ELF */
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void test_off_without_urls(void **state)
{
	(void)state;
	unsetenv("DEBUGINFOD_URLS");
	assert_false(debuginfod_enabled());
	assert_null(dfd_fetcher_new());
	assert_int_equal(dfd_fetch_now(DFD_DEBUGINFO, self_bid, NULL, NULL, 0), -ENOENT);
	setenv("DEBUGINFOD_URLS", "  ", 1);
	assert_false(debuginfod_enabled());
}

static void test_fetch_now(void **state)
{
	char why[512], *path = NULL;
	struct stat st;
	int fd;

	(void)state;
	fresh_env();
	fd = dfd_fetch_now(DFD_EXECUTABLE, self_bid, &path, why, sizeof(why));
	assert_true(fd >= 0);
	assert_non_null(path);
	assert_non_null(strstr(path, self_bid));
	assert_int_equal(stat(path, &st), 0);
	close(fd);
	free(path);

	/* Random bytes: rejected, and gone from the cache. */
	fd = dfd_fetch_now(DFD_DEBUGINFO, JUNK_BID, &path, why, sizeof(why));
	assert_int_equal(fd, -EBADMSG);
	assert_null(path);
	assert_non_null(strstr(why, "not an ELF file"));
	{
		char p[PATH_MAX];

		snprintf(p, sizeof(p), "%s/%s/debuginfo", getenv("DEBUGINFOD_CACHE_PATH"), JUNK_BID);
		assert_int_not_equal(stat(p, &st), 0);
	}

	/* An ELF file of another build. */
	fd = dfd_fetch_now(DFD_DEBUGINFO, OTHER_BID, NULL, why, sizeof(why));
	assert_int_equal(fd, -EBADMSG);
	assert_non_null(strstr(why, "not the one asked for"));
	assert_non_null(strstr(why, self_bid));

	/* Not there: not found, no note of a rejection. */
	fd = dfd_fetch_now(DFD_DEBUGINFO, NONE_BID, NULL, why, sizeof(why));
	assert_int_equal(fd, -ENOENT);
	assert_int_equal(dfd_fetch_now(DFD_DEBUGINFO, "xyz", NULL, NULL, 0), -EINVAL);
}

static void test_fetcher(void **state)
{
	struct dfd_fetcher *f;
	unsigned ok, bad, failed;
	char *path = NULL;
	int fd;

	(void)state;
	fresh_env();
	f = dfd_fetcher_new();
	assert_non_null(f);
	assert_int_equal(dfd_request(f, DFD_DEBUGINFO, "not-hex!"), -EINVAL);
	assert_int_equal(dfd_request(f, DFD_DEBUGINFO, "abc"), -EINVAL); /* odd length */
	assert_int_equal(dfd_request(f, DFD_DEBUGINFO, self_bid), 0);
	assert_int_equal(dfd_request(f, DFD_DEBUGINFO, JUNK_BID), 0);
	assert_int_equal(dfd_request(f, DFD_DEBUGINFO, NONE_BID), 0);
	assert_int_equal(dfd_request(f, DFD_DEBUGINFO, self_bid), 0); /* once only */
	assert_int_equal(dfd_wait(f, NULL, 0, NULL, NULL), 0);
	dfd_counts(f, &ok, &bad, &failed);
	assert_int_equal(ok, 1);
	assert_int_equal(bad, 1);
	assert_int_equal(failed, 1);

	fd = dfd_take(f, DFD_DEBUGINFO, self_bid, false, &path);
	assert_true(fd >= 0);
	assert_non_null(path);
	close(fd);
	free(path);
	/* Taken again: a new fd on the same file. */
	fd = dfd_take(f, DFD_DEBUGINFO, self_bid, true, NULL);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(dfd_take(f, DFD_DEBUGINFO, JUNK_BID, true, NULL), -ENOENT);
	assert_int_equal(dfd_take(f, DFD_DEBUGINFO, NONE_BID, false, NULL), -ENOENT);
	assert_int_equal(dfd_take(f, DFD_EXECUTABLE, self_bid, false, NULL), -ENOENT); /* never asked */

	/* A request after the queue emptied starts the worker again. */
	assert_int_equal(dfd_request(f, DFD_EXECUTABLE, self_bid), 0);
	fd = dfd_take(f, DFD_EXECUTABLE, self_bid, true, NULL);
	assert_true(fd >= 0);
	close(fd);
	dfd_fetcher_free(f);
	dfd_fetcher_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off_without_urls),
		cmocka_unit_test(test_fetch_now),
		cmocka_unit_test(test_fetcher),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
