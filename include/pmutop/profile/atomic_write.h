/*
 * atomic_write.h - replace a file with new bytes atomically.
 *
 * The bytes go to a temp file in the same directory, which is fsync'd and
 * renamed over the target: readers see the old file or the whole new one,
 * never a truncated one, even after a full disk or a crash.
 */
#ifndef PMUTOP_ATOMIC_WRITE_H
#define PMUTOP_ATOMIC_WRITE_H

#include <stddef.h>

/*
 * Write buf[0..len) to path atomically. The new file keeps the permissions
 * of the file it replaces (else 0666 minus the umask). Returns 0 or -errno
 * with a message naming path and the failed step in err (what: "profile",
 * "folded stacks", ... used in the message).
 */
int atomic_write_file(const char *path, const void *buf, size_t len, const char *what,
		      char *err, size_t errlen);

/*
 * Check, before any work, that atomic_write_file(path) can succeed: path is
 * not a directory, device or FIFO, its directory exists and takes new files
 * (a probe file is created and removed). Returns 0 or -errno with a message
 * naming path and the reason in err.
 */
int atomic_write_check(const char *path, const char *what, char *err, size_t errlen);

#endif
