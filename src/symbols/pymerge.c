/*
 * pymerge.c - Python frames in place of the interpreter loop's native
 * activations (see pymerge.h).
 *
 * Runs are counted from the root: the outermost _PyEval_EvalFrameDefault
 * started first and its Python frames are the outermost ones, whatever
 * happened at the leaf end (where a sample catches calls half made).
 */
#include "pmutop/symbols/pymerge.h"

#include <string.h>

#include "pmutop/symbols/symbolize.h"
#include "pmutop/target/pyproc.h"

bool pymerge_is_eval(const struct frame *f)
{
	return f->func && !strcmp(f->func, "_PyEval_EvalFrameDefault");
}

/* Runs of py: run r is py[start[r] .. start[r + 1]), innermost run first. */
static unsigned runs_of(const struct py_frame *py, unsigned np, unsigned *start, unsigned cap)
{
	unsigned nr = 0;

	for (unsigned i = 0; i < np && nr < cap; i++) {
		if (i == 0 || py[i - 1].entry)
			start[nr++] = i;
	}
	return nr;
}

static void put(struct pymerge_item *out, unsigned cap, unsigned *n, bool python, unsigned index)
{
	if (*n < cap)
		out[(*n)++] = (struct pymerge_item){ python, index };
}

unsigned pymerge(const struct frame *nat, unsigned nn, const struct py_frame *py, unsigned np,
		 enum py_mode mode, struct pymerge_item *out, unsigned cap, bool *mismatch)
{
	unsigned start[1024], nr, nact = 0, n = 0, act, skip;

	if (mismatch)
		*mismatch = false;
	if (mode == PY_OFF || np == 0) {
		for (unsigned i = 0; i < nn; i++)
			put(out, cap, &n, false, i);
		return n;
	}
	if (mode == PY_ONLY) {
		for (unsigned i = 0; i < np; i++)
			put(out, cap, &n, true, i);
		return n;
	}
	nr = runs_of(py, np, start, sizeof(start) / sizeof(start[0]));
	for (unsigned i = 0; i < nn; i++)
		nact += pymerge_is_eval(&nat[i]);
	if (mismatch)
		*mismatch = nact != nr;
	if (!nact) {
		for (unsigned i = 0; i < nn; i++)
			put(out, cap, &n, false, i);
		for (unsigned i = 0; i < np; i++)
			put(out, cap, &n, true, i);
		return n;
	}
	/*
	 * Activation a (0 = innermost) takes run a + (nr - nact) when the
	 * runs outnumber the activations, the innermost activation also
	 * taking the extra runs; with more activations the innermost
	 * (nact - nr) stay native.
	 */
	skip = nact > nr ? nact - nr : 0;
	act = 0;
	for (unsigned i = 0; i < nn; i++) {
		unsigned r0, r1;

		if (!pymerge_is_eval(&nat[i])) {
			put(out, cap, &n, false, i);
			continue;
		}
		if (act < skip) {
			put(out, cap, &n, false, i);
			act++;
			continue;
		}
		/* runs [r0, r1) go here */
		if (nr > nact) {
			r0 = act == 0 ? 0 : act + (nr - nact);
			r1 = act + (nr - nact) + 1;
		} else {
			r0 = act - skip;
			r1 = r0 + 1;
		}
		for (unsigned r = r0; r < r1 && r < nr; r++) {
			unsigned end = r + 1 < nr ? start[r + 1] : np;

			for (unsigned k = start[r]; k < end; k++)
				put(out, cap, &n, true, k);
		}
		act++;
	}
	return n;
}
