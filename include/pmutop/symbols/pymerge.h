/*
 * pymerge.h - one stack out of a thread's native frames and its Python
 * frames, as py-spy --native shows it.
 *
 * The interpreter runs Python code inside _PyEval_EvalFrameDefault: each
 * activation of it on the native stack ran a run of Python frames (in
 * 3.11, from an "entry" frame - py_frame.entry - to the frame it was
 * executing). Those Python frames take the place of the activation; the
 * native frames around stay (the C a Python function called into - an
 * extension module, libz, the kernel - and the interpreter's own start).
 * Pure function over indices, shared by --stacks and the sampling session.
 */
#ifndef PMUTOP_PYMERGE_H
#define PMUTOP_PYMERGE_H

#include <stdbool.h>

struct frame;
struct py_frame;

/* --python: where Python frames go. */
enum py_mode {
	PY_OFF,     /* native frames only (no reading of the interpreter) */
	PY_ON,      /* Python frames in place of the interpreter loop's activations */
	PY_ONLY,    /* Python frames alone (a thread without any keeps its native stack) */
};

/* One frame of the merged stack: native frame i, or Python frame i. */
struct pymerge_item {
	bool python;
	unsigned index;
};

/* Whether native frame f is an activation of the interpreter loop. */
bool pymerge_is_eval(const struct frame *f);

/*
 * Merge native frames nat[0..nn) (leaf first, symbolized) with Python
 * frames py[0..np) (innermost first) into out[0..cap), leaf first; returns
 * the number written. The outermost activation takes the outermost run of
 * Python frames, and so on inwards. *mismatch (may be NULL) is set when
 * the activations and the runs do not pair up one to one (a sample caught
 * as a call entered or left the loop, a native unwind cut short, or
 * Python frames read a moment after the native ones): extra runs all go to
 * the innermost activation, extra activations stay native frames; with no
 * activation at all (an unwind that never reached the loop) the Python
 * frames go above the root - nothing is dropped.
 */
unsigned pymerge(const struct frame *nat, unsigned nn, const struct py_frame *py, unsigned np,
		 enum py_mode mode, struct pymerge_item *out, unsigned cap, bool *mismatch);

#endif
