/*
 * test_pymerge.c - Python frames in place of the interpreter loop's
 * activations (symbols/pymerge.c), on stacks shaped as python3.11's are.
 *
 * Native frames are named as symbolize.c names them; "E" marks an
 * activation of _PyEval_EvalFrameDefault. Python frames carry their entry
 * flag (3.11's is_entry: the first frame a C call of the loop ran). The
 * merged stack is written as a string of names, leaf first, Python frames
 * lower case: the cases are those --stacks meets (a thread in C called
 * from Python, a thread in the loop itself, threading's bootstrap with
 * two activations) and the mismatches a sample can catch.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "pmutop/symbols/pymerge.h"
#include "pmutop/symbols/symbolize.h"
#include "pmutop/target/pyproc.h"

/*
 * Merge native "NAMES" (space separated, E = the loop) with Python "names"
 * (a trailing '!' marks an entry frame) and return the result as a string.
 */
static const char *run(const char *nat, const char *py, enum py_mode mode, bool *mismatch)
{
	static char out[512], nbuf[256], pbuf[256];
	static struct frame nf[32];
	static struct py_frame pf[32];
	struct pymerge_item items[64];
	unsigned nn = 0, np = 0, n;
	size_t o = 0;
	char *save, *t;

	snprintf(nbuf, sizeof(nbuf), "%s", nat);
	snprintf(pbuf, sizeof(pbuf), "%s", py);
	for (t = strtok_r(nbuf, " ", &save); t; t = strtok_r(NULL, " ", &save))
		nf[nn++] = (struct frame){ .addr = 0x1000 + nn,
					   .func = !strcmp(t, "E") ? "_PyEval_EvalFrameDefault" : t };
	for (t = strtok_r(pbuf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		size_t l = strlen(t);
		bool entry = l && t[l - 1] == '!';

		if (entry)
			t[l - 1] = 0;
		pf[np++] = (struct py_frame){ .qualname = t, .filename = "f.py", .line = 1,
					      .entry = entry };
	}
	n = pymerge(nf, nn, pf, np, mode, items, 64, mismatch);
	out[0] = 0;
	for (unsigned i = 0; i < n; i++) {
		const char *name = items[i].python ? pf[items[i].index].qualname
						   : nf[items[i].index].func;

		if (!strcmp(name, "_PyEval_EvalFrameDefault"))
			name = "E";
		o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%s", i ? " " : "", name);
	}
	return out;
}

static void test_pairs(void **state)
{
	bool mm;

	(void)state;
	/* A thread sleeping in C called from Python: C above, Python for E. */
	assert_string_equal(run("nanosleep time_sleep Vectorcall E PyEval_EvalCode main",
				"inner outer <module>!", PY_ON, &mm),
			    "nanosleep time_sleep Vectorcall inner outer <module> PyEval_EvalCode main");
	assert_false(mm);
	/* In the loop itself: the leaf is Python. */
	assert_string_equal(run("E PyEval_EvalCode main", "f <module>!", PY_ON, &mm),
			    "f <module> PyEval_EvalCode main");
	assert_false(mm);
	/* threading: two activations, two runs, each in its place. */
	assert_string_equal(run("E Vectorcall E start_thread clone",
				"spin spinner_main! run _bootstrap_inner _bootstrap!", PY_ON, &mm),
			    "spin spinner_main Vectorcall run _bootstrap_inner _bootstrap start_thread clone");
	assert_false(mm);
}

static void test_mismatches(void **state)
{
	bool mm;

	(void)state;
	/* A call entering the loop: a run more than activations - extra runs go to the innermost. */
	assert_string_equal(run("E Vectorcall E main", "new! a b! c d!", PY_ON, &mm),
			    "new a b Vectorcall c d main");
	assert_true(mm);
	/* An activation more than runs: the innermost stays native. */
	assert_string_equal(run("helper E Vectorcall E main", "c d!", PY_ON, &mm),
			    "helper E Vectorcall c d main");
	assert_true(mm);
	/* No activation unwound (cut short): Python frames above the root, nothing dropped. */
	assert_string_equal(run("leaf helper", "a b!", PY_ON, &mm), "leaf helper a b");
	assert_true(mm);
	/* Runs without a final entry flag (a walk cut at the depth limit). */
	assert_string_equal(run("E main", "a b", PY_ON, &mm), "a b main");
	assert_false(mm);
}

static void test_modes(void **state)
{
	bool mm;

	(void)state;
	assert_string_equal(run("x E main", "a b!", PY_OFF, &mm), "x E main");
	assert_false(mm);
	assert_string_equal(run("x E main", "a b!", PY_ONLY, &mm), "a b");
	/* A thread without Python frames keeps its native stack, in any mode. */
	assert_string_equal(run("x y main", "", PY_ONLY, &mm), "x y main");
	assert_string_equal(run("x E main", "", PY_ON, &mm), "x E main");
	/* The output is capped, never overrun. */
	{
		struct frame nf[3] = { { .func = "a" }, { .func = "_PyEval_EvalFrameDefault" },
				       { .func = "c" } };
		struct py_frame pf[3] = { { .entry = false }, { .entry = false }, { .entry = true } };
		struct pymerge_item items[2];

		assert_int_equal(pymerge(nf, 3, pf, 3, PY_ON, items, 2, &mm), 2);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pairs),
		cmocka_unit_test(test_mismatches),
		cmocka_unit_test(test_modes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
