/*
 * module.h - one ELF object (executable, shared library, vDSO) as pmutop
 * needs it: function symbols, unwind tables, build-id and load bias.
 *
 * Each object is opened once (by device+inode, or by path) and kept mmap'd
 * while processes map it, so unwinding and symbolization never re-read a
 * file: reads of read-only file-backed memory are served from the local
 * mapping. Past a cap, files no process maps any more are evicted (see
 * module_cache_evict) and parsed again if they are mapped again.
 * All parsing goes through libelf and is bounds-checked: a truncated or
 * corrupt file yields a module with fewer symbols, never a crash.
 */
#ifndef PMUTOP_MODULE_H
#define PMUTOP_MODULE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct module;
struct module_cache;

struct module_cache *module_cache_new(void);
/* Frees the cache and every module it handed out. NULL is a no-op. */
void module_cache_free(struct module_cache *c);

/*
 * The module for the file at open_path (e.g. "/proc/PID/root/usr/lib/x.so"
 * or "/proc/PID/map_files/..."), known to users as display_path. Cached by
 * (dev, ino) when non-zero, else by display_path. Returns NULL when the file
 * cannot be opened or is not ELF (also cached, so it is tried once).
 */
struct module *module_cache_get(struct module_cache *c, const char *open_path,
				const char *display_path, uint64_t dev, uint64_t ino);

/*
 * Like module_cache_get, but on a cache miss tries the n open_paths in turn
 * (e.g. /proc/PID/map_files/..., then /proc/PID/root/..., then the path
 * itself) and parses the first that opens as ELF. NULL (cached) when none does.
 */
struct module *module_cache_get_any(struct module_cache *c, const char *const *open_paths,
				    unsigned n, const char *display_path,
				    uint64_t dev, uint64_t ino);

/*
 * How many files the cache refused as unsafe (safe_open.h: FIFO, device,
 * oversized, a path that no longer names the mapped file, a symlink out of
 * the target's root); *first (may be NULL) gets "PATH: why" of the first.
 */
unsigned module_cache_skipped(const struct module_cache *c, const char **first);

/*
 * Bounding the files no process maps any more (issue 21): a session that
 * runs thousands of distinct programs one after the other would otherwise
 * keep every one parsed (symbols, libelf's and libdw's state, the mapped
 * image: ~100 KB for a small file) until it ends.
 *
 * One round: module_cache_mark_begin(), module_cache_mark() for every
 * module a live process maps, then module_cache_evict(). Modules of files
 * (not in-memory images) that were not marked are unmapped; all but the
 * `keep` most recently used of them are evicted, oldest first: their parsed
 * state is freed and the module stays as a shell - the same pointer, with
 * its path and build-id; queries find nothing in it. Before each eviction
 * on_evict(arg, m) is called so that holders of state derived from m
 * (unwinders' CFI readers, DWARF readers) drop it.
 *
 * Call a round only when nothing will ask an unmarked module for symbols
 * or code before it is mapped again: samples of exited processes already
 * handled, line lookups done. A module_cache_get*() that finds an
 * evicted module opens its file again (through the paths it is given):
 * the same file (build-id, size, ctime) is parsed back into the same
 * module; another file behind the same device and inode (deleted and
 * reused) gets a new module, and the old shell is kept until
 * module_cache_free() so that its pointer is never reused by another file.
 *
 * A round in two steps, for callers that must act on what goes first
 * (look up the pending lines of a module before it loses its DWARF):
 * module_cache_doom() chooses the modules as above (module_doomed() says
 * which), module_cache_mark() of one takes it back, and
 * module_cache_evict_doomed() evicts the rest. module_cache_evict() is
 * both at once.
 */
void module_cache_mark_begin(struct module_cache *c);
/* m (may be NULL) is mapped by a live process: not evicted this round. */
void module_cache_mark(struct module_cache *c, struct module *m);
/* Choose what to evict as above; returns how many modules were chosen. */
size_t module_cache_doom(struct module_cache *c, size_t keep);
/* Whether m was chosen by the last module_cache_doom() and not marked since. */
bool module_doomed(const struct module *m);
/* Evict the chosen modules; returns how many. */
size_t module_cache_evict_doomed(struct module_cache *c,
				 void (*on_evict)(void *arg, const struct module *m), void *arg);
/* Doom and evict; returns how many modules were evicted this round. */
size_t module_cache_evict(struct module_cache *c, size_t keep,
			  void (*on_evict)(void *arg, const struct module *m), void *arg);
/* Modules parsed from files and marked this round (0 for NULL c). */
size_t module_cache_marked(const struct module_cache *c);

/*
 * fn(arg) is called before every file the cache parses (a new one, or an
 * evicted one mapped again), not from within fn itself: the owner of the
 * marks enforces its cap there (a round as above), so that the number of
 * files parsed does not depend on how often it runs rounds otherwise. A
 * round in fn evicts nothing the cache is handing out: the file about to be
 * parsed has no parsed state yet. NULL fn removes the hook.
 */
void module_cache_set_parse_hook(struct module_cache *c, void (*fn)(void *arg), void *arg);

struct module_cache_stats {
	uint64_t evicted;   /* modules evicted, ever */
	uint64_t reopened;  /* evicted modules parsed again (the file was mapped again) */
	uint64_t replaced;  /* evicted modules whose file turned out to be another one */
	size_t resident;    /* modules parsed now (shells and failed files not counted) */
	size_t resident_max; /* the most parsed at once (what the cap bounds) */
};
/* c's counts (all zero for NULL c). */
void module_cache_get_stats(const struct module_cache *c, struct module_cache_stats *st);

/* Whether m is an evicted shell (module_cache_evict). false for NULL. */
bool module_evicted(const struct module *m);

/*
 * A module built from an in-memory ELF image (the vDSO read from the
 * target). The bytes are copied. Cached under name. NULL when not ELF.
 */
struct module *module_cache_get_image(struct module_cache *c, const char *name,
				      const void *image, size_t len);

const char *module_path(const struct module *m);
/* Lower-case hex GNU build-id, or "" when the file has none. */
const char *module_build_id(const struct module *m);

/* n bytes as lower-case hex into out (2n + 1 bytes): how build-ids are written. */
void module_hex_encode(char *out, const unsigned char *in, size_t n);

/*
 * The libelf handle of the object's image (for libdw's CFI reader), or NULL.
 * Owned by the module; valid until module_cache_free() or the module's
 * eviction (module_cache_evict's on_evict says when).
 */
struct Elf;
struct Elf *module_elf(const struct module *m);

/*
 * Load bias for a mapping of this module at map_start with file offset
 * map_pgoff: runtime address = ELF vaddr + bias. Returns 0 or -ENOENT when no
 * PT_LOAD segment covers map_pgoff.
 */
int module_bias(const struct module *m, uint64_t map_start, uint64_t map_pgoff,
		uint64_t *bias);

/*
 * Function containing ELF virtual address vaddr (.symtab, else .dynsym;
 * PLT stubs as "name@plt" from .rela.plt). Returns its name (owned by the
 * module) and the offset into it, or NULL.
 */
const char *module_symbolize(const struct module *m, uint64_t vaddr, uint64_t *offset);

/*
 * The function symbol containing vaddr: its name (owned by the module), ELF
 * vaddr and size in *start and *size; NULL when no symbol covers vaddr.
 */
const char *module_symbol_extent(const struct module *m, uint64_t vaddr, uint64_t *start,
				 uint64_t *size);

/*
 * The function around ELF vaddr vaddr as the unwind tables know it: the
 * range [*start, *end) of the .eh_frame (else .debug_frame) FDE that covers
 * it. For code without a symbol (stripped local functions) this is still
 * one range per function. Returns 0 or -ENOENT. On the sampling path: a
 * binary search in .eh_frame_hdr's table and one FDE header read (fde.h);
 * an object without that table, and .debug_frame, are walked once on first
 * use into a sorted index (memory ~16 bytes per FDE, freed with the
 * module's parsed state). Not thread-safe across users of one module.
 */
int module_fde_range(const struct module *m, uint64_t vaddr, uint64_t *start, uint64_t *end);

/*
 * Take the function symbols of a separate debug file (fd: .symtab of the
 * same build, which the caller has verified by build-id) for a module
 * stripped of its own .symtab: module_symbolize() then names what only
 * the debug file knows (static functions, libc's internal ones). Names are
 * copied; fd stays the caller's. A no-op when the module has a .symtab or
 * took one already, or the file has none. Bounded (issue 17: it runs on
 * the session's thread): a .symtab of more than 256k entries is not read
 * and only the first 64 MiB of names are taken - both -E2BIG, the latter
 * with those names taken. 0, -E2BIG or -ENOMEM.
 */
int module_add_debug_symbols(struct module *m, int fd);

/* Whether the object has a .symtab (its own, or its debug file's). */
bool module_has_symtab(const struct module *m);

/* Number of function symbols loaded (0 for stripped objects without .dynsym). */
size_t module_nsyms(const struct module *m);

/*
 * Copy len bytes of the object's loaded image at ELF vaddr into buf, from
 * file contents (PT_LOAD segments; .bss reads as zero). Returns 0 or
 * -EFAULT when the range is not backed by the file.
 */
int module_read(const struct module *m, uint64_t vaddr, void *buf, size_t len);

/*
 * Location of .eh_frame_hdr as an ELF vaddr and its size. Returns 0 or
 * -ENOENT when the object has none.
 */
int module_eh_frame_hdr(const struct module *m, uint64_t *vaddr, uint64_t *size);

/*
 * Whether the Go toolchain built the object (it has .gopclntab or
 * .go.buildinfo): Go code keeps frame pointers on amd64 and switches stacks
 * (goroutine <-> system stack), which the unwinder handles differently.
 * false for NULL.
 */
bool module_is_go(const struct module *m);

/*
 * Go's function table (.gopclntab: names, lines, SP tables; gopclntab.h),
 * owned by the module. NULL when there is none; when the object has one
 * that cannot be read (corrupt, truncated, unknown layout) *err says why,
 * else *err is NULL.
 */
struct gopclntab;
const struct gopclntab *module_gopclntab(const struct module *m, const char **err);

/*
 * The ELF header's entry point (e_entry, an ELF vaddr): where the kernel
 * starts an executable or the dynamic loader. 0 when it has none (most
 * shared libraries), and for NULL.
 */
uint64_t module_entry(const struct module *m);

/* ELF vaddr range [lo, hi) of the executable PT_LOAD segments. */
void module_text_range(const struct module *m, uint64_t *lo, uint64_t *hi);

/*
 * For a SIGBUS handler installed over module.c's own (the live view's
 * crash handler, ui/crt.c): whether this SIGBUS was a read of a mapped file
 * past its end - truncated after pmutop mapped it - and a zero page now
 * covers the address (return from the handler: the read is retried and
 * sees zeros). False for anything else (die as the handler would).
 * Async-signal-safe.
 */
bool module_sigbus_recover(const siginfo_t *si);

#endif
