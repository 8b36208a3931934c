/*
 * atomic_write.c - replace a file with new bytes atomically: a temp file
 * next to the target (mkstemp), fsync, rename, then fsync the directory.
 *
 * Every whole-file output goes through here (pprof profiles, folded
 * stacks), and so does the check, made before sampling starts, that the
 * output can be written at all.
 */
#include "pmutop/profile/atomic_write.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The directory part of path ("." when none), malloc'd; NULL on ENOMEM. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

static int write_all(int fd, const unsigned char *p, size_t len)
{
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* mkstemp on "<path>.tmpXXXXXX": the temp file sits next to path. */
static int temp_create(const char *path, char **tmp, int *fd)
{
	size_t len = strlen(path);
	char *t = malloc(len + sizeof(".tmpXXXXXX"));

	if (!t)
		return -ENOMEM;
	memcpy(t, path, len);
	memcpy(t + len, ".tmpXXXXXX", sizeof(".tmpXXXXXX"));
	*fd = mkstemp(t);
	if (*fd < 0) {
		int e = errno;

		free(t);
		return -e;
	}
	*tmp = t;
	return 0;
}

/* Message for a failed temp_create(): which directory, and why. */
static void temp_error(const char *path, const char *what, int rc, char *err, size_t errlen)
{
	char *dir = dir_of(path);
	const char *d = dir ? dir : ".";
	struct stat st;

	if (rc == -ENOENT && stat(d, &st) != 0)
		snprintf(err, errlen, "cannot write %s to '%s': directory '%s' does not exist",
			 what, path, d);
	else
		snprintf(err, errlen, "cannot write %s to '%s': cannot create files in '%s': %s",
			 what, path, d, strerror(-rc));
	free(dir);
}

/* path must not be (or end like) a directory or name a device/FIFO. */
static int check_target(const char *path, const char *what, char *err, size_t errlen)
{
	size_t len = strlen(path);
	struct stat st;

	if (!len) {
		snprintf(err, errlen, "cannot write %s: empty output path", what);
		return -EINVAL;
	}
	if (path[len - 1] == '/') {
		snprintf(err, errlen, "cannot write %s to '%s': is a directory", what, path);
		return -EISDIR;
	}
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "cannot write %s to '%s': is a directory", what, path);
			return -EISDIR;
		}
		if (!S_ISREG(st.st_mode)) {
			/* rename() would replace the device node or FIFO itself. */
			snprintf(err, errlen, "cannot write %s to '%s': not a regular file", what, path);
			return -EINVAL;
		}
	} else if (errno != ENOENT) {
		int e = errno;

		snprintf(err, errlen, "cannot write %s to '%s': %s", what, path, strerror(e));
		return -e;
	}
	return 0;
}

int atomic_write_check(const char *path, const char *what, char *err, size_t errlen)
{
	char *dir = NULL, *tmp = NULL;
	sigset_t block, old;
	struct stat st;
	int fd = -1, rc;

	rc = check_target(path, what, err, errlen);
	if (rc)
		return rc;
	dir = dir_of(path);
	if (!dir) {
		snprintf(err, errlen, "cannot write %s to '%s': %s", what, path, strerror(ENOMEM));
		return -ENOMEM;
	}
	if (stat(dir, &st) != 0) {
		rc = -errno;
		if (rc == -ENOENT)
			snprintf(err, errlen, "cannot write %s to '%s': directory '%s' does not exist",
				 what, path, dir);
		else
			snprintf(err, errlen, "cannot write %s to '%s': directory '%s': %s",
				 what, path, dir, strerror(-rc));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		rc = -ENOTDIR;
		snprintf(err, errlen, "cannot write %s to '%s': '%s' is not a directory", what,
			 path, dir);
		goto out;
	}
	/*
	 * This runs before the session blocks SIGINT/SIGTERM/SIGHUP: hold them
	 * while the probe file exists, so a Ctrl-C at startup cannot leave it
	 * behind (a pending signal is delivered once it is gone).
	 */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	rc = temp_create(path, &tmp, &fd);
	if (rc) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		temp_error(path, what, rc, err, errlen);
		goto out;
	}
	close(fd);
	unlink(tmp);
	sigprocmask(SIG_SETMASK, &old, NULL);
out:
	free(tmp);
	free(dir);
	return rc;
}

/* Permissions of the file being replaced, else what open(..., 0666) gives. */
static mode_t new_file_mode(const char *path)
{
	struct stat st;
	mode_t mask;

	if (stat(path, &st) == 0)
		return st.st_mode & 07777;
	mask = umask(077);
	umask(mask);
	return 0666 & ~mask;
}

int atomic_write_file(const char *path, const void *buf, size_t len, const char *what,
		      char *err, size_t errlen)
{
	const char *step;
	char *tmp = NULL, *dir;
	int fd = -1, rc;

	rc = check_target(path, what, err, errlen);
	if (rc)
		return rc;
	rc = temp_create(path, &tmp, &fd);
	if (rc) {
		temp_error(path, what, rc, err, errlen);
		return rc;
	}
	step = "cannot set permissions";
	if (fchmod(fd, new_file_mode(path)) != 0) {
		rc = -errno;
		goto fail;
	}
	step = "write failed";
	rc = write_all(fd, buf, len);
	if (rc)
		goto fail;
	step = "fsync failed";
	if (fsync(fd) != 0) {
		rc = -errno;
		goto fail;
	}
	step = "close failed";
	rc = close(fd);
	fd = -1;
	if (rc != 0) {
		rc = -errno;
		goto fail;
	}
	step = "rename failed";
	if (rename(tmp, path) != 0) {
		rc = -errno;
		goto fail;
	}
	dir = dir_of(path);
	if (dir) {
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
		free(dir);
	}
	free(tmp);
	return 0;
fail:
	snprintf(err, errlen, "cannot write %s to '%s': %s: %s", what, path, step,
		 strerror(-rc));
	if (fd >= 0)
		close(fd);
	if (tmp)
		unlink(tmp);
	free(tmp);
	return rc;
}
