/*
 * perfmap.c - JIT code names from /tmp/perf-PID.map (see perfmap.h).
 *
 * Entries live in one array sorted by start address; names are copied into
 * chunks that are only freed with the perfmap, so a name handed out stays
 * valid when the file is re-read (a frame may hold it while the rest of
 * its stack is symbolized). When JIT code is replaced at the same address,
 * the later line wins: entries are sorted by (start, line order) and a
 * lookup takes the last one that contains the address.
 *
 * The file is untrusted input in a world-writable directory: it is opened
 * with O_NOFOLLOW, must be a regular file owned by root, by the target's
 * user or by us, and at most PERFMAP_MAX_BYTES of it are read. Because
 * names outlive re-reads, a target that keeps rewriting its map could grow
 * pmutop without bound: a rewrite is parsed at most once a second (and
 * after a slow parse, only after five times as long), and
 * once PERFMAP_MAX_TOTAL bytes of names and entries are held the file is
 * not read again (perfmap_note() says so).
 *
 * A map last written before its process started is not the process's: JITs
 * killed with SIGKILL leave their maps in /tmp, and pids come round again
 * (after kernel.pid_max new processes). Such a file named a later process's
 * frames with another program's JIT functions, and parsing it (7 MB of
 * someone else's names) cost pmutop that much memory per process. It is
 * left unread until it is written again (perfmap_note() counts it).
 */
#include "pmutop/symbols/perfmap.h"
#include "pmutop/target/proc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PERFMAP_MAX_BYTES (256u << 20)
/* Names and entries kept over the whole session (names are never freed). */
#define PERFMAP_MAX_TOTAL (512ULL << 20)
#define CHECK_INTERVAL_NS (200 * 1000000ULL)
#define MISS_INTERVAL_NS (10 * 1000000ULL)
/*
 * A map whose mtime is this much older than the process's start is a dead
 * process's: the start is exact to a clock tick and mtimes lag by a jiffy,
 * and a second also covers the wall clock's slewing since the start.
 */
#define STALE_SLACK_NS (1000 * 1000000LL)
/* A rewritten (not appended) file is parsed again at most this often. */
#define REWRITE_INTERVAL_NS (1000 * 1000000ULL)
#define NAME_CHUNK (64 * 1024)
#define MAX_LINE 4096
/* How many earlier entries a lookup scans back past overlapping ones. */
#define OVERLAP_SCAN 16

struct pm_entry {
	uint64_t start, end;
	uint64_t seq;           /* line number in load order: later wins */
	const char *name;
};

struct name_chunk {
	struct name_chunk *next;
	size_t used, cap;
	char data[];
};

struct perfmap {
	pid_t pid;
	bool host_paths;
	char path[96];          /* /proc/PID/root/tmp/perf-NSPID.map */
	char host_path[64];     /* /tmp/perf-PID.map */
	uid_t uid_real, uid_eff;
	bool have_uids;
	struct timespec started; /* the process's start, wall clock (proc_start_realtime()) */
	bool have_start;
	unsigned stale_seen;    /* checks that found such a file */

	struct pm_entry *v;
	size_t n, cap;
	uint64_t seq;
	struct name_chunk *names;

	/* What was parsed: (dev, ino), bytes consumed up to the last full line. */
	dev_t dev;
	ino_t ino;
	off_t parsed;
	off_t size;
	struct timespec mtime;
	bool loaded;
	uint64_t last_check;
	bool checked_once;

	uint64_t held;          /* bytes of names and entries allocated, ever */
	uint64_t last_rewrite;  /* when a rewritten file was last parsed */
	uint64_t parse_ns;      /* how long that parse took */
	unsigned rewrites, deferred;
	bool capped;            /* held reached PERFMAP_MAX_TOTAL: no more reading */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The last NSpid and the real/effective uids of pid from /proc/PID/status. */
static void read_status(struct perfmap *pm, pid_t *nspid)
{
	char fname[64], line[256];
	FILE *f;

	*nspid = pm->pid;
	snprintf(fname, sizeof(fname), "/proc/%d/status", (int)pm->pid);
	f = fopen(fname, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6) == 0) {
			char *p = line + 6, *end;
			long v;

			for (;;) {
				errno = 0;
				v = strtol(p, &end, 10);
				if (end == p || errno)
					break;
				if (v > 0)
					*nspid = (pid_t)v;
				p = end;
			}
		} else if (strncmp(line, "Uid:", 4) == 0) {
			unsigned long r, e;

			if (sscanf(line + 4, "%lu %lu", &r, &e) == 2) {
				pm->uid_real = (uid_t)r;
				pm->uid_eff = (uid_t)e;
				pm->have_uids = true;
			}
		}
	}
	fclose(f);
}

struct perfmap *perfmap_new(pid_t pid, bool host_paths)
{
	struct perfmap *pm = calloc(1, sizeof(*pm));
	pid_t nspid;

	if (!pm)
		return NULL;
	pm->pid = pid;
	pm->host_paths = host_paths;
	read_status(pm, &nspid);
	pm->have_start = proc_start_realtime(pid, &pm->started) == 0;
	snprintf(pm->path, sizeof(pm->path), "/proc/%d/root/tmp/perf-%d.map", (int)pid,
		 (int)nspid);
	snprintf(pm->host_path, sizeof(pm->host_path), "/tmp/perf-%d.map", (int)pid);
	return pm;
}

void perfmap_free(struct perfmap *pm)
{
	struct name_chunk *c, *next;

	if (!pm)
		return;
	for (c = pm->names; c; c = next) {
		next = c->next;
		free(c);
	}
	free(pm->v);
	free(pm);
}

size_t perfmap_count(const struct perfmap *pm)
{
	return pm ? pm->n : 0;
}

const char *perfmap_path(const struct perfmap *pm)
{
	return pm->path;
}

static bool is_hex(int c)
{
	return isxdigit((unsigned char)c) != 0;
}

/* A hex number with an optional 0x; *p moves past it. */
static int parse_hex(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int digits = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && is_hex(s[2]))
		s += 2;
	for (; is_hex(*s); s++, digits++) {
		int d = isdigit((unsigned char)*s) ? *s - '0' : (tolower((unsigned char)*s) - 'a' + 10);

		if (digits >= 16)
			return -EINVAL;
		v = (v << 4) | (uint64_t)d;
	}
	if (!digits)
		return -EINVAL;
	*p = s;
	*out = v;
	return 0;
}

int perfmap_parse_line(const char *line, uint64_t *start, uint64_t *size,
		       const char **name, size_t *namelen)
{
	const char *p = line, *end;

	if (parse_hex(&p, start) || *p != ' ')
		return -EINVAL;
	while (*p == ' ')
		p++;
	if (parse_hex(&p, size) || *p != ' ')
		return -EINVAL;
	while (*p == ' ')
		p++;
	end = p + strcspn(p, "\r\n");
	if (end == p || *size == 0 || *start + *size < *start)
		return -EINVAL;
	*name = p;
	*namelen = (size_t)(end - p);
	return 0;
}

static const char *name_copy(struct perfmap *pm, const char *s, size_t len)
{
	struct name_chunk *c = pm->names;
	char *out;

	if (!c || c->cap - c->used < len + 1) {
		size_t cap = len + 1 > NAME_CHUNK ? len + 1 : NAME_CHUNK;

		if (pm->held + cap > PERFMAP_MAX_TOTAL) {
			pm->capped = true;
			return NULL;
		}
		pm->held += sizeof(*c) + cap;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->cap = cap;
		c->used = 0;
		c->next = pm->names;
		pm->names = c;
	}
	out = c->data + c->used;
	memcpy(out, s, len);
	out[len] = '\0';
	c->used += len + 1;
	return out;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct pm_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Parse the complete lines of buf[0..len); returns bytes consumed. */
static size_t parse_buf(struct perfmap *pm, const char *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		const char *nl = memchr(buf + off, '\n', len - off);
		char line[MAX_LINE + 1];
		size_t ll, namelen;
		uint64_t start, size;
		const char *name;

		if (!nl)
			break; /* a partial line: the writer is still at it */
		ll = (size_t)(nl - (buf + off));
		if (ll <= MAX_LINE) {
			memcpy(line, buf + off, ll);
			line[ll] = '\0';
			if (perfmap_parse_line(line, &start, &size, &name, &namelen) == 0) {
				if (pm->n == pm->cap) {
					size_t ncap = pm->cap ? pm->cap * 2 : 256;
					struct pm_entry *nv;

					if (pm->held + (ncap - pm->cap) * sizeof(*nv) > PERFMAP_MAX_TOTAL) {
						pm->capped = true;
						break;
					}
					nv = realloc(pm->v, ncap * sizeof(*nv));
					if (!nv)
						break;
					pm->held += (ncap - pm->cap) * sizeof(*nv);
					pm->v = nv;
					pm->cap = ncap;
				}
				name = name_copy(pm, name, namelen);
				if (!name)
					break;
				pm->v[pm->n++] = (struct pm_entry){ start, start + size, pm->seq++, name };
			}
		}
		off = (size_t)(nl - buf) + 1;
	}
	return off;
}

/* Whether the file's owner may name code in the target. */
static bool owner_ok(const struct perfmap *pm, uid_t uid)
{
	return uid == 0 || uid == geteuid() ||
	       (pm->have_uids && (uid == pm->uid_real || uid == pm->uid_eff));
}

static int open_map(const struct perfmap *pm)
{
	int fd = open(pm->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0 && (errno == EACCES || errno == EPERM) && pm->host_paths)
		fd = open(pm->host_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	return fd;
}

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000LL + t->tv_nsec;
}

/* Whether a file last written at mtime is older than the process (see the top). */
static bool predates(const struct perfmap *pm, const struct timespec *mtime)
{
	return pm->have_start && ts_ns(mtime) < ts_ns(&pm->started) - STALE_SLACK_NS;
}

/* Re-read the file if it changed since the last look. */
static void refresh(struct perfmap *pm)
{
	struct stat st;
	bool append, rewrite = false;
	size_t before = pm->n, want, got = 0;
	char *buf;
	int fd;

	if (pm->capped)
		return;
	fd = open_map(pm);
	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !owner_ok(pm, st.st_uid))
		goto out;
	if (predates(pm, &st.st_mtim)) {
		pm->stale_seen++;
		goto out; /* names read from an earlier file of the process stay */
	}
	if (pm->loaded && st.st_dev == pm->dev && st.st_ino == pm->ino &&
	    st.st_size == pm->size && st.st_mtim.tv_sec == pm->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == pm->mtime.tv_nsec)
		goto out; /* unchanged */
	/*
	 * An append grows the file. The same inode at the same size with a new
	 * mtime was rewritten: in place, or replaced by a new file that got the
	 * inode number just freed (ext4 hands it straight back to a
	 * write-temp-and-rename loop, alternating two numbers).
	 */
	append = pm->loaded && st.st_dev == pm->dev && st.st_ino == pm->ino &&
		 st.st_size > pm->size;
	if (!append && pm->loaded) {
		uint64_t now = mono_ns();

		/*
		 * Keep the old names a while: a churning file costs one parse a
		 * second, and never more than a fifth of the time (slow parses).
		 */
		if (now - pm->last_rewrite < REWRITE_INTERVAL_NS ||
		    now - pm->last_rewrite < 5 * pm->parse_ns) {
			pm->deferred++;
			goto out;
		}
		pm->last_rewrite = now;
		pm->rewrites++;
		rewrite = true;
	}
	if (!append) {
		pm->n = 0; /* names stay allocated: frames may still point at them */
		pm->parsed = 0;
		before = 0;
	}
	pm->dev = st.st_dev;
	pm->ino = st.st_ino;
	pm->size = st.st_size;
	pm->mtime = st.st_mtim;
	pm->loaded = true;
	if (st.st_size <= pm->parsed || pm->parsed >= (off_t)PERFMAP_MAX_BYTES)
		goto out;
	want = (size_t)(st.st_size - pm->parsed);
	if (want > PERFMAP_MAX_BYTES - (size_t)pm->parsed)
		want = PERFMAP_MAX_BYTES - (size_t)pm->parsed;
	buf = malloc(want);
	if (!buf)
		goto out;
	while (got < want) {
		ssize_t r = pread(fd, buf + got, want - got, pm->parsed + (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	pm->parsed += (off_t)parse_buf(pm, buf, got);
	free(buf);
	if (pm->n > before)
		qsort(pm->v, pm->n, sizeof(*pm->v), entry_cmp);
	if (rewrite)
		pm->parse_ns = mono_ns() - pm->last_rewrite;
out:
	close(fd);
}

static const struct pm_entry *find(const struct perfmap *pm, uint64_t addr)
{
	const struct pm_entry *best = NULL;
	size_t lo = 0, hi = pm->n, i, k;

	/* The first entry starting above addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo, k = 0; i > 0 && k < OVERLAP_SCAN; i--, k++) {
		const struct pm_entry *e = &pm->v[i - 1];

		if (addr < e->end && (!best || e->seq > best->seq))
			best = e;
	}
	return best;
}

const char *perfmap_lookup(struct perfmap *pm, uint64_t addr, uint64_t *off)
{
	const struct pm_entry *e;
	uint64_t now;

	if (!pm)
		return NULL;
	now = mono_ns();
	if (!pm->checked_once || now - pm->last_check >= CHECK_INTERVAL_NS) {
		pm->checked_once = true;
		pm->last_check = now;
		refresh(pm);
	}
	e = find(pm, addr);
	if (!e && now - pm->last_check >= MISS_INTERVAL_NS) {
		pm->last_check = now;
		refresh(pm);
		e = find(pm, addr);
	}
	if (!e)
		return NULL;
	if (off)
		*off = addr - e->start;
	return e->name;
}

const char *perfmap_note(const struct perfmap *pm, char *buf, size_t len)
{
	if (pm && pm->stale_seen && !pm->loaded) {
		snprintf(buf, len, "perf map %s: not read, last written before PID %d started "
			 "(left by an earlier process with the same pid; delete it)",
			 pm->host_paths ? pm->host_path : pm->path,
			 (int)pm->pid);
		return buf;
	}
	if (!pm || (!pm->capped && !pm->deferred))
		return NULL;
	snprintf(buf, len, "perf map %s: rewritten, parsed again %u times (at most once a "
		 "second; %u re-reads put off)%s", pm->path, pm->rewrites, pm->deferred,
		 pm->capped ? "; its names reached the 512 MiB cap: not read any more" : "");
	return buf;
}
