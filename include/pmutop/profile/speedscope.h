/*
 * speedscope.h - the aggregate as a speedscope JSON file (py-spy's
 * `-f speedscope`): speedscope's file format, one "sampled" profile of the
 * run's first event whose samples are the distinct stacks (frame indices
 * into shared.frames, root first) and whose weights are their event
 * counts, in "nanoseconds" for a clock event and "none" for a count.
 * https://www.speedscope.app/file-format-schema.json is the schema.
 */
#ifndef PMUTOP_SPEEDSCOPE_H
#define PMUTOP_SPEEDSCOPE_H

#include <stddef.h>
#include <stdio.h>

struct aggregate;

/*
 * Write the file to out; name (the command line or loaded file, may be
 * NULL) names the profile group. Frames are the folded stacks' frames
 * (folded.h): inlined frames separate, the same name one frame. Returns
 * 0, -ENOMEM or -EIO (a write error on out).
 */
int speedscope_write_stream(const struct aggregate *a, const char *name, FILE *out);

/*
 * Write it to path atomically (atomic_write.h; "-" is stdout). Returns 0
 * or -errno with a message naming path in err.
 */
int speedscope_write(const struct aggregate *a, const char *name, const char *path, char *err,
		     size_t errlen);

#endif
