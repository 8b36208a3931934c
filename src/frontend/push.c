/*
 * push.c - windows into ClickHouse off the sampling thread, in order,
 * with a bounded memory queue and a spool directory (see push.h).
 *
 * Threads: the sampling thread encodes a window (ch_rows_encode) and
 * appends it to the queue under mu; one worker (symbols/worker.c starts
 * it, below the sampling thread's priority) sends, spills to the spool and
 * backs off. The queue is ordered by a sequence number: the worker always
 * sends the smallest one, whether it waits in memory or in the spool (a
 * spool file is named by it, so a later run sends the leftovers of an
 * earlier one first). Disk and network are touched outside mu, so the
 * sampling thread never waits for either.
 *
 * A window is sent as three INSERTs - mappings, stacks, samples - so a
 * reader never sees samples whose stack is missing; a failure anywhere
 * sends the whole window again (the same rows: deduplicated).
 */
#include "pmutop/frontend/push.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pmutop/frontend/cli.h"
#include "pmutop/frontend/clickhouse.h"
#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/ch_rows.h"
#include "pmutop/symbols/worker.h"

#define INSERT_TIMEOUT_S 30.0
#define MAX_5XX 5              /* server errors in a row before a window is given up */
#define BACKOFF_MIN_MS 250
#define BACKOFF_MAX_MS 4000
#define SPOOL_MAGIC "PMUTOPCH1"

struct item {
	struct item *next;
	uint64_t seq;
	struct ch_batch b;
	unsigned fails5xx;
	bool waited;          /* counted in queued */
};

struct push {
	struct ch_url url;
	char where[600];
	char host[256];
	const char *keys[CLI_MAX_LABELS], *values[CLI_MAX_LABELS];
	char labelbuf[CLI_MAX_LABELS][512];
	struct ch_labels labels;
	struct ch_seen *seen;         /* sampling thread only */
	uint64_t run_id;
	unsigned bound;
	int spool_fd;                 /* -1: no --spool */
	char spool[4096];

	pthread_mutex_t mu;
	pthread_cond_t cv;            /* work arrived, or stop */
	pthread_cond_t idle_cv;       /* the worker made progress or ended */
	struct worker w;
	struct item *head, *tail;     /* memory queue, by seq */
	size_t nmem;
	uint64_t *spooled_seq;        /* spool files, ascending */
	size_t nspool, capspool;
	uint64_t next_seq;
	bool need_schema, stopping, abort, seen_stale, spool_failing, finish_failed;
	bool schema_warned;
	/* counters (under mu) */
	uint64_t pushed, queued, spooled, dropped, retries, resent, rows, bytes, from_spool;
	char last_err[1024];
};

/* ---- spool: one file per window, SEQ.win, atomically written ---- */

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int spool_write(struct push *p, const struct item *it, char *err, size_t errlen)
{
	char tmp[64], name[64], hdr[256];
	int fd, rc, n;

	snprintf(tmp, sizeof(tmp), ".tmp-%020" PRIu64, it->seq);
	snprintf(name, sizeof(name), "%020" PRIu64 ".win", it->seq);
	fd = openat(p->spool_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot write into the spool %.400s: %s", p->spool, strerror(-rc));
		return rc;
	}
	n = snprintf(hdr, sizeof(hdr), SPOOL_MAGIC " %" PRIu64 " %" PRIu64 " %zu %zu %zu\n",
		     it->b.window_id, it->b.start_ns, it->b.mappings.len, it->b.stacks.len,
		     it->b.samples.len);
	rc = write_all(fd, hdr, (size_t)n);
	if (!rc && it->b.mappings.len)
		rc = write_all(fd, it->b.mappings.p, it->b.mappings.len);
	if (!rc && it->b.stacks.len)
		rc = write_all(fd, it->b.stacks.p, it->b.stacks.len);
	if (!rc && it->b.samples.len)
		rc = write_all(fd, it->b.samples.p, it->b.samples.len);
	if (!rc && fsync(fd))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && renameat(p->spool_fd, tmp, p->spool_fd, name))
		rc = -errno;
	if (rc) {
		unlinkat(p->spool_fd, tmp, 0);
		snprintf(err, errlen, "cannot write a window into the spool %.400s: %s", p->spool,
			 strerror(-rc));
		return rc;
	}
	fsync(p->spool_fd);
	return 0;
}

static int read_body(FILE *f, size_t n, struct ch_buf *b)
{
	char chunk[65536];

	while (n) {
		size_t k = fread(chunk, 1, n < sizeof(chunk) ? n : sizeof(chunk), f);

		if (!k || ch_buf_add(b, chunk, k))
			return -EIO;
		n -= k;
	}
	return 0;
}

static int spool_read(struct push *p, uint64_t seq, struct ch_batch *b, char *err, size_t errlen)
{
	char name[64];
	size_t lm, ls, lsa;
	struct stat st;
	FILE *f;
	int fd, rc = 0;

	snprintf(name, sizeof(name), "%020" PRIu64 ".win", seq);
	*b = (struct ch_batch){ 0 };
	fd = openat(p->spool_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		snprintf(err, errlen, "spool file %.400s/%s: %s", p->spool, name,
			 fd < 0 ? strerror(errno) : "not a regular file of ours");
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	f = fdopen(fd, "rb");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	if (fscanf(f, SPOOL_MAGIC " %" SCNu64 " %" SCNu64 " %zu %zu %zu", &b->window_id,
		   &b->start_ns, &lm, &ls, &lsa) != 5 || fgetc(f) != '\n' ||
	    (size_t)st.st_size < lm + ls + lsa ||
	    read_body(f, lm, &b->mappings) || read_body(f, ls, &b->stacks) ||
	    read_body(f, lsa, &b->samples)) {
		snprintf(err, errlen, "spool file %.400s/%s is damaged", p->spool, name);
		ch_batch_free(b);
		rc = -EINVAL;
	}
	fclose(f);
	return rc;
}

static void spool_forget(struct push *p, uint64_t seq)
{
	for (size_t i = 0; i < p->nspool; i++)
		if (p->spooled_seq[i] == seq) {
			memmove(p->spooled_seq + i, p->spooled_seq + i + 1,
				(p->nspool - i - 1) * sizeof(*p->spooled_seq));
			p->nspool--;
			return;
		}
}

static int spool_note(struct push *p, uint64_t seq)
{
	size_t i;

	if (p->nspool == p->capspool) {
		size_t cap = p->capspool ? 2 * p->capspool : 64;
		uint64_t *v = realloc(p->spooled_seq, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->spooled_seq = v;
		p->capspool = cap;
	}
	for (i = p->nspool; i > 0 && p->spooled_seq[i - 1] > seq; i--)
		p->spooled_seq[i] = p->spooled_seq[i - 1];
	p->spooled_seq[i] = seq;
	p->nspool++;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Open (create 0700 when missing) and check the spool; note the windows left in it. */
static int spool_open(struct push *p, const char *dir, char *err, size_t errlen)
{
	struct stat st;
	struct dirent *de;
	DIR *d;
	int dfd;

	snprintf(p->spool, sizeof(p->spool), "%s", dir);
	if (mkdir(dir, 0700) && errno != EEXIST) {
		snprintf(err, errlen, "cannot create the spool directory %s: %s", dir, strerror(errno));
		return -errno;
	}
	p->spool_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (p->spool_fd < 0) {
		snprintf(err, errlen, "cannot open the spool directory %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (fstat(p->spool_fd, &st) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(err, errlen, "refusing the spool directory %s: it must be a directory "
			 "owned by this user (uid %u) that no one else can write (mode 0700)", dir,
			 (unsigned)geteuid());
		return -EPERM;
	}
	dfd = dup(p->spool_fd);
	d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		snprintf(err, errlen, "cannot read the spool directory %s: %s", dir, strerror(errno));
		return -errno;
	}
	while ((de = readdir(d))) {
		char *end;
		uint64_t seq;

		if (!strncmp(de->d_name, ".tmp-", 5)) {
			unlinkat(p->spool_fd, de->d_name, 0); /* a write cut short: never renamed */
			continue;
		}
		errno = 0;
		seq = strtoull(de->d_name, &end, 10);
		if (errno || end == de->d_name || strcmp(end, ".win"))
			continue;
		if (spool_note(p, seq))
			break;
		if (seq >= p->next_seq)
			p->next_seq = seq + 1;
	}
	closedir(d);
	if (p->nspool) /* NULL with none: qsort must not get it (UBSan) */
		qsort(p->spooled_seq, p->nspool, sizeof(*p->spooled_seq), cmp_u64);
	return 0;
}

/* ---- sending ---- */

static bool should_abort(void *arg)
{
	struct push *p = arg;
	bool a;

	pthread_mutex_lock(&p->mu);
	a = p->abort;
	pthread_mutex_unlock(&p->mu);
	return a;
}

static enum ch_status create_schema(struct push *p, double timeout, char *err, size_t errlen)
{
	struct ch_buf ver = { 0 };
	enum ch_status st;
	int end = 0;

	st = ch_exec(&p->url, "SELECT version()", NULL, 0, timeout, should_abort, p, &ver, err,
		     errlen);
	if (st == CH_OK) {
		size_t i = 0;

		while (i < ver.len && ((ver.p[i] >= '0' && ver.p[i] <= '9') || ver.p[i] == '.'))
			i++;
		if (!i || i + 1 != ver.len || ver.p[i] != '\n') {
			for (size_t k = 0; k < ver.len; k++)
				if ((unsigned char)ver.p[k] < 0x20)
					ver.p[k] = ' ';
			snprintf(err, errlen, "%s did not answer as a ClickHouse server does (SELECT "
				 "version() gave \"%.40s\")", p->where, ver.p ? ver.p : "");
			st = CH_REJECTED;
		}
	}
	ch_buf_free(&ver);
	for (unsigned i = 0; st == CH_OK; i++) {
		char *sql = ch_rows_ddl(p->url.db, i, &end);

		if (!sql) {
			if (!end) {
				snprintf(err, errlen, "out of memory");
				st = CH_DOWN;
			}
			break;
		}
		st = ch_exec(&p->url, sql, NULL, 0, timeout, should_abort, p, NULL, err, errlen);
		free(sql);
	}
	return st;
}

static enum ch_status send_batch(struct push *p, const struct ch_batch *b, char *err, size_t errlen)
{
	static const char *const table[] = { CH_T_MAPPINGS, CH_T_STACKS, CH_T_SAMPLES };
	const struct ch_buf *body[] = { &b->mappings, &b->stacks, &b->samples };
	enum ch_status st = CH_OK;

	for (int i = 0; i < 3 && st == CH_OK; i++) {
		char sql[256];

		if (!body[i]->len)
			continue;
		snprintf(sql, sizeof(sql), "INSERT INTO %s.%s FORMAT JSONEachRow", p->url.db, table[i]);
		st = ch_exec(&p->url, sql, body[i]->p, body[i]->len, INSERT_TIMEOUT_S, should_abort,
			     p, NULL, err, errlen);
	}
	return st;
}

static void drop_item(struct item *it)
{
	ch_batch_free(&it->b);
	free(it);
}

/* Move memory windows beyond the bound, oldest first, into the spool (mu held; dropped here). */
static void spill(struct push *p)
{
	char err[768];

	while (p->spool_fd >= 0 && p->nmem > p->bound && p->head && !p->abort) {
		struct item *it = p->head;
		int rc;

		p->head = it->next;
		if (!p->head)
			p->tail = NULL;
		p->nmem--;
		pthread_mutex_unlock(&p->mu);
		rc = spool_write(p, it, err, sizeof(err));
		pthread_mutex_lock(&p->mu);
		if (rc == 0 && spool_note(p, it->seq) == 0) {
			p->spooled++;
			p->spool_failing = false;
			drop_item(it);
			continue;
		}
		/* Back at the head: it stays in memory (the producer drops new ones). */
		it->next = p->head;
		p->head = it;
		if (!p->tail)
			p->tail = it;
		p->nmem++;
		if (!p->spool_failing)
			snprintf(p->last_err, sizeof(p->last_err), "%s", err);
		p->spool_failing = true;
		break;
	}
}

static void *worker_main(void *arg)
{
	struct push *p = arg;
	unsigned backoff = BACKOFF_MIN_MS;
	char err[768];

	worker_lower_priority();
	pthread_mutex_lock(&p->mu);
	while (!p->abort) {
		struct item *it = NULL;
		struct ch_batch sb;
		const struct ch_batch *b;
		uint64_t seq;
		bool from_spool, attempted = false;
		enum ch_status st;

		spill(p);
		if (p->abort)
			break;
		from_spool = p->nspool && (!p->head || p->spooled_seq[0] < p->head->seq);
		if (!from_spool && !p->head)
			break;
		if (from_spool) {
			seq = p->spooled_seq[0];
		} else {
			it = p->head;
			p->head = it->next;
			if (!p->head)
				p->tail = NULL;
			p->nmem--;
			seq = it->seq;
		}
		pthread_mutex_unlock(&p->mu);

		st = CH_OK;
		if (p->need_schema) {
			st = create_schema(p, 10.0, err, sizeof(err));
			if (st == CH_OK) {
				pthread_mutex_lock(&p->mu);
				p->need_schema = false;
				pthread_mutex_unlock(&p->mu);
			}
		}
		b = it ? &it->b : NULL;
		if (from_spool && spool_read(p, seq, &sb, err, sizeof(err)) == 0)
			b = &sb;
		if (st == CH_OK && b) {
			attempted = true;
			st = send_batch(p, b, err, sizeof(err));
		}
		else if (st == CH_OK && !b)
			st = CH_REJECTED; /* a damaged spool file: dropped */

		pthread_mutex_lock(&p->mu);
		if (st == CH_ANSWERED_5XX && it && ++it->fails5xx >= MAX_5XX)
			st = CH_REJECTED;
		if (st == CH_OK || st == CH_REJECTED) {
			if (st == CH_OK) {
				p->pushed++;
				p->rows += b->rows;
				p->bytes += b->mappings.len + b->stacks.len + b->samples.len;
				p->from_spool += from_spool;
			} else {
				p->dropped++;
				p->seen_stale = true;
				snprintf(p->last_err, sizeof(p->last_err), "window dropped: %s", err);
			}
			if (from_spool) {
				{
					char name[64];
					snprintf(name, sizeof(name), "%020" PRIu64 ".win", seq);
					unlinkat(p->spool_fd, name, 0);
				}
				spool_forget(p, seq);
			}
			if (it)
				drop_item(it);
			backoff = BACKOFF_MIN_MS;
		} else {
			/* Not answered: back in its place, tried again after a pause. */
			p->retries++;
			if (attempted && st != CH_UNREACHABLE)
				p->resent++; /* its rows may have arrived: the same rows go again */
			snprintf(p->last_err, sizeof(p->last_err), "%s", err);
			if (it && !it->waited) {
				it->waited = true;
				p->queued++;
			}
			if (it) {
				it->next = p->head;
				p->head = it;
				if (!p->tail)
					p->tail = it;
				p->nmem++;
			}
			if (p->stopping)
				p->finish_failed = true;
			pthread_cond_broadcast(&p->idle_cv);
			spill(p);
			if (!p->abort && !p->stopping)
				worker_timedwait(&p->cv, &p->mu, backoff);
			if (p->stopping)
				worker_timedwait(&p->cv, &p->mu, 1);
			backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
			if (p->finish_failed) {
				if (from_spool)
					ch_batch_free(&sb);
				break;
			}
		}
		if (from_spool)
			ch_batch_free(&sb);
		pthread_cond_broadcast(&p->idle_cv);
	}
	p->w.running = false;
	pthread_cond_broadcast(&p->idle_cv);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* ---- the agent's side ---- */

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct push *push_new(const struct pmutop_opts *o, FILE *log, char *err, size_t errlen)
{
	struct push *p = calloc(1, sizeof(*p));
	uint64_t rnd = 0;
	enum ch_status st;

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->spool_fd = -1;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	pthread_cond_init(&p->idle_cv, NULL);
	if (ch_url_parse(o->push, &p->url, err, errlen))
		goto fail;
	if (p->url.query[0]) {
		snprintf(err, errlen, "--push takes no ?query in its URL (that is --load's)");
		goto fail;
	}
	ch_url_show(&p->url, p->where, sizeof(p->where));
	if (gethostname(p->host, sizeof(p->host)))
		snprintf(p->host, sizeof(p->host), "unknown");
	p->labels.host = p->host;
	for (size_t i = 0; i < o->nlabels; i++) {
		char *eq;

		snprintf(p->labelbuf[i], sizeof(p->labelbuf[i]), "%s", o->labels[i]);
		eq = strchr(p->labelbuf[i], '=');
		if (!eq)
			continue; /* cli.c checked */
		*eq = 0;
		if (!strcmp(p->labelbuf[i], "host")) {
			p->labels.host = eq + 1;
			continue;
		}
		p->keys[p->labels.n] = p->labelbuf[i];
		p->values[p->labels.n++] = eq + 1;
	}
	p->labels.keys = p->keys;
	p->labels.values = p->values;
	p->bound = o->push_queue ? o->push_queue : 16;
	p->seen = ch_seen_new();
	if (!p->seen) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (o->spool && spool_open(p, o->spool, err, errlen))
		goto fail;
	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
		rnd = now_ns(CLOCK_MONOTONIC);
	p->run_id = ch_hash(&rnd, sizeof(rnd), now_ns(CLOCK_REALTIME) ^ (uint64_t)getpid());
	st = create_schema(p, 5.0, err, errlen);
	if (st == CH_REJECTED || st == CH_ANSWERED_5XX) {
		size_t l = strlen(err);
		snprintf(err + l, errlen - l, " (--push %s)", p->where);
		goto fail;
	}
	if (st == CH_DOWN || st == CH_UNREACHABLE) {
		p->need_schema = true;
		if (log)
			fprintf(log, "pmutop: WARNING: %s; windows wait in memory%s until it answers\n",
				err, p->spool_fd >= 0 ? " and in the spool" : "");
	}
	if (p->nspool) {
		pthread_mutex_lock(&p->mu);
		if (log)
			fprintf(log, "pmutop: %zu windows left in the spool %.400s by an earlier run are "
				"sent first\n", p->nspool, p->spool);
		if (worker_start(&p->w, &p->mu, worker_main, p) && log)
			fprintf(log, "pmutop: cannot start the push thread\n");
		pthread_mutex_unlock(&p->mu);
	}
	return p;
fail:
	push_free(p);
	return NULL;
}

int push_window(struct push *p, const struct aggregate *a, FILE *log)
{
	struct item *it;
	bool stale, full;
	int rc;

	pthread_mutex_lock(&p->mu);
	stale = p->seen_stale;
	p->seen_stale = false;
	/* No room: in memory up to the bound, beyond it only while the spool takes them. */
	full = p->nmem >= p->bound && (p->spool_fd < 0 || p->spool_failing ||
				       p->nmem >= 4 * (size_t)p->bound);
	pthread_mutex_unlock(&p->mu);
	if (stale)
		ch_seen_clear(p->seen);
	if (full) {
		rc = -ENOSPC;
		goto drop;
	}
	it = calloc(1, sizeof(*it));
	if (!it) {
		rc = -ENOMEM;
		goto drop;
	}
	pthread_mutex_lock(&p->mu);
	it->seq = p->next_seq++;
	pthread_mutex_unlock(&p->mu);
	{
		uint64_t wid = ch_hash(&it->seq, sizeof(it->seq), p->run_id);

		rc = ch_rows_encode(a, wid ? wid : 1, &p->labels, p->seen, &it->b);
	}
	if (rc) {
		free(it);
		goto drop;
	}
	pthread_mutex_lock(&p->mu);
	if (p->head || p->nspool || p->need_schema) {
		it->waited = true;
		p->queued++; /* others wait before it: the server is slow or down */
	}
	if (p->tail)
		p->tail->next = it;
	else
		p->head = it;
	p->tail = it;
	p->nmem++;
	if (worker_start(&p->w, &p->mu, worker_main, p) && log)
		fprintf(log, "pmutop: cannot start the push thread; windows wait\n");
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return 0;
drop:
	/* Later windows must carry the stacks this one would have. */
	ch_seen_clear(p->seen);
	pthread_mutex_lock(&p->mu);
	p->dropped++;
	pthread_mutex_unlock(&p->mu);
	if (log)
		fprintf(log, "pmutop: window dropped, not pushed: %s\n", rc == -ENOSPC ?
			(p->spool_fd < 0 ? "the memory queue is full (--push-queue; give --spool DIR "
			 "to keep more on disk)" : "the memory queue is full and the spool takes no "
			 "more") : "out of memory");
	return rc;
}

int push_finish(struct push *p, double wait_s, int quiet, FILE *log)
{
	uint64_t deadline = now_ns(CLOCK_MONOTONIC) + (uint64_t)(wait_s * 1e9);
	char err[768] = "";
	size_t left_mem, left_spool;

	pthread_mutex_lock(&p->mu);
	p->stopping = true;
	if ((p->head || p->nspool) && !p->w.running)
		worker_start(&p->w, &p->mu, worker_main, p);
	pthread_cond_broadcast(&p->cv);
	while (p->w.running && !p->finish_failed && now_ns(CLOCK_MONOTONIC) < deadline)
		worker_timedwait(&p->idle_cv, &p->mu, 100);
	p->abort = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	if (p->w.joinable) {
		pthread_join(p->w.thread, NULL);
		p->w.joinable = false;
	}
	/* What is left: to the spool, else dropped. */
	while (p->head) {
		struct item *it = p->head;

		p->head = it->next;
		p->nmem--;
		if (p->spool_fd >= 0 && spool_write(p, it, err, sizeof(err)) == 0) {
			p->spooled++;
			spool_note(p, it->seq);
		} else {
			p->dropped++;
			if (err[0])
				snprintf(p->last_err, sizeof(p->last_err), "%s", err);
		}
		drop_item(it);
	}
	p->tail = NULL;
	left_mem = p->nmem;
	left_spool = p->nspool;
	if (!quiet || p->dropped)
		fprintf(log, "pmutop: push %s: %" PRIu64 " windows pushed (%" PRIu64 " rows, %" PRIu64
			" bytes; %" PRIu64 " from the spool), %" PRIu64 " queued, %" PRIu64
			" spooled, %" PRIu64 " dropped, %" PRIu64 " retries (%" PRIu64
			" sent again after an unknown outcome); %zu left in the spool\n",
			p->where, p->pushed, p->rows, p->bytes, p->from_spool, p->queued, p->spooled,
			p->dropped, p->retries, p->resent, left_spool);
	if (p->last_err[0] && (p->dropped || left_spool || !quiet))
		fprintf(log, "pmutop: push: last problem: %s\n", p->last_err);
	(void)left_mem;
	return p->dropped ? 1 : 0;
}

void push_free(struct push *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->abort = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	if (p->w.joinable)
		pthread_join(p->w.thread, NULL);
	while (p->head) {
		struct item *it = p->head;

		p->head = it->next;
		drop_item(it);
	}
	ch_seen_free(p->seen);
	free(p->spooled_seq);
	if (p->spool_fd >= 0)
		close(p->spool_fd);
	pthread_cond_destroy(&p->idle_cv);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
