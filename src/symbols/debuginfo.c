/*
 * debuginfo.c - file:line and inlined frames from DWARF via libdw (see
 * debuginfo.h).
 *
 * Each module gets its own offline Dwfl the first time one of its addresses
 * is asked about. Dwfl does the file finding: the module's own .debug_*
 * sections, else a separate debug file by build-id or .gnu_debuglink along
 * the debuginfo path (validated by build-id or CRC), compressed sections
 * included. The module file is opened through /proc/PID/root (so a
 * container's files and their debuglinks are found in the container), then
 * /proc/PID/map_files, then - same mount namespace only - the path itself;
 * a file whose build-id differs from the module pmutop symbolizes with is
 * skipped, so line numbers never come from a different build.
 *
 * The inline chain at an address is the one eu-stack and eu-addr2line -i
 * print: dwarf_getscopes() finds the innermost scope containing the
 * address, dwarf_getscopes_die() walks its physical parents; each
 * DW_TAG_inlined_subroutine is a frame whose caller's line is the
 * inlined_subroutine's DW_AT_call_file/DW_AT_call_line, up to the
 * DW_TAG_subprogram that holds the code.
 *
 * Results are cached per (module, ELF vaddr) in an open-addressing table,
 * negative ones too, with their strings interned here (not pointing into
 * libdw's data). Both are what a long run would otherwise grow without end,
 * so debuginfo_trim() (the session, about once a second) bounds them:
 *   - the address cache holds at most CACHE_MAX entries; past it, it is
 *     emptied (the aggregate keeps what it looked up; an address seen again
 *     is looked up again) and that is counted;
 *   - libdw's own memory grows with every CU it has read (line tables,
 *     DIEs, decompressed sections: 25 MB and more for libpython and libc's
 *     debug files) and with the debug files' mapped pages. A module's Dwfl
 *     is closed when it has answered nothing for IDLE_NS, or when it has
 *     been open RECYCLE_NS and read new DWARF since: it is reopened from
 *     duplicates of its files' descriptors kept for that (the target may
 *     be gone by then), and only the CUs still asked about are read again.
 *
 * Reading a module's DWARF off the session's thread (issue 17). The load -
 * the CRC of a debug file found by name, dwfl_module_getdwarf (which
 * decompresses sections), the address index (libdwfl's over
 * .debug_aranges, else ours over every CU) - and each lookup after it -
 * the CU's line table parsed at its first address (dwarf_getsrclines),
 * the scope walk over the CU's DIEs (dwarf_getscopes, twice), CU ranges
 * built where aranges miss - read target-controlled bytes for as long as
 * they last, up to safe_open's 4 GiB, and libdw cannot be interrupted: a
 * debug file of a million CUs took 8 s and 1.2 GB to load on the
 * session's thread, one CU of 40 million DIEs 2-3 s per address looked
 * up, which neither a signal nor --duration could cut short, and while
 * sampling the ring buffers overflowed. With a loader
 * (debuginfo_set_loader(): the sessions' process tables), both are jobs
 * (struct dload) run on the loader's one thread: a module's first job
 * loads and looks up, later ones look up. debuginfo_busy() asks for an
 * address (a placeholder in the cache marks it asked) and says busy until
 * the answer is in the cache; addresses asked while a module's job waits
 * in the queue join it, those asked while it runs wait in dm->wanted for
 * the next one, started when the session takes the answers (take_job(),
 * from debuginfo_busy() or debuginfo_lookup()). A job on the loader hands
 * its answers back every SLICE_NS, and the rest go into the next job. The
 * session's thread never waits for libdw, except in debuginfo_lookup()
 * (callers that asked to wait: --stacks, tests). libdw's scope walks
 * recurse once per level of nested DIEs: a CU is measured first, without
 * recursion (cu_shallow()), and one nested deeper than MAX_DIE_DEPTH
 * gives lines but no inlined frames.
 *
 * Ownership rule: a module's Dwfl (with its Dwfl_Module and the debug
 * file's fd) and the CU ranges built with it belong to one thread at a
 * time. The session's thread owns them until start_job() moves them into
 * the job (leaving the dmod's fields NULL/-1); the loader's thread from
 * when it takes the job off the queue until it marks it DONE under the
 * loader's lock; the session's thread again once it sees DONE under that
 * lock (take_job() moves them back). A job's fields are written by one
 * side only between those points; the state, the cancelled flag and -
 * while QUEUED - the addresses to look up (loader_append()) only under
 * the lock. Answers are the job's until taken: their strings point into
 * the job's Dwfl (libdw's data) or its string pool, and take_job()
 * interns them in the debuginfo while the Dwfl is the session's again,
 * before the job is freed; the worker never touches the cache, the
 * interned strings or anything else of the debuginfo. A job whose module
 * goes (debuginfo_forget_module() on eviction, debuginfo_free()) is
 * cancelled and freed by whichever side holds it: the worker for a queued
 * or running one (when it reaches it, at its next address, or when done
 * with it), the session at once for a done one; the module's placeholders
 * go with it (drop_asked()). The worker touches
 * nothing but the job and the loader: Dwfl callbacks and the search path
 * are static (from the environment, once), so a Dwfl outlives its
 * debuginfo safely. A loader freed while its thread is inside libdw is
 * left to that thread, which frees the job and then the loader: the
 * session never waits for libdw.
 */
#include "pmutop/symbols/debuginfo.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"
#include "pmutop/target/safe_open.h"
#include "pmutop/symbols/debuginfod.h"
#include "pmutop/symbols/gopclntab.h"
#include "pmutop/symbols/worker.h"

#define DEFAULT_DEBUGINFO_PATH ":.debug:/usr/lib/debug"
#define MAX_CHAIN 64  /* inline depth kept at most */
#define CACHE_MAX 65536                      /* cached addresses, all modules */
#define IDLE_NS (30 * 1000000000ULL)         /* a Dwfl asked nothing this long closes */
#define RECYCLE_NS (300 * 1000000000ULL)     /* ... one open this long and still reading, too */
#define SLICE_NS (100 * 1000000ULL)          /* a job's answers go back at least this often */
/*
 * DIEs nested deeper than this in a CU: its scopes are not walked. libdw's
 * scope walk (dwarf_getscopes, dwarf_getscopes_die) recurses once per
 * level: 300,000 nested lexical blocks (a 5 MB debug file) overflowed the
 * thread's stack and killed pmutop. Real code nests tens of levels; 4096
 * take well under 1 MB of the worker's stack (worker.c).
 */
#define MAX_DIE_DEPTH 4096
#define STR_(x) #x
#define STR(x) STR_(x)

/* A CU whose nesting was measured (cu_shallow()): its offset, and whether it is shallow. */
struct cu_depth {
	Dwarf_Off off;
	bool ok;
};

/* A CU's address range, for modules without .debug_aranges. */
struct cu_range {
	Dwarf_Addr lo, hi;     /* Dwfl addresses */
	Dwarf_Die cu;
	Dwarf_Addr bias;
};

/* Strings made for answers (joined paths, qualified names): their maker's. */
struct strpool {
	char **v;
	size_t n, cap;
};

/* One address a job looks up, and (once answered) its inline chain. */
struct dlook {
	uint64_t vaddr;            /* ELF vaddr */
	unsigned n;                /* the chain's length */
	struct src_line *lines;    /* malloc'd; strings libdw's or in the job's pool */
};

/* A module's job: its load and/or lookups (see the ownership rule above). */
enum dload_state { DLOAD_QUEUED, DLOAD_BUSY, DLOAD_DONE };

struct dload {
	struct dload *next;        /* the loader's queue */
	enum dload_state state;    /* under the loader's lock */
	bool cancelled;            /* under the lock: its module is gone; see dload_drop() */
	bool load;                 /* load the DWARF first (else it is loaded: has_dwarf) */
	bool sliced;               /* on the loader: hand answers back every SLICE_NS */
	Dwfl *dwfl;                /* the module's, moved here by start_job() */
	Dwfl_Module *dm;
	GElf_Addr ebias;
	/* The addresses to look up: the session appends while QUEUED (under the lock). */
	struct dlook *look;
	size_t nlook, caplook;
	size_t nanswered;          /* look[0, nanswered) answered */
	struct strpool strs;       /* what the answers' strings point into, besides libdw */
	int debug_fd;              /* the separate debug file, until libdw takes it */
	char *debug_name;
	bool crc_due;              /* debug_fd found by name only: check its CRC first */
	GElf_Word crc;
	/* What load_run() found. */
	bool crc_bad;              /* the CRC differs: not the debug file, no DWARF */
	bool has_dwarf;
	struct cu_range *ranges;   /* the module's (moved in and back), or built here */
	size_t nranges;
	bool ranges_built;
	struct cu_depth *depths;   /* the module's CUs measured, by offset (moved in and back) */
	size_t ndepths, capdepths;
	unsigned too_deep;         /* CUs found too deep to walk (noted when taken) */
};

/* The thread that runs loads (debuginfo.h; shaped like debuginfod.c's fetcher). */
struct dwarf_loader {
	pthread_mutex_t mu;
	pthread_cond_t cv;         /* broadcast when a job is done or cancelled */
	struct worker w;           /* the thread (worker.h) */
	bool orphaned;             /* freed while running: the worker frees it */
	bool hold;                 /* tests: a job taken waits before it runs */
	struct dload *head, *tail; /* queued */
	struct dload *current;     /* being run */
};

struct dmod {
	struct cu_range *ranges; /* sorted by lo; built on first need */
	size_t nranges;
	bool ranges_built;
	struct cu_depth *depths; /* CUs measured by cu_shallow(), sorted by offset */
	size_t ndepths, capdepths;
	struct module *mod;  /* its names grow from a debug file (module_add_debug_symbols) */
	Dwfl *dwfl;
	Dwfl_Module *dm;
	GElf_Addr ebias;     /* Dwfl address = ELF vaddr + ebias */
	bool maybe_dwarf;    /* own debug sections, or a debug file was found */
	bool loaded;         /* dwfl_module_getdwarf() was called (and its results taken) */
	struct dload *job;   /* the job in flight: dwfl, dm, ranges, debug_fd are its until taken */
	uint64_t *wanted;    /* vaddrs to look up once the job in flight is taken */
	size_t nwanted, capwanted;
	bool has_dwarf;      /* ... and gave DWARF */
	int debug_fd;        /* the separate debug file found at open, until libdw takes it */
	char *debug_name;
	bool debug_crc_due;  /* debug_fd matched by name only: check its CRC before use */
	GElf_Word debug_crc;
	bool remote;         /* asked of debuginfod, the answer not taken yet */
	/* To reopen after debuginfo_trim() closed dwfl: duplicates of the fds. */
	int keep_fd, keep_debug_fd;
	char *keep_path, *keep_debug_name;
	bool closed;         /* dwfl closed by debuginfo_trim(); reopen on next use */
	uint64_t opened_ns, used_ns; /* CLOCK_MONOTONIC: dwfl opened, last DWARF read */
};

struct dentry {
	const struct module *mod;  /* NULL: empty slot */
	uint64_t vaddr;
	uint32_t n;
	bool asked;                /* not answered yet: a job has (or will have) it */
	struct src_line *lines;
};

struct debuginfo {
	pid_t pid;
	bool host_paths;
	struct dwarf_loader *loader; /* loads run there, or here when NULL */

	struct dmod **mods;  /* pointers: Dwfl userdata points at them */
	size_t nmods, capmods;
	size_t last;               /* index of the module asked about last */

	struct dentry *tab;
	size_t mask, count;

	char **strs;               /* interned joined paths (open addressing) */
	size_t smask, scount;

	struct dfd_fetcher *fetch; /* debuginfod, or NULL (debuginfo_set_fetcher()) */
	unsigned nskipped;         /* target files refused (debuginfo_skipped()) */
	char skipped[512];         /* the first one, and why */

	struct debuginfo_stats st;
	size_t cache_max;          /* debuginfo_trim()'s limits (debuginfo_set_limits()) */
	uint64_t idle_ns, recycle_ns;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Dwfl's find_debuginfo callback. The debug file is searched for when the
 * module is opened (debuginfo_prepare(): the target still runs, so paths
 * under /proc/PID/root still resolve), and DWARF loaded later from that fd
 * - by load_run(), with the module's userdata pointing at its job.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct dload *j = userdata ? *userdata : NULL;
	int fd;

	/* Anything else (the dwz alt file of .gnu_debugaltlink): search now. */
	if (!j || j->debug_fd < 0)
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
						    debuglink_file, debuglink_crc,
						    debuginfo_file_name);
	fd = j->debug_fd;
	j->debug_fd = -1; /* libdw owns it now */
	*debuginfo_file_name = j->debug_name;
	j->debug_name = NULL;
	return fd;
}

/*
 * The search path and the callbacks every Dwfl here uses: static, so that
 * a Dwfl on the loader's thread never points into a debuginfo that may be
 * freed meanwhile (see the ownership rule).
 */
static char *search_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &search_path,
};
static pthread_once_t search_path_once = PTHREAD_ONCE_INIT;

static void init_search_path(void)
{
	const char *env = getenv("PMUTOP_DEBUGINFO_PATH");

	search_path = strdup(env && *env ? env : DEFAULT_DEBUGINFO_PATH);
	if (!search_path)
		search_path = (char *)DEFAULT_DEBUGINFO_PATH; /* never written to */
	elf_version(EV_CURRENT); /* before any thread uses libelf */
}

struct debuginfo *debuginfo_new(pid_t pid, bool host_paths)
{
	struct debuginfo *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	pthread_once(&search_path_once, init_search_path);
	d->pid = pid;
	d->host_paths = host_paths;
	d->cache_max = CACHE_MAX;
	d->idle_ns = IDLE_NS;
	d->recycle_ns = RECYCLE_NS;
	return d;
}

static void dload_drop(struct dwarf_loader *l, struct dload *j);

/* One module's state: its Dwfl, descriptors and names; a load in flight is cancelled. */
static void dmod_free(struct debuginfo *d, struct dmod *dm)
{
	if (dm->job)
		dload_drop(d->loader, dm->job);
	if (dm->dwfl)
		dwfl_end(dm->dwfl);
	if (dm->debug_fd >= 0)
		close(dm->debug_fd);
	if (dm->keep_fd >= 0)
		close(dm->keep_fd);
	if (dm->keep_debug_fd >= 0)
		close(dm->keep_debug_fd);
	free(dm->ranges);
	free(dm->depths);
	free(dm->wanted);
	free(dm->debug_name);
	free(dm->keep_path);
	free(dm->keep_debug_name);
	free(dm);
}

void debuginfo_free(struct debuginfo *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->nmods; i++)
		dmod_free(d, d->mods[i]);
	if (d->tab)
		for (i = 0; i <= d->mask; i++)
			free(d->tab[i].lines);
	free(d->tab);
	if (d->strs)
		for (i = 0; i <= d->smask; i++)
			free(d->strs[i]);
	free(d->strs);
	free(d->mods);
	free(d);
}

/* ---- opening a module's DWARF ------------------------------------------ */

/* Remember a target file that was refused, for debuginfo_skipped(). */
static void note_skipped(struct debuginfo *d, const char *path, const char *why)
{
	if (d->nskipped++ == 0)
		snprintf(d->skipped, sizeof(d->skipped), "%.400s: %s", path, why);
}

/*
 * Open a target-controlled file for libdw: never a FIFO, device or
 * oversized file, never through a symlink out of the target's root, and
 * (want_dev/want_ino non-zero) only the file the target mapped. The fd or
 * -1; refusals other than "not there" are noted - a process that has
 * exited (ESRCH from its /proc/PID/root or map_files) is not an unsafe file.
 */
static int open_target_file(struct debuginfo *d, const char *path, uint64_t dev, uint64_t ino)
{
	struct safe_open_want want = { .dev = dev, .ino = ino };
	int fd = safe_open(path, &want, NULL);

	if (fd < 0 && fd != -ENOENT && fd != -ENOTDIR && fd != -EACCES && fd != -EPERM &&
	    fd != -ESRCH)
		note_skipped(d, path, safe_open_strerror(fd));
	return fd < 0 ? -1 : fd;
}

static Dwfl *open_fd(const char *want, const char *file, int fd,
		     Dwfl_Module **dmp);

/*
 * The Dwfl module for file, if it opens and is the same build as mod. The
 * file is opened here (open_target_file) and its fd handed to libdwfl,
 * which would otherwise open the path itself, following anything.
 */
static Dwfl *try_open(struct debuginfo *d, struct dmod *m, const char *file, uint64_t dev,
		      uint64_t ino)
{
	int fd = open_target_file(d, file, dev, ino), keep;
	Dwfl *dwfl;

	if (fd < 0)
		return NULL;
	keep = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	dwfl = open_fd(module_build_id(m->mod), file, fd, &m->dm);
	if (!dwfl || keep < 0 || !(m->keep_path = strdup(file))) {
		if (keep >= 0)
			close(keep);
		return dwfl;
	}
	m->keep_fd = keep;
	return dwfl;
}

/*
 * A Dwfl for the ELF file open at fd (taken over), named file; NULL when
 * it does not open or (want non-empty) its GNU build-id is not want.
 */
static Dwfl *open_fd(const char *want, const char *file, int fd,
		     Dwfl_Module **dmp)
{
	const char *base = strrchr(file, '/');
	const unsigned char *bits;
	GElf_Addr vaddr;
	Dwfl_Module *dm;
	Dwfl *dwfl;
	int n;

	dwfl = dwfl_begin(&callbacks);
	if (!dwfl) {
		close(fd);
		return NULL;
	}
	dwfl_report_begin(dwfl);
	/* libdwfl owns fd from here when this succeeds; on failure it is ours. */
	dm = dwfl_report_elf(dwfl, base ? base + 1 : file, file, fd, 0, true);
	dwfl_report_end(dwfl, NULL, NULL);
	if (!dm) {
		close(fd);
		goto fail;
	}
	n = dwfl_module_build_id(dm, &bits, &vaddr);
	if (want && *want) {
		char got[2 * 64 + 1];

		if (n <= 0 || n > 64)
			goto fail;
		module_hex_encode(got, bits, (size_t)n);
		if (strcmp(got, want) != 0)
			goto fail;
	}
	*dmp = dm;
	return dwfl;
fail:
	dwfl_end(dwfl);
	return NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Whether the ELF file has its own DWARF (.debug_info, maybe compressed). */
static bool has_debug_sections(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")))
			return true;
	}
	return false;
}

/*
 * Whether the file at fd may be the separate debug file for mod: the same
 * GNU build-id when mod has one; else (by_name) an ELF file with DWARF,
 * whose .gnu_debuglink CRC32 load_run() checks later - reading the
 * whole file is too slow for the sampling path.
 */
static bool debug_file_matches(int fd, const struct module *mod, bool by_name)
{
	const char *want = module_build_id(mod);
	bool ok = false;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);

	if (!elf)
		return false;
	if (want && *want) {
		const void *bits;
		char got[2 * 64 + 1];
		ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);

		if (n > 0 && n <= 64) {
			module_hex_encode(got, bits, (size_t)n);
			ok = strcmp(got, want) == 0;
		}
	} else if (by_name) {
		ok = elf_kind(elf) == ELF_K_ELF && has_debug_sections(elf);
	}
	elf_end(elf);
	return ok;
}

/* The .gnu_debuglink CRC32 of the whole file at fd equals crc. */
static bool crc_matches(int fd, GElf_Word crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0L, Z_NULL, 0);
	ssize_t r;
	off_t off = 0;

	while ((r = pread(fd, buf, sizeof(buf), off)) > 0) {
		c = crc32(c, buf, (uInt)r);
		off += r;
	}
	return r == 0 && (GElf_Word)c == crc;
}

/* Open path (safely) if it may be mod's debug file; the fd or -1. */
static int try_debug_file(struct debuginfo *d, const char *path, const struct module *mod,
			  bool by_name)
{
	int fd = open_target_file(d, path, 0, 0);

	if (fd < 0)
		return -1;
	if (debug_file_matches(fd, mod, by_name))
		return fd;
	close(fd);
	return -1;
}

/*
 * The debug file's .symtab for a module stripped of its own (module.h:
 * bounded, since this runs on the session's thread); one too large to
 * take whole is noted like a refused file.
 */
static void add_debug_symbols(struct debuginfo *d, struct dmod *dm, int fd, const char *path)
{
	if (module_add_debug_symbols(dm->mod, fd) == -E2BIG)
		note_skipped(d, path, "its .symtab is too large (over 256k entries or 64 MiB of "
			     "names): not all its names taken");
}

/*
 * Find the separate debug file now, while the target runs (see
 * debuginfo_prepare()), the way elfutils' dwfl_standard_find_debuginfo
 * does, with one difference: every directory is looked for first inside
 * the target's root (/proc/PID/root/...), then on the host - and the host
 * only when the file is verified by build-id or the target shares our
 * mount namespace. For each entry of the debuginfo path:
 *   build-id      DIR/.build-id/xx/rest.debug          (absolute DIRs)
 *   debuglink     FILEDIR/LINK        (entry "")
 *                 FILEDIR/ENTRY/LINK  (relative entry, e.g. ".debug")
 *                 DIR/FILEDIR/LINK    (absolute DIR, e.g. /usr/lib/debug)
 * (libdwfl's own search, run on a scratch module, leaves that module in a
 * state in which dwfl_end() closes fd 0: not usable here.)
 */
static void find_debug_file(struct debuginfo *d, struct dmod *dm, Elf *elf,
			    const struct mapping *map)
{
	const char *bid = module_build_id(dm->mod), *link, *p;
	char root[64], dir[4096], path[8192];
	GElf_Word crc = 0;
	bool verified = bid && *bid, pass_host;
	int fd = -1;
	size_t dl;

	snprintf(root, sizeof(root), "/proc/%d/root", (int)d->pid);
	link = dwelf_elf_gnu_debuglink(elf, &crc);
	if (link && !safe_open_plain_name(link)) {
		/* A name, not a path: "../../etc/shadow" or "/dev/zero" is hostile. */
		note_skipped(d, map->path, "its .gnu_debuglink is not a plain file name");
		link = NULL;
	}
	/* The file's directory as the target names it. */
	p = strrchr(map->path, '/');
	dl = p ? (size_t)(p - map->path) : 0;
	if (dl >= sizeof(dir))
		return;
	memcpy(dir, map->path, dl);
	dir[dl] = '\0';
	for (int pass = 0; pass < 2 && fd < 0; pass++) {
		/* pass 0: build-id; pass 1: debuglink. */
		const char *e = search_path;

		if (*e == '+' || *e == '-')
			e++;
		while (fd < 0) {
			const char *colon = strchr(e, ':');
			size_t el = colon ? (size_t)(colon - e) : strlen(e);
			char ent[1024];

			if (el < sizeof(ent)) {
				memcpy(ent, e, el);
				ent[el] = '\0';
				for (int host = 0; host < 2 && fd < 0; host++) {
					pass_host = host == 1;
					if (pass_host && !verified && !d->host_paths)
						break;
					if (pass == 0 && verified && ent[0] == '/') {
						snprintf(path, sizeof(path), "%s%s/.build-id/%.2s/%s.debug",
							 pass_host ? "" : root, ent, bid, bid + 2);
						fd = try_debug_file(d, path, dm->mod, false);
					} else if (pass == 1 && link && ent[0] == '/') {
						snprintf(path, sizeof(path), "%s%s%s/%s",
							 pass_host ? "" : root, ent, dir, link);
						fd = try_debug_file(d, path, dm->mod, !verified);
					} else if (pass == 1 && link && !pass_host) {
						/* Next to the file: always the target's own. */
						snprintf(path, sizeof(path), "%s%s%s%s/%s", root, dir,
							 ent[0] ? "/" : "", ent, link);
						fd = try_debug_file(d, path, dm->mod, !verified);
					}
				}
			}
			if (!colon)
				break;
			e = colon + 1;
		}
	}
	if (fd >= 0) {
		dm->debug_fd = fd;
		dm->debug_name = strdup(path);
		dm->maybe_dwarf = true;
		dm->debug_crc_due = !verified;
		dm->debug_crc = crc;
		/* Names only the debug file has, from now on (not only with lines). */
		if (verified)
			add_debug_symbols(d, dm, fd, path);
	}
}

/* ---- debuginfod (debuginfod.h) ------------------------------------------ */

static struct dmod *module_state(struct debuginfo *d, const struct mapping *map);

void debuginfo_set_fetcher(struct debuginfo *d, struct dfd_fetcher *f)
{
	if (d)
		d->fetch = f;
}

/*
 * No debug file here: ask debuginfod for it by build-id. Until the answer
 * is taken the module counts as having DWARF, so its locations wait for
 * their lines instead of being written without them.
 */
static void ask_remote(struct debuginfo *d, struct dmod *dm)
{
	const char *bid = module_build_id(dm->mod);

	if (d->fetch && bid && *bid && dfd_request(d->fetch, DFD_DEBUGINFO, bid) == 0)
		dm->remote = dm->maybe_dwarf = true;
}

/*
 * Take debuginfod's answer for dm (block: wait for it). Returns whether it
 * is still awaited. A verified file becomes the module's debug file, and
 * its .symtab the module's names.
 */
static bool take_remote(struct debuginfo *d, struct dmod *dm, bool block)
{
	char *path = NULL;
	int fd;

	if (!dm->remote)
		return false;
	fd = dfd_take(d->fetch, DFD_DEBUGINFO, module_build_id(dm->mod), block, &path);
	if (fd == -EINPROGRESS)
		return true;
	dm->remote = false;
	if (fd < 0) {
		dm->maybe_dwarf = false;
		return false;
	}
	add_debug_symbols(d, dm, fd, path ? path : module_build_id(dm->mod));
	dm->debug_fd = fd;
	dm->debug_name = path;
	return false;
}

static struct dentry *slot_of(const struct debuginfo *d, const struct module *mod,
			      uint64_t vaddr);
static bool take_job(struct debuginfo *d, struct dmod *dm, bool block);
static void request(struct debuginfo *d, struct dmod *dm, uint64_t vaddr);
static void reopen_module(struct debuginfo *d, struct dmod *dm);

/* Whether a lookup in dm needs DWARF it has, or may have once loaded. */
static bool dwarf_due(const struct dmod *dm)
{
	return dm->maybe_dwarf && (!dm->loaded || dm->has_dwarf);
}

bool debuginfo_busy(struct debuginfo *d, const struct mapping *map, uint64_t addr)
{
	struct src_line tmp[MAX_CHAIN];
	const struct dentry *e = NULL;
	const char *err;
	struct dmod *dm;
	uint64_t vaddr;

	if (!d || !map || !map->mod || !(dm = module_state(d, map)))
		return false;
	if (take_remote(d, dm, false))
		return true;
	if (dm->job)
		take_job(d, dm, false); /* answers come in; the next job starts */
	if (!d->loader)
		return false; /* looks up where asked (no session) */
	/* What debuginfo_lookup() answers without DWARF: not busy. */
	vaddr = addr - map->bias;
	if (d->tab && (e = slot_of(d, map->mod, vaddr))->mod && !e->asked)
		return false;
	if (module_gopclntab(map->mod, &err) && gosym_lines(map->mod, vaddr, tmp, MAX_CHAIN))
		return false;
	if (dm->closed && !dm->job)
		reopen_module(d, dm);
	if (!dwarf_due(dm))
		return false;
	/* Asked already, and a job has it or will: wait for it. */
	if (e && e->mod && (dm->job || dm->nwanted))
		return true;
	request(d, dm, vaddr);
	return dm->job != NULL || dm->nwanted;
}

/*
 * The module file: first /proc/PID/map_files (the very file mapped; needs
 * CAP_SYS_ADMIN), then the path inside the target's root and - same mount
 * namespace only - on the host, each only if it still has the mapping's
 * device and inode (the target may have swapped the path after mmap).
 */
static void open_module(struct debuginfo *d, struct dmod *dm, const struct mapping *map)
{
	char root[4200], mf[96];
	const char *cands[3];
	bool check[3];
	unsigned nc = 0, i;
	void **ud = NULL;
	Elf *elf;

	if (map->path[0] != '/')
		return;
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)d->pid,
		 map->start, map->end);
	check[nc] = false;
	cands[nc++] = mf;
	if (!ends_with(map->path, " (deleted)")) {
		snprintf(root, sizeof(root), "/proc/%d/root%s", (int)d->pid, map->path);
		check[nc] = true;
		cands[nc++] = root;
	}
	if (d->host_paths && !ends_with(map->path, " (deleted)")) {
		check[nc] = true;
		cands[nc++] = map->path;
	}
	for (i = 0; i < nc && !dm->dwfl; i++)
		dm->dwfl = try_open(d, dm, cands[i], check[i] ? map->dev : 0,
				    check[i] ? map->ino : 0);
	if (!dm->dwfl)
		return;
	dm->opened_ns = mono_ns();
	dwfl_module_info(dm->dm, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	if (ud)
		*ud = NULL; /* the job's while it loads (start_job) */
	elf = dwfl_module_getelf(dm->dm, &dm->ebias);
	if (!elf)
		return;
	if (has_debug_sections(elf))
		dm->maybe_dwarf = true;
	else
		find_debug_file(d, dm, elf, map);
	if (!dm->maybe_dwarf)
		ask_remote(d, dm);
}

static void build_ranges(Dwfl_Module *mod, struct cu_range **rangesp, size_t *np);

/*
 * The slow part of a load (on the loader's thread, or the caller's without
 * a loader): touches nothing but j. The CRC of a debug file found by name
 * (the whole file), the DWARF (dwfl_module_getdwarf: section headers,
 * compressed sections inflated), and the address index chain_at() needs:
 * libdwfl builds its table from .debug_aranges on the first address asked
 * (every CU's entry), and without aranges (Go, some clang builds) our own
 * from every CU's ranges.
 */
static void load_run(struct dload *j)
{
	Dwarf_Addr dbias, lo = 0, cubias;
	Dwarf_Aranges *ar;
	size_t nar = 0;
	Dwarf *dw;

	if (j->debug_fd >= 0 && j->crc_due && !crc_matches(j->debug_fd, j->crc)) {
		/* Found by name only, and not the file the debuglink describes. */
		close(j->debug_fd);
		j->debug_fd = -1;
		j->crc_bad = true;
		return;
	}
	dw = dwfl_module_getdwarf(j->dm, &dbias);
	j->has_dwarf = dw != NULL;
	if (j->debug_fd >= 0) { /* not taken: libdw found DWARF elsewhere */
		close(j->debug_fd);
		j->debug_fd = -1;
	}
	if (!dw)
		return;
	dwfl_module_info(j->dm, NULL, &lo, NULL, NULL, NULL, NULL, NULL);
	dwfl_module_addrdie(j->dm, lo, &cubias);
	if (dwarf_getaranges(dw, &ar, &nar) != 0 || nar == 0) {
		build_ranges(j->dm, &j->ranges, &j->nranges);
		j->ranges_built = true;
	}
}

static void pool_free(struct strpool *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
	p->v = NULL;
	p->n = p->cap = 0;
}

static void dload_free(struct dload *j)
{
	if (j->dwfl)
		dwfl_end(j->dwfl);
	if (j->debug_fd >= 0)
		close(j->debug_fd);
	for (size_t i = 0; i < j->nanswered; i++)
		free(j->look[i].lines);
	free(j->look);
	pool_free(&j->strs);
	free(j->debug_name);
	free(j->ranges);
	free(j->depths);
	free(j);
}

static unsigned chain_at(struct dload *j, uint64_t vaddr, struct src_line *out);

/* Whether j's module is gone (l NULL: run where it was started, never). */
static bool job_cancelled(struct dwarf_loader *l, struct dload *j)
{
	bool c;

	if (!l)
		return false;
	pthread_mutex_lock(&l->mu);
	c = j->cancelled;
	pthread_mutex_unlock(&l->mu);
	return c;
}

/*
 * A job's work (on the loader's thread, l; or the caller's, l NULL):
 * touches nothing but j (and l's lock). The load first if it has one,
 * then its addresses' inline chains in order - all of them, or on the
 * loader as many as SLICE_NS allows (at least one): the session takes
 * those answers and queues the rest again, so a slow address delays the
 * others by at most itself. Each chain_at() reads the CU's line table at
 * its first address, walks its DIEs, and builds CU ranges where there
 * are no aranges: as long as the target's file makes it, uninterrupted.
 */
static void job_run(struct dwarf_loader *l, struct dload *j)
{
	uint64_t start = mono_ns();
	struct src_line tmp[MAX_CHAIN];

	if (j->load)
		load_run(j);
	if (!j->has_dwarf || !j->dm)
		return;
	for (size_t i = 0; i < j->nlook; i++) {
		struct dlook *lk = &j->look[i];
		unsigned n;

		if (i && (job_cancelled(l, j) || (j->sliced && mono_ns() - start >= SLICE_NS)))
			break;
		n = chain_at(j, lk->vaddr, tmp);
		lk->lines = n ? malloc(n * sizeof(*lk->lines)) : NULL;
		if (n && !lk->lines)
			break; /* ENOMEM: asked again later */
		if (n)
			memcpy(lk->lines, tmp, n * sizeof(*lk->lines));
		lk->n = n;
		j->nanswered = i + 1;
	}
}

/* ---- the loader's thread (debuginfo.h) ------------------------------------ */

static void loader_destroy(struct dwarf_loader *l)
{
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

/*
 * The worker: runs the queued jobs one after the other and ends when the
 * queue is empty. A job cancelled meanwhile is freed here (its module is
 * gone); a loader freed meanwhile too, last.
 */
static void *loader_main(void *arg)
{
	struct dwarf_loader *l = arg;
	struct dload *j;
	bool orphaned;

	worker_lower_priority();
	pthread_mutex_lock(&l->mu);
	while ((j = l->head)) {
		l->head = j->next;
		if (!l->head)
			l->tail = NULL;
		if (!j->cancelled) {
			j->state = DLOAD_BUSY;
			l->current = j;
			while (l->hold)
				pthread_cond_wait(&l->cv, &l->mu);
			pthread_mutex_unlock(&l->mu);
			job_run(l, j);
			pthread_mutex_lock(&l->mu);
			l->current = NULL;
			j->state = DLOAD_DONE; /* the session's from here, unless cancelled */
			pthread_cond_broadcast(&l->cv);
		}
		if (j->cancelled) {
			pthread_mutex_unlock(&l->mu);
			dload_free(j);
			pthread_mutex_lock(&l->mu);
		}
	}
	l->w.running = false;
	orphaned = l->orphaned;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
	if (orphaned)
		loader_destroy(l); /* detached: nobody joins, nobody else holds l */
	return NULL;
}

/* Start the worker (l->mu held). */
static int loader_start(struct dwarf_loader *l)
{
	return worker_start(&l->w, &l->mu, loader_main, l);
}

/* Queue j (the loader's from now on); -errno when no thread can run it (j stays the caller's). */
static int loader_queue(struct dwarf_loader *l, struct dload *j)
{
	int rc;

	pthread_mutex_lock(&l->mu);
	j->state = DLOAD_QUEUED;
	j->next = NULL;
	rc = loader_start(l);
	if (rc == 0) {
		if (l->tail)
			l->tail->next = j;
		else
			l->head = j;
		l->tail = j;
	}
	pthread_mutex_unlock(&l->mu);
	return rc;
}

/* Whether j is done (then the session's again); block: wait until it is. */
static bool loader_done(struct dwarf_loader *l, struct dload *j, bool block)
{
	bool done;

	pthread_mutex_lock(&l->mu);
	while (!(done = j->state == DLOAD_DONE) && block)
		pthread_cond_wait(&l->cv, &l->mu);
	pthread_mutex_unlock(&l->mu);
	return done;
}

/* j's module is gone: free j now if done, else the worker frees it (l NULL: j is done). */
static void dload_drop(struct dwarf_loader *l, struct dload *j)
{
	bool done = true;

	if (l) {
		pthread_mutex_lock(&l->mu);
		done = j->state == DLOAD_DONE;
		j->cancelled = true;
		pthread_cond_broadcast(&l->cv); /* dwarf_loader_wait() counts it no more */
		pthread_mutex_unlock(&l->mu);
	}
	if (done)
		dload_free(j);
}

struct dwarf_loader *dwarf_loader_new(void)
{
	struct dwarf_loader *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	pthread_once(&search_path_once, init_search_path);
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cv, NULL);
	return l;
}

void dwarf_loader_free(struct dwarf_loader *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	l->hold = false;
	if (l->w.running) {
		/* Inside libdw, maybe for seconds: the worker finishes and frees. */
		l->orphaned = true;
		pthread_detach(l->w.thread);
		pthread_cond_broadcast(&l->cv);
		pthread_mutex_unlock(&l->mu);
		return;
	}
	pthread_mutex_unlock(&l->mu);
	if (l->w.joinable)
		pthread_join(l->w.thread, NULL);
	loader_destroy(l);
}

/* Loads queued or running whose modules are still there (l->mu held). */
static unsigned in_flight(const struct dwarf_loader *l)
{
	unsigned n = l->current && !l->current->cancelled;

	for (const struct dload *j = l->head; j; j = j->next)
		n += !j->cancelled;
	return n;
}

unsigned dwarf_loader_pending(struct dwarf_loader *l)
{
	unsigned n;

	if (!l)
		return 0;
	pthread_mutex_lock(&l->mu);
	n = in_flight(l);
	pthread_mutex_unlock(&l->mu);
	return n;
}

static uint64_t mono_ms(void)
{
	return mono_ns() / 1000000;
}

int dwarf_loader_wait(struct dwarf_loader *l, unsigned max_ms, bool (*stop)(void *arg), void *arg)
{
	uint64_t start = mono_ms();
	int rc = 0;

	if (!l)
		return 0;
	pthread_mutex_lock(&l->mu);
	while (in_flight(l) > 0) {

		if (stop && stop(arg)) {
			rc = -EINTR;
			break;
		}
		if (max_ms && mono_ms() - start >= max_ms) {
			rc = -ETIMEDOUT;
			break;
		}
		worker_timedwait(&l->cv, &l->mu, 50);
	}
	pthread_mutex_unlock(&l->mu);
	return rc;
}

void dwarf_loader_hold(struct dwarf_loader *l, bool hold)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	l->hold = hold;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
}

void debuginfo_set_loader(struct debuginfo *d, struct dwarf_loader *l)
{
	if (d)
		d->loader = l;
}

/*
 * Queue vaddr on j while the worker has not taken it (a batch grows while
 * it waits its turn); false once it has (the caller keeps vaddr for the
 * next job) or on ENOMEM.
 */
static bool loader_append(struct dwarf_loader *l, struct dload *j, uint64_t vaddr)
{
	bool ok = false;

	pthread_mutex_lock(&l->mu);
	if (j->state == DLOAD_QUEUED && !j->cancelled) {
		if (j->nlook == j->caplook) {
			size_t ncap = j->caplook ? j->caplook * 2 : 16;
			struct dlook *nv = realloc(j->look, ncap * sizeof(*nv));

			if (nv) {
				j->look = nv;
				j->caplook = ncap;
			}
		}
		if (j->nlook < j->caplook) {
			j->look[j->nlook++] = (struct dlook){ .vaddr = vaddr };
			ok = true;
		}
	}
	pthread_mutex_unlock(&l->mu);
	return ok;
}

/*
 * Start dm's next job: its DWARF's load unless loaded, and the lookups of
 * dm->wanted (taken over). It gets what it needs of dm (see the ownership
 * rule) and is queued, or - no loader, or its thread cannot start - run
 * now. dm->job until take_job(). Nothing to do (no DWARF, ENOMEM): dm is
 * marked loaded, its wanted addresses dropped (they get no lines).
 */
static void start_job(struct debuginfo *d, struct dmod *dm)
{
	struct dload *j;
	void **ud = NULL;

	if (dm->job)
		return;
	if (!dm->maybe_dwarf || !dm->dwfl || (dm->loaded && !dm->has_dwarf) ||
	    !(j = calloc(1, sizeof(*j)))) {
		dm->loaded = true; /* nothing to load (or ENOMEM: no lines from it) */
		dm->nwanted = 0;
		return;
	}
	if (dm->nwanted && !(j->look = calloc(dm->nwanted, sizeof(*j->look)))) {
		free(j);
		dm->loaded = true;
		dm->nwanted = 0;
		return;
	}
	for (size_t i = 0; i < dm->nwanted; i++)
		j->look[i].vaddr = dm->wanted[i];
	j->nlook = j->caplook = dm->nwanted;
	dm->nwanted = 0;
	j->load = !dm->loaded;
	j->has_dwarf = dm->has_dwarf;
	j->debug_fd = -1;
	if (j->load) {
		/* The debug file (found here or from debuginfod), for reopen_module(). */
		if (dm->debug_fd >= 0 && dm->keep_debug_fd < 0 && dm->debug_name &&
		    (dm->keep_debug_name = strdup(dm->debug_name)) &&
		    (dm->keep_debug_fd = fcntl(dm->debug_fd, F_DUPFD_CLOEXEC, 0)) < 0) {
			free(dm->keep_debug_name);
			dm->keep_debug_name = NULL;
		}
		j->debug_fd = dm->debug_fd;
		j->debug_name = dm->debug_name;
		j->crc_due = dm->debug_crc_due;
		j->crc = dm->debug_crc;
		dm->debug_fd = -1;
		dm->debug_name = NULL;
		dm->debug_crc_due = false;
	}
	j->dwfl = dm->dwfl;
	j->dm = dm->dm;
	j->ebias = dm->ebias;
	j->ranges = dm->ranges;
	j->nranges = dm->nranges;
	j->ranges_built = dm->ranges_built;
	j->depths = dm->depths;
	j->ndepths = dm->ndepths;
	j->capdepths = dm->capdepths;
	dm->dwfl = NULL;
	dm->dm = NULL;
	dm->ranges = NULL;
	dm->nranges = 0;
	dm->ranges_built = false;
	dm->depths = NULL;
	dm->ndepths = dm->capdepths = 0;
	dwfl_module_info(j->dm, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	if (ud)
		*ud = j; /* find_debuginfo() hands libdw the job's debug_fd */
	dm->job = j;
	j->sliced = d->loader != NULL;
	if (!d->loader || loader_queue(d->loader, j) != 0) {
		j->sliced = false;
		job_run(NULL, j);
		j->state = DLOAD_DONE;
	}
}

/* Append vaddr to dm->wanted; -ENOMEM. */
static int want(struct dmod *dm, uint64_t vaddr)
{
	if (dm->nwanted == dm->capwanted) {
		size_t ncap = dm->capwanted ? dm->capwanted * 2 : 16;
		uint64_t *nv = realloc(dm->wanted, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		dm->wanted = nv;
		dm->capwanted = ncap;
	}
	dm->wanted[dm->nwanted++] = vaddr;
	return 0;
}

static int cache_put(struct debuginfo *d, const struct module *mod, uint64_t vaddr,
		     const struct src_line *src, unsigned n);
static const char *own(struct debuginfo *d, const char *s);


static bool mangled(const char *s)
{
	return s[0] == '_' && (s[1] == 'Z' || s[1] == 'R');
}

/*
 * The function that holds the code (the chain's last entry) keeps the name
 * it had before its lines were read: the ELF symbol, the alias perf and gdb
 * show (malloc, not DWARF's __libc_malloc or __GI___libc_malloc), so a
 * frame has one name over the whole session. A mangled DWARF name (C++,
 * Rust: it carries the types) and Go's (the name .gopclntab gave before)
 * stay. On the session's thread: the module's symbols are its.
 */
static void name_outermost(const struct module *mod, struct dlook *lk)
{
	struct src_line *o;
	const char *sym;
	uint64_t off;

	if (!lk->n || module_is_go(mod))
		return;
	o = &lk->lines[lk->n - 1];
	sym = module_symbolize(mod, lk->vaddr, &off);
	if (sym && o->func && !mangled(o->func) && !mangled(sym) && strcmp(sym, o->func))
		o->func = sym;
}

/*
 * Whether dm's job is done (or there is none in flight); if so its results
 * are dm's now: the DWARF loaded, the answers in the cache (their strings
 * interned here: the Dwfl may close before the run ends), the addresses
 * it had no time for queued again with those wanted meanwhile - as the
 * next job, started here. block: wait for the job.
 */
static bool take_job(struct debuginfo *d, struct dmod *dm, bool block)
{
	struct dload *j = dm->job;
	void **ud = NULL;
	size_t i;

	if (!j)
		return true;
	if (d->loader && !loader_done(d->loader, j, block))
		return false;
	dm->job = NULL;
	dm->dwfl = j->dwfl;
	dm->dm = j->dm;
	j->dwfl = NULL;
	dm->ranges = j->ranges;
	dm->nranges = j->nranges;
	dm->ranges_built = j->ranges_built;
	j->ranges = NULL;
	dm->depths = j->depths;
	dm->ndepths = j->ndepths;
	dm->capdepths = j->capdepths;
	j->depths = NULL;
	if (j->too_deep)
		note_skipped(d, dm->keep_debug_name ? dm->keep_debug_name : module_path(dm->mod),
			     "a compile unit nests DIEs deeper than " STR(MAX_DIE_DEPTH)
			     " levels: no inlined frames from it");
	if (j->load) {
		dm->loaded = true;
		dm->has_dwarf = j->has_dwarf;
		if (j->crc_bad) {
			dm->maybe_dwarf = false;
			if (dm->keep_debug_fd >= 0)
				close(dm->keep_debug_fd);
			dm->keep_debug_fd = -1;
			free(dm->keep_debug_name);
			dm->keep_debug_name = NULL;
		}
	}
	if (dm->dm) {
		dwfl_module_info(dm->dm, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
		if (ud)
			*ud = NULL; /* later searches (a dwz alt file): the standard ones */
	}
	for (i = 0; i < j->nanswered; i++) {
		struct dlook *lk = &j->look[i];

		name_outermost(dm->mod, lk);
		for (unsigned k = 0; k < lk->n; k++) {
			lk->lines[k].func = own(d, lk->lines[k].func);
			lk->lines[k].file = own(d, lk->lines[k].file);
		}
		cache_put(d, dm->mod, lk->vaddr, lk->lines, lk->n);
	}
	if (j->nanswered) {
		dm->used_ns = mono_ns();
		d->st.lookups += j->nanswered;
	}
	/* Not reached: before those asked meanwhile (ENOMEM: asked again later). */
	if (dm->has_dwarf && j->nanswered < j->nlook) {
		size_t rest = j->nlook - j->nanswered, old = dm->nwanted;

		for (i = 0; i < rest && want(dm, 0) == 0; i++)
			;
		if (i == rest) {
			memmove(dm->wanted + rest, dm->wanted, old * sizeof(*dm->wanted));
			for (i = 0; i < rest; i++)
				dm->wanted[i] = j->look[j->nanswered + i].vaddr;
		} else {
			dm->nwanted = old;
		}
	}
	dload_free(j);
	if (dm->nwanted) {
		if (dm->has_dwarf && dm->dwfl)
			start_job(d, dm);
		else
			dm->nwanted = 0; /* no DWARF after all: no lines */
	}
	return true;
}

/* Close dm's Dwfl (debuginfo_trim()): libdw's memory and mapped files go. */
static void close_module(struct debuginfo *d, struct dmod *dm)
{
	dwfl_end(dm->dwfl);
	dm->dwfl = NULL;
	dm->dm = NULL;
	free(dm->ranges); /* their DIEs pointed into the Dwarf */
	dm->ranges = NULL;
	dm->nranges = 0;
	dm->ranges_built = false;
	if (dm->debug_fd >= 0)
		close(dm->debug_fd);
	dm->debug_fd = -1;
	free(dm->debug_name);
	dm->debug_name = NULL;
	dm->closed = true;
	d->st.closed++;
}

/* Open a closed module again from the descriptors kept at its first open. */
static void reopen_module(struct debuginfo *d, struct dmod *dm)
{
	void **ud = NULL;
	int fd = dm->keep_fd >= 0 ? fcntl(dm->keep_fd, F_DUPFD_CLOEXEC, 0) : -1;

	dm->closed = false;
	dm->loaded = false;
	dm->has_dwarf = false;
	dm->dwfl = fd >= 0 ? open_fd(NULL, dm->keep_path, fd, &dm->dm) : NULL;
	if (!dm->dwfl) {
		dm->maybe_dwarf = false; /* nothing more from this module */
		return;
	}
	d->st.reopened++;
	dm->opened_ns = mono_ns();
	dwfl_module_info(dm->dm, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	if (ud)
		*ud = NULL;
	dwfl_module_getelf(dm->dm, &dm->ebias);
	if (dm->keep_debug_fd >= 0) {
		dm->debug_fd = fcntl(dm->keep_debug_fd, F_DUPFD_CLOEXEC, 0);
		dm->debug_name = dm->debug_fd >= 0 ? strdup(dm->keep_debug_name) : NULL;
	}
}

/* The per-module state of map's module, opened on first use; NULL on ENOMEM. */
static struct dmod *module_state(struct debuginfo *d, const struct mapping *map)
{
	struct dmod *dm;
	size_t i;

	if (d->last < d->nmods && d->mods[d->last]->mod == map->mod)
		return d->mods[d->last];
	for (i = 0; i < d->nmods; i++)
		if (d->mods[i]->mod == map->mod) {
			d->last = i;
			return d->mods[i];
		}
	if (d->nmods == d->capmods) {
		size_t ncap = d->capmods ? d->capmods * 2 : 16;
		struct dmod **nv = realloc(d->mods, ncap * sizeof(*nv));

		if (!nv)
			return NULL;
		d->mods = nv;
		d->capmods = ncap;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return NULL;
	dm->mod = map->mod;
	dm->debug_fd = dm->keep_fd = dm->keep_debug_fd = -1;
	open_module(d, dm, map);
	d->mods[d->nmods] = dm;
	d->last = d->nmods++;
	return dm;
}

bool debuginfo_prepare(struct debuginfo *d, const struct mapping *map)
{
	const char *err;
	struct dmod *dm;

	if (!d || !map || !map->mod)
		return false;
	dm = module_state(d, map);
	if (dm)
		take_remote(d, dm, false);
	return dm && (dm->maybe_dwarf || module_gopclntab(map->mod, &err));
}

/* ---- the inline chain ---------------------------------------------------- */

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* The interned copy of malloc'd s (which is taken over); NULL on ENOMEM. */
static const char *intern(struct debuginfo *d, char *s)
{
	size_t i;

	if (!s)
		return NULL;
	if (!d->strs || (d->scount + 1) * 2 > d->smask + 1) {
		size_t ncap = d->strs ? (d->smask + 1) * 2 : 256, j;
		char **ns = calloc(ncap, sizeof(*ns));

		if (!ns) {
			free(s);
			return NULL;
		}
		for (j = 0; d->strs && j <= d->smask; j++) {
			if (!d->strs[j])
				continue;
			for (i = str_hash(d->strs[j]) & (ncap - 1); ns[i]; i = (i + 1) & (ncap - 1))
				;
			ns[i] = d->strs[j];
		}
		free(d->strs);
		d->strs = ns;
		d->smask = ncap - 1;
	}
	for (i = str_hash(s) & d->smask; d->strs[i]; i = (i + 1) & d->smask)
		if (strcmp(d->strs[i], s) == 0) {
			free(s);
			return d->strs[i];
		}
	d->strs[i] = s;
	d->scount++;
	return s;
}

/* An interned copy of s (stable until debuginfo_free); NULL for NULL or ENOMEM. */
static const char *own(struct debuginfo *d, const char *s)
{
	return s ? intern(d, strdup(s)) : NULL;
}

/* s (malloc'd, taken over) kept in p until pool_free(); NULL on ENOMEM. */
static const char *pool_add(struct strpool *p, char *s)
{
	if (!s)
		return NULL;
	if (p->n == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 16;
		char **nv = realloc(p->v, ncap * sizeof(*nv));

		if (!nv) {
			free(s);
			return NULL;
		}
		p->v = nv;
		p->cap = ncap;
	}
	p->v[p->n++] = s;
	return s;
}

/* dir + "/" + file, in sp; NULL on ENOMEM. */
static const char *join_path(struct strpool *sp, const char *dir, const char *file)
{
	char *s;

	if (asprintf(&s, "%s/%s", dir, file) < 0)
		return NULL;
	return pool_add(sp, s);
}

/* A source path as people want it: relative ones under the CU's comp_dir. */
static const char *abs_path(struct strpool *sp, const char *comp_dir, const char *file)
{
	const char *j;

	/* A relative comp_dir (-fdebug-prefix-map=DIR=.) is already in the name. */
	if (!file || file[0] == '/' || !comp_dir || comp_dir[0] != '/')
		return file;
	j = join_path(sp, comp_dir, file);
	return j ? j : file;
}


/* Languages whose DW_AT_name is relative to namespaces and classes. */
static bool scoped_lang(int lang)
{
	return lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 ||
	       lang == DW_LANG_C_plus_plus_11 || lang == DW_LANG_C_plus_plus_14 ||
	       lang == DW_LANG_Rust;
}

/*
 * "ns::Class::name" for a C++/Rust function DIE that has no linkage name
 * (inlined or internal-linkage functions): its declaration's enclosing
 * namespaces and classes, found by following abstract_origin and
 * specification to the declaration and walking the scopes above it.
 */
static bool cu_shallow(struct dload *j, Dwarf_Die *cu);

static const char *qualified_name(struct dload *j, Dwarf_Die *die, const char *name)
{
	Dwarf_Die decl = *die, next, *scopes = NULL;
	Dwarf_Attribute attr;
	size_t len = 0, cap = 256;
	char *buf = malloc(cap);
	int n, i, hops;

	if (!buf)
		return name;
	for (hops = 0; hops < 8; hops++) {
		if ((dwarf_attr(&decl, DW_AT_abstract_origin, &attr) ||
		     dwarf_attr(&decl, DW_AT_specification, &attr)) &&
		    dwarf_formref_die(&attr, &next))
			decl = next;
		else
			break;
	}
	{
		Dwarf_Die declcu;

		/* The declaration may be in another CU (DW_FORM_ref_addr). */
		n = dwarf_diecu(&decl, &declcu, NULL, NULL) && cu_shallow(j, &declcu)
			    ? dwarf_getscopes_die(&decl, &scopes) : 0;
	}
	buf[0] = '\0';
	/* scopes[0] is decl itself, scopes[n - 1] the CU. */
	for (i = n - 2; i >= 1; i--) {
		int tag = dwarf_tag(&scopes[i]);
		const char *part;
		size_t pl;

		if (tag != DW_TAG_namespace && tag != DW_TAG_class_type &&
		    tag != DW_TAG_structure_type && tag != DW_TAG_union_type)
			continue;
		part = dwarf_diename(&scopes[i]);
		if (!part)
			part = tag == DW_TAG_namespace ? "(anonymous namespace)" : "(anonymous)";
		pl = strlen(part);
		if (len + pl + 3 >= cap)
			break;
		memcpy(buf + len, part, pl);
		len += pl;
		memcpy(buf + len, "::", 3);
		len += 2;
	}
	free(scopes);
	if (len == 0 || len + strlen(name) + 1 > cap) {
		free(buf);
		return name;
	}
	memcpy(buf + len, name, strlen(name) + 1);
	{
		const char *q = pool_add(&j->strs, buf);

		return q ? q : name;
	}
}

/*
 * The name to show for a function DIE: the linkage (mangled) name, else
 * DW_AT_name - qualified by its namespaces and classes in C++ and Rust.
 */
static const char *die_rawname(struct dload *j, Dwarf_Die *die, bool scoped)
{
	Dwarf_Attribute attr;
	const char *s;

	s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!s)
		s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (s)
		return s;
	s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return s && scoped ? qualified_name(j, die, s) : s;
}

static bool is_function(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_entry_point;
}

static int range_cmp(const void *x, const void *y)
{
	const struct cu_range *a = x, *b = y;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/*
 * Every CU's ranges (DW_AT_low_pc/high_pc or DW_AT_ranges), sorted: what
 * .debug_aranges would have said. Go and some clang builds omit aranges,
 * and libdwfl's address lookups need them.
 */
static void build_ranges(Dwfl_Module *mod, struct cu_range **rangesp, size_t *np)
{
	struct cu_range *ranges = NULL;
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;
	size_t cap = 0, n = 0;

	while ((cu = dwfl_module_nextcu(mod, cu, &bias))) {
		Dwarf_Addr base, start, end;
		ptrdiff_t off = 0;

		while ((off = dwarf_ranges(cu, off, &base, &start, &end)) > 0) {
			if (end <= start)
				continue;
			if (n == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct cu_range *nr = realloc(ranges, ncap * sizeof(*nr));

				if (!nr)
					goto done;
				ranges = nr;
				cap = ncap;
			}
			ranges[n++] = (struct cu_range){ start + bias, end + bias, *cu, bias };
		}
	}
done:
	if (n)
		qsort(ranges, n, sizeof(*ranges), range_cmp);
	*rangesp = ranges;
	*np = n;
}

/*
 * Whether cu's DIEs nest less than MAX_DIE_DEPTH deep (DIEs with children
 * counted): walked here without recursion, once per CU, the verdict kept
 * in j (the module's). A deep one is counted in j->too_deep.
 */
static bool cu_shallow(struct dload *j, Dwarf_Die *cu)
{
	Dwarf_Off off = dwarf_dieoffset(cu);
	size_t lo = 0, hi = j->ndepths;
	Dwarf_Die *stack;
	unsigned depth;
	bool ok = true;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (j->depths[mid].off == off)
			return j->depths[mid].ok;
		if (j->depths[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	stack = malloc(MAX_DIE_DEPTH * sizeof(*stack));
	if (!stack)
		return false; /* ENOMEM: not walked, not kept */
	depth = dwarf_child(cu, &stack[0]) == 0;
	while (depth > 0) {
		Dwarf_Die *cur = &stack[depth - 1];

		if (dwarf_haschildren(cur) > 0) {
			if (depth == MAX_DIE_DEPTH) {
				ok = false;
				break;
			}
			if (dwarf_child(cur, &stack[depth]) == 0) {
				depth++;
				continue;
			}
		}
		/* Next sibling, else up. */
		while (depth > 0 && dwarf_siblingof(&stack[depth - 1], &stack[depth - 1]) != 0)
			depth--;
	}
	free(stack);
	if (!ok)
		j->too_deep++;
	if (j->ndepths == j->capdepths) {
		size_t ncap = j->capdepths ? j->capdepths * 2 : 16;
		struct cu_depth *nv = realloc(j->depths, ncap * sizeof(*nv));

		if (!nv)
			return ok;
		j->depths = nv;
		j->capdepths = ncap;
	}
	memmove(j->depths + lo + 1, j->depths + lo, (j->ndepths - lo) * sizeof(*j->depths));
	j->depths[lo] = (struct cu_depth){ off, ok };
	j->ndepths++;
	return ok;
}

static Dwarf_Die *cu_by_ranges(struct dload *j, Dwarf_Addr addr, Dwarf_Addr *bias)
{
	size_t lo = 0, hi;

	if (!j->ranges_built) {
		build_ranges(j->dm, &j->ranges, &j->nranges);
		j->ranges_built = true;
	}
	hi = j->nranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (j->ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= j->ranges[lo - 1].hi)
		return NULL;
	*bias = j->ranges[lo - 1].bias;
	return &j->ranges[lo - 1].cu;
}

/*
 * Compute the chain for vaddr into out (at most MAX_CHAIN) with j's Dwfl
 * (job_run(): on whichever thread holds j); returns its length. Strings
 * point into libdw's data or j's pool.
 */
static unsigned chain_at(struct dload *j, uint64_t vaddr, struct src_line *out)
{
	const char *comp_dir;
	Dwarf_Attribute cattr;
	bool scoped;
	Dwarf_Addr addr = vaddr + j->ebias, cubias = 0;
	Dwarf_Die *cudie, *scopes = NULL, *chain = NULL;
	const char *cur_file = NULL;
	Dwarf_Files *files = NULL;
	Dwarf_Line *ln;
	int lineno = 0, ns, nchain, i;
	unsigned n = 0;

	cudie = dwfl_module_addrdie(j->dm, addr, &cubias);
	if (!cudie)
		cudie = cu_by_ranges(j, addr, &cubias); /* no .debug_aranges (Go) */
	if (!cudie)
		return 0;
	ln = dwarf_getsrc_die(cudie, addr - cubias);
	if (ln) {
		cur_file = dwarf_linesrc(ln, NULL, NULL);
		dwarf_lineno(ln, &lineno);
	}
	if (dwarf_getsrcfiles(cudie, &files, NULL) != 0)
		files = NULL;
	comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &cattr));
	scoped = scoped_lang(dwarf_srclang(cudie));
	ns = cu_shallow(j, cudie) ? dwarf_getscopes(cudie, addr - cubias, &scopes) : 0;
	nchain = ns > 0 ? dwarf_getscopes_die(&scopes[0], &chain) : 0;
	for (i = 0; i < nchain && n < MAX_CHAIN; i++) {
		Dwarf_Die *die = &chain[i];
		int tag = dwarf_tag(die), dl = 0;
		const char *df = dwarf_decl_file(die);
		Dwarf_Attribute attr;
		Dwarf_Word w;

		if (!is_function(tag))
			continue;
		dwarf_decl_line(die, &dl);
		out[n].func = die_rawname(j, die, scoped);
		out[n].file = abs_path(&j->strs, comp_dir, df ? df : cur_file);
		out[n].line = lineno > 0 ? (uint32_t)lineno : 0;
		out[n].decl_line = dl > 0 ? (uint32_t)dl : 0;
		n++;
		if (tag != DW_TAG_inlined_subroutine)
			break;
		/* The caller's line: where this was inlined. */
		cur_file = NULL;
		lineno = 0;
		if (files && dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &w) == 0)
			cur_file = dwarf_filesrc(files, w, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &w) == 0)
			lineno = (int)w;
	}
	/* Line info but no function DIE: still a file:line for the symbol's function. */
	if (n == 0 && cur_file) {
		out[0] = (struct src_line){ NULL, abs_path(&j->strs, comp_dir, cur_file),
					    lineno > 0 ? (uint32_t)lineno : 0, 0 };
		n = 1;
	}
	free(chain);
	free(scopes);
	return n;
}

/* ---- the cache ------------------------------------------------------------ */

static uint64_t key_hash(const struct module *mod, uint64_t vaddr)
{
	uint64_t h = (uint64_t)(uintptr_t)mod * 0x9e3779b97f4a7c15ULL ^ vaddr;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

static struct dentry *slot_of(const struct debuginfo *d, const struct module *mod,
			      uint64_t vaddr)
{
	size_t i = key_hash(mod, vaddr) & d->mask;

	while (d->tab[i].mod && !(d->tab[i].mod == mod && d->tab[i].vaddr == vaddr))
		i = (i + 1) & d->mask;
	return &d->tab[i];
}

static int tab_grow(struct debuginfo *d)
{
	size_t ncap = d->tab ? (d->mask + 1) * 2 : 1024, i;
	struct dentry *old = d->tab;
	size_t oldcap = d->tab ? d->mask + 1 : 0;

	d->tab = calloc(ncap, sizeof(*d->tab));
	if (!d->tab) {
		d->tab = old;
		return -ENOMEM;
	}
	d->mask = ncap - 1;
	for (i = 0; i < oldcap; i++)
		if (old[i].mod)
			*slot_of(d, old[i].mod, old[i].vaddr) = old[i];
	free(old);
	return 0;
}

/* Room for one more entry; -ENOMEM. */
static int tab_room(struct debuginfo *d)
{
	if (!d->tab || (d->count + 1) * 10 > (d->mask + 1) * 7)
		return tab_grow(d);
	return 0;
}

/*
 * Cache vaddr's chain (n entries of src, copied; strings already d's),
 * over its placeholder if asked. An entry already answered stays.
 */
static int cache_put(struct debuginfo *d, const struct module *mod, uint64_t vaddr,
		     const struct src_line *src, unsigned n)
{
	struct dentry *e;
	struct src_line *lines;

	if (tab_room(d))
		return -ENOMEM;
	e = slot_of(d, mod, vaddr);
	if (e->mod && !e->asked)
		return 0;
	lines = n ? malloc(n * sizeof(*lines)) : NULL;
	if (n && !lines)
		return -ENOMEM;
	if (n)
		memcpy(lines, src, n * sizeof(*lines));
	if (!e->mod)
		d->count++;
	*e = (struct dentry){ .mod = mod, .vaddr = vaddr, .n = n, .lines = lines };
	return 0;
}

/*
 * Ask for vaddr's chain (see debuginfo_busy()): on dm's job while it is
 * still queued, else on the next one, which starts now if none is in
 * flight. A placeholder in the cache marks it asked.
 */
static void request(struct debuginfo *d, struct dmod *dm, uint64_t vaddr)
{
	struct dentry *e;

	if (tab_room(d) == 0 && !(e = slot_of(d, dm->mod, vaddr))->mod) {
		*e = (struct dentry){ .mod = dm->mod, .vaddr = vaddr, .asked = true };
		d->count++;
	}
	if (dm->job && d->loader && loader_append(d->loader, dm->job, vaddr))
		return;
	if (want(dm, vaddr))
		return; /* ENOMEM: asked again later */
	if (!dm->job)
		start_job(d, dm);
}

unsigned debuginfo_lookup(struct debuginfo *d, const struct mapping *map, uint64_t addr,
			  const struct src_line **lines)
{
	const char *err;
	struct src_line tmp[MAX_CHAIN];
	struct dentry *e;
	struct dmod *dm;
	uint64_t vaddr;
	unsigned n;

	*lines = NULL;
	if (!d || !map || !map->mod)
		return 0;
	dm = module_state(d, map);
	if (!dm)
		return 0;
	vaddr = addr - map->bias;
	if (dm->job)
		take_job(d, dm, false);
	/* Looked up before (whatever became of the module's reader since). */
	if (d->tab && (e = slot_of(d, map->mod, vaddr))->mod && !e->asked) {
		*lines = e->lines;
		return e->n;
	}
	/*
	 * Go code: Go's own table first. It has the same names, lines and
	 * inlined calls, and a lookup is a binary search, where DWARF's scope
	 * walk goes through a Go package's whole (huge) CU. C code linked into
	 * a Go binary (cgo) is not in it: DWARF then.
	 */
	n = gosym_lines(map->mod, vaddr, tmp, MAX_CHAIN);
	if (!n) {
		if (dm->closed && !dm->job)
			reopen_module(d, dm);
		if (dwarf_due(dm) && !take_remote(d, dm, true)) {
			/* Here and now: the caller waits (see debuginfo_busy() for those who must not). */
			request(d, dm, vaddr);
			while (dm->job)
				take_job(d, dm, true);
			if (d->tab && (e = slot_of(d, map->mod, vaddr))->mod && !e->asked) {
				*lines = e->lines;
				return e->n;
			}
		}
		if (!dm->has_dwarf && !module_gopclntab(map->mod, &err))
			return 0;
	}
	if (cache_put(d, map->mod, vaddr, tmp, n))
		return 0; /* not cached: ENOMEM now, maybe not later */
	e = slot_of(d, map->mod, vaddr);
	*lines = e->lines;
	return e->n;
}

unsigned debuginfo_skipped(const struct debuginfo *d, const char **first)
{
	if (first)
		*first = d && d->nskipped ? d->skipped : "";
	return d ? d->nskipped : 0;
}

void debuginfo_trim(struct debuginfo *d)
{
	uint64_t now;
	size_t i;

	if (!d)
		return;
	if (d->count > d->cache_max) {
		for (i = 0; i <= d->mask; i++)
			free(d->tab[i].lines);
		free(d->tab);
		d->tab = NULL;
		d->mask = 0;
		d->st.dropped += d->count;
		d->st.cleared++;
		d->count = 0;
	}
	now = mono_ns();
	for (i = 0; i < d->nmods; i++) {
		struct dmod *dm = d->mods[i];
		uint64_t last = dm->used_ns > dm->opened_ns ? dm->used_ns : dm->opened_ns;

		if (dm->dwfl && dm->keep_fd >= 0 &&
		    (now - last >= d->idle_ns || (dm->used_ns > dm->opened_ns &&
						  now - dm->opened_ns >= d->recycle_ns)))
			close_module(d, dm);
	}
}

/*
 * Drop mod's placeholders (its job is cancelled: nothing will answer
 * them, and the pointer may name another module later). Linear probing:
 * the entries are put back without them.
 */
static void drop_asked(struct debuginfo *d, const struct module *mod)
{
	size_t i, cap = d->tab ? d->mask + 1 : 0, n = 0;
	struct dentry *old = d->tab, *keep;

	for (i = 0; i < cap; i++)
		n += old[i].mod == mod && old[i].asked;
	if (!n)
		return;
	keep = malloc(cap * sizeof(*keep));
	if (!keep)
		return; /* ENOMEM: they stay asked; debuginfo_busy() asks again */
	memcpy(keep, old, cap * sizeof(*keep));
	memset(d->tab, 0, cap * sizeof(*d->tab));
	d->count = 0;
	for (i = 0; i < cap; i++) {
		if (!keep[i].mod || (keep[i].mod == mod && keep[i].asked))
			continue;
		*slot_of(d, keep[i].mod, keep[i].vaddr) = keep[i];
		d->count++;
	}
	free(keep);
}

void debuginfo_forget_module(struct debuginfo *d, const struct module *mod)
{
	for (size_t i = 0; d && i < d->nmods; i++) {
		if (d->mods[i]->mod != mod)
			continue;
		dmod_free(d, d->mods[i]);
		d->mods[i] = d->mods[--d->nmods];
		d->last = 0;
		drop_asked(d, mod);
		return;
	}
}

void debuginfo_get_stats(const struct debuginfo *d, struct debuginfo_stats *st)
{
	if (d)
		*st = d->st;
	else
		memset(st, 0, sizeof(*st));
}

void debuginfo_set_limits(struct debuginfo *d, size_t cache_max, uint64_t idle_ms,
			  uint64_t recycle_ms)
{
	if (!d)
		return;
	d->cache_max = cache_max;
	d->idle_ns = idle_ms * 1000000ULL;
	d->recycle_ns = recycle_ms * 1000000ULL;
}
