/*
 * atomic_write.c - replace a file with new bytes atomically: a temp file
 * next to the target (mkstemp), fsync, rename, then fsync the directory.
 *
 * Every whole-file output goes through here (pprof profiles, folded
 * stacks, --dump-split's files, the live view's `w`), and so does the
 * check, made before sampling starts, that the output can be written at
 * all - so the rules for an output path are the same everywhere:
 *   "-" (and /dev/stdout, /dev/fd/N)  our own descriptor, written in place
 *   a symlink      followed: its target is replaced atomically, never the
 *                  link (refused if it is someone else's in a directory
 *                  someone else can write: /tmp, another user's home)
 *   a device/FIFO  opened and written in place (no temp file, no rename);
 *                  a FIFO or socket refused unless ours or root's; a FIFO
 *                  is opened without blocking and written with a bound
 *   a directory    an error
 *   anything else  temp file next to it (name shortened to fit NAME_MAX),
 *                  fsync, rename; the old file's permission bits (never
 *                  setuid/setgid) and, as root, owner are kept.
 * Error messages always end with the reason: long paths are shortened in
 * the middle (atomic_write_label) so nothing is cut off.
 *
 * Why the ownership rules (issue 32): pmutop as root writing into a
 * directory another user can write (a --dump-every directory they own,
 * /tmp) would otherwise let that user choose where root's bytes go - a
 * symlink at the next (predictable) window name pointing at /etc/shadow - or
 * take the profile and stall the write - a FIFO there, read by them or by
 * no one, while SIGINT/SIGTERM wait blocked for the write to end.
 */
#include "pmutop/profile/atomic_write.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

const char *atomic_write_label(const char *path, char *buf, size_t len)
{
	size_t n = strlen(path), keep = 200;

	if (n <= keep || len < keep + 8)
		return path;
	/* The start says where, the end which file: keep both, cut the middle. */
	snprintf(buf, len, "%.60s...%s", path, path + n - (keep - 63));
	return buf;
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

/*
 * mkstemp on "<path>.tmpXXXXXX" next to path; the name part is shortened
 * so that the temp name fits NAME_MAX even when path's own name does.
 */
static int temp_create(const char *path, char **tmp, int *fd)
{
	const char *base = strrchr(path, '/');
	size_t len = strlen(path), blen, cut = 0;
	char *t;

	base = base ? base + 1 : path;
	blen = strlen(base);
	if (blen + sizeof(".tmpXXXXXX") - 1 > NAME_MAX)
		cut = blen + sizeof(".tmpXXXXXX") - 1 - NAME_MAX;
	t = malloc(len + sizeof(".tmpXXXXXX"));
	if (!t)
		return -ENOMEM;
	memcpy(t, path, len - cut);
	memcpy(t + len - cut, ".tmpXXXXXX", sizeof(".tmpXXXXXX"));
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
	char *dir = dir_of(path), l1[280], l2[280];
	const char *d = dir ? dir : ".";
	struct stat st;

	if (rc == -ENOENT && stat(d, &st) != 0)
		snprintf(err, errlen, "cannot write %s to '%s': directory '%s' does not exist",
			 what, atomic_write_label(path, l1, sizeof(l1)),
			 atomic_write_label(d, l2, sizeof(l2)));
	else
		snprintf(err, errlen, "cannot write %s to '%s': cannot create files in '%s': %s",
			 what, atomic_write_label(path, l1, sizeof(l1)),
			 atomic_write_label(d, l2, sizeof(l2)), strerror(-rc));
	free(dir);
}

/* Where and how an output goes (see atomic_write.h for the rules). */
struct dest {
	int fd;          /* >= 0: write to this descriptor of ours in place ("-") */
	bool in_place;   /* a device, FIFO or socket: open and write, no rename */
	char *path;      /* the file really written (symlinks followed), malloc'd */
};

/* "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: that fd, else -1. */
static int std_fd(const char *path)
{
	const char *n = NULL;
	char *end;
	long v;

	if (!strcmp(path, "-") || !strcmp(path, "/dev/stdout"))
		return STDOUT_FILENO;
	if (!strcmp(path, "/dev/stderr"))
		return STDERR_FILENO;
	if (!strncmp(path, "/dev/fd/", 8))
		n = path + 8;
	else if (!strncmp(path, "/proc/self/fd/", 14))
		n = path + 14;
	if (!n || !*n)
		return -1;
	errno = 0;
	v = strtol(n, &end, 10);
	return errno || *end || v < 0 || v > 1 << 20 ? -1 : (int)v;
}

/*
 * Whether following the symlink at link (with stat lst) is unsafe: a link
 * not ours in a directory someone else than us can write (owned by another
 * user, or writable by its group or by all) - that someone may have put it
 * there to steer our write. The kernel's fs.protected_symlinks covers only
 * sticky world-writable directories, and may be off. In a sticky directory
 * the directory's owner's links are still followed, as the kernel does.
 */
static bool link_unsafe(const char *link, const struct stat *lst)
{
	char *dir = dir_of(link);
	struct stat dst;
	bool bad = false;

	if (lst->st_uid != geteuid()) {
		if (!dir || stat(dir, &dst) != 0)
			bad = true;
		else if ((dst.st_mode & S_ISVTX) && (dst.st_mode & S_IWOTH))
			bad = lst->st_uid != dst.st_uid;
		else
			bad = dst.st_uid != geteuid() || (dst.st_mode & (S_IWGRP | S_IWOTH));
	}
	free(dir);
	return bad;
}

/*
 * Resolve path to where its bytes go: fills *d, or returns -errno with a
 * message. Symlinks are followed (their target is written, never the link
 * replaced); an existing directory is an error.
 */
static int resolve(const char *path, const char *what, struct dest *d, char *err, size_t errlen)
{
	char l1[280], l2[280];
	char *cur = NULL;
	struct stat st;
	int hops = 0, rc;

	memset(d, 0, sizeof(*d));
	d->fd = -1;
	if (!*path) {
		snprintf(err, errlen, "cannot write %s: empty output path", what);
		return -EINVAL;
	}
	d->fd = std_fd(path);
	if (d->fd >= 0)
		return 0;
	if (path[strlen(path) - 1] == '/') {
		snprintf(err, errlen, "cannot write %s to '%s': is a directory", what,
			 atomic_write_label(path, l1, sizeof(l1)));
		return -EISDIR;
	}
	cur = strdup(path);
	if (!cur)
		goto nomem;
	for (;;) {
		char target[PATH_MAX + 1], *next, *dir;
		ssize_t n;

		if (lstat(cur, &st) != 0) {
			rc = -errno;
			if (rc == -ENOENT)
				break; /* a new file */
			snprintf(err, errlen, "cannot write %s to '%s': %s", what,
				 atomic_write_label(cur, l1, sizeof(l1)), strerror(-rc));
			goto fail;
		}
		if (!S_ISLNK(st.st_mode))
			break;
		if (++hops > 40) {
			rc = -ELOOP;
			snprintf(err, errlen, "cannot write %s to '%s': %s", what,
				 atomic_write_label(path, l1, sizeof(l1)), strerror(ELOOP));
			goto fail;
		}
		if (link_unsafe(cur, &st)) {
			rc = -EPERM;
			snprintf(err, errlen, "cannot write %s to '%s': refusing to follow a symlink "
				 "owned by uid %u in a directory others can write (write to its "
				 "target directly)", what, atomic_write_label(cur, l1, sizeof(l1)),
				 (unsigned)st.st_uid);
			goto fail;
		}
		n = readlink(cur, target, sizeof(target) - 1);
		if (n < 0 || n >= (ssize_t)sizeof(target) - 1) {
			rc = n < 0 ? -errno : -ENAMETOOLONG;
			snprintf(err, errlen, "cannot write %s to '%s': cannot read the symlink: %s",
				 what, atomic_write_label(cur, l1, sizeof(l1)), strerror(-rc));
			goto fail;
		}
		target[n] = '\0';
		dir = target[0] == '/' ? NULL : dir_of(cur);
		if (target[0] != '/' && !dir)
			goto nomem;
		if (dir ? asprintf(&next, "%s/%s", dir, target) < 0 : !(next = strdup(target))) {
			free(dir);
			goto nomem;
		}
		free(dir);
		free(cur);
		cur = next;
		rc = std_fd(cur);
		if (rc >= 0) { /* e.g. /dev/stdout -> /proc/self/fd/1 */
			d->fd = rc;
			free(cur);
			return 0;
		}
	}
	d->path = cur;
	if (lstat(cur, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "cannot write %s to '%s': is a directory%s%s", what,
				 atomic_write_label(path, l1, sizeof(l1)), strcmp(cur, path) ? ": " : "",
				 strcmp(cur, path) ? atomic_write_label(cur, l2, sizeof(l2)) : "");
			free(d->path);
			d->path = NULL;
			return -EISDIR;
		}
		d->in_place = !S_ISREG(st.st_mode);
		/*
		 * Someone else's FIFO or socket takes (or holds up) what we write.
		 * (A device node only a privileged process can make: a user's own
		 * terminal, /dev/pts/N, stays writable.)
		 */
		if ((S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) && st.st_uid != geteuid() &&
		    st.st_uid != 0) {
			snprintf(err, errlen, "cannot write %s to '%s': refusing to write into a %s "
				 "owned by uid %u", what, atomic_write_label(path, l1, sizeof(l1)),
				 S_ISFIFO(st.st_mode) ? "FIFO" : "socket", (unsigned)st.st_uid);
			free(d->path);
			d->path = NULL;
			return -EPERM;
		}
	}
	return 0;
nomem:
	rc = -ENOMEM;
	snprintf(err, errlen, "cannot write %s to '%s': %s", what,
		 atomic_write_label(path, l1, sizeof(l1)), strerror(ENOMEM));
fail:
	free(cur);
	return rc;
}

int atomic_write_check(const char *path, const char *what, char *err, size_t errlen)
{
	char *dir = NULL, *tmp = NULL, l1[280], l2[280];
	sigset_t block, old;
	struct dest d;
	struct stat st;
	int fd = -1, rc;

	rc = resolve(path, what, &d, err, errlen);
	if (rc || d.fd >= 0)
		return rc;
	if (d.in_place) {
		/* A device or FIFO: opening it now could block or have effects. */
		if (access(d.path, W_OK) != 0) {
			rc = -errno;
			snprintf(err, errlen, "cannot write %s to '%s': %s", what,
				 atomic_write_label(path, l1, sizeof(l1)), strerror(-rc));
		}
		goto out;
	}
	dir = dir_of(d.path);
	if (!dir) {
		rc = -ENOMEM;
		snprintf(err, errlen, "cannot write %s to '%s': %s", what,
			 atomic_write_label(path, l1, sizeof(l1)), strerror(ENOMEM));
		goto out;
	}
	if (stat(dir, &st) != 0) {
		rc = -errno;
		if (rc == -ENOENT)
			snprintf(err, errlen, "cannot write %s to '%s': directory '%s' does not exist",
				 what, atomic_write_label(path, l1, sizeof(l1)),
				 atomic_write_label(dir, l2, sizeof(l2)));
		else
			snprintf(err, errlen, "cannot write %s to '%s': directory '%s': %s",
				 what, atomic_write_label(path, l1, sizeof(l1)),
				 atomic_write_label(dir, l2, sizeof(l2)), strerror(-rc));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		rc = -ENOTDIR;
		snprintf(err, errlen, "cannot write %s to '%s': '%s' is not a directory", what,
			 atomic_write_label(path, l1, sizeof(l1)), atomic_write_label(dir, l2, sizeof(l2)));
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
	rc = temp_create(d.path, &tmp, &fd);
	if (rc) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		temp_error(d.path, what, rc, err, errlen);
		goto out;
	}
	close(fd);
	unlink(tmp);
	sigprocmask(SIG_SETMASK, &old, NULL);
out:
	free(tmp);
	free(dir);
	free(d.path);
	return rc;
}

/* The process umask, read without changing it (umask(2) would race other threads). */
static mode_t current_umask(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[128];
	unsigned m = 022;

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Umask: %o", &m) == 1)
				break;
		fclose(f);
	}
	return (mode_t)m & 0777;
}

/*
 * Permissions (and, as root, owner) of the regular file being replaced -
 * never its setuid/setgid/sticky bits - else what open(..., 0666) gives.
 */
static void set_new_file_mode(int fd, const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		if (geteuid() == 0 && fchown(fd, st.st_uid, st.st_gid) != 0) {
			/* best effort: the file is still written, owned by root */
		}
		fchmod(fd, st.st_mode & 0777);
		return;
	}
	fchmod(fd, 0666 & ~current_umask());
}

/* How long a FIFO may go without a reader, or a reader without reading. */
#define FIFO_WAIT_MS 10000

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A SIGINT/SIGTERM/SIGHUP waiting (blocked while the profile is written). */
static bool stop_pending(void)
{
	sigset_t p;

	return sigpending(&p) == 0 &&
	       (sigismember(&p, SIGINT) == 1 || sigismember(&p, SIGTERM) == 1 ||
		sigismember(&p, SIGHUP) == 1);
}

/*
 * A FIFO, opened for writing without blocking: a reader has FIFO_WAIT_MS
 * to come (tried every 50 ms), a pending stop signal ends the wait. The fd
 * (O_NONBLOCK) or -errno (-ENXIO: no reader came, -EINTR: a signal).
 */
static int open_fifo(const char *path)
{
	uint64_t until = now_ms() + FIFO_WAIT_MS;

	for (;;) {
		int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		struct timespec ts = { 0, 50 * 1000000 };

		if (fd >= 0 || errno != ENXIO)
			return fd >= 0 ? fd : -errno;
		if (stop_pending())
			return -EINTR;
		if (now_ms() >= until)
			return -ENXIO;
		nanosleep(&ts, NULL);
	}
}

/*
 * write_all for a non-blocking descriptor: waits for room at most
 * FIFO_WAIT_MS at a time, and not at all once a stop signal is pending.
 */
static int write_bounded(int fd, const unsigned char *p, size_t len)
{
	uint64_t until = now_ms() + FIFO_WAIT_MS;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w > 0) {
			p += w;
			len -= (size_t)w;
			until = now_ms() + FIFO_WAIT_MS;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (stop_pending())
			return -EINTR;
		if (now_ms() >= until)
			return -ETIMEDOUT;
		{
			struct pollfd pf = { .fd = fd, .events = POLLOUT };

			poll(&pf, 1, 100);
		}
	}
	return 0;
}

/* Write to a descriptor in place: stdout, a device, a FIFO. */
static int write_in_place(int fd, const char *path, const void *buf, size_t len,
			  const char *what, char *err, size_t errlen)
{
	const unsigned char *b = buf;
	char l1[280];
	int rc, fl = fcntl(fd, F_GETFL);

	if (len >= 2 && b[0] == 0x1f && b[1] == 0x8b && isatty(fd)) {
		snprintf(err, errlen, "cannot write %s to '%s': it is a terminal and the %s is "
			 "binary (redirect to a file or a pipe)", what,
			 atomic_write_label(path, l1, sizeof(l1)), what);
		return -ENOTTY;
	}
	rc = fl >= 0 && (fl & O_NONBLOCK) ? write_bounded(fd, buf, len) : write_all(fd, buf, len);
	if (rc == -ETIMEDOUT || rc == -EINTR) {
		snprintf(err, errlen, "cannot write %s to '%s': %s", what,
			 atomic_write_label(path, l1, sizeof(l1)),
			 rc == -EINTR ? "interrupted by a signal while its reader was not reading"
				      : "its reader stopped reading (nothing taken for 10 s)");
		return rc;
	}
	if (rc)
		snprintf(err, errlen, "cannot write %s to '%s': write failed: %s", what,
			 atomic_write_label(path, l1, sizeof(l1)), strerror(-rc));
	return rc;
}

int atomic_write_file(const char *path, const void *buf, size_t len, const char *what,
		      char *err, size_t errlen)
{
	const char *step;
	char *tmp = NULL, *dir, l1[280];
	struct dest d;
	int fd = -1, rc;

	rc = resolve(path, what, &d, err, errlen);
	if (rc)
		return rc;
	if (d.fd >= 0)
		return write_in_place(d.fd, path, buf, len, what, err, errlen);
	if (d.in_place) {
		struct stat st;

		/* A FIFO: no reader would block the open for good, with signals held. */
		if (stat(d.path, &st) == 0 && S_ISFIFO(st.st_mode)) {
			fd = open_fifo(d.path);
		} else {
			fd = open(d.path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
			if (fd < 0)
				fd = -errno;
		}
		if (fd < 0) {
			rc = fd;
			snprintf(err, errlen, "cannot write %s to '%s': %s", what,
				 atomic_write_label(path, l1, sizeof(l1)),
				 rc == -ENXIO ? "a FIFO with no reader (none came in 10 s)"
				 : rc == -EINTR ? "interrupted while waiting for the FIFO's reader"
				 : strerror(-rc));
		} else {
			rc = write_in_place(fd, path, buf, len, what, err, errlen);
			close(fd);
		}
		free(d.path);
		return rc;
	}
	rc = temp_create(d.path, &tmp, &fd);
	if (rc) {
		temp_error(d.path, what, rc, err, errlen);
		free(d.path);
		return rc;
	}
	set_new_file_mode(fd, d.path);
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
	if (rename(tmp, d.path) != 0) {
		rc = -errno;
		goto fail;
	}
	dir = dir_of(d.path);
	if (dir) {
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
		free(dir);
	}
	free(tmp);
	free(d.path);
	return 0;
fail:
	snprintf(err, errlen, "cannot write %s to '%s': %s: %s", what,
		 atomic_write_label(path, l1, sizeof(l1)), step, strerror(-rc));
	if (fd >= 0)
		close(fd);
	if (tmp)
		unlink(tmp);
	free(tmp);
	free(d.path);
	return rc;
}

int atomic_write_text(const char *path, const char *what, int (*fill)(FILE *out, void *arg),
		      void *arg, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int rc;

	if (!mem) {
		rc = -errno;
		snprintf(err, errlen, "cannot write the %s to '%s': %s", what, path, strerror(-rc));
		return rc;
	}
	rc = fill(mem, arg);
	if (fclose(mem) != 0 && !rc)
		rc = -ENOMEM;
	if (rc) {
		snprintf(err, errlen, "cannot write the %s to '%s': %s", what, path,
			 strerror(rc == -EIO ? ENOMEM : -rc));
		free(buf);
		return rc;
	}
	rc = atomic_write_file(path, buf, len, what, err, errlen);
	free(buf);
	return rc;
}
