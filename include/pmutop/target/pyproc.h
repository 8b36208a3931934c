/*
 * pyproc.h - a CPython interpreter in another process, read from outside:
 * its threads and each thread's Python call stack (function, file, line).
 *
 * No cooperation from the target: the interpreter is found through the
 * `_PyRuntime` symbol of the python binary or libpython it maps (.dynsym
 * or .symtab; Debian's stripped python3.11 exports it), else its
 * `.PyRuntime` section; its version from the `Py_Version` symbol (3.11+)
 * or the file name. The structures are then walked with process_vm_readv:
 * _PyRuntime -> interpreters -> thread states (each with the OS thread id
 * it runs on) -> the current frame -> previous frames, each naming its
 * code object (co_qualname, co_filename, and the line of its current
 * instruction from co_linetable, pyline.h).
 *
 * Layouts differ between CPython versions: one table of offsets per
 * version (3.11 today; 3.12 and 3.13+, which publish _Py_DebugOffsets, are
 * rows to add). A version without a table is refused with one line naming
 * it. Everything read is untrusted - the target runs on, may be hostile or
 * may free what is read: every read is bounded and checked, loops in a
 * chain end the walk, unreadable memory and corrupt objects are counted
 * (struct pyproc_stats), never followed blindly.
 */
#ifndef PMUTOP_PYPROC_H
#define PMUTOP_PYPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct pyproc;

/*
 * The CPython interpreter of process pid. Returns 0 with *out, or:
 * -ENOENT: pid maps no python binary or libpython with _PyRuntime (not
 * Python, or a Python pmutop cannot find); -ENOTSUP: a CPython version
 * without a layout table; another -errno (ENOMEM, ESRCH: gone, EPERM). msg
 * (len bytes) says which, naming the file and version, in one line.
 */
int pyproc_open(pid_t pid, struct pyproc **out, char *msg, size_t len);
/*
 * The same for an interpreter of version major.minor whose _PyRuntime is at
 * runtime in pid (an address found otherwise: a debugger, a test's
 * synthetic structures); type objects are then not checked. 0, -ENOTSUP
 * (no layout, msg says so) or -ENOMEM.
 */
int pyproc_open_at(pid_t pid, uint64_t runtime, unsigned major, unsigned minor,
		   struct pyproc **out, char *msg, size_t len);
/* NULL is a no-op. */
void pyproc_free(struct pyproc *p);

/* "3.11.2" (the target's Py_Version), and the file _PyRuntime is in. */
const char *pyproc_version(const struct pyproc *p);
const char *pyproc_path(const struct pyproc *p);

/* A Python thread: its thread state and the OS thread it belongs to. */
struct py_thread {
	uint64_t tstate;          /* PyThreadState address in the target */
	pid_t tid;                /* native_thread_id (3.11+); 0 when not known yet */
	bool holds_gil;           /* the GIL is taken and this thread took it last */
};

/*
 * The interpreter's threads (every interpreter's), up to cap into out, in
 * the interpreter's order; *n is how many. 0, or -EFAULT when _PyRuntime
 * cannot be read (the process exited), -EAGAIN when the interpreter is not
 * initialized yet (or already finalized: no interpreter).
 */
int pyproc_threads(struct pyproc *p, struct py_thread *out, size_t cap, size_t *n);

/*
 * Whether thread tid holds the GIL now (it is taken, and tid's thread
 * state took it last): exact while tid is stopped. 0, -ESRCH (no thread
 * state for tid) or -EFAULT.
 */
int pyproc_holds_gil(struct pyproc *p, pid_t tid, bool *holds);

/* One Python frame. Strings live until the next pyproc_* call on p. */
struct py_frame {
	uint64_t code;            /* code object address in the target */
	const char *qualname;     /* co_qualname ("Class.method"); "?" when unreadable */
	const char *filename;     /* co_filename; "?" when unreadable */
	int line;                 /* line of the current instruction; -1 when unknown */
	/*
	 * The frame a C call of the interpreter loop started at (3.11:
	 * is_entry): it and the frames inside it, up to the previous entry
	 * frame, ran in one _PyEval_EvalFrameDefault activation on the
	 * native stack.
	 */
	bool entry;
};

/*
 * The Python frames thread tid runs now, innermost first, up to max into
 * out. Returns their number (0: a Python thread with no frame, as between
 * calls), or -ESRCH when tid has no thread state (not a Python thread, or
 * not yet / no longer known), -EFAULT when the thread state cannot be read,
 * -ENOMEM. A chain that loops, leaves readable memory or is longer than
 * max ends there: what was read is returned and the stats count why.
 */
int pyproc_stack(struct pyproc *p, pid_t tid, struct py_frame *out, unsigned max);

/*
 * The same for a sample: stack[0..size) is the copy of tid's user stack
 * from sp the kernel took when the event fired. The innermost interpreter
 * activation keeps the current frame pointer in a struct on its C stack
 * (3.11: the _PyCFrame tstate->cframe points to); when that struct lies in
 * the copy, the walk starts from the pointer it had at the sample
 * (*from_copy) rather than from the one in memory now, and *changed says
 * whether they differ (the thread called or returned since: the frames'
 * contents are read now and may have moved on). Both may be NULL.
 */
int pyproc_stack_at(struct pyproc *p, pid_t tid, uint64_t sp, const uint8_t *stack, size_t size,
		    struct py_frame *out, unsigned max, bool *from_copy, bool *changed);

/* What went wrong so far, for the summary (all since pyproc_open). */
struct pyproc_stats {
	uint64_t stacks;          /* pyproc_stack calls that found the thread */
	uint64_t frames;          /* frames returned */
	uint64_t unreadable;      /* a frame, code object or string not readable: walk cut */
	uint64_t loops;           /* a frame chain or thread list that loops: cut */
	uint64_t truncated;       /* stacks deeper than max: cut */
	uint64_t bad_code;        /* code objects that are not code (wrong type, sizes) */
	uint64_t bad_lines;       /* corrupt location tables: line -1 */
	uint64_t no_thread;       /* pyproc_stack for a tid without a thread state */
};
void pyproc_get_stats(const struct pyproc *p, struct pyproc_stats *st);

/*
 * The layouts known: "3.11". For messages (and --help).
 */
const char *pyproc_known_versions(void);

#endif
