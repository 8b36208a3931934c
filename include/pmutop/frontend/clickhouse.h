/*
 * clickhouse.h - a ClickHouse server over its HTTP interface (--push and
 * --load clickhouse://): the URL, and one statement at a time with libcurl.
 *
 * URL: clickhouse://[USER[:PASS]@]HOST[:PORT]/DATABASE[?QUERY] (port 8123
 * by default). Without a user in the URL, PMUTOP_CLICKHOUSE_USER and
 * PMUTOP_CLICKHOUSE_PASSWORD are used. The password is never printed:
 * messages name the server with ch_url_show().
 */
#ifndef PMUTOP_FRONTEND_CLICKHOUSE_H
#define PMUTOP_FRONTEND_CLICKHOUSE_H

#include <stdbool.h>
#include <stddef.h>

struct ch_buf;

struct ch_url {
	char host[256];
	unsigned port;
	char db[128];
	char user[128], pass[256];
	char query[2048];      /* after '?', raw ("" when none) */
};

/*
 * Parse url. Refuses (-EINVAL, the reason and the expected form in err)
 * another scheme, a missing host or database, a database name that is not
 * [A-Za-z0-9_]+, a bad port.
 */
int ch_url_parse(const char *url, struct ch_url *u, char *err, size_t errlen);

/* "clickhouse://user@host:port/db": the URL without its password. */
void ch_url_show(const struct ch_url *u, char *out, size_t len);

/* True when s starts with clickhouse:// (a --load argument that is not a file). */
bool ch_url_is(const char *s);

/* What a statement's failure means for the caller. */
enum ch_status {
	CH_OK = 0,
	CH_DOWN,       /* no answer (refused, reset, timed out, not HTTP): try again later;
	                  an INSERT's outcome is then unknown */
	CH_UNREACHABLE, /* no connection (refused, no such host): nothing was sent */
	CH_REJECTED,   /* the server refused it (HTTP 4xx): trying again will not help */
	CH_ANSWERED_5XX, /* the server failed it (HTTP 5xx): maybe transient (too many
	                    parts, memory), maybe not; the caller bounds the retries */
};

/*
 * Run sql on the server, with body (may be NULL) as the rest of the
 * statement (an INSERT's rows). timeout_s bounds the whole exchange;
 * abort (may be NULL) is polled while it runs and cuts it short when it
 * returns true (CH_DOWN). The answer is appended to resp (may be NULL).
 * On failure err says why (the server's own message when it gave one).
 */
enum ch_status ch_exec(const struct ch_url *u, const char *sql, const char *body, size_t len,
		       double timeout_s, bool (*abort)(void *arg), void *arg,
		       struct ch_buf *resp, char *err, size_t errlen);

/* curl_global_init, once per process (thread-safe after the first call). */
int ch_global_init(void);

#endif
