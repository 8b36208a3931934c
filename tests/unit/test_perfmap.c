/*
 * test_perfmap.c - unit tests of the perf map reader: line parsing (hex with
 * or without 0x, names with spaces, malformed lines), lookups with
 * overlapping entries (the later line wins), re-reading a file that grows
 * or is rewritten (names handed out earlier stay valid), refusing a
 * symlink planted in /tmp, and leaving unread a map older than its process
 * (a dead process's with the same pid), with the start time that takes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "pmutop/symbols/perfmap.h"
#include "pmutop/target/proc.h"

static void test_parse_line(void **state)
{
	uint64_t start, size;
	const char *name;
	size_t len;

	(void)state;
	assert_int_equal(perfmap_parse_line("7f0012340000 2b jit_hot\n", &start, &size, &name, &len), 0);
	assert_true(start == 0x7f0012340000ULL);
	assert_true(size == 0x2b);
	assert_int_equal(len, 7);
	assert_memory_equal(name, "jit_hot", 7);

	assert_int_equal(perfmap_parse_line("0x1000 0x20 LazyCompile:~foo /app/x.js:3\r\n",
					    &start, &size, &name, &len), 0);
	assert_true(start == 0x1000 && size == 0x20);
	assert_int_equal(len, strlen("LazyCompile:~foo /app/x.js:3"));

	assert_int_equal(perfmap_parse_line("1000  20   spaced\n", &start, &size, &name, &len), 0);
	assert_memory_equal(name, "spaced", 6);

	assert_int_equal(perfmap_parse_line("", &start, &size, &name, &len), -EINVAL);
	assert_int_equal(perfmap_parse_line("1000 20\n", &start, &size, &name, &len), -EINVAL);
	assert_int_equal(perfmap_parse_line("1000 20 \n", &start, &size, &name, &len), -EINVAL);
	assert_int_equal(perfmap_parse_line("xyz 20 f\n", &start, &size, &name, &len), -EINVAL);
	assert_int_equal(perfmap_parse_line("1000 0 f\n", &start, &size, &name, &len), -EINVAL);
	assert_int_equal(perfmap_parse_line("ffffffffffffffff 2 f\n", &start, &size, &name, &len), -EINVAL);
	assert_int_equal(perfmap_parse_line("11112222333344445 2 f\n", &start, &size, &name, &len), -EINVAL);
	assert_int_equal(perfmap_parse_line("1000-20 f\n", &start, &size, &name, &len), -EINVAL);
}

static char path[64];

static void write_map(const char *mode, const char *text)
{
	FILE *f = fopen(path, mode);

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static void test_lookup_and_reload(void **state)
{
	struct perfmap *pm;
	const char *n, *old;
	uint64_t off;

	(void)state;
	write_map("w", "1000 100 first\n"
		       "garbage line\n"
		       "2000 100 second\n"
		       "2080 10 inner\n");      /* later and overlapping: wins inside */
	pm = perfmap_new(getpid(), true);
	assert_non_null(pm);
	assert_non_null(strstr(perfmap_path(pm), "/root/tmp/perf-"));
	n = perfmap_lookup(pm, 0x1010, &off);
	assert_non_null(n);
	assert_string_equal(n, "first");
	assert_true(off == 0x10);
	assert_int_equal(perfmap_count(pm), 3);
	assert_string_equal(perfmap_lookup(pm, 0x2000, NULL), "second");
	assert_string_equal(perfmap_lookup(pm, 0x2085, &off), "inner");
	assert_true(off == 5);
	assert_string_equal(perfmap_lookup(pm, 0x20f0, NULL), "second");
	assert_null(perfmap_lookup(pm, 0x1100, NULL));
	assert_null(perfmap_lookup(pm, 0x500, NULL));

	/* Appended (a partial last line waits for its newline). */
	old = perfmap_lookup(pm, 0x1000, NULL);
	write_map("a", "3000 10 third\n4000 10 par");
	usleep(20000);
	assert_string_equal(perfmap_lookup(pm, 0x3004, NULL), "third");
	assert_int_equal(perfmap_count(pm), 4);
	usleep(20000);
	assert_null(perfmap_lookup(pm, 0x4004, NULL));
	write_map("a", "tial\n");
	usleep(20000);
	assert_string_equal(perfmap_lookup(pm, 0x4004, NULL), "partial");

	/* Rewritten smaller: parsed again; an old name stays readable. */
	write_map("w", "5000 10 fifth\n");
	usleep(250000);
	assert_string_equal(perfmap_lookup(pm, 0x5000, NULL), "fifth");
	assert_null(perfmap_lookup(pm, 0x1000, NULL));
	assert_string_equal(old, "first");
	perfmap_free(pm);
	perfmap_free(NULL);
}

/*
 * Rewritten at the same size on the same inode (in place, or a new file that
 * got the freed inode number, as ext4 gives a write-and-rename loop): the
 * new mtime says it changed; it is parsed again, not taken for an append
 * with nothing new.
 */
static void test_same_size_rewrite(void **state)
{
	struct timespec later[2] = { { 0, UTIME_OMIT }, { 0, 0 } };
	struct perfmap *pm;
	struct stat st;

	(void)state;
	write_map("w", "1000 10 aaaaa\n");
	pm = perfmap_new(getpid(), true);
	assert_non_null(pm);
	assert_string_equal(perfmap_lookup(pm, 0x1004, NULL), "aaaaa");
	write_map("w", "2000 10 bbbbb\n");
	/* Timestamps are coarse: make the rewrite's mtime differ for sure. */
	assert_int_equal(stat(path, &st), 0);
	later[1].tv_sec = st.st_mtim.tv_sec + 2;
	assert_int_equal(utimensat(AT_FDCWD, path, later, 0), 0);
	usleep(20000);
	assert_string_equal(perfmap_lookup(pm, 0x2004, NULL), "bbbbb");
	assert_null(perfmap_lookup(pm, 0x1004, NULL));
	assert_int_equal(perfmap_count(pm), 1);
	perfmap_free(pm);
}

static int64_t ns_of(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000LL + t->tv_nsec;
}

/* A process's start on the wall clock: a child started now starts now, after us. */
static void test_start_realtime(void **state)
{
	struct timespec self, child, before, after;
	pid_t pid;
	int status;

	(void)state;
	assert_int_equal(proc_start_realtime(getpid(), &self), 0);
	clock_gettime(CLOCK_REALTIME, &before);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	assert_int_equal(proc_start_realtime(pid, &child), 0);
	clock_gettime(CLOCK_REALTIME, &after);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	/* /proc gives clock ticks: up to one (10 ms at 100 Hz) early. */
	assert_true(ns_of(&child) >= ns_of(&before) - 20000000LL);
	assert_true(ns_of(&child) <= ns_of(&after));
	assert_true(ns_of(&self) <= ns_of(&child));
	assert_int_equal(proc_start_realtime(pid, &child), -ESRCH);
}

/*
 * A map last written before the process started is a dead process's (its
 * pid came round again): not read, and the summary line says why. Once
 * the process writes it, it is read.
 */
static void test_stale_map(void **state)
{
	struct timespec times[2] = { { 0, UTIME_OMIT }, { 0, 0 } }, started;
	struct perfmap *pm;
	char note[512];

	(void)state;
	assert_int_equal(proc_start_realtime(getpid(), &started), 0);
	write_map("w", "1000 10 someone_elses\n");
	times[1].tv_sec = started.tv_sec - 60;
	assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
	pm = perfmap_new(getpid(), true);
	assert_non_null(pm);
	assert_null(perfmap_lookup(pm, 0x1004, NULL));
	assert_int_equal(perfmap_count(pm), 0);
	assert_non_null(perfmap_note(pm, note, sizeof(note)));
	assert_non_null(strstr(note, "not read, last written before PID"));
	assert_non_null(strstr(note, path));

	/* Written a second after the start (as a JIT starting up would). */
	write_map("w", "2000 10 mine\n");
	times[1].tv_sec = started.tv_sec + 1;
	assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
	usleep(20000);
	assert_string_equal(perfmap_lookup(pm, 0x2004, NULL), "mine");
	assert_null(perfmap_note(pm, note, sizeof(note)));
	perfmap_free(pm);
}

static void test_symlink_refused(void **state)
{
	char target[64];
	struct perfmap *pm;
	FILE *f;

	(void)state;
	snprintf(target, sizeof(target), "/tmp/pmutop-perfmap-target-%d", (int)getpid());
	f = fopen(target, "w");
	assert_non_null(f);
	fputs("1000 100 planted\n", f);
	fclose(f);
	assert_int_equal(symlink(target, path), 0);
	pm = perfmap_new(getpid(), true);
	assert_null(perfmap_lookup(pm, 0x1000, NULL));
	perfmap_free(pm);
	unlink(target);
}

static void test_no_file(void **state)
{
	struct perfmap *pm = perfmap_new(getpid(), true);

	(void)state;
	assert_null(perfmap_lookup(pm, 0x1000, NULL));
	assert_int_equal(perfmap_count(pm), 0);
	perfmap_free(pm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_line),
		cmocka_unit_test_setup_teardown(test_lookup_and_reload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_size_rewrite, setup, teardown),
		cmocka_unit_test(test_start_realtime),
		cmocka_unit_test_setup_teardown(test_stale_map, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_file, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
