/*
 * pprof.h - write the aggregate as a gzip-compressed pprof profile
 * (github.com/google/pprof/proto/profile.proto), the format go tool pprof,
 * Parca, Pyroscope and speedscope read.
 */
#ifndef PMUTOP_PPROF_H
#define PMUTOP_PPROF_H

#include <stddef.h>
#include <stdint.h>

struct aggregate;

/*
 * Check before sampling that a profile can be written to path: its directory
 * exists and is writable, and path is not a directory. Returns 0 or -errno
 * with a message naming the path in err.
 */
int pprof_check_writable(const char *path, char *err, size_t errlen);

/*
 * Write the profile to path atomically: a temp file in the same directory,
 * fsync, rename. On any error (ENOSPC, EIO, ...) the temp file is removed and
 * -errno returned with the message in err; path is untouched.
 */
int pprof_write(const struct aggregate *a, const char *path, char *err, size_t errlen);

/*
 * Encode the profile, gzip-compressed, into a malloc'd buffer (*out, *outlen;
 * the caller frees). Returns 0 or -errno.
 */
int pprof_encode(const struct aggregate *a, unsigned char **out, size_t *outlen);

/*
 * The same for one event of a multi-event run (--dump-split): sample types
 * [samples, <event k>]. event -1 means every event (pprof_write/encode).
 */
int pprof_write_event(const struct aggregate *a, int event, const char *path, char *err,
		      size_t errlen);
int pprof_encode_event(const struct aggregate *a, int event, unsigned char **out, size_t *outlen);
/*
 * pprof_encode with only the samples of process pid (their threads'
 * agg_thread.pid; pid 0: every sample). Mappings, functions and locations
 * are the whole aggregate's, as pprof allows; `go tool pprof` shows only
 * what the samples reach. 0 or -errno.
 */
int pprof_encode_process(const struct aggregate *a, uint32_t pid, unsigned char **out,
			 size_t *outlen);

#endif
