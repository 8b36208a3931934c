/*
 * clickhouse.c - ClickHouse's HTTP interface through libcurl (see
 * clickhouse.h): the URL parser, and one POST per statement.
 *
 * libcurl rather than a socket of our own: redirects, proxies, chunked
 * answers, timeouts and HTTP authentication are its field. The statement
 * goes in the query string (?query=), the rows in the POST body (every
 * statement names its database), the user by HTTP basic authentication (what
 * 18.16 reads; never on the command line of anything, never logged).
 */
#include "pmutop/frontend/clickhouse.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "pmutop/profile/ch_rows.h"

#define CH_DEFAULT_PORT 8123
#define FORM "clickhouse://[USER[:PASS]@]HOST[:PORT]/DATABASE"

bool ch_url_is(const char *s)
{
	return s && !strncmp(s, "clickhouse://", 13);
}

/* %XX decoding into out; -EINVAL on a bad escape or too long. */
static int pct_decode(const char *s, size_t n, char *out, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '%') {
			char hex[3] = { 0 };

			if (i + 2 >= n)
				return -EINVAL;
			hex[0] = s[i + 1];
			hex[1] = s[i + 2];
			if (!isxdigit((unsigned char)hex[0]) || !isxdigit((unsigned char)hex[1]))
				return -EINVAL;
			c = (char)strtol(hex, NULL, 16);
			i += 2;
		}
		if (o + 1 >= len)
			return -EINVAL;
		out[o++] = c;
	}
	out[o] = 0;
	return 0;
}

int ch_url_parse(const char *url, struct ch_url *u, char *err, size_t errlen)
{
	const char *p, *at, *slash, *q, *hp, *colon;
	const char *env;

	*u = (struct ch_url){ .port = CH_DEFAULT_PORT };
	if (!ch_url_is(url)) {
		const char *sep = strstr(url, "://");
		snprintf(err, errlen, "unknown URL scheme \"%.*s\" (pmutop speaks " FORM ")",
			 sep ? (int)(sep - url) : 0, url);
		return -EINVAL;
	}
	p = url + 13;
	slash = strchr(p, '/');
	q = strchr(p, '?');
	if (q && (!slash || q < slash))
		slash = NULL;
	if (!slash || !slash[1] || slash[1] == '?') {
		snprintf(err, errlen, "no database in the ClickHouse URL (expected " FORM ")");
		return -EINVAL;
	}
	at = memchr(p, '@', (size_t)(slash - p));
	if (at) {
		const char *pc = memchr(p, ':', (size_t)(at - p));

		if (pct_decode(p, (size_t)((pc ? pc : at) - p), u->user, sizeof(u->user)) ||
		    (pc && pct_decode(pc + 1, (size_t)(at - pc - 1), u->pass, sizeof(u->pass)))) {
			snprintf(err, errlen, "bad user or password in the ClickHouse URL "
				 "(percent-encode special characters)");
			return -EINVAL;
		}
		hp = at + 1;
	} else {
		hp = p;
	}
	colon = memchr(hp, ':', (size_t)(slash - hp));
	if ((size_t)((colon ? colon : slash) - hp) >= sizeof(u->host) || (colon ? colon : slash) == hp) {
		snprintf(err, errlen, "no host in the ClickHouse URL (expected " FORM ")");
		return -EINVAL;
	}
	memcpy(u->host, hp, (size_t)((colon ? colon : slash) - hp));
	for (const char *c = u->host; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr(".-_[]", *c)) {
			snprintf(err, errlen, "bad host name in the ClickHouse URL (expected " FORM ")");
			return -EINVAL;
		}
	if (colon) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(colon + 1, &end, 10);
		if (errno || end != slash || end == colon + 1 || !v || v > 65535) {
			snprintf(err, errlen, "bad port in the ClickHouse URL (1-65535; default %d)",
				 CH_DEFAULT_PORT);
			return -EINVAL;
		}
		u->port = (unsigned)v;
	}
	{
		const char *db = slash + 1, *dend = strchr(db, '?');
		size_t n = dend ? (size_t)(dend - db) : strlen(db);

		if (n && db[n - 1] == '/')
			n--;
		if (!n || n >= sizeof(u->db)) {
			snprintf(err, errlen, "no database in the ClickHouse URL (expected " FORM ")");
			return -EINVAL;
		}
		for (size_t i = 0; i < n; i++)
			if (!isalnum((unsigned char)db[i]) && db[i] != '_') {
				snprintf(err, errlen, "bad database name \"%.*s\" in the ClickHouse URL "
					 "(letters, digits and _)", (int)n, db);
				return -EINVAL;
			}
		memcpy(u->db, db, n);
		if (dend) {
			if (strlen(dend + 1) >= sizeof(u->query)) {
				snprintf(err, errlen, "the ClickHouse URL's query is too long");
				return -EINVAL;
			}
			strcpy(u->query, dend + 1);
		}
	}
	if (!at && (env = getenv("PMUTOP_CLICKHOUSE_USER")) && *env) {
		snprintf(u->user, sizeof(u->user), "%s", env);
		if ((env = getenv("PMUTOP_CLICKHOUSE_PASSWORD")))
			snprintf(u->pass, sizeof(u->pass), "%s", env);
	}
	return 0;
}

void ch_url_show(const struct ch_url *u, char *out, size_t len)
{
	snprintf(out, len, "clickhouse://%s%s%s:%u/%s", u->user, u->user[0] ? "@" : "", u->host,
		 u->port, u->db);
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static CURLcode init_rc;

static void do_init(void)
{
	init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int ch_global_init(void)
{
	pthread_once(&init_once, do_init);
	return init_rc == CURLE_OK ? 0 : -EIO;
}

struct sink {
	struct ch_buf *resp;
	struct ch_buf err;   /* the first bytes, for the message */
	int oom;
};

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t len = size * n;

	if (s->err.len < 1024 && ch_buf_add(&s->err, p, len < 1024 ? len : 1024))
		s->oom = 1;
	if (s->resp && ch_buf_add(s->resp, p, len)) {
		s->oom = 1;
		return 0;
	}
	return len;
}

struct abort_ctx {
	bool (*abort)(void *arg);
	void *arg;
};

static int on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	struct abort_ctx *ac = arg;

	(void)a, (void)b, (void)c, (void)d;
	return ac->abort && ac->abort(ac->arg) ? 1 : 0;
}

enum ch_status ch_exec(const struct ch_url *u, const char *sql, const char *body, size_t len,
		       double timeout_s, bool (*abort)(void *arg), void *arg,
		       struct ch_buf *resp, char *err, size_t errlen)
{
	struct sink sk = { .resp = resp };
	struct abort_ctx ac = { abort, arg };
	char where[600], *url = NULL, *esc = NULL;
	struct ch_buf post = { 0 };
	enum ch_status st = CH_DOWN;
	long code = 0;
	CURLcode rc;
	CURL *c;

	ch_url_show(u, where, sizeof(where));
	if (ch_global_init() || !(c = curl_easy_init())) {
		snprintf(err, errlen, "%s: cannot start libcurl", where);
		return CH_DOWN;
	}
	/* With rows, the statement is the URL's; without, the POST body. */
	if (body) {
		esc = curl_easy_escape(c, sql, 0);
		if (!esc || asprintf(&url, "http://%s:%u/?query=%s", u->host, u->port, esc) < 0)
			url = NULL;
	} else if (asprintf(&url, "http://%s:%u/", u->host, u->port) < 0) {
		url = NULL;
	}
	if (!url) {
		snprintf(err, errlen, "%s: out of memory", where);
		goto out;
	}
	if (!body && ch_buf_add(&post, sql, strlen(sql))) {
		snprintf(err, errlen, "%s: out of memory", where);
		goto out;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : post.p);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? len : post.len));
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(timeout_s * 1000));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &sk);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, &ac);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
	if (u->user[0]) {
		curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(c, CURLOPT_USERNAME, u->user);
		curl_easy_setopt(c, CURLOPT_PASSWORD, u->pass);
	}
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		snprintf(err, errlen, "%s: %s", where, rc == CURLE_ABORTED_BY_CALLBACK ?
			 "cut short (stopping)" : rc == CURLE_UNSUPPORTED_PROTOCOL ||
			 rc == CURLE_WEIRD_SERVER_REPLY ? "the answer is not HTTP" :
			 curl_easy_strerror(rc));
		if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST)
			st = CH_UNREACHABLE;
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (sk.oom) {
		snprintf(err, errlen, "%s: out of memory reading the answer", where);
	} else if (code == 200) {
		st = CH_OK;
	} else {
		/* The server's message: its first line, without control bytes. */
		char msg[400];
		size_t n = 0;

		for (size_t i = 0; i < sk.err.len && n + 1 < sizeof(msg); i++) {
			if (sk.err.p[i] == '\n')
				break;
			msg[n++] = (unsigned char)sk.err.p[i] < 0x20 ? ' ' : sk.err.p[i];
		}
		msg[n] = 0;
		snprintf(err, errlen, "%s answered HTTP %ld: %s", where, code, n ? msg : "(no message)");
		st = code >= 500 ? CH_ANSWERED_5XX : CH_REJECTED;
	}
out:
	ch_buf_free(&sk.err);
	ch_buf_free(&post);
	curl_free(esc);
	free(url);
	curl_easy_cleanup(c);
	return st;
}
