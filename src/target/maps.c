/*
 * maps.c - the memory map of a target process over time.
 *
 * Two arrays of pointers to mapping objects:
 *   - history: every mapping ever created, owned here until maps_free();
 *     samples keep pointers into it and the pprof writer lists it;
 *   - current: the live view, sorted by start and non-overlapping, so
 *     maps_find() is a binary search with no allocation and no locking.
 * A mapping is never edited once created: when a new mapping hides part of
 * an older one, the visible remainders become new mapping objects (new ids)
 * and the old object stays in history unchanged.
 *
 * Modules are opened through the module cache: for a file, by
 * /proc/PID/map_files/START-END first (the exact file even when it was
 * deleted or lives in another mount namespace; needs CAP_CHECKPOINT_RESTORE
 * or CAP_SYS_ADMIN), then /proc/PID/root/PATH, then PATH - the last only when
 * the target shares our mount namespace (in a container the host's PATH may
 * be a different file, or one planted to mislead us). The vDSO is copied
 * out of the target with process_vm_readv().
 *
 * Device numbers are encoded with makedev(major, minor) everywhere, so that
 * mappings from /proc/PID/maps and from PERF_RECORD_MMAP2 share cache keys.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"

#define MAX_VDSO_SIZE (1u << 20)
/* Mappings no longer current kept for pending lookups (maps_prune). */
#define MAX_HISTORY 1024

struct maps {
	pid_t pid;
	struct module_cache *cache;

	struct mapping **cur;     /* sorted, non-overlapping */
	size_t ncur, capcur;

	struct mapping **all;     /* history, owns the objects */
	size_t nall, capall;

	uint32_t next_id;
	uint32_t serial;          /* of these maps among a session's (maps_set_serial) */
	uint64_t generation;
	uint64_t pruned;          /* history entries freed by maps_prune() */

	bool same_mntns;          /* the host path may be opened (maps_same_mount_ns) */
	struct debuginfo *dbg;    /* DWARF reader handed to every mapping (not owned) */
	struct perfmap *perfmap;  /* JIT names (not owned) */
};

static int grow(void *arrp, size_t *cap, size_t need, size_t elem)
{
	void **arr = arrp;
	size_t n = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*arr, n * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

/*
 * Whether pid is in our mount namespace: the same nsfs inode behind
 * /proc/self/ns/mnt and /proc/PID/ns/mnt. False when either cannot be read,
 * so an unknown namespace never gets host paths.
 */
static bool same_mount_ns(pid_t pid)
{
	char path[64];
	struct stat self, target;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	if (stat("/proc/self/ns/mnt", &self) != 0 || stat(path, &target) != 0)
		return false;
	return self.st_dev == target.st_dev && self.st_ino == target.st_ino;
}

struct maps *maps_new(pid_t pid, struct module_cache *cache)
{
	struct maps *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->pid = pid;
	m->cache = cache;
	m->same_mntns = same_mount_ns(pid);
	return m;
}

void maps_set_symbol_sources(struct maps *m, struct debuginfo *dbg, struct perfmap *pm)
{
	m->dbg = dbg;
	m->perfmap = pm;
	for (size_t i = 0; i < m->nall; i++)
		m->all[i]->dbg = dbg;
}

void maps_free(struct maps *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nall; i++) {
		free(m->all[i]->path);
		free(m->all[i]);
	}
	free(m->all);
	free(m->cur);
	free(m);
}

pid_t maps_pid(const struct maps *m)
{
	return m->pid;
}

struct perfmap *maps_perfmap(const struct maps *m)
{
	return m ? m->perfmap : NULL;
}

struct debuginfo *maps_debuginfo(const struct maps *m)
{
	return m ? m->dbg : NULL;
}

bool maps_same_mount_ns(const struct maps *m)
{
	return m->same_mntns;
}

uint64_t maps_generation(const struct maps *m)
{
	return m->generation;
}

/* A new mapping object recorded in history; the module is not attached. */
static struct mapping *mapping_new(struct maps *m, uint64_t start, uint64_t end,
				   uint64_t pgoff, uint64_t dev, uint64_t ino,
				   bool exec, const char *path)
{
	struct mapping *map;

	if (grow(&m->all, &m->capall, m->nall + 1, sizeof(*m->all)))
		return NULL;
	map = calloc(1, sizeof(*map));
	if (!map)
		return NULL;
	map->path = strdup(path ? path : "");
	if (!map->path) {
		free(map);
		return NULL;
	}
	map->id = ++m->next_id;
	map->key = (uint64_t)m->serial << 32 | map->id;
	map->start = start;
	map->end = end;
	map->pgoff = pgoff;
	map->dev = dev;
	map->ino = ino;
	map->exec = exec;
	map->dbg = m->dbg;
	m->all[m->nall++] = map;
	return map;
}

/* The part [start, end) of old, as a new object with the same file and module. */
static struct mapping *mapping_piece(struct maps *m, const struct mapping *old,
				     uint64_t start, uint64_t end)
{
	struct mapping *map = mapping_new(m, start, end, old->pgoff + (start - old->start),
					  old->dev, old->ino, old->exec, old->path);

	if (map) {
		map->mod = old->mod;
		map->bias = old->bias;
	}
	return map;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* [start, len) of our own vDSO, when we can find it. */
static bool self_vdso(uint64_t *start, uint64_t *len)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	char line[512];
	bool found = false;
	FILE *f;

	if (!base)
		return false;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e;

		if (sscanf(line, "%llx-%llx", &s, &e) == 2 && s == base && e > s) {
			*start = s;
			*len = e - s;
			found = true;
			break;
		}
	}
	fclose(f);
	return found;
}

static struct module *vdso_module(struct maps *m, const struct mapping *map)
{
	uint64_t len = map->end - map->start, own_start, own_len;
	struct module *mod = NULL;
	struct iovec local, remote;
	void *buf;

	if (len == 0 || len > MAX_VDSO_SIZE)
		return NULL;
	buf = malloc(len);
	if (!buf)
		return NULL;
	local.iov_base = buf;
	local.iov_len = len;
	remote.iov_base = (void *)(uintptr_t)map->start;
	remote.iov_len = len;
	if (process_vm_readv(m->pid, &local, 1, &remote, 1, 0) == (ssize_t)len) {
		mod = module_cache_get_image(m->cache, "[vdso]", buf, len);
	} else if (self_vdso(&own_start, &own_len) && own_len == len) {
		/*
		 * No ptrace access (e.g. Yama ptrace_scope=1): every process of
		 * our kind on this kernel has the same vDSO, so use ours.
		 */
		mod = module_cache_get_image(m->cache, "[vdso]",
					     (const void *)(uintptr_t)own_start, len);
	}
	free(buf);
	return mod;
}

static struct module *file_module(struct maps *m, const struct mapping *map)
{
	char map_files[96], exe[64], *root = NULL;
	const char *paths[3];
	unsigned n = 0;
	struct module *mod;

	snprintf(map_files, sizeof(map_files), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 (int)m->pid, map->start, map->end);
	paths[n++] = map_files;
	/* A deleted file's path now names nothing, or something else. */
	if (!ends_with(map->path, " (deleted)")) {
		if (asprintf(&root, "/proc/%d/root%s", (int)m->pid, map->path) >= 0)
			paths[n++] = root;
		else
			root = NULL;
		/*
		 * The host's file of that name is the target's only in the same
		 * mount namespace; in a container it may be anything (hardening).
		 */
		if (m->same_mntns)
			paths[n++] = map->path;
	} else {
		/*
		 * map_files needs CAP_SYS_ADMIN; a deleted executable stays
		 * reachable as /proc/PID/exe (ptrace-read rights, as for
		 * process_vm_readv) when that is the same file.
		 */
		struct stat st;

		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)m->pid);
		if (stat(exe, &st) == 0 && st.st_dev == map->dev && st.st_ino == map->ino)
			paths[n++] = exe;
	}
	mod = module_cache_get_any(m->cache, paths, n, map->path, map->dev, map->ino);
	free(root);
	return mod;
}

static void mapping_attach_module(struct maps *m, struct mapping *map)
{
	struct module *mod = NULL;
	uint64_t bias;

	if (!m->cache)
		return;
	if (map->path[0] == '/' && strncmp(map->path, "//anon", 6) != 0)
		mod = file_module(m, map);
	else if (strcmp(map->path, "[vdso]") == 0)
		mod = vdso_module(m, map);
	if (mod && module_bias(mod, map->start, map->pgoff, &bias) == 0) {
		map->mod = mod;
		map->bias = bias;
	}
}

/* Index of the first current mapping whose end is above addr. */
static size_t first_ending_after(const struct maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->ncur;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->cur[mid]->end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Put map into the current view, hiding whatever it overlaps. */
static int cur_insert(struct maps *m, struct mapping *map)
{
	struct mapping *left = NULL, *right = NULL;
	size_t i, j, nnew;

	/* Fast path: appending in order, as /proc/PID/maps is read. */
	if (m->ncur == 0 || m->cur[m->ncur - 1]->end <= map->start) {
		if (grow(&m->cur, &m->capcur, m->ncur + 1, sizeof(*m->cur)))
			return -ENOMEM;
		m->cur[m->ncur++] = map;
		return 0;
	}

	i = first_ending_after(m, map->start);
	for (j = i; j < m->ncur && m->cur[j]->start < map->end; j++)
		;
	/* cur[i..j) overlap map; only the first and last can stick out. */
	if (i < j && m->cur[i]->start < map->start) {
		left = mapping_piece(m, m->cur[i], m->cur[i]->start, map->start);
		if (!left)
			return -ENOMEM;
	}
	if (i < j && m->cur[j - 1]->end > map->end) {
		right = mapping_piece(m, m->cur[j - 1], map->end, m->cur[j - 1]->end);
		if (!right)
			return -ENOMEM;
	}
	nnew = 1 + (left != NULL) + (right != NULL);
	if (grow(&m->cur, &m->capcur, m->ncur - (j - i) + nnew, sizeof(*m->cur)))
		return -ENOMEM;
	memmove(&m->cur[i + nnew], &m->cur[j], (m->ncur - j) * sizeof(*m->cur));
	m->ncur = m->ncur - (j - i) + nnew;
	if (left)
		m->cur[i++] = left;
	m->cur[i++] = map;
	if (right)
		m->cur[i] = right;
	return 0;
}

int maps_add(struct maps *m, uint64_t start, uint64_t len, uint64_t pgoff,
	     uint64_t dev, uint64_t ino, bool exec, const char *path)
{
	struct mapping *map;
	int err;

	if (len == 0)
		return 0;
	if (start + len < start)
		return -EINVAL;
	map = mapping_new(m, start, start + len, pgoff, dev, ino, exec, path);
	if (!map)
		return -ENOMEM;
	mapping_attach_module(m, map);
	err = cur_insert(m, map);
	m->generation++;
	return err;
}

void maps_set_serial(struct maps *m, uint32_t serial)
{
	m->serial = serial;
}

struct maps *maps_clone(const struct maps *parent, pid_t pid, uint32_t serial)
{
	struct maps *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->pid = pid;
	m->serial = serial;
	m->cache = parent->cache;
	/* A forked child stays in its parent's mount namespace until it unshares. */
	m->same_mntns = parent->same_mntns;
	for (size_t i = 0; i < parent->ncur; i++) {
		const struct mapping *old = parent->cur[i];
		struct mapping *map = mapping_piece(m, old, old->start, old->end);

		if (!map || cur_insert(m, map)) {
			maps_free(m);
			return NULL;
		}
	}
	m->generation = 1;
	return m;
}

void maps_reset(struct maps *m)
{
	m->ncur = 0;
	m->generation++;
}

void maps_mark_modules(const struct maps *m)
{
	for (size_t i = 0; m && i < m->nall; i++)
		module_cache_mark(m->cache, m->all[i]->mod);
}

const struct mapping *maps_find(const struct maps *m, uint64_t addr)
{
	size_t i;

	if (!m)
		return NULL;
	i = first_ending_after(m, addr);
	if (i < m->ncur && m->cur[i]->start <= addr)
		return m->cur[i];
	return NULL;
}

/* The mapping in old[0..n) identical to the arguments, to reuse it across reloads. */
static struct mapping *find_same(struct mapping **old, size_t n, uint64_t start,
				 uint64_t end, uint64_t pgoff, uint64_t dev,
				 uint64_t ino, bool exec, const char *path)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (old[mid]->start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && old[lo]->start == start && old[lo]->end == end &&
	    old[lo]->pgoff == pgoff && old[lo]->dev == dev && old[lo]->ino == ino &&
	    old[lo]->exec == exec && strcmp(old[lo]->path, path) == 0)
		return old[lo];
	return NULL;
}

/*
 * One line of /proc/PID/maps:
 *   start-end perms offset maj:min inode   path
 * where the path may contain spaces, end in " (deleted)" or be empty.
 */
static int parse_line(char *line, uint64_t *start, uint64_t *end, bool *exec,
		      uint64_t *pgoff, uint64_t *dev, uint64_t *ino, char **path)
{
	unsigned long long s, e, off, inode;
	unsigned maj, min;
	char perms[8];
	int consumed = 0;
	size_t n;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &s, &e, perms, &off,
		   &maj, &min, &inode, &consumed) < 7 || consumed == 0 || e <= s ||
	    strlen(perms) < 3)
		return -EINVAL;
	*path = line + consumed;
	n = strlen(*path);
	while (n > 0 && (*path)[n - 1] == '\n')
		(*path)[--n] = '\0';
	*start = s;
	*end = e;
	*exec = perms[2] == 'x';
	*pgoff = off;
	*dev = makedev(maj, min);
	*ino = inode;
	return 0;
}

int maps_load_proc(struct maps *m)
{
	char fname[64];
	FILE *f;
	int err;

	snprintf(fname, sizeof(fname), "/proc/%d/maps", (int)m->pid);
	f = fopen(fname, "re");
	if (!f)
		return -errno;
	err = maps_load_stream(m, f);
	fclose(f);
	return err;
}

int maps_load_stream(struct maps *m, FILE *f)
{
	struct mapping **old = m->cur;
	size_t nold = m->ncur;
	char *line = NULL;
	size_t linecap = 0;
	int err = 0;

	/* Build the new view in a fresh array; old entries are reused when unchanged. */
	m->cur = NULL;
	m->ncur = 0;
	m->capcur = 0;
	errno = 0;
	while (getline(&line, &linecap, f) > 0) {
		uint64_t start, end, pgoff, dev, ino;
		struct mapping *map;
		bool exec;
		char *path;

		if (parse_line(line, &start, &end, &exec, &pgoff, &dev, &ino, &path))
			continue;
		map = find_same(old, nold, start, end, pgoff, dev, ino, exec, path);
		if (!map) {
			map = mapping_new(m, start, end, pgoff, dev, ino, exec, path);
			if (!map) {
				err = -ENOMEM;
				break;
			}
			mapping_attach_module(m, map);
		}
		err = cur_insert(m, map);
		if (err)
			break;
		errno = 0;
	}
	if (!err && ferror(f))
		err = errno ? -errno : -EIO;
	free(line);
	/* Same mappings as before (reused objects, same order): nothing changed. */
	if (err || m->ncur != nold || (nold && memcmp(m->cur, old, nold * sizeof(*old))))
		m->generation++;
	free(old);
	return err;
}

/* Whether map is in the current view (binary search by start). */
static bool is_current(const struct maps *m, const struct mapping *map)
{
	size_t i = first_ending_after(m, map->start);

	return i < m->ncur && m->cur[i] == map;
}

size_t maps_prune(struct maps *m)
{
	size_t kept = 0, freed;

	if (m->nall <= m->ncur + MAX_HISTORY)
		return 0;
	for (size_t i = 0; i < m->nall; i++) {
		struct mapping *map = m->all[i];

		if (is_current(m, map)) {
			m->all[kept++] = map;
		} else {
			free(map->path);
			free(map);
		}
	}
	freed = m->nall - kept;
	m->nall = kept;
	m->pruned += freed;
	/* Caches keyed by generation (the symbolizer's) may hold freed pointers. */
	m->generation++;
	return freed;
}

uint64_t maps_pruned(const struct maps *m)
{
	return m->pruned;
}
