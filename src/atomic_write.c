/*
 * atomic_write.c - replace a file with new bytes atomically: a temp file
 * next to the target (mkstemp), fsync, rename, then fsync the directory.
 *
 * Shared by the writers of whole-file outputs (folded stacks; the pprof
 * writer has its own copy with profile-specific messages).
 */
#include "pmutop/atomic_write.h"

#include <errno.h>
#include <fcntl.h>
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
	size_t plen = strlen(path);
	const char *step = "cannot create a temp file";
	char *tmp = malloc(plen + sizeof(".tmpXXXXXX")), *dir;
	int fd = -1, rc;

	if (!tmp) {
		rc = -ENOMEM;
		goto fail;
	}
	memcpy(tmp, path, plen);
	memcpy(tmp + plen, ".tmpXXXXXX", sizeof(".tmpXXXXXX"));
	fd = mkstemp(tmp);
	if (fd < 0) {
		rc = -errno;
		free(tmp);
		tmp = NULL;
		goto fail;
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
