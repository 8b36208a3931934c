/*
 * maps.h - the memory map of a target process over time.
 *
 * Seeded from /proc/PID/maps and kept current from PERF_RECORD_MMAP2 records
 * (dlopen, JIT) and exec. Mappings that are no longer current stay in the
 * history while something may still point at them (the aggregate's pending
 * line lookups), until maps_prune() caps the history.
 */
#ifndef PMUTOP_MAPS_H
#define PMUTOP_MAPS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

struct debuginfo;
struct module;
struct module_cache;
struct perfmap;

struct mapping {
	uint32_t id;            /* unique within the maps, from 1 */
	uint64_t key;           /* unique within a session: maps serial << 32 | id */
	uint64_t start, end;    /* [start, end) in the target */
	uint64_t pgoff;         /* file offset of start */
	uint64_t dev, ino;      /* dev = makedev(major, minor) */
	bool exec;              /* PROT_EXEC */
	char *path;             /* as the kernel names it ("/usr/lib/..", "[vdso]", "") */
	struct module *mod;     /* ELF file behind it, or NULL (anon, unreadable) */
	uint64_t bias;          /* runtime address - ELF vaddr, valid when mod */
	struct debuginfo *dbg;  /* the target's DWARF reader (debuginfo.h), or NULL */
	const char *build_id;   /* without mod: hex build-id (the kernel's), or NULL */
};

struct maps;

/* New empty map for pid; modules are opened through cache. NULL on ENOMEM. */
struct maps *maps_new(pid_t pid, struct module_cache *cache);
void maps_free(struct maps *m);

/*
 * A forked child's maps: the parent's current view copied (same modules,
 * new mapping objects owned by the new maps), with its own serial. NULL on
 * ENOMEM.
 */
struct maps *maps_clone(const struct maps *parent, pid_t pid, uint32_t serial);

/*
 * Several processes' maps in one session: a serial of its own for each
 * (before any mapping is added) makes mapping.key unique across them, so
 * the aggregate can tell mappings apart even after the history was pruned
 * and memory reused. 0 (the default) is fine for a single process.
 */
void maps_set_serial(struct maps *m, uint32_t serial);

/*
 * The symbol sources of the process these maps describe (see
 * frontend/process.h, which owns them): every mapping, past and future,
 * points at dbg; maps_perfmap() returns pm. Either may be NULL.
 */
void maps_set_symbol_sources(struct maps *m, struct debuginfo *dbg, struct perfmap *pm);

/* Replace the current view with /proc/PID/maps. Returns 0 or -errno. */
int maps_load_proc(struct maps *m);

/*
 * The same from any stream in /proc/PID/maps format (the target controls
 * its paths: lines that do not parse are skipped). Returns 0 or -errno;
 * f stays open. (The fuzz target feeds it arbitrary bytes.)
 */
int maps_load_stream(struct maps *m, FILE *f);

/*
 * Record a new mapping (from PERF_RECORD_MMAP2); it hides what it overlaps.
 * Returns 0 or -ENOMEM.
 */
int maps_add(struct maps *m, uint64_t start, uint64_t len, uint64_t pgoff,
	     uint64_t dev, uint64_t ino, bool exec, const char *path);

/*
 * Cap the history (dlopen/dlclose and JIT churn grow it without end): when
 * more than 1,024 mappings are no longer current, free them all. Call it
 * only when nothing holds pointers to old mappings (the aggregate has no
 * pending lines: aggregate_maintain() returned 0); bumps the generation.
 * Returns how many were freed; maps_pruned() counts them since maps_new().
 */
size_t maps_prune(struct maps *m);
uint64_t maps_pruned(const struct maps *m);

/* The process exec'd: forget the current view (history is kept). */
void maps_reset(struct maps *m);

/*
 * Mark every module these maps have held (the history, current view
 * included) as mapped (module_cache_mark), for a round of
 * module_cache_evict() while the process is followed: not only what it
 * maps now, since its records are handled late - an exec empties the view
 * before the records that map the new program's files are read, and those
 * files may be gone from /proc by then (the process exited), so they must
 * not be evicted in between.
 */
void maps_mark_modules(const struct maps *m);

/* The current mapping containing addr, or NULL. */
const struct mapping *maps_find(const struct maps *m, uint64_t addr);

/* Generation counter: changes whenever the current view changes. */
uint64_t maps_generation(const struct maps *m);

pid_t maps_pid(const struct maps *m);

/*
 * The target's JIT perf map reader (perfmap.h), or NULL (none set). Lookups
 * may re-read the file, hence the non-const result.
 */
struct perfmap *maps_perfmap(const struct maps *m);

/* The target's DWARF reader (debuginfo.h), or NULL (ENOMEM). */
struct debuginfo *maps_debuginfo(const struct maps *m);

/*
 * Whether the target shares pmutop's mount namespace (so a path in its maps
 * names the same file on the host). When it does not, or when that cannot
 * be told, files are opened only through /proc/PID/root and
 * /proc/PID/map_files: never by the host path, which could be another file.
 */
bool maps_same_mount_ns(const struct maps *m);

#endif
