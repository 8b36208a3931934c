/*
 * process.h - the processes of a session: one object per process followed.
 *
 * A target is a tree of processes (a shell and what it starts, a prefork
 * server, a multiprocessing pool), each with its own address space. A
 * process object owns what lives and dies with one process: its maps
 * (target/maps.h), its unwinder (unwind.h) and its JIT perf map reader; the
 * DWARF reader is shared by every process in pmutop's mount namespace (the
 * same file gives the same answers whoever maps it), and ELF modules are
 * shared by all through the module cache (by dev/inode).
 *
 * Processes come from the kernel's records as they happen (FORK with a new
 * pid, COMM with exec, EXIT of the leader), so a child that lives 5 ms is
 * still symbolized: a forked child starts from a copy of its parent's maps,
 * exec resets them and MMAP2 records fill them in. A pid seen again after
 * its EXIT is a new process (new maps): pid reuse never mixes two
 * processes' symbols.
 *
 * Cost is bounded: at most `max` processes are kept; past that a new one is
 * counted as not followed. An exited process drops its unwinder at once and,
 * if no sample ever referred to it, its maps too (process_table_collect());
 * the files it mapped are evicted once no process maps them and 32 more
 * recent ones are kept (process_table_evict()).
 */
#ifndef PMUTOP_PROCESS_H
#define PMUTOP_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "pmutop/symbols/debuginfo.h"
#include "pmutop/target/module.h"

struct maps;
struct module_cache;
struct unwinder;

/* Why a process was not followed (summary counts). */
enum process_skip {
	PROC_SKIP_LIMIT = 0,  /* more than --max-processes processes */
	PROC_SKIP_SETUID,     /* exec'd a setuid/setgid binary: the kernel closes its counters */
	PROC_SKIP_NOMEM,
	PROC_SKIP_N
};

struct process_stats {
	size_t seen;            /* processes followed, ever */
	size_t live;            /* followed and not exited */
	size_t exited;          /* followed and exited */
	size_t freed;           /* exited with no sample: maps freed at once */
	size_t skipped[PROC_SKIP_N];
	struct debuginfo_stats dbg; /* the DWARF readers of live processes, summed */
	struct module_cache_stats modules; /* files evicted once no process mapped them */
	size_t modules_kept;    /* unmapped files kept parsed (the eviction's cap) */
};

struct process;
struct process_table;

/* An empty table; modules are opened through mc. NULL on ENOMEM. */
struct process_table *process_table_new(struct module_cache *mc, size_t max);
/* Frees every process (maps, unwinders, symbol sources). NULL is a no-op. */
void process_table_free(struct process_table *t);

/*
 * A process that exists now (attach, or the launched command before exec):
 * maps are read from /proc/PID/maps unless `empty` (a launched command gets
 * its maps from the records of its exec). Returns 0, or -errno with err
 * filled (which pid, which knob).
 */
int process_table_add_root(struct process_table *t, pid_t pid, bool empty, char *err,
			   size_t errlen);

/* The live process with this pid, or NULL. */
struct process *process_table_get(struct process_table *t, pid_t pid);

/*
 * A new process: from a FORK record (parent_pid its parent, whose maps it
 * starts with), or a pid first met in another record (parent_pid 0: its
 * maps are read from /proc/PID/maps if it still exists). A live process
 * with the same pid is retired first (its EXIT was missed). Returns the
 * process, or NULL when it is not followed (the limit, ENOMEM: counted).
 */
struct process *process_table_spawn(struct process_table *t, pid_t pid, pid_t parent_pid);

/*
 * The process exec'd: new maps view, unwind caches dropped, new name; what
 * it mapped before may be evicted (process_table_prune).
 */
void process_exec(struct process_table *t, struct process *p, const char *comm);

/*
 * The process exec'd something it cannot be followed into (setuid): noted
 * as not followed and retired like an exit.
 */
void process_table_skip(struct process_table *t, struct process *p, enum process_skip why);

/*
 * The process exited (EXIT record of its leader). It is no longer found by
 * pid; its state is released by process_table_collect(), after the records
 * already in the buffers are handled.
 */
void process_table_exit(struct process_table *t, struct process *p);

/*
 * Once sampling has stopped: count as exited every process still counted
 * running that is gone (no such pid, or a zombie) - its exit record was
 * lost or came after the counters closed - so that the summary's "still
 * running" means still running. Returns how many were gone.
 */
size_t process_table_settle(struct process_table *t);

/*
 * Release what exited processes hold: the unwinder always; the maps too when
 * no sample referred to them (then on_free(arg, maps) is called first, so a
 * cache keyed by maps can forget them). Call after a full drain.
 */
void process_table_collect(struct process_table *t,
			   void (*on_free)(void *arg, const struct maps *m), void *arg);

/*
 * Cap every process's mapping history (maps_prune) and its debug info's
 * caches and readers (debuginfo_trim): only when nothing points at old
 * mappings or looked-up lines any more (no pending line lookups).
 */
void process_table_prune(struct process_table *t);

/*
 * Bound the files parsed for symbols (module.h: module_cache_evict): all
 * but the 32 most recently used files that no process not yet collected
 * maps are evicted; unwinders and DWARF readers drop what they derived
 * from them, and the pending line lookups in those files are done first
 * (process_table_set_lines). A round runs before a file is parsed when
 * the parsed files could otherwise exceed those mapped at the last round
 * plus 32 (the module cache's parse hook) - so the bound holds however
 * many files are parsed between two calls of this - and here, after a
 * process exited or exec'd, to free what it alone mapped sooner. Call after
 * process_table_collect(), with every record up to now handled.
 */
void process_table_evict(struct process_table *t);
/* Unmapped files kept by process_table_evict() (tests; default 32). */
void process_table_set_module_keep(struct process_table *t, size_t keep);

/*
 * The line lookups still to do (session.c, over aggregate.h), which need
 * their module parsed: pending(arg, i) gives the mapping of the i-th, NULL
 * past the last; resolve(arg) looks up those whose module is doomed
 * (module_doomed) now, before the module is evicted. A module whose lookups
 * stay pending (debuginfod still fetching its debug file, out of memory)
 * is kept. Both NULL: none (the default).
 */
struct mapping;
void process_table_set_lines(struct process_table *t,
			     const struct mapping *(*pending)(void *arg, size_t i),
			     int (*resolve)(void *arg), void *arg);

/*
 * Wait for the debug files asked of debuginfod (debuginfod.h: dfd_wait;
 * progress and notes to progress, NULL for none; at most max_ms, 0 = no
 * limit; -EINTR when stop said so, -ETIMEDOUT after max_ms: the transfers
 * were cancelled). Before lines are resolved at the end.
 */
int process_table_fetch_wait(struct process_table *t, FILE *progress, unsigned max_ms,
			     bool (*stop)(void *arg), void *arg);

/*
 * Wait for the DWARF jobs in flight - loads and lookups (debuginfo.h:
 * dwarf_loader_wait; at most max_ms, 0 = no limit; -EINTR when stop said
 * so, -ETIMEDOUT after max_ms: those jobs go on, their lookups stay
 * pending). Jobs start when lines are wanted (the aggregate's line
 * resolution asks debuginfo_busy()), and the answers are taken the same
 * way: resolve, wait, resolve again. process_table_loading() counts them.
 */
int process_table_load_wait(struct process_table *t, unsigned max_ms, bool (*stop)(void *arg),
			    void *arg);
unsigned process_table_loading(const struct process_table *t);

struct maps *process_maps(struct process *p);
struct unwinder *process_unwinder(struct process *p);
pid_t process_pid(const struct process *p);
pid_t process_ppid(const struct process *p);
const char *process_comm(const struct process *p);
/* Note that a sample refers to this process's maps (they are then kept). */
void process_note_sample(struct process *p);

void process_table_stats(const struct process_table *t, struct process_stats *st);
/* How every process's stacks were unwound, summed (freed unwinders included). */
struct unwind_stats;
void process_table_unwind_stats(const struct process_table *t, struct unwind_stats *st);
const char *process_skip_name(enum process_skip why);
/*
 * The summary line "pmutop: processes: N followed (E exited, L still
 * running); K not followed: ... (S samples of theirs dropped)" to out,
 * when more than one process was followed or any was not (batch and live
 * view alike); nothing otherwise. Before it, a "debug info:" line when
 * debuginfo_trim() closed readers or emptied the cache.
 */
void process_stats_print(const struct process_stats *p, uint64_t unfollowed_samples, FILE *out);

#endif
