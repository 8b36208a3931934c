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

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

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

/* Supplementary groups kept for a target's rights (more are refused: -E2BIG). */
#define SAFE_OPEN_MAX_GROUPS 64

/*
 * A target's rights on files: its uid and gid and supplementary groups, as
 * /proc/PID/status gives them (pmutop's user namespace's ids).
 */
struct safe_open_cred {
	uid_t uid;
	gid_t gid;
	size_t ngroups;
	gid_t groups[SAFE_OPEN_MAX_GROUPS];
};

/*
 * Read process pid's rights from /proc/PID/status. Returns 0, or -errno
 * (-ESRCH gone, -EPERM its real, effective, saved and filesystem ids
 * differ - a set-user-ID program, whose rights are not its user's -,
 * -E2BIG too many groups, -EPROTO unreadable lines).
 */
int safe_open_cred_of(pid_t pid, struct safe_open_cred *c);

/*
 * A file a target names in its own files (a DWARF source path), opened the
 * way that target could: path is resolved inside root_fd (an O_PATH
 * descriptor of /proc/PID/root, taken while the process lived;
 * RESOLVE_IN_ROOT, so an absolute path or symlink stays inside), with c's
 * rights for the walk and the open - root's are not lent to a target, so a
 * file in a directory only root may enter is refused (-EACCES) - and under
 * safe_open()'s rules (regular file, size cap; no FIFO or device is opened).
 * The calling thread takes c's filesystem ids and groups for the duration
 * and gets its own back before returning; when it cannot take them (no
 * CAP_SETUID/CAP_SETGID) the file is opened with pmutop's own rights only if
 * those carry no DAC override (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), else
 * -EPERM. Returns the fd (O_RDONLY, O_CLOEXEC) or -errno as safe_open().
 */
int safe_open_as(int root_fd, const char *path, const struct safe_open_cred *c,
		 const struct safe_open_want *want, struct stat *st);

/* Text for safe_open()'s errors ("not a regular file", ...), else strerror. */
const char *safe_open_strerror(int rc);

/*
 * Whether name is a plain file name (no '/', not "." or "..", not empty, no
 * control characters): what a .gnu_debuglink or other name from a target's
 * file must be before it is joined to a directory.
 */
int safe_open_plain_name(const char *name);

#endif
