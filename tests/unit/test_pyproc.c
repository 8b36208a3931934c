/*
 * test_pyproc.c - the CPython reader (target/pyproc.c) on hostile
 * structures, and on a real python3.11.
 *
 * Synthetic: CPython 3.11's structures laid out (with the offsets of
 * Debian's python3.11-dev headers) in this process's own memory, read
 * through process_vm_readv of our own pid (pyproc_open_at): a good chain
 * (names, files, lines from a location table, entry flags, who holds the
 * GIL), then the
 * chain looping, pointing into an unmapped page, at a code object that is
 * not readable, at a corrupt location table, a string claiming to be huge,
 * a thread list that loops, a tid without a thread state. Each must end
 * (no hang), return what it read and count why - never crash (check-asan
 * runs this too).
 *
 * Real: /usr/bin/python3.11 started here (skipped without it): found by
 * pyproc_open, version 3.11.x, its main thread listed with its tid and a
 * stack ending in <module>; this test process itself is not Python (-ENOENT
 * with a message).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pmutop/target/pyproc.h"

#define A(p) ((uint64_t)(uintptr_t)(p))

static void put64(uint8_t *b, unsigned off, uint64_t v)
{
	memcpy(b + off, &v, sizeof(v));
}

static void put32(uint8_t *b, unsigned off, uint32_t v)
{
	memcpy(b + off, &v, sizeof(v));
}

/* A compact ASCII str object of s (length claimed: len, or strlen when 0). */
static uint8_t *mkstr(const char *s, uint64_t len)
{
	size_t n = strlen(s);
	uint8_t *o = calloc(1, 48 + n + 1);

	assert_non_null(o);
	put64(o, 16, len ? len : n);
	o[32] = 1 << 2 | 1 << 5 | 1 << 6 | 1 << 7; /* kind 1, compact, ascii, ready */
	memcpy(o + 48, s, n);
	return o;
}

static uint8_t *mkbytes(const uint8_t *d, size_t n)
{
	uint8_t *o = calloc(1, 32 + n + 1);

	assert_non_null(o);
	put64(o, 16, n);
	memcpy(o + 32, d, n);
	return o;
}

/* Location table: 8 code units on firstlineno + 2 (one no-column entry, delta +2). */
static const uint8_t table_ok[] = { 0x80 | 13 << 3 | 7, 4 };

struct fake {
	uint8_t rt[600], is[64], ts[256], cf[32];
	uint8_t fr[4][80];
	uint8_t *code[4];
	uint8_t *names[4], *file, *table, *bad_table;
};

static struct fake *mkfake(void)
{
	static const char *const q[4] = { "inner", "Klass.mid", "outer", "<module>" };
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->file = mkstr("/srv/app.py", 0);
	f->table = mkbytes(table_ok, sizeof(table_ok));
	f->bad_table = mkbytes((const uint8_t *)"\x01\x02\x03", 3);
	put64(f->rt, 40, A(f->is));
	put64(f->is, 16, A(f->ts));
	put32(f->ts, 160, (uint32_t)syscall(SYS_gettid));
	put64(f->ts, 56, A(f->cf));
	put64(f->cf, 8, A(f->fr[0]));
	for (int i = 0; i < 4; i++) {
		f->names[i] = mkstr(q[i], 0);
		f->code[i] = calloc(1, 192 + 16);
		assert_non_null(f->code[i]);
		put32(f->code[i], 72, (uint32_t)(10 * (i + 1)));      /* co_firstlineno */
		put64(f->code[i], 112, A(f->file));
		put64(f->code[i], 128, A(f->names[i]));
		put64(f->code[i], 136, A(f->table));
		put64(f->fr[i], 32, A(f->code[i]));
		put64(f->fr[i], 48, i < 3 ? A(f->fr[i + 1]) : 0);
		put64(f->fr[i], 56, A(f->code[i]) + 184 + 2 * (uint64_t)i); /* prev_instr */
		f->fr[i][68] = i == 1 || i == 3;                         /* is_entry */
	}
	return f;
}

static void freefake(struct fake *f)
{
	for (int i = 0; i < 4; i++) {
		free(f->names[i]);
		free(f->code[i]);
	}
	free(f->file);
	free(f->table);
	free(f->bad_table);
	free(f);
}

static struct pyproc *open_fake(struct fake *f)
{
	struct pyproc *p = NULL;
	char msg[256];

	assert_int_equal(pyproc_open_at(getpid(), A(f->rt), 3, 11, &p, msg, sizeof(msg)), 0);
	return p;
}

static pid_t me(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void test_good_chain(void **state)
{
	struct fake *f = mkfake();
	struct pyproc *p = open_fake(f);
	struct py_frame out[16];
	struct py_thread th[4];
	struct pyproc_stats st;
	size_t n;

	(void)state;
	assert_int_equal(pyproc_threads(p, th, 4, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(th[0].tid, me());
	assert_int_equal(pyproc_stack(p, me(), out, 16), 4);
	assert_string_equal(out[0].qualname, "inner");
	assert_string_equal(out[1].qualname, "Klass.mid");
	assert_string_equal(out[3].qualname, "<module>");
	assert_string_equal(out[2].filename, "/srv/app.py");
	for (int i = 0; i < 4; i++)
		assert_int_equal(out[i].line, 10 * (i + 1) + 2);
	assert_false(out[0].entry);
	assert_true(out[1].entry);
	assert_true(out[3].entry);
	/* Depth limit: cut and counted. */
	assert_int_equal(pyproc_stack(p, me(), out, 2), 2);
	pyproc_get_stats(p, &st);
	assert_int_equal(st.truncated, 1);
	assert_int_equal(st.loops + st.unreadable + st.bad_lines, 0);
	/* A tid without a thread state. */
	assert_int_equal(pyproc_stack(p, 1, out, 16), -ESRCH);
	/* The GIL: taken by our thread state, then by another, then free. */
	{
		bool holds = true;

		put32(f->rt, 376, 1);
		put64(f->rt, 368, A(f->ts));
		assert_int_equal(pyproc_holds_gil(p, me(), &holds), 0);
		assert_true(holds);
		put64(f->rt, 368, A(f->is));
		assert_int_equal(pyproc_holds_gil(p, me(), &holds), 0);
		assert_false(holds);
		put64(f->rt, 368, A(f->ts));
		put32(f->rt, 376, 0);
		assert_int_equal(pyproc_holds_gil(p, me(), &holds), 0);
		assert_false(holds);
		assert_int_equal(pyproc_holds_gil(p, 1, &holds), -ESRCH);
	}
	/* Reused address, new code object there: read afresh, not from the cache. */
	put64(f->code[0], 128, A(f->names[2]));
	assert_int_equal(pyproc_stack(p, me(), out, 16), 4);
	assert_string_equal(out[0].qualname, "outer");
	pyproc_free(p);
	freefake(f);
}

static void test_hostile_chains(void **state)
{
	struct fake *f = mkfake();
	struct pyproc *p = open_fake(f);
	struct py_frame out[64];
	struct pyproc_stats st;
	long pg = sysconf(_SC_PAGESIZE);
	void *gone = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int n;

	(void)state;
	assert_true(gone != MAP_FAILED);
	munmap(gone, (size_t)pg);
	/* A loop: fr[3] -> fr[1]. Ends, with what it read. */
	put64(f->fr[3], 48, A(f->fr[1]));
	n = pyproc_stack(p, me(), out, 64);
	assert_true(n >= 4 && n < 64);
	pyproc_get_stats(p, &st);
	assert_int_equal(st.loops, 1);
	/* Into an unmapped page. */
	put64(f->fr[3], 48, A(gone));
	assert_int_equal(pyproc_stack(p, me(), out, 64), 4);
	pyproc_get_stats(p, &st);
	assert_int_equal(st.unreadable, 1);
	/* A code object that cannot be read: the walk stops before it. */
	put64(f->fr[2], 32, A(gone) + 64);
	assert_int_equal(pyproc_stack(p, me(), out, 64), 2);
	put64(f->fr[2], 32, A(f->code[2]));
	/* A corrupt location table: line -1, counted, the walk goes on. */
	put64(f->code[1], 136, A(f->bad_table));
	assert_int_equal(pyproc_stack(p, me(), out, 64), 4);
	assert_int_equal(out[1].line, -1);
	pyproc_get_stats(p, &st);
	assert_true(st.bad_lines >= 1);
	/* prev_instr far outside the code: no line, no wild offset. */
	put64(f->fr[0], 56, 0x10);
	assert_int_equal(pyproc_stack(p, me(), out, 64), 4);
	assert_int_equal(out[0].line, -1);
	/* A string that claims 2^40 characters: cut, read within its bounds... */
	uint8_t *huge = mkstr("short", 1ull << 40);
	put64(f->code[2], 128, A(huge));
	assert_int_equal(pyproc_stack(p, me(), out, 64), 4);
	/* ...or unreadable past its end: "?" rather than garbage. */
	assert_true(strlen(out[2].qualname) <= 4 * 1024);
	/* A qualname that is not a str at all (unmapped): "?". */
	put64(f->code[2], 128, A(gone));
	assert_int_equal(pyproc_stack(p, me(), out, 64), 4);
	assert_string_equal(out[2].qualname, "?");
	free(huge);
	/* The current frame pointer unreadable: no frames, no crash. */
	put64(f->cf, 8, A(gone));
	n = pyproc_stack(p, me(), out, 64);
	assert_true(n == 0);
	pyproc_free(p);
	freefake(f);
}

static void test_hostile_threads(void **state)
{
	struct fake *f = mkfake();
	struct pyproc *p = open_fake(f);
	struct py_thread th[8];
	struct pyproc_stats st;
	size_t n;

	(void)state;
	/* The thread list loops on itself. */
	put64(f->ts, 8, A(f->ts));
	assert_int_equal(pyproc_threads(p, th, 8, &n), 0);
	assert_int_equal(n, 1);
	pyproc_get_stats(p, &st);
	assert_int_equal(st.loops, 1);
	/* No interpreter (not initialized yet, or finalized). */
	put64(f->rt, 40, 0);
	assert_int_equal(pyproc_threads(p, th, 8, &n), -EAGAIN);
	pyproc_free(p);
	freefake(f);
	/* Unknown versions: one line naming them. */
	{
		char msg[256];
		struct pyproc *q = NULL;

		assert_int_equal(pyproc_open_at(getpid(), 0x1000, 3, 12, &q, msg, sizeof(msg)), -ENOTSUP);
		assert_null(q);
		assert_non_null(strstr(msg, "Python 3.12"));
		assert_non_null(strstr(msg, "no layout"));
	}
}

static void test_real_python(void **state)
{
	const char *py = "/usr/bin/python3.11";
	struct pyproc *p = NULL;
	struct py_frame out[64];
	struct py_thread th[8];
	char msg[512];
	size_t n = 0;
	pid_t pid;
	int r = -1;

	(void)state;
	/* This process is not Python. */
	assert_int_equal(pyproc_open(getpid(), &p, msg, sizeof(msg)), -ENOENT);
	assert_non_null(strstr(msg, "no CPython"));
	if (access(py, X_OK)) {
		print_message("skipped: %s not installed\n", py);
		return;
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(py, py, "-c", "import time\ndef parked():\n    time.sleep(30)\nparked()\n", NULL);
		_exit(127);
	}
	/* Wait until its interpreter runs our code (its frames show "parked"). */
	for (int tries = 0; tries < 200; tries++) {
		struct timespec ts = { 0, 25 * 1000 * 1000 };

		if (!p && pyproc_open(pid, &p, msg, sizeof(msg)) == 0)
			assert_non_null(p);
		if (p && pyproc_threads(p, th, 8, &n) == 0 && n >= 1 &&
		    (r = pyproc_stack(p, pid, out, 64)) >= 2 && !strcmp(out[0].qualname, "parked"))
			break;
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_non_null(p);
	assert_true(!strncmp(pyproc_version(p), "3.11.", 5));
	assert_int_equal(th[0].tid, pid);
	assert_true(r >= 2);
	assert_string_equal(out[0].qualname, "parked");
	assert_string_equal(out[0].filename, "<string>");
	assert_int_equal(out[0].line, 3);
	assert_string_equal(out[r - 1].qualname, "<module>");
	assert_int_equal(out[r - 1].line, 4);
	pyproc_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_chain),
		cmocka_unit_test(test_hostile_chains),
		cmocka_unit_test(test_hostile_threads),
		cmocka_unit_test(test_real_python),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
