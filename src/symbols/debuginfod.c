/*
 * debuginfod.c - files by build-id from debuginfod servers, off the
 * sampling path (see debuginfod.h).
 *
 * libdebuginfod does the HTTP, the cache and the timeouts; this file adds
 * what a profiler needs around it: a queue served by one thread (a
 * libdebuginfod client is not shared between threads, and the session's
 * own thread must never block on a socket), verification of what comes
 * back, and a bounded end: the progress callback cancels a transfer when
 * the fetcher is told to stop, and once the servers fail to answer the
 * rest of the queue is not asked for.
 *
 * The worker thread touches nothing but the fetcher: the modules and
 * DWARF readers that use a result are updated by the session's thread
 * when it takes the result (dfd_take).
 */
#include "pmutop/symbols/debuginfod.h"

#include <elfutils/debuginfod.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pmutop/target/module.h"
#include "pmutop/symbols/worker.h"

#define MAX_BID_HEX 128

enum item_state { ITEM_QUEUED, ITEM_BUSY, ITEM_DONE, ITEM_FAILED };

struct dfd_item {
	enum dfd_kind kind;
	enum item_state state;
	char bid[MAX_BID_HEX + 1];
	int fd;                  /* ITEM_DONE: the verified file */
	char *path;              /* ITEM_DONE: where it is in the client's cache */
};

struct dfd_fetcher {
	pthread_mutex_t mu;
	pthread_cond_t cv;       /* broadcast whenever an item is answered */
	struct worker w;         /* the thread (worker.h) */
	bool cancel;             /* read by the progress callback (atomically) */
	int down;                /* -errno once the servers did not answer: ask no more */
	struct dfd_item *items;
	size_t n, cap;
	unsigned fetched, rejected, failed, skipped;
	char reject_note[512];   /* the first rejection, for dfd_wait */
	char down_note[256];
	bool notes_printed;
};

bool debuginfod_enabled(void)
{
	const char *u = getenv("DEBUGINFOD_URLS");

	return u && u[strspn(u, " \t\n")] != '\0';
}

static const char *kind_name(enum dfd_kind kind)
{
	return kind == DFD_EXECUTABLE ? "executable" : "debuginfo";
}

static bool valid_bid(const char *bid)
{
	size_t n = bid ? strlen(bid) : 0;

	return n >= 2 && n <= MAX_BID_HEX && n % 2 == 0 &&
	       strspn(bid, "0123456789abcdef") == n;
}

/* Whether an ELF file has an executable PT_LOAD with bytes in the file. */
static bool has_code(Elf *elf)
{
	size_t n, i;

	if (elf_getphdrnum(elf, &n) != 0)
		return false;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X) && ph.p_filesz > 0)
			return true;
	}
	return false;
}

/*
 * Why the file at fd is not build-id bid's file of this kind, or NULL when
 * it is: an ELF file with a readable header, the same GNU build-id note,
 * and code when an executable was asked for.
 */
static const char *verify(int fd, const char *bid, enum dfd_kind kind, char *buf, size_t len)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const char *why = NULL;
	const void *bits;
	GElf_Ehdr eh;
	ssize_t n;

	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		why = "not an ELF file";
	} else if (!gelf_getehdr(elf, &eh)) {
		why = "a corrupt ELF header";
	} else if ((n = dwelf_elf_gnu_build_id(elf, &bits)) <= 0 || n > MAX_BID_HEX / 2) {
		why = "no build-id note";
	} else {
		char got[MAX_BID_HEX + 1];

		module_hex_encode(got, bits, (size_t)n);
		if (strcmp(got, bid) != 0) {
			snprintf(buf, len, "build-id %s, not the one asked for", got);
			why = buf;
		} else if (kind == DFD_EXECUTABLE && !has_code(elf)) {
			why = "no code (a debug file, not the executable)";
		}
	}
	if (elf)
		elf_end(elf);
	return why;
}

static int progress_cb(debuginfod_client *c, long a, long b)
{
	struct dfd_fetcher *f = debuginfod_get_user_data(c);

	(void)a, (void)b;
	return f && __atomic_load_n(&f->cancel, __ATOMIC_RELAXED) ? 1 : 0;
}

/*
 * Fetch and verify one file with client c: the fd, or -errno; a rejected
 * file is -EBADMSG, removed from the cache (so that nothing else trusts
 * it), and described in why.
 */
static int fetch_verified(debuginfod_client *c, enum dfd_kind kind, const char *bid,
			  char **path, char *why, size_t whylen)
{
	const unsigned char *id = (const unsigned char *)bid;
	char *p = NULL, buf[200];
	const char *bad, *url;
	int fd;

	*path = NULL;
	fd = kind == DFD_EXECUTABLE ? debuginfod_find_executable(c, id, 0, &p)
				    : debuginfod_find_debuginfo(c, id, 0, &p);
	if (fd < 0) {
		free(p);
		snprintf(why, whylen, "%s", strerror(-fd));
		return fd;
	}
	bad = verify(fd, bid, kind, buf, sizeof(buf));
	if (bad) {
		url = debuginfod_get_url(c);
		if (url && *url)
			snprintf(why, whylen, "%.250s: %s: ignored", url, bad);
		else
			snprintf(why, whylen, "the %s for build-id %s: %s: ignored",
				 kind_name(kind), bid, bad);
		close(fd);
		if (p)
			unlink(p);
		free(p);
		return -EBADMSG;
	}
	*path = p;
	return fd;
}

/*
 * The build-id (hex, into out) of the dwz supplement a debug file refers
 * to in .gnu_debugaltlink (a file name, NUL, the build-id bytes); false
 * when it has none.
 */
static bool altlink_bid(int fd, char *out)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0) {
		if (elf)
			elf_end(elf);
		return false;
	}
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *name, *nul;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".gnu_debugaltlink") || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		nul = memchr(d->d_buf, '\0', d->d_size);
		n = nul ? d->d_size - (size_t)(nul + 1 - (const char *)d->d_buf) : 0;
		if (n >= 1 && n <= MAX_BID_HEX / 2) {
			module_hex_encode(out, (const unsigned char *)nul + 1, n);
			found = true;
		}
	}
	elf_end(elf);
	return found;
}

/*
 * A fetched debug file compressed by dwz needs its supplement, which
 * libdw would fetch itself - on the session's thread, when it reads the
 * DWARF. Fetch it here first, into the client's cache, where libdw then
 * finds it without the network (a supplement that is not on the server is
 * remembered as such by the cache too). Returns 0, or the failure that
 * makes the debug file unusable here (the servers stopped answering, or
 * sent a wrong file), with why filled.
 */
static int fetch_supplement(debuginfod_client *c, int fd, char *why, size_t whylen)
{
	char alt[MAX_BID_HEX + 1], *path = NULL;
	int afd;

	if (!altlink_bid(fd, alt))
		return 0;
	afd = fetch_verified(c, DFD_DEBUGINFO, alt, &path, why, whylen);
	free(path);
	if (afd >= 0)
		close(afd);
	return afd == -ENOENT ? 0 : afd < 0 ? afd : 0;
}

/* A failure that says the servers are not answering at all. */
static bool server_down(int rc)
{
	return rc == -ETIME || rc == -ETIMEDOUT || rc == -ECONNREFUSED ||
	       rc == -EHOSTUNREACH || rc == -ENETUNREACH || rc == -ECONNRESET;
}

static struct dfd_item *find_item(struct dfd_fetcher *f, enum dfd_kind kind, const char *bid)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->items[i].kind == kind && !strcmp(f->items[i].bid, bid))
			return &f->items[i];
	return NULL;
}

static size_t pending(const struct dfd_fetcher *f)
{
	size_t k = 0;

	for (size_t i = 0; i < f->n; i++)
		k += f->items[i].state == ITEM_QUEUED || f->items[i].state == ITEM_BUSY;
	return k;
}

static void *worker(void *arg)
{
	struct dfd_fetcher *f = arg;
	debuginfod_client *c;
	char why[512];

	worker_lower_priority();
	c = debuginfod_begin();

	if (c) {
		debuginfod_set_user_data(c, f);
		debuginfod_set_progressfn(c, progress_cb);
	}
	pthread_mutex_lock(&f->mu);
	for (;;) {
		size_t i;
		enum dfd_kind kind;
		char bid[MAX_BID_HEX + 1], *path = NULL;
		int rc;

		for (i = 0; i < f->n && f->items[i].state != ITEM_QUEUED; i++)
			;
		if (i == f->n)
			break;
		if (!c || f->down || __atomic_load_n(&f->cancel, __ATOMIC_RELAXED)) {
			f->items[i].state = ITEM_FAILED;
			f->skipped++;
			pthread_cond_broadcast(&f->cv);
			continue;
		}
		f->items[i].state = ITEM_BUSY;
		kind = f->items[i].kind;
		memcpy(bid, f->items[i].bid, sizeof(bid));
		pthread_mutex_unlock(&f->mu);
		rc = fetch_verified(c, kind, bid, &path, why, sizeof(why));
		if (rc >= 0 && kind == DFD_DEBUGINFO) {
			int alt = fetch_supplement(c, rc, why, sizeof(why));

			if (alt < 0) {
				close(rc);
				free(path);
				path = NULL;
				rc = alt;
			}
		}
		pthread_mutex_lock(&f->mu);
		/* items may have moved (dfd_request grows the array): by index. */
		if (rc >= 0) {
			f->items[i].state = ITEM_DONE;
			f->items[i].fd = rc;
			f->items[i].path = path;
			f->fetched++;
		} else {
			f->items[i].state = ITEM_FAILED;
			if (rc == -EBADMSG) {
				f->rejected++;
				if (!f->reject_note[0])
					snprintf(f->reject_note, sizeof(f->reject_note), "%s", why);
			} else {
				f->failed++;
				if (server_down(rc) && !f->down) {
					const char *u = getenv("DEBUGINFOD_URLS");

					f->down = rc;
					snprintf(f->down_note, sizeof(f->down_note),
						 "no answer from %.150s (%.80s)", u ? u : "", why);
				}
			}
		}
		pthread_cond_broadcast(&f->cv);
	}
	f->w.running = false;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	if (c)
		debuginfod_end(c);
	return NULL;
}

struct dfd_fetcher *dfd_fetcher_new(void)
{
	struct dfd_fetcher *f;

	if (!debuginfod_enabled())
		return NULL;
	elf_version(EV_CURRENT);
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	return f;
}

/* Start the worker (f->mu held). */
static int start_worker(struct dfd_fetcher *f)
{
	return worker_start(&f->w, &f->mu, worker, f);
}

int dfd_request(struct dfd_fetcher *f, enum dfd_kind kind, const char *bid)
{
	struct dfd_item *it;
	int rc;

	if (!f || !valid_bid(bid))
		return -EINVAL;
	pthread_mutex_lock(&f->mu);
	if (find_item(f, kind, bid)) {
		pthread_mutex_unlock(&f->mu);
		return 0;
	}
	if (f->n == f->cap) {
		size_t ncap = f->cap ? f->cap * 2 : 16;
		struct dfd_item *v = realloc(f->items, ncap * sizeof(*v));

		if (!v) {
			pthread_mutex_unlock(&f->mu);
			return -ENOMEM;
		}
		f->items = v;
		f->cap = ncap;
	}
	it = &f->items[f->n++];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	it->state = ITEM_QUEUED;
	it->fd = -1;
	memcpy(it->bid, bid, strlen(bid) + 1);
	rc = start_worker(f);
	if (rc) {
		it = find_item(f, kind, bid);
		it->state = ITEM_FAILED;
		f->failed++;
	}
	pthread_mutex_unlock(&f->mu);
	return rc;
}

int dfd_take(struct dfd_fetcher *f, enum dfd_kind kind, const char *bid, bool block,
	     char **path)
{
	struct dfd_item *it;
	int rc;

	if (path)
		*path = NULL;
	if (!f || !bid)
		return -ENOENT;
	pthread_mutex_lock(&f->mu);
	for (;;) {
		it = find_item(f, kind, bid);
		if (!it || (it->state != ITEM_QUEUED && it->state != ITEM_BUSY))
			break;
		if (!block) {
			pthread_mutex_unlock(&f->mu);
			return -EINPROGRESS;
		}
		pthread_cond_wait(&f->cv, &f->mu);
	}
	if (!it || it->state != ITEM_DONE) {
		rc = -ENOENT;
	} else {
		rc = fcntl(it->fd, F_DUPFD_CLOEXEC, 0);
		if (rc < 0)
			rc = -errno;
		else if (path && it->path && !(*path = strdup(it->path))) {
			close(rc);
			rc = -ENOMEM;
		}
	}
	pthread_mutex_unlock(&f->mu);
	return rc;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int dfd_wait(struct dfd_fetcher *f, FILE *progress, unsigned max_ms, bool (*stop)(void *arg),
	     void *arg)
{
	uint64_t start = mono_ms();
	bool said = false;
	int rc = 0;
	size_t k;

	if (!f)
		return 0;
	pthread_mutex_lock(&f->mu);
	while ((k = pending(f)) > 0) {

		if (rc == 0 && ((stop && stop(arg)) || (max_ms && mono_ms() - start >= max_ms))) {
			/* The transfer in flight ends at its next progress call. */
			__atomic_store_n(&f->cancel, true, __ATOMIC_RELAXED);
			rc = stop && stop(arg) ? -EINTR : -ETIMEDOUT;
		}
		if (!said && progress && mono_ms() - start >= 500) {
			fprintf(progress, "pmutop: debuginfod: fetching %zu file%s... "
				"(Ctrl-C: go on without %s)\n", k, k == 1 ? "" : "s",
				k == 1 ? "it" : "them");
			fflush(progress);
			said = true;
		}
		worker_timedwait(&f->cv, &f->mu, 100);
	}
	if (progress && !f->notes_printed) {
		if (f->reject_note[0])
			fprintf(progress, "pmutop: debuginfod: %s%s\n", f->reject_note,
				f->rejected > 1 ? " (and more: names stay addresses there)"
						: " (names stay addresses there)");
		if (f->down_note[0])
			fprintf(progress, "pmutop: debuginfod: %s: %u file%s not fetched\n",
				f->down_note, f->failed + f->skipped,
				f->failed + f->skipped == 1 ? "" : "s");
		f->notes_printed = f->reject_note[0] || f->down_note[0];
	}
	pthread_mutex_unlock(&f->mu);
	return rc;
}

void dfd_counts(const struct dfd_fetcher *f, unsigned *fetched, unsigned *rejected,
		unsigned *failed)
{
	struct dfd_fetcher *m = (struct dfd_fetcher *)f; /* the lock only */

	*fetched = *rejected = *failed = 0;
	if (!f)
		return;
	pthread_mutex_lock(&m->mu);
	*fetched = f->fetched;
	*rejected = f->rejected;
	*failed = f->failed + f->skipped;
	pthread_mutex_unlock(&m->mu);
}

void dfd_fetcher_free(struct dfd_fetcher *f)
{
	if (!f)
		return;
	__atomic_store_n(&f->cancel, true, __ATOMIC_RELAXED);
	pthread_mutex_lock(&f->mu);
	while (f->w.running)
		pthread_cond_wait(&f->cv, &f->mu);
	pthread_mutex_unlock(&f->mu);
	if (f->w.joinable)
		pthread_join(f->w.thread, NULL);
	for (size_t i = 0; i < f->n; i++) {
		if (f->items[i].fd >= 0)
			close(f->items[i].fd);
		free(f->items[i].path);
	}
	free(f->items);
	pthread_cond_destroy(&f->cv);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

int dfd_fetch_now(enum dfd_kind kind, const char *bid, char **pathp, char *why, size_t whylen)
{
	char buf[512], *path = NULL;
	debuginfod_client *c;
	int fd;

	if (pathp)
		*pathp = NULL;
	if (why && whylen)
		why[0] = '\0';
	if (!debuginfod_enabled())
		return -ENOENT;
	if (!valid_bid(bid))
		return -EINVAL;
	elf_version(EV_CURRENT);
	c = debuginfod_begin();
	if (!c)
		return -ENOMEM;
	fd = fetch_verified(c, kind, bid, &path, buf, sizeof(buf));
	debuginfod_end(c);
	if (pathp)
		*pathp = path;
	else
		free(path);
	if (fd < 0 && why && whylen)
		snprintf(why, whylen, "%s", buf);
	return fd;
}
