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
 *
 * Why the target's rights for the files its DWARF names (safe_open_as):
 * being inside the target's root is not enough when the target shares the
 * host's (a process of `nobody` on the host: its root is "/"). Its DWARF may
 * name any path - /root/secret, a device - and root would open it for it.
 * The walk and the open therefore run with the target's filesystem uid, gid
 * and groups, on the calling thread only (the raw setfsuid/setfsgid/
 * setgroups system calls are per thread; glibc's wrappers would change
 * every thread): the kernel then decides, with its own rules (modes, ACLs,
 * LSMs), exactly as for the target. Changing the fsuid from 0 drops the
 * DAC-override capabilities from the thread's effective set, and changing
 * it back restores them.
 */
#include "pmutop/target/safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
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

/*
 * The checks on an O_PATH descriptor (closed here), then the reopen for
 * reading through /proc/self/fd: the fd or -errno.
 */
static int check_reopen(int pfd, const struct safe_open_want *want, struct stat *st)
{
	uint64_t cap = want && want->max_size ? want->max_size : SAFE_OPEN_MAX_SIZE;
	char self[64];
	int fd, rc;

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

int safe_open(const char *path, const struct safe_open_want *want, struct stat *st)
{
	struct stat sb;
	int pfd;

	pfd = open_path(path, want && want->nofollow);
	if (pfd < 0)
		return pfd;
	return check_reopen(pfd, want, st ? st : &sb);
}

/*
 * "Uid:\treal\teffective\tsaved\tfs": the id when all four are the same;
 * -EPERM when they differ (a set-user-ID program the target exec'd just
 * now would lend it root's effective ids: such a process gets no one's).
 */
static int one_id(const char *line, unsigned long *id)
{
	unsigned long v[4];

	if (sscanf(line, "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4)
		return -EPROTO;
	if (v[0] != v[1] || v[0] != v[2] || v[0] != v[3])
		return -EPERM;
	*id = v[0];
	return 0;
}

int safe_open_cred_of(pid_t pid, struct safe_open_cred *c)
{
	char path[64], line[4096];
	int got = 0, rc = 0;
	unsigned long id = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	memset(c, 0, sizeof(*c));
	while (!rc && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Uid:", 4)) {
			rc = one_id(line + 4, &id);
			c->uid = (uid_t)id;
			got |= 1;
		} else if (!strncmp(line, "Gid:", 4)) {
			rc = one_id(line + 4, &id);
			c->gid = (gid_t)id;
			got |= 2;
		} else if (!strncmp(line, "Groups:", 7)) {
			char *p = line + 7, *end;

			for (;;) {
				unsigned long g = strtoul(p, &end, 10);

				if (end == p)
					break;
				if (c->ngroups == SAFE_OPEN_MAX_GROUPS) {
					rc = -E2BIG;
					break;
				}
				c->groups[c->ngroups++] = (gid_t)g;
				p = end;
			}
			got |= 4;
		}
	}
	fclose(f);
	if (!rc && got != 7)
		rc = -EPROTO;
	return rc;
}

/* The calling thread's filesystem ids and groups, to give back. */
struct thread_cred {
	uid_t fsuid;
	gid_t fsgid;
	int ngroups;
	gid_t groups[SAFE_OPEN_MAX_GROUPS * 4];
};

static void give_back(const struct thread_cred *t)
{
	/* The fsuid first: back to 0, it brings the DAC capabilities back. */
	syscall(SYS_setfsuid, t->fsuid);
	syscall(SYS_setfsgid, t->fsgid);
	if (t->ngroups >= 0)
		syscall(SYS_setgroups, (size_t)t->ngroups, t->groups);
}

/* Take c's rights on this thread; 0, or -EPERM (with ours back). */
static int take(const struct safe_open_cred *c, struct thread_cred *t)
{
	t->fsuid = (uid_t)syscall(SYS_setfsuid, -1);
	t->fsgid = (gid_t)syscall(SYS_setfsgid, -1);
	t->ngroups = (int)syscall(SYS_getgroups, SAFE_OPEN_MAX_GROUPS * 4, t->groups);
	if (t->ngroups < 0)
		return -EPERM;
	if (syscall(SYS_setgroups, c->ngroups, c->groups)) {
		t->ngroups = -1; /* unchanged */
		return -EPERM;
	}
	syscall(SYS_setfsgid, c->gid);
	syscall(SYS_setfsuid, c->uid);
	if ((uid_t)syscall(SYS_setfsuid, -1) != c->uid || (gid_t)syscall(SYS_setfsgid, -1) != c->gid) {
		give_back(t);
		return -EPERM;
	}
	return 0;
}

/* Whether this thread can read past file modes (CAP_DAC_OVERRIDE/READ_SEARCH). */
static bool dac_override(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return true; /* unknown: assume the worst */
	return d[0].effective & ((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
}

int safe_open_as(int root_fd, const char *path, const struct safe_open_cred *c,
		 const struct safe_open_want *want, struct stat *st)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (want && want->nofollow ? O_NOFOLLOW : 0),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	struct thread_cred t;
	struct stat sb;
	bool same = (uid_t)syscall(SYS_setfsuid, -1) == c->uid &&
		    (gid_t)syscall(SYS_setfsgid, -1) == c->gid;
	bool taken = false;
	int pfd, rc;

	if (!same) {
		rc = take(c, &t);
		if (rc && dac_override())
			return rc;
		taken = !rc;
	}
	while (*path == '/')
		path++;
	pfd = (int)syscall(SYS_openat2, root_fd, *path ? path : ".", &how, sizeof(how));
	rc = pfd < 0 ? -errno : check_reopen(pfd, want, st ? st : &sb);
	if (taken)
		give_back(&t);
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
