/*
 * svg.h - the aggregate as a self-contained SVG flame graph, the file
 * flamegraph.pl writes and people attach to bug reports: one <rect> per
 * frame wider than 0.1 px, root at the bottom, width proportional to the
 * frame's weight (the run's first event), its name and weight in a <title>
 * (the browser's tooltip). Embedded JavaScript does what flamegraph.pl's
 * does: click a frame to zoom into it, Ctrl-F (or the "Search" button) to
 * highlight a regex's matches with the share they cover, "Reset Zoom".
 * It opens scrolled to the root, so a deep graph does not open on empty
 * space. Names come from the target and may be hostile: they are written
 * as escaped XML text, so nothing a target names itself becomes markup.
 */
#ifndef PMUTOP_SVG_H
#define PMUTOP_SVG_H

#include <stddef.h>
#include <stdio.h>

struct aggregate;

/*
 * Write the flame graph of a to out; title (the command line or the loaded
 * file, may be NULL) heads it, with the event, samples, duration and every
 * reduction of the data (lost samples, stacks cut at --max-depth, frames
 * pruned over the memory budget). Returns 0, -ENOMEM or -EIO (a write
 * error on out).
 */
int svg_write_stream(const struct aggregate *a, const char *title, FILE *out);

/*
 * Write it to path atomically (atomic_write.h; "-" is stdout). Returns 0
 * or -errno with a message naming path in err.
 */
int svg_write(const struct aggregate *a, const char *title, const char *path, char *err,
	      size_t errlen);

#endif
