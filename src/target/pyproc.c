/*
 * pyproc.c - read a CPython interpreter's threads and frames from outside
 * the process (see pyproc.h for what and why).
 *
 * Finding it: the first file in /proc/PID/maps named python3.X or
 * libpython3.X.so* whose symbols have `_PyRuntime` (else a `.PyRuntime`
 * section) is opened (safe_open, through /proc/PID/root) and its symbols
 * read with libelf: _PyRuntime, Py_Version and the type objects a code
 * object, a str and a bytes must point to. The load bias comes from the
 * file's mapping at offset 0.
 *
 * Reading it: every read is one process_vm_readv of a fixed small size
 * (a frame, a code object's header) or of a length read from the target
 * capped here (strings 1 KiB, location tables 64 KiB). Code objects are
 * cached by address with the pointers they had (file, name, table); a
 * cached entry is used only while the code object at that address still
 * has those pointers, so a freed and reused address is read afresh.
 *
 * Versions: struct py_layout is one version's offsets, from CPython's
 * headers of that version (3.11: Include/internal/pycore_frame.h,
 * pycore_runtime.h, pycore_interp.h, Include/cpython/pystate.h, code.h,
 * unicodeobject.h; checked against Debian's python3.11-dev with offsetof).
 */
#include "pmutop/target/pyproc.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "pmutop/target/pyline.h"
#include "pmutop/target/safe_open.h"

/* One CPython version's layout: offsets in bytes. */
struct py_layout {
	unsigned major, minor;
	/* _PyRuntimeState */
	unsigned rt_interp_head, rt_gil_locked, rt_gil_holder;
	/* PyInterpreterState */
	unsigned is_next, is_threads_head;
	/* PyThreadState */
	unsigned ts_next, ts_native_tid, ts_cframe;
	/* _PyCFrame */
	unsigned cf_current_frame;
	/* _PyInterpreterFrame: size read at once, fields */
	unsigned fr_size, fr_code, fr_previous, fr_prev_instr, fr_is_entry, fr_owner;
	/* PyCodeObject: header size read at once, fields */
	unsigned co_size, co_firstlineno, co_filename, co_qualname, co_linetable, co_code;
	/* PyObject, PyBytesObject, PyASCIIObject / PyCompactUnicodeObject */
	unsigned ob_type, var_size, bytes_data, str_length, str_state, str_ascii_data,
		str_compact_data;
};

static const struct py_layout layouts[] = {
	{
		.major = 3, .minor = 11,
		.rt_interp_head = 40, .rt_gil_locked = 376, .rt_gil_holder = 368,
		.is_next = 0, .is_threads_head = 16,
		.ts_next = 8, .ts_native_tid = 160, .ts_cframe = 56,
		.cf_current_frame = 8,
		.fr_size = 72, .fr_code = 32, .fr_previous = 48, .fr_prev_instr = 56,
		.fr_is_entry = 68, .fr_owner = 69,
		.co_size = 192, .co_firstlineno = 72, .co_filename = 112, .co_qualname = 128,
		.co_linetable = 136, .co_code = 184,
		.ob_type = 8, .var_size = 16, .bytes_data = 32, .str_length = 16, .str_state = 32,
		.str_ascii_data = 48, .str_compact_data = 72,
	},
};

const char *pyproc_known_versions(void)
{
	return "3.11";
}

#define MAX_STR 1024
#define MAX_TABLE (64 * 1024)
#define MAX_THREADS_WALK 65536
#define MAX_INTERPS 256
#define CODE_CACHE_MAX 16384

struct code_entry {
	uint64_t addr;             /* 0: free slot */
	uint64_t filename, qualname, linetable; /* the pointers it was read with */
	int firstlineno;
	char *qualname_s, *filename_s;
	uint8_t *table;
	size_t tablen;
	bool table_ok;
};

struct pyproc {
	pid_t pid;
	const struct py_layout *L;
	char path[4096];
	char version[32];
	uint64_t runtime;              /* &_PyRuntime in the target */
	uint64_t code_type, str_type, bytes_type; /* type objects (0: not checked) */
	struct code_entry *codes;      /* open addressing, ncap slots */
	size_t ncodes, ncap;
	/* tid -> thread state, refreshed when a tid is missing */
	struct py_thread *threads;
	size_t nthreads, tcap;
	uint64_t threads_ns;           /* when the list was last read */
	struct pyproc_stats st;
	char scratch[MAX_STR * 4 + 1];
};

/* ---- reading the target ---- */

static int rd(const struct pyproc *p, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t got;

	if (!addr)
		return -EFAULT;
	got = process_vm_readv(p->pid, &l, 1, &r, 1, 0);
	if (got == (ssize_t)len)
		return 0;
	if (got < 0 && errno == ESRCH)
		return -ESRCH;
	return -EFAULT;
}

static int rd64(const struct pyproc *p, uint64_t addr, uint64_t *v)
{
	return rd(p, addr, v, sizeof(*v));
}

static uint64_t get64(const uint8_t *b, unsigned off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static uint32_t get32(const uint8_t *b, unsigned off)
{
	uint32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Append code point c as UTF-8 to out (room checked by the caller). */
static size_t put_utf8(char *out, uint32_t c)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 63));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | (c >> 6 & 63));
		out[2] = (char)(0x80 | (c & 63));
		return 3;
	}
	if (c > 0x10ffff)
		c = 0xfffd;
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | (c >> 12 & 63));
	out[2] = (char)(0x80 | (c >> 6 & 63));
	out[3] = (char)(0x80 | (c & 63));
	return 4;
}

/*
 * A compact str object at addr as a malloc'd UTF-8 string (at most
 * MAX_STR characters, cut beyond). NULL when unreadable or not a str.
 */
static char *read_str(struct pyproc *p, uint64_t addr)
{
	const struct py_layout *L = p->L;
	uint8_t hdr[80], raw[MAX_STR * 4];
	uint64_t n;
	unsigned state, kind, compact, ascii;
	size_t o = 0;
	char *s;

	if (rd(p, addr, hdr, L->str_compact_data))
		return NULL;
	if (p->str_type && get64(hdr, L->ob_type) != p->str_type)
		return NULL;
	n = get64(hdr, L->str_length);
	state = hdr[L->str_state];
	kind = state >> 2 & 7;
	compact = state >> 5 & 1;
	ascii = state >> 6 & 1;
	if (!compact || (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1))
		return NULL;
	if (n > MAX_STR)
		n = MAX_STR;
	if (n && rd(p, addr + (ascii ? L->str_ascii_data : L->str_compact_data), raw, n * kind))
		return NULL;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t c = kind == 1 ? raw[i] : kind == 2 ? (uint32_t)raw[2 * i] | raw[2 * i + 1] << 8
						    : get32(raw, (unsigned)(4 * i));

		if (c == 0)
			c = '?';
		o += put_utf8(p->scratch + o, c);
	}
	p->scratch[o] = 0;
	s = strdup(p->scratch);
	return s;
}

/* A bytes object's contents (at most MAX_TABLE), malloc'd; NULL on failure. */
static uint8_t *read_bytes(struct pyproc *p, uint64_t addr, size_t *len)
{
	const struct py_layout *L = p->L;
	uint8_t hdr[40];
	uint64_t n;
	uint8_t *b;

	if (rd(p, addr, hdr, L->bytes_data))
		return NULL;
	if (p->bytes_type && get64(hdr, L->ob_type) != p->bytes_type)
		return NULL;
	n = get64(hdr, L->var_size);
	if (n > MAX_TABLE)
		return NULL;
	b = malloc(n ? n : 1);
	if (!b)
		return NULL;
	if (n && rd(p, addr + L->bytes_data, b, n)) {
		free(b);
		return NULL;
	}
	*len = n;
	return b;
}

/* ---- code objects ---- */

static void code_entry_clear(struct code_entry *e)
{
	free(e->qualname_s);
	free(e->filename_s);
	free(e->table);
	memset(e, 0, sizeof(*e));
}

static void codes_clear(struct pyproc *p)
{
	for (size_t i = 0; i < p->ncap; i++)
		if (p->codes[i].addr)
			code_entry_clear(&p->codes[i]);
	p->ncodes = 0;
}

static struct code_entry *code_slot(struct pyproc *p, uint64_t addr)
{
	size_t mask = p->ncap - 1, i = (size_t)((addr >> 4) * 0x9e3779b97f4a7c15ull >> 20) & mask;

	while (p->codes[i].addr && p->codes[i].addr != addr)
		i = (i + 1) & mask;
	return &p->codes[i];
}

/*
 * The code object at addr, read (or taken from the cache when the object
 * there still has the same file, name and table). hdr: its header as read
 * now. NULL when it is not a code object or cannot be read.
 */
static struct code_entry *code_get(struct pyproc *p, uint64_t addr, uint8_t *hdr)
{
	const struct py_layout *L = p->L;
	uint64_t fn, qn, lt;
	struct code_entry *e;

	if (rd(p, addr, hdr, L->co_size)) {
		p->st.unreadable++;
		return NULL;
	}
	if (p->code_type && get64(hdr, L->ob_type) != p->code_type) {
		p->st.bad_code++;
		return NULL;
	}
	fn = get64(hdr, L->co_filename);
	qn = get64(hdr, L->co_qualname);
	lt = get64(hdr, L->co_linetable);
	e = code_slot(p, addr);
	if (e->addr && e->filename == fn && e->qualname == qn && e->linetable == lt &&
	    e->firstlineno == (int)get32(hdr, L->co_firstlineno))
		return e;
	if (!e->addr) {
		p->ncodes++; /* room made by codes_room() */
	} else {
		code_entry_clear(e);
	}
	e->addr = addr;
	e->filename = fn;
	e->qualname = qn;
	e->linetable = lt;
	e->firstlineno = (int)get32(hdr, L->co_firstlineno);
	e->qualname_s = read_str(p, qn);
	e->filename_s = read_str(p, fn);
	e->table = read_bytes(p, lt, &e->tablen);
	if (!e->qualname_s || !e->filename_s || !e->table)
		p->st.unreadable++;
	return e;
}

/*
 * Room for `more` new code objects at most half full: grow the table, or at
 * its cap forget every entry (called before a walk, never during one: the
 * frames of a walk point at the entries' strings).
 */
static int codes_room(struct pyproc *p, size_t more)
{
	struct code_entry *old = p->codes, *v;
	size_t oldcap = p->ncap, cap = p->ncap;

	if (p->ncodes + more <= p->ncap / 2)
		return 0;
	while (cap < CODE_CACHE_MAX && p->ncodes + more > cap / 2)
		cap *= 2;
	if (p->ncodes + more > cap / 2) {
		codes_clear(p);
		return p->ncodes + more <= p->ncap / 2 ? 0 : -ENOMEM;
	}
	v = calloc(cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->codes = v;
	p->ncap = cap;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].addr)
			*code_slot(p, old[i].addr) = old[i];
	free(old);
	return 0;
}

/* ---- threads ---- */

static int read_threads(struct pyproc *p)
{
	const struct py_layout *L = p->L;
	uint64_t interp, ts, holder = 0;
	uint32_t locked = 0;
	size_t n = 0, steps = 0;
	int err;

	err = rd64(p, p->runtime + L->rt_interp_head, &interp);
	if (err)
		return err;
	if (!interp)
		return -EAGAIN;
	if (!rd(p, p->runtime + L->rt_gil_locked, &locked, sizeof(locked)) && locked)
		rd64(p, p->runtime + L->rt_gil_holder, &holder);
	for (unsigned ni = 0; interp && ni < MAX_INTERPS; ni++) {
		if (rd64(p, interp + L->is_threads_head, &ts))
			break;
		for (uint64_t first = ts; ts; steps++) {
			uint8_t buf[512];
			int32_t tid;

			if (steps >= MAX_THREADS_WALK || (steps && ts == first)) {
				p->st.loops++;
				break;
			}
			if (rd(p, ts, buf, L->ts_native_tid + sizeof(uint64_t))) {
				p->st.unreadable++;
				break;
			}
			if (n == p->tcap) {
				size_t cap = p->tcap ? 2 * p->tcap : 16;
				struct py_thread *v = realloc(p->threads, cap * sizeof(*v));

				if (!v)
					return -ENOMEM;
				p->threads = v;
				p->tcap = cap;
			}
			memcpy(&tid, buf + L->ts_native_tid, sizeof(tid));
			p->threads[n++] = (struct py_thread){ ts, tid > 0 ? tid : 0,
							      holder && holder == ts };
			ts = get64(buf, L->ts_next);
		}
		if (rd64(p, interp + L->is_next, &interp))
			break;
	}
	p->nthreads = n;
	p->threads_ns = now_ns();
	return 0;
}

int pyproc_threads(struct pyproc *p, struct py_thread *out, size_t cap, size_t *n)
{
	int err = read_threads(p);

	*n = 0;
	if (err)
		return err;
	*n = p->nthreads < cap ? p->nthreads : cap;
	memcpy(out, p->threads, *n * sizeof(*out));
	return 0;
}

/* The thread state of tid: from the list, re-read when tid is not in it (at most every 10 ms). */
static uint64_t tstate_of(struct pyproc *p, pid_t tid)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < p->nthreads; i++)
			if (p->threads[i].tid == tid)
				return p->threads[i].tstate;
		if (pass || (p->threads_ns && now_ns() - p->threads_ns < 10000000u))
			break;
		if (read_threads(p))
			break;
	}
	return 0;
}

int pyproc_holds_gil(struct pyproc *p, pid_t tid, bool *holds)
{
	const struct py_layout *L = p->L;
	uint64_t ts = tstate_of(p, tid), holder = 0;
	uint32_t locked = 0;
	int err;

	*holds = false;
	if (!ts)
		return -ESRCH;
	err = rd(p, p->runtime + L->rt_gil_locked, &locked, sizeof(locked));
	if (!err && locked)
		err = rd64(p, p->runtime + L->rt_gil_holder, &holder);
	if (err)
		return err;
	*holds = locked && holder == ts;
	return 0;
}

/* ---- frames ---- */

int pyproc_stack(struct pyproc *p, pid_t tid, struct py_frame *out, unsigned max)
{
	return pyproc_stack_at(p, tid, 0, NULL, 0, out, max, NULL, NULL);
}

int pyproc_stack_at(struct pyproc *p, pid_t tid, uint64_t sp, const uint8_t *stack, size_t size,
		    struct py_frame *out, unsigned max, bool *from_copy, bool *changed)
{
	const struct py_layout *L = p->L;
	uint64_t ts, cframe, fr, saved = 0;
	unsigned n = 0, lam = 0, power = 1;
	int err;

	if (from_copy)
		*from_copy = false;
	if (changed)
		*changed = false;
	if (max > CODE_CACHE_MAX / 4)
		max = CODE_CACHE_MAX / 4;
	if (codes_room(p, max))
		return -ENOMEM;
	ts = tstate_of(p, tid);
	if (!ts) {
		p->st.no_thread++;
		return -ESRCH;
	}
	err = rd64(p, ts + L->ts_cframe, &cframe);
	if (!err)
		err = rd64(p, cframe + L->cf_current_frame, &fr);
	if (err) {
		/* The thread state went away (thread exited): look again next time. */
		p->threads_ns = 0;
		p->nthreads = 0;
		p->st.unreadable++;
		return err == -ESRCH ? -ESRCH : -EFAULT;
	}
	/*
	 * The innermost activation's _PyCFrame is a local of the interpreter
	 * loop: on the stack the sample copied, with current_frame as it was
	 * when the event fired.
	 */
	if (stack && cframe >= sp && cframe - sp + L->cf_current_frame + 8 <= size) {
		uint64_t then;

		memcpy(&then, stack + (cframe - sp) + L->cf_current_frame, sizeof(then));
		if (from_copy)
			*from_copy = true;
		if (changed)
			*changed = then != fr;
		fr = then;
	}
	p->st.stacks++;
	while (fr) {
		uint8_t f[128], hdr[256];
		struct code_entry *e;
		uint64_t code, instr;
		int line = -1;

		if (n == max) {
			p->st.truncated++;
			break;
		}
		/* Brent: a chain that comes back to a frame it passed loops. */
		if (fr == saved) {
			p->st.loops++;
			break;
		}
		if (++lam == power) {
			saved = fr;
			power *= 2;
			lam = 0;
		}
		if (rd(p, fr, f, L->fr_size)) {
			p->st.unreadable++;
			break;
		}
		code = get64(f, L->fr_code);
		e = code_get(p, code, hdr);
		if (!e)
			break;
		instr = get64(f, L->fr_prev_instr);
		if (e->table) {
			int64_t off = (int64_t)(instr - (code + L->co_code));

			if (off < -2 || off > (int64_t)MAX_TABLE * 64 ||
			    pyline_addr2line(e->table, e->tablen, e->firstlineno,
					     off < 0 ? -1 : (int)off, &line)) {
				p->st.bad_lines++;
				line = -1;
			}
		}
		out[n++] = (struct py_frame){
			.code = code,
			.qualname = e->qualname_s ? e->qualname_s : "?",
			.filename = e->filename_s ? e->filename_s : "?",
			.line = line,
			.entry = f[L->fr_is_entry] != 0,
		};
		fr = get64(f, L->fr_previous);
	}
	p->st.frames += n;
	return (int)n;
}

void pyproc_get_stats(const struct pyproc *p, struct pyproc_stats *st)
{
	*st = p->st;
}

const char *pyproc_version(const struct pyproc *p)
{
	return p->version;
}

const char *pyproc_path(const struct pyproc *p)
{
	return p->path;
}

void pyproc_free(struct pyproc *p)
{
	if (!p)
		return;
	if (p->codes)
		codes_clear(p);
	free(p->codes);
	free(p->threads);
	free(p);
}

/* ---- finding the interpreter ---- */

/* "python3.11", "libpython3.11.so.1.0": the version in the name; false otherwise. */
static bool name_version(const char *path, unsigned *major, unsigned *minor)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	if (!strncmp(b, "lib", 3))
		b += 3;
	if (strncmp(b, "python", 6))
		return false;
	if (sscanf(b + 6, "%u.%u", major, minor) != 2)
		return false;
	return true;
}

struct elf_syms {
	uint64_t runtime, version, code_type, str_type, bytes_type, section;
	uint64_t load_vaddr;          /* vaddr of the PT_LOAD at file offset 0 */
};

static void elf_scan(Elf *elf, struct elf_syms *s)
{
	size_t shstrndx, nph;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) == 0) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;
			const char *name;

			if (!gelf_getshdr(scn, &sh))
				continue;
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (name && !strcmp(name, ".PyRuntime"))
				s->section = sh.sh_addr;
			if (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB)
				continue;
			d = elf_getdata(scn, NULL);
			if (!d || !sh.sh_entsize)
				continue;
			for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym sym;
				const char *sn;

				if (!gelf_getsym(d, (int)i, &sym) || !sym.st_value)
					continue;
				sn = elf_strptr(elf, sh.sh_link, sym.st_name);
				if (!sn || (sn[0] != '_' && sn[0] != 'P'))
					continue;
				if (!strcmp(sn, "_PyRuntime"))
					s->runtime = sym.st_value;
				else if (!strcmp(sn, "Py_Version"))
					s->version = sym.st_value;
				else if (!strcmp(sn, "PyCode_Type"))
					s->code_type = sym.st_value;
				else if (!strcmp(sn, "PyUnicode_Type"))
					s->str_type = sym.st_value;
				else if (!strcmp(sn, "PyBytes_Type"))
					s->bytes_type = sym.st_value;
			}
		}
	}
	if (elf_getphdrnum(elf, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == 0) {
				s->load_vaddr = ph.p_vaddr & ~(uint64_t)0xfff;
				break;
			}
		}
	}
}

/* Open path of pid's mount namespace and read its symbols. 0 or -errno. */
static int read_elf(pid_t pid, const char *path, uint64_t dev, uint64_t ino, struct elf_syms *s)
{
	char full[4200];
	struct safe_open_want want = { .dev = dev, .ino = ino };
	Elf *elf;
	int fd;

	snprintf(full, sizeof(full), "/proc/%d/root%s", (int)pid, path);
	fd = safe_open(full, dev || ino ? &want : NULL, NULL);
	if (fd < 0)
		return fd;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		close(fd);
		return -EINVAL;
	}
	elf_scan(elf, s);
	elf_end(elf);
	close(fd);
	return 0;
}

/* A reader for version major.minor at runtime; NULL with msg when none. */
static struct pyproc *pyproc_new(pid_t pid, unsigned major, unsigned minor, uint64_t runtime,
				 const char *path, const char *version, char *msg, size_t len,
				 int *err)
{
	struct pyproc *p = calloc(1, sizeof(*p));

	*err = -ENOMEM;
	if (!p)
		return NULL;
	p->pid = pid;
	p->runtime = runtime;
	snprintf(p->path, sizeof(p->path), "%s", path);
	snprintf(p->version, sizeof(p->version), "%s", version);
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].major == major && layouts[i].minor == minor)
			p->L = &layouts[i];
	if (!p->L) {
		snprintf(msg, len, "Python %s in process %d (%s): pmutop has no layout for "
			 "this CPython version (it reads %s); Python frames off, native frames only",
			 version, (int)pid, path, pyproc_known_versions());
		free(p);
		*err = -ENOTSUP;
		return NULL;
	}
	p->ncap = 1024;
	p->codes = calloc(p->ncap, sizeof(*p->codes));
	if (!p->codes) {
		free(p);
		return NULL;
	}
	*err = 0;
	return p;
}

int pyproc_open_at(pid_t pid, uint64_t runtime, unsigned major, unsigned minor,
		   struct pyproc **out, char *msg, size_t len)
{
	char version[32];
	int err;

	snprintf(version, sizeof(version), "%u.%u", major, minor);
	*out = pyproc_new(pid, major, minor, runtime, "?", version, msg, len, &err);
	return err;
}

int pyproc_open(pid_t pid, struct pyproc **out, char *msg, size_t len)
{
	char fname[64], line[4608], path[4096], seen[4096] = "", version[32];
	unsigned major = 0, minor = 0, maj, min, dmaj, dmin;
	uint64_t start, end, pgoff, ino, bias = 0, pyv = 0;
	struct elf_syms s = { 0 };
	struct pyproc *p;
	bool found = false;
	FILE *f;
	int err;

	*out = NULL;
	snprintf(fname, sizeof(fname), "/proc/%d/maps", (int)pid);
	f = fopen(fname, "re");
	if (!f) {
		err = -errno;
		snprintf(msg, len, "cannot read %s: %s", fname, strerror(-err));
		return err;
	}
	while (fgets(line, sizeof(line), f)) {
		char perms[8];
		int pos = 0;

		if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %n", &start, &end, perms, &pgoff,
			   &dmaj, &dmin, &ino, &pos) < 7 || !pos || line[pos] != '/')
			continue;
		snprintf(path, sizeof(path), "%.*s", (int)strcspn(line + pos, "\n"), line + pos);
		if (pgoff != 0 || !name_version(path, &maj, &min) || !strcmp(path, seen))
			continue;
		snprintf(seen, sizeof(seen), "%s", path);
		memset(&s, 0, sizeof(s));
		if (read_elf(pid, path, makedev(dmaj, dmin), ino, &s) ||
		    (!s.runtime && !s.section))
			continue;
		major = maj;
		minor = min;
		bias = start - s.load_vaddr;
		found = true;
		break;
	}
	fclose(f);
	if (!found) {
		snprintf(msg, len, "process %d runs no CPython pmutop can find (no python3.X or "
			 "libpython3.X with a _PyRuntime symbol in its maps)", (int)pid);
		return -ENOENT;
	}
	/* Py_Version (3.11+): PY_VERSION_HEX, 0x030b02f0 for 3.11.2 final. */
	{
		struct pyproc probe = { .pid = pid };

		if (s.version && !rd64(&probe, bias + s.version, &pyv) && (pyv >> 24 & 0xff) == 3) {
			major = (unsigned)(pyv >> 24 & 0xff);
			minor = (unsigned)(pyv >> 16 & 0xff);
			snprintf(version, sizeof(version), "%u.%u.%u", major, minor,
				 (unsigned)(pyv >> 8 & 0xff));
		} else {
			snprintf(version, sizeof(version), "%u.%u", major, minor);
		}
	}
	p = pyproc_new(pid, major, minor, bias + (s.runtime ? s.runtime : s.section), path,
		       version, msg, len, &err);
	if (!p)
		return err;
	p->code_type = s.code_type ? bias + s.code_type : 0;
	p->str_type = s.str_type ? bias + s.str_type : 0;
	p->bytes_type = s.bytes_type ? bias + s.bytes_type : 0;
	*out = p;
	return 0;
}
