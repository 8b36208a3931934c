/*
 * test_kallsyms.c - the kernel symbol table: text symbols of the image and
 * of modules (each module its own mapping), data symbols ignored, a symbol
 * running to the next one and the image ending at _etext; a table whose
 * addresses are all zero (kptr_restrict) names every frame "[kernel]"; the
 * real /proc/kallsyms loads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pmutop/symbols/kallsyms.h"
#include "pmutop/symbols/symbolize.h"
#include "pmutop/target/maps.h"

static char path[64];

static void write_file(const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test_kallsyms.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static void test_image_and_modules(void **state)
{
	char err[256];
	struct kallsyms *ks;
	const char *mod = "x";
	uint64_t off = 0;
	struct frame fr[3];
	uint64_t ips[3] = { 0xffffffff81000105ULL, 0xffffffffc0001011ULL, 0xffffffff81000201ULL };

	(void)state;
	write_file("ffffffff81000000 T _stext\n"
		   "ffffffff81000100 t read_zero\n"
		   "ffffffff81000180 D some_data\n"
		   "ffffffff81000200 T vfs_read\n"
		   "ffffffff81000300 T _etext\n"
		   "ffffffffc0001000 t ext4_read\t[ext4]\n"
		   "ffffffffc0001100 t ext4_write\t[ext4]\n"
		   "garbage line\n");
	ks = kallsyms_load(path, err, sizeof(err));
	assert_non_null(ks);
	assert_false(kallsyms_restricted(ks));
	assert_int_equal(kallsyms_count(ks), 6);
	assert_string_equal(kallsyms_lookup(ks, 0xffffffff81000105ULL, &off, &mod), "read_zero");
	assert_true(off == 5);
	assert_null(mod);
	/* Data symbols do not end a function. */
	assert_string_equal(kallsyms_lookup(ks, 0xffffffff81000190ULL, &off, NULL), "read_zero");
	assert_string_equal(kallsyms_lookup(ks, 0xffffffffc0001011ULL, &off, &mod), "ext4_read");
	assert_string_equal(mod, "[ext4]");
	/* Past the module's last function plus a page: nothing. */
	assert_null(kallsyms_lookup(ks, 0xffffffffc0003000ULL, &off, NULL));

	kallsyms_symbolize(ks, ips, 3, fr);
	assert_string_equal(fr[0].func, "read_zero");
	assert_true(fr[0].addr == ips[0]);
	assert_string_equal(fr[0].map->path, "[kernel.kallsyms]");
	assert_string_equal(fr[1].func, "ext4_read");
	assert_string_equal(fr[1].map->path, "[ext4]");
	assert_true(fr[1].map->id != fr[0].map->id);
	/* Callers are looked up at the call: 0x...201 - 1 is still vfs_read's. */
	assert_string_equal(fr[2].func, "vfs_read");
	assert_true(fr[2].addr == ips[2] - 1);
	assert_true(fr[0].map->start == 0xffffffff81000000ULL);
	assert_true(fr[0].map->end >= 0xffffffff81000300ULL);
	kallsyms_free(ks);
}

static void test_restricted(void **state)
{
	char err[256];
	struct kallsyms *ks;
	struct frame fr[2];
	uint64_t ips[2] = { 0xffffffff81000105ULL, 0xffffffff81000201ULL };

	(void)state;
	write_file("0000000000000000 T _stext\n"
		   "0000000000000000 t read_zero\n"
		   "0000000000000000 t ext4_read\t[ext4]\n");
	ks = kallsyms_load(path, err, sizeof(err));
	assert_non_null(ks);
	assert_true(kallsyms_restricted(ks));
	assert_int_equal(kallsyms_count(ks), 0);
	assert_null(kallsyms_lookup(ks, ips[0], NULL, NULL));
	kallsyms_symbolize(ks, ips, 2, fr);
	assert_string_equal(fr[0].func, "[kernel]");
	assert_string_equal(fr[1].func, "[kernel]");
	assert_non_null(fr[0].map);
	assert_true(fr[0].map->start <= ips[0] && ips[0] < fr[0].map->end);
	kallsyms_free(ks);
}

static void test_missing_and_real(void **state)
{
	char err[256] = "";
	struct kallsyms *ks;

	(void)state;
	assert_null(kallsyms_load("/nonexistent/kallsyms", err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/kallsyms"));
	ks = kallsyms_load(NULL, err, sizeof(err));
	assert_non_null(ks);
	/* Root sees names; others see zeros unless the sysctls allow. */
	if (geteuid() == 0 && !kallsyms_restricted(ks))
		assert_true(kallsyms_count(ks) > 1000);
	kallsyms_free(ks);
	kallsyms_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_image_and_modules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restricted, setup, teardown),
		cmocka_unit_test(test_missing_and_real),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
