/*
 * test_atomic_write.c - the rules for output paths (atomic_write.h), on
 * real files: a symlink's target is replaced and the link kept, "-" and
 * /dev/fd/N write to the descriptor, a FIFO is written in place, a
 * directory is an error, a name of NAME_MAX characters works (the temp
 * name is shortened), an error about a path longer than PATH_MAX still
 * ends with its reason, setuid bits are never copied, and someone else's
 * symlink in a sticky world-writable directory is refused.
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

#include "pmutop/profile/atomic_write.h"

static char dir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/pmutop-aw.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* Files in dir other than the given ones: temp files left behind. */
static int count_files(void)
{
	char cmd[300];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

static void test_symlink_followed(void **state)
{
	char target[512], link[512], rel[512], buf[64], err[512];
	struct stat st;

	(void)state;
	snprintf(target, sizeof(target), "%s/real.txt", dir);
	snprintf(link, sizeof(link), "%s/link.txt", dir);
	assert_int_equal(atomic_write_file(target, "old", 3, "data", err, sizeof(err)), 0);
	assert_int_equal(symlink("real.txt", link), 0);
	assert_int_equal(atomic_write_check(link, "data", err, sizeof(err)), 0);
	assert_int_equal(atomic_write_file(link, "new", 3, "data", err, sizeof(err)), 0);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode)); /* the link is still a link */
	read_file(target, buf, sizeof(buf));
	assert_string_equal(buf, "new");
	/* A dangling link: its target is created. */
	snprintf(rel, sizeof(rel), "%s/dangling", dir);
	assert_int_equal(symlink("created.txt", rel), 0);
	assert_int_equal(atomic_write_file(rel, "x", 1, "data", err, sizeof(err)), 0);
	snprintf(target, sizeof(target), "%s/created.txt", dir);
	read_file(target, buf, sizeof(buf));
	assert_string_equal(buf, "x");
	assert_int_equal(count_files(), 4);
}

static void test_stdout_and_fd(void **state)
{
	char buf[64], err[512], path[64];
	int p[2], saved;
	ssize_t n;

	(void)state;
	assert_int_equal(pipe(p), 0);
	saved = dup(STDOUT_FILENO);
	dup2(p[1], STDOUT_FILENO);
	assert_int_equal(atomic_write_file("-", "dash", 4, "data", err, sizeof(err)), 0);
	assert_int_equal(atomic_write_file("/dev/stdout", "dev", 3, "data", err, sizeof(err)), 0);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	snprintf(path, sizeof(path), "/dev/fd/%d", p[1]);
	assert_int_equal(atomic_write_file(path, "fd", 2, "data", err, sizeof(err)), 0);
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "dashdevfd");
	close(p[0]);
}

static void test_fifo_in_place(void **state)
{
	char fifo[512], buf[64], err[512];
	struct stat st;
	int rd;
	ssize_t n;

	(void)state;
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	rd = open(fifo, O_RDONLY | O_NONBLOCK); /* a reader, so the writer does not block */
	assert_true(rd >= 0);
	assert_int_equal(atomic_write_check(fifo, "data", err, sizeof(err)), 0);
	assert_int_equal(atomic_write_file(fifo, "piped", 5, "data", err, sizeof(err)), 0);
	n = read(rd, buf, sizeof(buf) - 1);
	assert_int_equal(n, 5);
	buf[n] = '\0';
	assert_string_equal(buf, "piped");
	close(rd);
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode)); /* not replaced */
	assert_int_equal(count_files(), 1);
}

static void test_directory_error(void **state)
{
	char link[512], err[512];

	(void)state;
	assert_int_equal(atomic_write_file(dir, "x", 1, "data", err, sizeof(err)), -EISDIR);
	assert_non_null(strstr(err, "is a directory"));
	snprintf(link, sizeof(link), "%s/dirlink", dir);
	assert_int_equal(symlink("/tmp", link), 0);
	assert_int_equal(atomic_write_check(link, "data", err, sizeof(err)), -EISDIR);
	assert_non_null(strstr(err, "is a directory"));
}

static void test_name_max(void **state)
{
	char path[600], buf[8], err[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/", dir);
	memset(path + strlen(path), 'n', NAME_MAX);
	path[strlen(dir) + 1 + NAME_MAX] = '\0';
	assert_int_equal(atomic_write_check(path, "data", err, sizeof(err)), 0);
	assert_int_equal(atomic_write_file(path, "ok", 2, "data", err, sizeof(err)), 0);
	read_file(path, buf, sizeof(buf));
	assert_string_equal(buf, "ok");
	assert_int_equal(count_files(), 1);
}

static void test_long_path_reason(void **state)
{
	char *path = malloc(PATH_MAX + 200), err[768];
	size_t n = 0;

	(void)state;
	assert_non_null(path);
	n += (size_t)sprintf(path, "%s", dir);
	while (n < PATH_MAX + 100)
		n += (size_t)sprintf(path + n, "/%s", "deeper-and-deeper");
	strcpy(path + n, "/out.pb.gz");
	assert_true(atomic_write_file(path, "x", 1, "profile", err, sizeof(err)) < 0);
	assert_true(strlen(err) < sizeof(err) - 1);
	/* The message ends with the reason, and names the file. */
	assert_non_null(strstr(err, "out.pb.gz"));
	assert_true(strstr(err, strerror(ENAMETOOLONG)) || strstr(err, "does not exist"));
	free(path);
}

static void test_setuid_not_copied(void **state)
{
	char path[512], err[512];
	struct stat st;

	(void)state;
	snprintf(path, sizeof(path), "%s/suid", dir);
	assert_int_equal(atomic_write_file(path, "a", 1, "data", err, sizeof(err)), 0);
	assert_int_equal(chmod(path, 04755), 0);
	assert_int_equal(atomic_write_file(path, "b", 1, "data", err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
}

static void test_foreign_link_in_sticky_dir(void **state)
{
	char sticky[512], link[600], err[512];

	(void)state;
	if (geteuid() != 0) {
		print_message("skipped: needs root to give a symlink another owner\n");
		skip();
	}
	snprintf(sticky, sizeof(sticky), "%s/tmp", dir);
	assert_int_equal(mkdir(sticky, 01777), 0);
	assert_int_equal(chmod(sticky, 01777), 0);
	snprintf(link, sizeof(link), "%s/trap", sticky);
	assert_int_equal(symlink("/etc/pmutop-must-not-exist", link), 0);
	assert_int_equal(lchown(link, 65534, 65534), 0);
	assert_int_equal(atomic_write_file(link, "x", 1, "data", err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "refusing to follow a symlink"));
	assert_int_equal(access("/etc/pmutop-must-not-exist", F_OK), -1);
}

/*
 * Issue 32: as root in a directory another user owns (not sticky, not
 * world-writable - a --dump-every directory of theirs), their symlink is
 * refused; our own symlink there is still followed; their FIFO is refused.
 */
static void test_foreign_dir(void **state)
{
	char theirs[512], link[600], own[600], target[600], fifo[600], err[512];

	(void)state;
	if (geteuid() != 0) {
		print_message("skipped: needs root to give a directory another owner\n");
		skip();
	}
	snprintf(theirs, sizeof(theirs), "%s/theirs", dir);
	assert_int_equal(mkdir(theirs, 0755), 0);
	assert_int_equal(chown(theirs, 65534, 65534), 0);
	snprintf(link, sizeof(link), "%s/trap", theirs);
	assert_int_equal(symlink("/etc/pmutop-must-not-exist", link), 0);
	assert_int_equal(lchown(link, 65534, 65534), 0);
	assert_int_equal(atomic_write_file(link, "x", 1, "data", err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "refusing to follow a symlink owned by uid 65534"));
	assert_int_equal(access("/etc/pmutop-must-not-exist", F_OK), -1);
	assert_int_equal(atomic_write_check(link, "data", err, sizeof(err)), -EPERM);

	/* Ours, in their directory, pointing into ours: followed. */
	snprintf(target, sizeof(target), "%s/real", dir);
	snprintf(own, sizeof(own), "%s/mine", theirs);
	assert_int_equal(symlink(target, own), 0);
	assert_int_equal(atomic_write_file(own, "y", 1, "data", err, sizeof(err)), 0);
	assert_int_equal(access(target, F_OK), 0);

	snprintf(fifo, sizeof(fifo), "%s/fifo", theirs);
	assert_int_equal(mkfifo(fifo, 0666), 0);
	assert_int_equal(chown(fifo, 65534, 65534), 0);
	assert_int_equal(atomic_write_check(fifo, "data", err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "refusing to write into a FIFO owned by uid 65534"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_symlink_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stdout_and_fd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_in_place, setup, teardown),
		cmocka_unit_test_setup_teardown(test_directory_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_name_max, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_path_reason, setup, teardown),
		cmocka_unit_test_setup_teardown(test_setuid_not_copied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_link_in_sticky_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_dir, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
