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
#include <stdio.h>

/*
 * Write buf[0..len) to path: atomically for a regular file (a symlink's
 * target is replaced, not the link), in place for "-" (stdout),
 * /dev/stdout, /dev/fd/N, devices and FIFOs; a directory is an error (see
 * atomic_write.c for every rule). A binary (gzip) buffer is not written to
 * a terminal. The new file keeps the permission bits of the file it
 * replaces, without setuid/setgid (else 0666 minus the umask). Returns 0 or
 * -errno with a message naming path, the failed step and the reason in err
 * (what: "profile", "folded stacks", ... used in the message).
 */
int atomic_write_file(const char *path, const void *buf, size_t len, const char *what,
		      char *err, size_t errlen);

/*
 * The same for a writer that prints to a stream: fill(out, arg) writes the
 * whole text into memory (0 or -errno; -EIO: the stream failed), which then
 * goes to path as atomic_write_file() writes it ("the SVG flame graph",
 * "folded stacks", ... in messages).
 */
int atomic_write_text(const char *path, const char *what, int (*fill)(FILE *out, void *arg),
		      void *arg, char *err, size_t errlen);

/*
 * Check, before any work, that atomic_write_file(path) can succeed: path is
 * not a directory, its directory exists and takes new files (a probe file
 * is created and removed); a device or FIFO is only checked for write
 * access (opening one could block). Returns 0 or -errno with a message
 * naming path and the reason in err.
 */
int atomic_write_check(const char *path, const char *what, char *err, size_t errlen);

/*
 * path for a message: itself when short, else its start and end around
 * "..." (written to buf) so that a message with it still fits and ends
 * with its reason. Returns path or buf.
 */
const char *atomic_write_label(const char *path, char *buf, size_t len);

#endif
