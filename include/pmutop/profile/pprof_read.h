/*
 * pprof_read.h - read a pprof profile (gzip-compressed or not) back into an
 * aggregate, so `pmutop --load` shows saved profiles in the same view.
 *
 * Reads what pmutop writes (round trip: same stacks, threads, counts, event,
 * period, lost/throttled) and profiles from Go's ecosystem. One sample type
 * is kept, chosen as pprof does: default_sample_type when set, else the
 * last. Sample counts come from a "samples" type when there is one, else a
 * sample message counts 1. Locations with inlined frames (several Lines)
 * become one frame per Line, innermost first, as pprof shows them;
 * locations without Lines are named "module+0xOFF" or "0xADDR". Samples
 * whose chosen value is zero or negative (diff profiles) are skipped.
 * Threads come from the "tid" (number) and "thread" (string) labels;
 * samples without a tid label go to thread 0.
 *
 * Everything is bounds-checked: the input is untrusted (and fuzzed).
 */
#ifndef PMUTOP_PPROF_READ_H
#define PMUTOP_PPROF_READ_H

#include <stddef.h>

struct aggregate;

/* Largest profile accepted, compressed or after decompression (bytes). */
#define PPROF_READ_MAX_BYTES (512u << 20)
/*
 * Amplification caps: a small file can describe a huge profile (a location
 * with a million inlined lines, referenced by every sample). Inlined
 * frames per location, frames per sample, and frames over all samples.
 */
#define PPROF_READ_MAX_LINES 4096u
#define PPROF_READ_MAX_DEPTH 65536u
#define PPROF_READ_MAX_FRAMES (64u << 20)

/*
 * Decode the profile in buf[0..len) into a new aggregate (*out, freed with
 * aggregate_free()). Returns 0; -EINVAL for anything malformed (truncated
 * gzip, bad protobuf, an id that points nowhere, a string index out of the
 * table, too large) with the reason in err; or -ENOMEM.
 */
int pprof_read_buf(const void *buf, size_t len, struct aggregate **out,
		   char *err, size_t errlen);

/*
 * pprof_read_buf with a lower cap than PPROF_READ_MAX_BYTES on the input and
 * decompressed sizes (max_bytes, at most that): fuzzers and tests use it to
 * hit the "too large" path without allocating half a gigabyte.
 */
int pprof_read_buf_max(const void *buf, size_t len, size_t max_bytes, struct aggregate **out,
		       char *err, size_t errlen);

/* The same from a file; err names the path. Also -errno when it can't be read. */
int pprof_read_file(const char *path, struct aggregate **out, char *err, size_t errlen);

#endif
