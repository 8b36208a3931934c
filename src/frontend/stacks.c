/*
 * stacks.c - `pmutop --stacks -p PID [--json]`: where is every thread now?
 *
 * For each thread in turn: PTRACE_SEIZE, PTRACE_INTERRUPT, wait for the
 * stop, PTRACE_GETREGSET, one process_vm_readv of its stack, PTRACE_DETACH;
 * then, with the thread running again, unwind the copy with the sampling
 * engines' unwinder (unwind.c), symbolize (symbolize.c) and add file:line
 * and inlined calls from DWARF (debuginfo.c). The thread is stopped only
 * for its registers and stack (tens of microseconds), never while a
 * module is parsed or a debug file read (libdw: seconds for a huge or
 * hostile one; issue 17); the others run meanwhile. A signal that arrives for the thread
 * while it is stopped is passed on at the detach, a group-stopped thread
 * stays stopped.
 *
 * The whole tree, as sampling follows it: the target, then each descendant
 * alive when --stacks starts (from the parent pids in /proc), each with its
 * own maps and unwinder (process.h); --no-children looks at the target only.
 * A descendant that exits meanwhile is left out; one that cannot be looked
 * at (a setuid program, another tracer) says why in its place and the others
 * are still shown - only the target's own failure is pmutop's.
 *
 * SIGINT/SIGTERM/SIGHUP (and SIGCHLD, which the waits sleep on) are blocked
 * for the duration and checked between steps: on one, the current thread is
 * detached and pmutop exits 128+signal without printing. If pmutop is
 * killed outright, the kernel detaches the thread it held.
 */
#include "pmutop/frontend/stacks.h"
#include "pmutop/profile/term_text.h"

#include <errno.h>
#include <inttypes.h>
#include <time.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/user.h>

#include "pmutop/frontend/cli.h"
#include "pmutop/frontend/process.h"
#include "pmutop/symbols/debuginfo.h"
#include "pmutop/symbols/demangle.h"
#include "pmutop/profile/json.h"
#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"
#include "pmutop/sample/perf_record.h"
#include "pmutop/target/proc.h"
#include "pmutop/target/pyproc.h"
#include "pmutop/symbols/pymerge.h"
#include "pmutop/unwind/ptrace_thread.h"
#include "pmutop/symbols/symbolize.h"
#include "pmutop/unwind/unwind.h"

#define STACK_COPY (64 * 1024)
/* file:line of the frames shown: at most this long for the loader (--debuginfo-wait). */
#define STACKS_LINES_WAIT_MS 10000
#define STOP_TIMEOUT_MS 2000

struct st_frame {
	uint64_t ip;             /* as unwound: the IP, then return addresses */
	struct frame f;          /* symbolized (callers at ip - 1) */
	const struct src_line *src; /* inline chain, innermost first (debuginfo.h) */
	unsigned nsrc;           /* 0: no debug info */
};

/* A Python frame as read while its thread was stopped (strings owned). */
struct st_py {
	char *qualname, *filename;
	int line;
	bool entry;
};

struct st_thread {
	pid_t tid;
	char name[32];
	char state;              /* from /proc before we touched it */
	bool gone;               /* exited while we looked */
	bool stuck;              /* seized but never stopped (uninterruptible sleep) */
	enum unwind_outcome outcome;
	unsigned nframes;
	struct st_frame *frames;
	struct st_py *py;        /* Python frames, innermost first (--python on/only) */
	unsigned npy;
	bool python;             /* a Python thread (it has a thread state) */
	bool gil;                /* it held the GIL when stopped */
	char error[256];
};

struct ctx {
	pid_t pid;
	unsigned max_depth;
	struct maps *maps;
	struct unwinder *unw;
	uint8_t *stack;
	uint64_t *ips;
	struct frame *fr;
	enum py_mode pymode;     /* --python */
	struct pyproc *py;       /* the current process's interpreter, or NULL */
	struct py_frame *pyf;    /* max_depth of them */
	sigset_t quit;           /* signals that end --stacks early */
	int quit_sig;
};

/* One process of the tree: its threads as looked at. */
struct st_proc {
	pid_t pid;
	char cmdline[512], argv[4096];
	size_t argv_len;
	struct st_thread *ts;
	size_t nts;
	bool gone;               /* exited before we looked */
	char py_note[512];       /* Python there but not read (version without a table) */
	char py_version[32];     /* CPython version read, "" when none */
	char error[768];         /* could not be looked at (a descendant): why */
};

/* Processes looked at, the target included (more are left out, and said so). */
#define MAX_TREE 4096

/* ---- JSON ---- */

/* ---- looking at one thread ---- */

static bool quit_pending(struct ctx *c)
{
	sigset_t pend;

	if (c->quit_sig)
		return true;
	if (sigpending(&pend))
		return false;
	for (int sig = 1; sig < NSIG; sig++) {
		if (sigismember(&c->quit, sig) == 1 && sigismember(&pend, sig) == 1) {
			c->quit_sig = sig;
			return true;
		}
	}
	return false;
}

/* A frame whose lines were asked and that has none (f->src set, nsrc 0). */
static const struct src_line no_lines;

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static bool stop_waiting(void *arg)
{
	return quit_pending(arg);
}

/*
 * Unwind and name a thread from its registers and the copy of its stack
 * (got bytes in c->stack), taken while it was stopped; it runs again by
 * now. The names' file:line may wait for a debug file to be read (libdw,
 * seconds for a huge or hostile one): never with the thread stopped.
 */
static void unwind_thread(struct ctx *c, struct st_thread *th, const struct user_regs_struct *regs,
			  size_t got)
{
	struct perf_sample ps;
	unsigned n;

	memset(&ps, 0, sizeof(ps));
	pt_regs_to_sample(regs, &ps);
	ps.pid = (uint32_t)c->pid;
	ps.tid = (uint32_t)th->tid;
	ps.stack = c->stack;
	ps.stack_size = got;
	n = unwinder_unwind(c->unw, &ps, c->ips, c->max_depth, &th->outcome);
	symbolize_stack(c->maps, c->ips, n, c->fr);
	th->frames = calloc(n ? n : 1, sizeof(*th->frames));
	if (!th->frames) {
		snprintf(th->error, sizeof(th->error), "out of memory");
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		struct st_frame *f = &th->frames[i];
		f->ip = c->ips[i];
		f->f = c->fr[i];
	}
	th->nframes = n;
}

/*
 * file:line and inlined calls of every frame shown, from the loader's
 * thread (debuginfo_busy() asks, the answers come in batches): after all
 * threads were looked at, and for --debuginfo-wait (10 s) at most, so a
 * huge or hostile debug file neither stops a thread nor holds the output
 * up. Returns how many frames still wait (shown without file:line), or
 * -EINTR on a quit signal.
 */
static long frame_lines(struct ctx *c, struct process_table *procs, struct st_proc *ps,
			size_t nps, unsigned wait_ms)
{
	uint64_t start = mono_ms();
	long busy;

	for (;;) {
		uint64_t spent;

		busy = 0;
		for (size_t k = 0; k < nps; k++)
			for (size_t i = 0; i < ps[k].nts; i++)
				for (size_t j = 0; j < ps[k].ts[i].nframes; j++) {
					struct st_frame *f = &ps[k].ts[i].frames[j];
					const struct mapping *m = f->f.map;

					if (f->src || !m || !m->mod || !m->dbg)
						continue;
					if (debuginfo_busy(m->dbg, m, f->f.addr)) {
						busy++;
						continue;
					}
					/* Answered: the lookup takes it from the cache. */
					f->nsrc = debuginfo_lookup(m->dbg, m, f->f.addr, &f->src);
					if (!f->src)
						f->src = &no_lines; /* asked: none */
					/* No ELF symbol (a local one of a stripped library): DWARF may. */
					if (!f->f.func && f->nsrc && f->src[f->nsrc - 1].func)
						f->f.func = f->src[f->nsrc - 1].func;
				}
		spent = mono_ms() - start;
		if (!busy || spent >= wait_ms)
			return busy;
		if (process_table_load_wait(procs, (unsigned)(wait_ms - spent < 100 ? wait_ms - spent
										: 100),
					    stop_waiting, c) == -EINTR)
			return -EINTR;
	}
}

/* Copy n Python frames into th (their strings live only until the next read). */
static void keep_py(struct st_thread *th, const struct py_frame *f, unsigned n)
{
	if (!n)
		return;
	th->py = calloc(n, sizeof(*th->py));
	if (!th->py)
		return;
	for (unsigned i = 0; i < n; i++) {
		th->py[i].qualname = strdup(f[i].qualname);
		th->py[i].filename = strdup(f[i].filename);
		th->py[i].line = f[i].line;
		th->py[i].entry = f[i].entry;
		if (!th->py[i].qualname || !th->py[i].filename) {
			th->npy = i + 1;
			return;
		}
	}
	th->npy = n;
}

/*
 * Seize, stop, read, detach one thread. Returns 0 (th filled, or th->gone,
 * or th->error for a thread that did not stop), or -errno for a failure
 * that ends --stacks (message in err).
 */
static int look(struct ctx *c, struct st_thread *th, char *err, size_t errlen)
{
	struct user_regs_struct regs;
	struct pt_stop st;
	size_t got = 0;
	int status, r;

	th->state = pt_thread_state(c->pid, th->tid);
	if (proc_thread_name(c->pid, th->tid, th->name, sizeof(th->name)))
		snprintf(th->name, sizeof(th->name), "?");
	r = pt_seize(th->tid);
	if (r == -ESRCH) {
		th->gone = true;
		return 0;
	}
	if (r)
		return pt_explain_seize_error(-r, c->pid, th->tid, err, errlen);
	r = pt_interrupt(th->tid);
	if (r) {
		th->gone = true; /* seized but gone already */
		return 0;
	}
	r = pt_wait(th->tid, STOP_TIMEOUT_MS, &c->quit, &status);
	if (r == -EINTR) {
		/* Leaving: give the thread a moment to stop so it can be detached. */
		quit_pending(c);
		if (pt_wait(th->tid, 500, NULL, &status) == 0) {
			pt_classify(status, &st);
			pt_detach(th->tid, &st);
		}
		return -EINTR;
	}
	if (r == -ETIMEDOUT) {
		/* Uninterruptible sleep: it stays seized until we exit (the kernel detaches). */
		th->stuck = true;
		snprintf(th->error, sizeof(th->error),
			 "did not stop within %d ms (state %c: %s)", STOP_TIMEOUT_MS,
			 pt_thread_state(c->pid, th->tid), pt_state_name(pt_thread_state(c->pid, th->tid)));
		return 0;
	}
	if (r) {
		th->gone = true;
		return 0;
	}
	pt_classify(status, &st);
	if (st.ev == PT_GONE) {
		th->gone = true;
		return 0;
	}
	if (pt_get_regs(th->tid, &regs) != 0) {
		snprintf(th->error, sizeof(th->error), "cannot read its registers: %s",
			 strerror(errno));
		pt_detach(th->tid, &st);
		return 0;
	}
	/* Registers and stack while stopped; the rest once it runs again. */
	if (pt_read_stack(c->pid, regs.rsp, c->stack, STACK_COPY, &got))
		got = 0;
	/* Its Python frames too, exact while it is stopped (strings copied later). */
	int npy = c->py ? pyproc_stack(c->py, th->tid, c->pyf, c->max_depth) : -ESRCH;
	keep_py(th, c->pyf, npy > 0 ? (unsigned)npy : 0);
	th->python = npy >= 0 && c->py && !pyproc_holds_gil(c->py, th->tid, &th->gil);
	pt_detach(th->tid, &st);
	unwind_thread(c, th, &regs, got);
	return 0;
}

/* ---- output ---- */

static const char *module_name(const struct frame *f)
{
	const char *p;

	if (!f->map)
		return "?";
	if (!f->map->path[0])
		return "[anon]";
	p = strrchr(f->map->path, '/');
	return p ? p + 1 : f->map->path;
}

/* A symbol as people read it (C++/Rust demangled). */
static void print_name(FILE *out, const char *sym)
{
	char *d = demangle(sym);

	term_fputs(d ? d : sym, out);
	free(d);
}

static void print_src(FILE *out, const struct src_line *l)
{
	const char *b;

	if (!l->file || !l->line)
		return;
	b = strrchr(l->file, '/');
	fputs(" at ", out);
	term_fputs(b ? b + 1 : l->file, out);
	fprintf(out, ":%u", l->line);
}

static void json_name(FILE *out, const char *sym)
{
	char *d = demangle(sym);

	json_write_string(out, d ? d : sym);
	free(d);
}

static void json_src(FILE *out, const struct src_line *l)
{
	if (!l->file || !l->line)
		return;
	fprintf(out, ",\"file\":");
	json_write_string(out, l->file);
	fprintf(out, ",\"line\":%u", l->line);
}

/*
 * "module+0xOFF" of the address shown. A caller's frame is looked up at its
 * return address - 1 (the call); the offset printed must still be that of
 * the address printed next to it.
 */
static const char *fallback_name(const struct st_frame *f, char *buf, size_t len)
{
	struct frame shown = f->f;

	shown.addr = f->ip;
	return symbolize_fallback_name(&shown, buf, len);
}

/*
 * The order frames are shown in: th's native frames with its Python frames
 * merged in (pymerge.h), as indices. Returns the count (*items malloc'd;
 * NULL and th's native frames in order when out of memory); *mismatch as
 * pymerge() says.
 */
static unsigned merged(const struct st_thread *th, enum py_mode mode, struct pymerge_item **items,
		       bool *mismatch)
{
	unsigned cap = th->nframes + th->npy + 1, n;
	struct frame *nat = calloc(th->nframes + 1, sizeof(*nat));
	struct py_frame *py = calloc(th->npy + 1, sizeof(*py));

	*items = calloc(cap, sizeof(**items));
	*mismatch = false;
	if (!nat || !py || !*items) {
		free(nat);
		free(py);
		free(*items);
		*items = NULL;
		return 0;
	}
	for (unsigned i = 0; i < th->nframes; i++)
		nat[i] = th->frames[i].f;
	for (unsigned i = 0; i < th->npy; i++)
		py[i] = (struct py_frame){ .entry = th->py[i].entry };
	n = pymerge(nat, th->nframes, py, th->npy, mode, *items, cap, mismatch);
	free(nat);
	free(py);
	return n;
}

static void print_py_frame(FILE *out, unsigned k, const struct st_py *p)
{
	fprintf(out, "    #%-3u %18s ", k, "(python)");
	term_fputs(p->qualname ? p->qualname : "?", out);
	fputs(" (", out);
	term_fputs(p->filename ? p->filename : "?", out);
	if (p->line >= 0)
		fprintf(out, ":%d", p->line);
	fputs(")\n", out);
}

static void print_text(FILE *out, pid_t pid, const char *cmdline, const struct st_thread *ts,
		       size_t n, enum py_mode mode, const char *py_version, const char *py_note)
{
	char buf[256];

	/* Names, paths and the command line are the target's: escape them. */
	fprintf(out, "Process %d: ", (int)pid);
	term_fputs(cmdline, out);
	fputc('\n', out);
	if (py_version[0])
		fprintf(out, "Python %s\n", py_version);
	if (py_note[0])
		fprintf(out, "(%s)\n", py_note);
	for (size_t i = 0; i < n; i++) {
		const struct st_thread *th = &ts[i];
		struct pymerge_item *items = NULL;
		unsigned nitems;
		bool mismatch;

		if (th->gone)
			continue;
		fprintf(out, "\nThread %d \"", (int)th->tid);
		term_fputs(th->name, out);
		fprintf(out, "\" (%c: %s)%s\n", th->state, pt_state_name(th->state),
			!th->python ? "" : th->gil ? " [Python, holds the GIL]" : " [Python]");
		if (th->error[0]) {
			fprintf(out, "    (%s)\n", th->error);
			continue;
		}
		nitems = merged(th, mode, &items, &mismatch);
		for (unsigned m = 0, k; m < (items ? nitems : th->nframes); m++) {
			const struct st_frame *f;
			const char *fn;

			if (items && items[m].python) {
				print_py_frame(out, m, &th->py[items[m].index]);
				continue;
			}
			k = items ? items[m].index : m;
			f = &th->frames[k];
			fn = f->f.func ? f->f.func : fallback_name(f, buf, sizeof(buf));

			/* Calls inlined at this address first, innermost first. */
			for (unsigned j = 0; j + 1 < f->nsrc; j++) {
				fprintf(out, "    %-4s %18s ", "", "(inlined)");
				print_name(out, f->src[j].func ? f->src[j].func : "?");
				fputs(" (", out);
				term_fputs(module_name(&f->f), out);
				fputc(')', out);
				print_src(out, &f->src[j]);
				fputc('\n', out);
			}
			fprintf(out, "    #%-3u 0x%016" PRIx64 " ", m, f->ip);
			print_name(out, fn);
			if (f->f.func) { /* a fallback "module+0xOFF" names its module already */
				fputs(" (", out);
				term_fputs(module_name(&f->f), out);
				fputc(')', out);
			}
			if (f->nsrc)
				print_src(out, &f->src[f->nsrc - 1]);
			fputc('\n', out);
		}
		free(items);
		if (th->outcome != UNWIND_ROOT)
			fprintf(out, "    (unwind ended: %s)\n", unwind_outcome_name(th->outcome));
		if (mismatch)
			fprintf(out, "    (Python frames: the interpreter loop's activations and "
				"the runs of Python frames do not pair up)\n");
	}
}

/* One process as JSON, without its closing brace (the caller may add members). */
static void print_json(FILE *out, pid_t pid, const char *cmdline, const char *argv,
		       size_t argv_len, const struct st_thread *ts, size_t n, enum py_mode mode,
		       const char *py_version, const char *py_note)
{
	char buf[256], st[2] = { 0, 0 };
	bool first = true;

	fprintf(out, "{\"pid\":%d,\"command\":", (int)pid);
	json_write_string(out, cmdline);
	/* the arguments as given, quoting intact (command joins them with spaces) */
	fprintf(out, ",\"argv\":[");
	for (size_t off = 0, k = 0; off < argv_len; off += strlen(argv + off) + 1, k++) {
		fputs(k ? "," : "", out);
		json_write_string(out, argv + off);
	}
	fputc(']', out);
	if (py_version[0]) {
		fprintf(out, ",\"python\":");
		json_write_string(out, py_version);
	}
	if (py_note[0]) {
		fprintf(out, ",\"python_note\":");
		json_write_string(out, py_note);
	}
	fprintf(out, ",\"threads\":[");
	for (size_t i = 0; i < n; i++) {
		const struct st_thread *th = &ts[i];

		if (th->gone)
			continue;
		fprintf(out, "%s\n {\"tid\":%d,\"name\":", first ? "" : ",", (int)th->tid);
		first = false;
		json_write_string(out, th->name);
		st[0] = th->state;
		fprintf(out, ",\"state\":");
		json_write_string(out, st);
		fprintf(out, ",\"state_name\":");
		json_write_string(out, pt_state_name(th->state));
		if (th->error[0]) {
			fprintf(out, ",\"error\":");
			json_write_string(out, th->error);
			fprintf(out, ",\"frames\":[]}");
			continue;
		}
		fprintf(out, ",\"unwind\":");
		json_write_string(out, unwind_outcome_name(th->outcome));
		if (th->python)
			fprintf(out, ",\"python_thread\":true,\"gil\":%s", th->gil ? "true" : "false");
		struct pymerge_item *items = NULL;
		bool mismatch;
		unsigned nitems = merged(th, mode, &items, &mismatch);

		if (mismatch)
			fprintf(out, ",\"python_unpaired\":true");
		fprintf(out, ",\"frames\":[");
		for (unsigned m = 0; m < (items ? nitems : th->nframes); m++) {
			const struct st_frame *f;
			unsigned k;

			if (items && items[m].python) {
				const struct st_py *p = &th->py[items[m].index];

				fprintf(out, "%s\n  {\"index\":%u,\"python\":true,\"function\":",
					m ? "," : "", m);
				json_write_string(out, p->qualname ? p->qualname : "?");
				fprintf(out, ",\"file\":");
				json_write_string(out, p->filename ? p->filename : "?");
				if (p->line >= 0)
					fprintf(out, ",\"line\":%d", p->line);
				fputc('}', out);
				continue;
			}
			k = items ? items[m].index : m;
			f = &th->frames[k];
			fprintf(out, "%s\n  {\"index\":%u,\"address\":\"0x%" PRIx64 "\",\"function\":",
				m ? "," : "", m, f->ip);
			if (f->f.func) {
				json_name(out, f->f.func);
				/* the offset of the address shown, not of the call looked up */
				fprintf(out, ",\"offset\":%" PRIu64, f->f.func_off + (f->ip - f->f.addr));
			} else {
				fprintf(out, "null,\"fallback\":");
				json_write_string(out, fallback_name(f, buf, sizeof(buf)));
			}
			fprintf(out, ",\"module\":");
			if (f->f.map)
				json_write_string(out, f->f.map->path);
			else
				fprintf(out, "null");
			if (f->nsrc)
				json_src(out, &f->src[f->nsrc - 1]);
			if (f->nsrc > 1) {
				fprintf(out, ",\"inlined\":[");
				for (unsigned j = 0; j + 1 < f->nsrc; j++) {
					fprintf(out, "%s{\"function\":", j ? "," : "");
					if (f->src[j].func)
						json_name(out, f->src[j].func);
					else
						fprintf(out, "null");
					json_src(out, &f->src[j]);
					fputc('}', out);
				}
				fputc(']', out);
			}
			fputc('}', out);
		}
		free(items);
		fprintf(out, "]}");
	}
	fprintf(out, "\n]");
}

/*
 * The target, then each descendant that could be looked at: text blocks one
 * after the other; JSON the target's object as before with a "descendants"
 * array of objects of the same shape (an "error" member for one that could
 * not be looked at).
 */
static void print_tree(FILE *out, bool json, enum py_mode mode, const struct st_proc *ps, size_t n,
		       bool more)
{
	bool first = true;

	for (size_t k = 0; k < n; k++) {
		const struct st_proc *p = &ps[k];

		if (k && p->gone)
			continue;
		if (json) {
			if (k)
				fprintf(out, "%s\n", first ? "" : ",");
			if (k)
				first = false;
			print_json(out, p->pid, p->cmdline, p->argv, p->argv_len, p->ts, p->nts, mode,
				   p->py_version, p->py_note);
			if (p->error[0]) {
				fprintf(out, ",\"error\":");
				json_write_string(out, p->error);
			}
			fprintf(out, k ? "}" : ",\"descendants\":[");
			continue;
		}
		if (k)
			fputc('\n', out);
		print_text(out, p->pid, p->cmdline, p->ts, p->nts, mode, p->py_version, p->py_note);
		if (p->error[0])
			fprintf(out, "    (%s)\n", p->error);
	}
	if (json)
		fprintf(out, "]%s}\n", more ? ",\"descendants_left_out\":true" : "");
	else if (more)
		fprintf(out, "\n(more than %d processes in the tree: the rest left out)\n", MAX_TREE);
}

/* ---- driver ---- */

static int cmp_tid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static int list_threads(pid_t pid, pid_t **out, size_t *n)
{
	size_t cap = 64;
	pid_t *tids = NULL;
	int r;

	for (;;) {
		pid_t *b = realloc(tids, cap * sizeof(*tids));
		if (!b) {
			free(tids);
			return -ENOMEM;
		}
		tids = b;
		r = proc_list_threads(pid, tids, cap, n);
		if (r != -ENOSPC)
			break;
		cap = *n + *n / 2 + 16;
	}
	if (r) {
		free(tids);
		return r;
	}
	qsort(tids, *n, sizeof(*tids), cmp_tid);
	*out = tids;
	return 0;
}

/*
 * Look at every thread of p->pid. Returns 0 (p->gone when it had exited),
 * -EINTR when a quit signal came, or -errno with err filled.
 */
static int look_process(struct ctx *c, struct process_table *procs, struct st_proc *p,
			char *err, size_t errlen)
{
	pid_t *tids = NULL;
	size_t ntids = 0;
	int r;

	proc_cmdline(p->pid, p->cmdline, sizeof(p->cmdline));
	if (proc_argv(p->pid, p->argv, sizeof(p->argv), &p->argv_len))
		p->argv_len = 0;
	/* Its maps and symbol sources, as a session has them per process. */
	r = process_table_add_root(procs, p->pid, false, err, errlen);
	if (r)
		return r;
	c->pid = p->pid;
	c->maps = process_maps(process_table_get(procs, p->pid));
	c->unw = process_unwinder(process_table_get(procs, p->pid));
	pyproc_free(c->py);
	c->py = NULL;
	if (c->pymode != PY_OFF) {
		char msg[512];

		r = pyproc_open(p->pid, &c->py, msg, sizeof(msg));
		if (!r)
			snprintf(p->py_version, sizeof(p->py_version), "%s", pyproc_version(c->py));
		else if (r != -ENOENT && r != -ESRCH)
			snprintf(p->py_note, sizeof(p->py_note), "%s", msg);
	}
	r = list_threads(p->pid, &tids, &ntids);
	if (r == -ENOENT || r == -ESRCH) {
		p->gone = true;
		return 0;
	}
	if (r) {
		snprintf(err, errlen, "cannot list the threads of PID %d: %s", (int)p->pid,
			 strerror(-r));
		return r;
	}
	p->ts = calloc(ntids ? ntids : 1, sizeof(*p->ts));
	if (!p->ts) {
		free(tids);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < ntids; i++) {
		if (quit_pending(c)) {
			r = -EINTR;
			break;
		}
		p->ts[p->nts].tid = tids[i];
		r = look(c, &p->ts[p->nts], err, errlen);
		p->nts++;
		if (r)
			break;
	}
	free(tids);
	return r;
}

int stacks_run(const struct pmutop_opts *o)
{
	struct ctx c = { .pid = o->pid, .max_depth = o->max_depth ? o->max_depth : 512,
			 .pymode = o->python };
	struct module_cache *modules = NULL;
	struct process_table *procs = NULL;
	struct st_proc *ps = NULL;
	pid_t *tree = NULL;
	size_t ntree = 1, nps = 0;
	char err[768] = "";
	sigset_t block, old;
	bool mask_set = false, more = false;
	int rc = 1, r;

	/* -EACCES is kernel.perf_event_paranoid, which --stacks does not need. */
	r = proc_check_target(c.pid, err, sizeof(err));
	if (r && r != -EACCES)
		goto out;
	err[0] = 0;
	tree = malloc(MAX_TREE * sizeof(*tree));
	ps = calloc(MAX_TREE, sizeof(*ps));
	modules = module_cache_new();
	procs = modules ? process_table_new(modules, MAX_TREE) : NULL;
	c.stack = malloc(STACK_COPY);
	c.ips = calloc(c.max_depth + 2, sizeof(*c.ips));
	c.fr = calloc(c.max_depth + 2, sizeof(*c.fr));
	c.pyf = calloc(c.max_depth + 2, sizeof(*c.pyf));
	if (!tree || !ps || !procs || !c.stack || !c.ips || !c.fr || !c.pyf) {
		snprintf(err, sizeof(err), "out of memory");
		goto out;
	}
	/* The target first, then its descendants (unless --no-children). */
	tree[0] = o->pid;
	if (!o->no_children) {
		r = proc_descendants(&tree[0], 1, tree, MAX_TREE, &ntree);
		more = r == -ENOSPC;
		if ((r && !more) || !ntree || tree[0] != o->pid) {
			tree[0] = o->pid;
			ntree = 1;
		}
	}

	sigemptyset(&c.quit);
	sigaddset(&c.quit, SIGINT);
	sigaddset(&c.quit, SIGTERM);
	sigaddset(&c.quit, SIGHUP);
	block = c.quit;
	sigaddset(&block, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &block, &old) == 0)
		mask_set = true;

	for (size_t i = 0; i < ntree && !quit_pending(&c); i++) {
		struct st_proc *p = &ps[nps++];

		p->pid = tree[i];
		r = look_process(&c, procs, p, err, sizeof(err));
		if (r == -EINTR)
			break;
		if (r && !i)
			goto out;   /* the target itself: pmutop failed */
		if (r) {
			/* A descendant: say why in its place, go on with the others. */
			if (!kill(p->pid, 0) || errno != ESRCH)
				snprintf(p->error, sizeof(p->error), "%s", err);
			else
				p->gone = true;
			err[0] = 0;
		}
	}
	if (!quit_pending(&c)) {
		unsigned wait_ms = o->debuginfo_wait >= 0 ? (unsigned)(o->debuginfo_wait * 1000)
							  : STACKS_LINES_WAIT_MS;
		long waiting = frame_lines(&c, procs, ps, nps, wait_ms);

		if (waiting > 0 && !o->quiet)
			fprintf(stderr, "pmutop: debug info still being read after %.1f s: %ld "
				"frame%s shown without file:line (--debuginfo-wait SEC waits longer)\n",
				wait_ms / 1000.0, waiting, waiting == 1 ? "" : "s");
	}
	if (quit_pending(&c)) {
		fprintf(stderr, "pmutop: %s: stopped; all threads released\n",
			strsignal(c.quit_sig));
		rc = 128 + c.quit_sig;
		goto out;
	}
	/* A thread that did not stop in time may have since: let it go now. */
	for (size_t k = 0; k < nps; k++) {
		for (size_t i = 0; i < ps[k].nts; i++) {
			int status;
			struct pt_stop st;
			if (!ps[k].ts[i].stuck)
				continue;
			if (pt_wait(ps[k].ts[i].tid, 0, NULL, &status) == 0) {
				pt_classify(status, &st);
				pt_detach(ps[k].ts[i].tid, &st);
			}
		}
	}
	print_tree(stdout, o->json, c.pymode, ps, nps, more);
	rc = fflush(stdout) ? 1 : 0;
out:
	if (rc == 1 && err[0])
		fprintf(stderr, "pmutop: %s\n", err);
	if (mask_set) {
		/* Drop what we blocked for the waits; a quit signal was handled above. */
		struct timespec zero = { 0, 0 };
		while (sigtimedwait(&block, NULL, &zero) > 0)
			;
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	for (size_t k = 0; ps && k < nps; k++) {
		for (size_t i = 0; i < ps[k].nts; i++) {
			free(ps[k].ts[i].frames);
			for (unsigned j = 0; j < ps[k].ts[i].npy; j++) {
				free(ps[k].ts[i].py[j].qualname);
				free(ps[k].ts[i].py[j].filename);
			}
			free(ps[k].ts[i].py);
		}
		free(ps[k].ts);
	}
	free(ps);
	free(tree);
	free(c.stack);
	free(c.ips);
	free(c.fr);
	free(c.pyf);
	pyproc_free(c.py);
	process_table_free(procs);
	module_cache_free(modules);
	return rc;
}
