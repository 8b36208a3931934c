/*
 * safe_open.h - open a file the target controls, for reading, as root,
 * without being steered by it.
 *
 * Everything under a target's reach (its ELF files and .gnu_debuglink
 * names, its /proc/PID/root, its perf map) is attacker-controlled input
 * when pmutop runs as root against someone else's process. Opening such a
 * path naively can block forever (a FIFO), spin forever (a symlink to
 * /dev/zero), open a device as root (side effects), or, under
 * /proc/PID/root, resolve an absolute symlink against pmutop's own root and
 * read a host file of the target's choosing. safe_open() does none of that:
 *   - "/proc/PID/root/REST" is resolved with REST inside that root
 *     (openat2 RESOLVE_IN_ROOT: absolute symlinks and ".." stay in it);
 *   - the file is first opened O_PATH (no open side effects, no blocking),
 *     checked with fstat (regular file, size cap, device/inode when known),
 *     and only then reopened for reading through /proc/self/fd.
 */
#ifndef PMUTOP_SAFE_OPEN_H
#define PMUTOP_SAFE_OPEN_H

#include <stdint.h>
#include <sys/stat.h>

/* Files larger than this are never opened by default (debug files included). */
#define SAFE_OPEN_MAX_SIZE (4ULL << 30)

struct safe_open_want {
	uint64_t max_size;  /* 0: SAFE_OPEN_MAX_SIZE */
	uint64_t dev, ino;  /* both 0: any file; else st_dev/st_ino must match */
	int nofollow;       /* refuse a symlink as the last component */
};

/*
 * Open path read-only (O_CLOEXEC) under the rules above. want may be NULL.
 * Returns the fd, or -errno: -EINVAL not a regular file, -EFBIG over the
 * size cap, -ESTALE device/inode differ from want's (the path now names
 * another file), -ELOOP a symlink where none is allowed, or open's error.
 * *st (may be NULL) receives the file's stat.
 */
int safe_open(const char *path, const struct safe_open_want *want, struct stat *st);

/* Text for safe_open()'s errors ("not a regular file", ...), else strerror. */
const char *safe_open_strerror(int rc);

/*
 * Whether name is a plain file name (no '/', not "." or "..", not empty, no
 * control characters): what a .gnu_debuglink or other name from a target's
 * file must be before it is joined to a directory.
 */
int safe_open_plain_name(const char *name);

#endif
