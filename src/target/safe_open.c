/*
 * safe_open.c - open target-controlled files without being steered (see
 * safe_open.h).
 *
 * Why O_PATH first: open(2) on a FIFO blocks until a writer appears, on a
 * device it runs the driver's open (a tape rewinds, a tty may become the
 * controlling terminal), and O_NONBLOCK only helps the first. An O_PATH
 * descriptor does neither; fstat on it tells what the path names *now*,
 * and reopening that descriptor through /proc/self/fd reads exactly that
 * inode (no second path walk a target could race).
 *
 * Why openat2(RESOLVE_IN_ROOT) for /proc/PID/root/...: the kernel enters the
 * target's root through the magic link, but an absolute symlink met later
 * restarts the walk at pmutop's own root, so a container could make pmutop
 * read any host file. RESOLVE_IN_ROOT treats the target's root as "/" for
 * the whole walk, the way the target itself sees its files.
 */
#include "pmutop/target/safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * "/proc/PID/root/REST": the root part's length (up to, not including, the
 * '/' before REST), else 0.
 */
static size_t proc_root_prefix(const char *path)
{
	const char *p = path;

	if (strncmp(p, "/proc/", 6) != 0)
		return 0;
	p += 6;
	if (*p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	if (strncmp(p, "/root", 5) != 0 || (p[5] != '/' && p[5] != '\0'))
		return 0;
	return (size_t)(p + 5 - path);
}

/* An O_PATH descriptor for path (see the header for /proc/PID/root). */
static int open_path(const char *path, int nofollow)
{
	size_t root_len = proc_root_prefix(path);
	int oflags = O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0);
	char root[64];
	int dfd, fd, e;

	if (!root_len) {
		fd = open(path, oflags);
		return fd < 0 ? -errno : fd;
	}
	if (root_len >= sizeof(root))
		return -ENAMETOOLONG;
	memcpy(root, path, root_len);
	root[root_len] = '\0';
	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	{
		struct open_how how = {
			.flags = (uint64_t)oflags,
			.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
		};
		const char *rest = path + root_len;

		while (*rest == '/')
			rest++;
		fd = (int)syscall(SYS_openat2, dfd, *rest ? rest : ".", &how, sizeof(how));
		e = errno;
		if (fd < 0 && e == ENOSYS) {
			/* Kernel before 5.6: the plain walk; the device/inode check remains. */
			fd = open(path, oflags);
			e = errno;
		}
	}
	close(dfd);
	return fd < 0 ? -e : fd;
}

int safe_open(const char *path, const struct safe_open_want *want, struct stat *st)
{
	uint64_t cap = want && want->max_size ? want->max_size : SAFE_OPEN_MAX_SIZE;
	char self[64];
	struct stat sb;
	int pfd, fd, rc;

	if (!st)
		st = &sb;
	pfd = open_path(path, want && want->nofollow);
	if (pfd < 0)
		return pfd;
	if (fstat(pfd, st) != 0) {
		rc = -errno;
		goto out;
	}
	if (S_ISLNK(st->st_mode)) {
		rc = -ELOOP;
		goto out;
	}
	if (!S_ISREG(st->st_mode)) {
		rc = -EINVAL;
		goto out;
	}
	if ((uint64_t)st->st_size > cap) {
		rc = -EFBIG;
		goto out;
	}
	if (want && (want->dev || want->ino) &&
	    ((uint64_t)st->st_dev != want->dev || (uint64_t)st->st_ino != want->ino)) {
		rc = -ESTALE;
		goto out;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	rc = fd < 0 ? -errno : fd;
out:
	close(pfd);
	return rc;
}

const char *safe_open_strerror(int rc)
{
	switch (rc) {
	case -EINVAL:
		return "not a regular file";
	case -EFBIG:
		return "larger than the size cap";
	case -ESTALE:
		return "not the mapped file (device/inode differ)";
	case -ELOOP:
		return "a symbolic link";
	default:
		return strerror(rc < 0 ? -rc : rc);
	}
}

int safe_open_plain_name(const char *name)
{
	if (!name || !*name || !strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p == '/' || *p < 0x20 || *p == 0x7f)
			return 0;
	return 1;
}
