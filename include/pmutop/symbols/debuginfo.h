/*
 * debuginfo.h - source files, line numbers and inlined frames from DWARF.
 *
 * One debuginfo per target (owned by its maps). For each module it opens
 * the DWARF lazily with libdw's Dwfl, the first time an address in it is
 * asked about: the module's own .debug_* sections, else a separate debug
 * file found by GNU build-id (DIR/.build-id/xx/rest.debug) or by
 * .gnu_debuglink (next to the file, in .debug/, or under DIR/<file's dir>),
 * for every DIR of the search path. Results are cached per (module,
 * address): an address is looked up in DWARF once per run.
 *
 * The search path is elfutils' debuginfo_path syntax, from the environment
 * variable PMUTOP_DEBUGINFO_PATH, default ":.debug:/usr/lib/debug" (absolute
 * entries are also build-id roots; see README "Debug info").
 */
#ifndef PMUTOP_DEBUGINFO_H
#define PMUTOP_DEBUGINFO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct mapping;

/* One frame of a location's inline chain. */
struct src_line {
	const char *func;      /* raw name: linkage (mangled) name if any, else DW_AT_name; may be NULL */
	const char *file;      /* the function's source file (decl_file), else the line's; may be NULL */
	uint32_t line;         /* line in that function; 0 when unknown */
	uint32_t decl_line;    /* line where the function is declared; 0 when unknown */
};

struct debuginfo;

/*
 * A debuginfo for process pid. Files are opened through /proc/PID/root
 * and /proc/PID/map_files; host_paths says whether the path as named in the
 * target's maps may also be opened directly (only when the target shares
 * our mount namespace). NULL on ENOMEM.
 */
struct debuginfo *debuginfo_new(pid_t pid, bool host_paths);
/* Closes every DWARF reader; every string handed out dies. NULL is a no-op. */
void debuginfo_free(struct debuginfo *d);

/*
 * The inline chain at runtime address addr of map (map->mod set): lines
 * innermost first, the function that holds the code last. Loads the
 * module's DWARF first if needed and looks addr up, here or - with a
 * loader - on its thread, waiting for it (see debuginfo_busy() for
 * callers that must not wait). Returns the
 * number of entries (0: no debug info for addr) and points *lines at them;
 * the entries live until the next debuginfo_trim(), their strings until
 * debuginfo_free(). Never fails loudly: no debug info, a corrupt file or
 * ENOMEM all give 0.
 */
unsigned debuginfo_lookup(struct debuginfo *d, const struct mapping *map, uint64_t addr,
			  const struct src_line **lines);

/*
 * Open map's module for DWARF, cheaply: the file and the name of its
 * separate debug file are found now (while the target runs, so paths
 * under /proc/PID/root resolve), the DWARF itself is loaded by the first
 * debuginfo_lookup() - which may then run after the target has exited.
 * Returns whether there may be DWARF for the module.
 */
bool debuginfo_prepare(struct debuginfo *d, const struct mapping *map);

/*
 * Ask debuginfod (debuginfod.h) for the debug file of every module that
 * has no DWARF here (f NULL: never). f must outlive d. Until an answer is
 * taken, such a module's locations wait for their lines.
 */
struct dfd_fetcher;
void debuginfo_set_fetcher(struct debuginfo *d, struct dfd_fetcher *f);

/*
 * Whether a lookup of addr in map would block now: the module still waits
 * for debuginfod's answer (the network), or - with a loader - addr has not
 * been looked up yet: this asks the loader's thread to (loading the
 * module's DWARF first if needed), in batches per module, and says busy
 * until the answer is taken. Callers that must not block (the aggregate's
 * line resolution) leave such locations pending and ask again later.
 * Takes what has come meanwhile (answers, the module's names from a
 * fetched debug file's .symtab). Addresses already looked up, Go code its
 * own table covers, and modules without DWARF are never busy.
 */
bool debuginfo_busy(struct debuginfo *d, const struct mapping *map, uint64_t addr);

/*
 * A thread that reads modules' DWARF off the session's thread (issue 17).
 * Loading one module - the CRC of a debug file found by name, libdw's open
 * of the DWARF, the address index over every CU - and looking addresses
 * up in it - a CU's line table, its DIE tree - take as long as the
 * target's files make them (seconds for a debug file of a million CUs, or
 * per address in a CU of millions of DIEs, up to the 4 GiB file cap) and
 * libdw cannot be interrupted; on a thread of its own that holds up
 * neither the ring buffers nor the end of a run. One per session's process
 * table, shared by its debuginfos; the thread runs while there are jobs
 * (a module's load and/or lookups) queued, one at a time, and ends when
 * there are none. Without a loader a debuginfo does both where
 * debuginfo_lookup() needs them. NULL on ENOMEM.
 */
struct dwarf_loader;
struct dwarf_loader *dwarf_loader_new(void);
/*
 * After every debuginfo that used l is freed (their jobs are cancelled).
 * Never waits for a job inside libdw: the thread finishes it, frees it and
 * then l. NULL is a no-op.
 */
void dwarf_loader_free(struct dwarf_loader *l);
/* Loads and lookups go to l from now on (NULL: none). l must outlive d. */
void debuginfo_set_loader(struct debuginfo *d, struct dwarf_loader *l);
/*
 * Wait until no job is queued or running (cancelled ones do not count).
 * stop (may be NULL) is asked about every 50 ms: -EINTR when it says so;
 * -ETIMEDOUT after max_ms (0: no limit); else 0. The jobs go on either
 * way; their addresses stay busy until they are done and taken (a done
 * job's leftovers and the addresses asked meanwhile start the next job
 * when taken: wait, take, and wait again).
 */
int dwarf_loader_wait(struct dwarf_loader *l, unsigned max_ms, bool (*stop)(void *arg),
		      void *arg);
/* Jobs (loads, lookups) queued or running (0 for NULL). */
unsigned dwarf_loader_pending(struct dwarf_loader *l);
/* Tests: while held, a job taken off the queue waits before it runs. */
void dwarf_loader_hold(struct dwarf_loader *l, bool hold);

/*
 * Bound what a long run would grow (the session calls it about once a
 * second, never while it holds entries from debuginfo_lookup()): past
 * 65,536 cached addresses the cache is emptied; a module's DWARF reader
 * (libdw's line tables, DIEs, mapped debug files) is closed after 30 s
 * without a lookup, or after 300 s open while lookups go on, and reopened
 * from kept descriptors when an address needs it. NULL is a no-op.
 */
void debuginfo_trim(struct debuginfo *d);
/*
 * mod is about to be evicted from the module cache (module_cache_evict):
 * close its DWARF reader and the descriptors kept to reopen it (they count
 * against RLIMIT_NOFILE: kept only for modules not evicted). Addresses
 * already looked up stay cached (an evicted module is parsed back only from
 * the same file). If mod is mapped again, it is opened afresh through the
 * new mapping's paths. NULL d is a no-op.
 */
struct module;
void debuginfo_forget_module(struct debuginfo *d, const struct module *mod);

/* Other limits for debuginfo_trim() (tests): cached addresses, idle and recycle times. */
void debuginfo_set_limits(struct debuginfo *d, size_t cache_max, uint64_t idle_ms,
			  uint64_t recycle_ms);

/* What debuginfo_trim() did, and how many addresses were read from DWARF. */
struct debuginfo_stats {
	uint64_t lookups;   /* addresses looked up in DWARF (cache misses) */
	uint64_t cleared;   /* times the address cache was emptied at its cap */
	uint64_t dropped;   /* cached addresses dropped that way */
	uint64_t closed;    /* DWARF readers closed (idle or recycled) */
	uint64_t reopened;  /* ... and opened again for a new address */
};
/* d's counts (all zero for NULL d). */
void debuginfo_get_stats(const struct debuginfo *d, struct debuginfo_stats *st);

/*
 * How many target files (module or debug files) were refused as unsafe:
 * a FIFO, device or oversized file, a symlink out of the target's root, a
 * path no longer naming the mapped file, a .gnu_debuglink that is a path.
 * *first (may be NULL) gets "PATH: why" for the first one. NULL d: 0.
 */
unsigned debuginfo_skipped(const struct debuginfo *d, const char **first);

#endif
