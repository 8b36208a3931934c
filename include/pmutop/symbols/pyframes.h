/*
 * pyframes.h - Python frames in the sampling session's stacks.
 *
 * For each sample of a CPython process, the sampled thread's Python
 * frames are read from the interpreter (target/pyproc.h) as the sample is
 * processed and merged into its symbolized native frames (pymerge.h), so
 * the aggregate and every output receive ordinary frames: a Python
 * function is a frame whose func is co_qualname, whose mapping stands for
 * its source file (a mapping per file, path = co_filename, no module: the
 * pprof "mapping for Python code") and whose src_line is the line. Each
 * (function, file, line) gets an address of its own in that mapping, so
 * the aggregate's address cache names it right.
 *
 * The read comes after the sample (the ring buffer is drained some
 * milliseconds later) while the thread runs on: a sample whose native
 * interpreter activations and Python runs do not pair up is counted
 * (mismatch), as are the threads and processes it could not read.
 * Processes are tried when first sampled, again after 1, 2, 4, then
 * every 8 s while they are not (yet) Python; a CPython version without a
 * layout is said once (pyframes_summary) and left native.
 */
#ifndef PMUTOP_PYFRAMES_H
#define PMUTOP_PYFRAMES_H

#include <stddef.h>
#include <sys/types.h>

#include "pmutop/symbols/pymerge.h"

struct frame;
struct pyframes;

/* A reader for mode (PY_OFF: one that does nothing), NULL on ENOMEM. */
struct pyframes *pyframes_new(enum py_mode mode, unsigned max_depth);
/* NULL is a no-op; frames handed out die with it. */
void pyframes_free(struct pyframes *pf);

/*
 * The sample's frames with thread tid's (process pid) Python frames merged
 * in: in[0..n) leaf first, symbolized. smp (may be NULL: no registers or
 * stack copy, as with --unwind fp/ptrace) is the sample: its stack copy
 * gives the frame current when it fired (pyproc_stack_at). Returns the count and sets *out -
 * to in when nothing changed (not Python, PY_OFF, no Python frame), else
 * to a buffer of the reader's (at most max_depth frames, valid until the
 * next call). Never fails: what cannot be read is counted.
 */
struct perf_sample;
unsigned pyframes_merge(struct pyframes *pf, pid_t pid, pid_t tid, const struct perf_sample *smp,
			const struct frame *in, unsigned n, const struct frame **out);

/*
 * One line for the summary ("Python 3.11.2 (pid 123): 4,123 samples with
 * Python frames, 12 (0.3%) mismatched ...", or a version without a
 * layout); "" when nothing Python was met. Returns buf.
 */
const char *pyframes_summary(const struct pyframes *pf, char *buf, size_t len);

#endif
