/*
 * http_server.h - profiles on request over HTTP, the way Go services serve
 * them (net/http/pprof), with the pprof++ parameters:
 *
 *   GET /debug/pprof/profile?seconds=N&event=E&period=P
 *       a gzip-compressed pprof profile of the target, sampled for N
 *       seconds on event E (default 30 s, cycles - task-clock on machines
 *       without a PMU - and E's preset period)
 *   GET /debug/pprof/          an index page
 *   GET /healthz               "ok" while the target lives
 *
 * So `go tool pprof http://127.0.0.1:6060/debug/pprof/profile?seconds=5`
 * and scrapers that speak Go's endpoint (Parca, Grafana Alloy) work for any
 * native program. Each profiling request runs its own session in its own
 * thread (libmicrohttpd's thread per connection); see http_server.c for the
 * rules (one request per event at a time, bounds, disconnects, signals).
 */
#ifndef PMUTOP_HTTP_SERVER_H
#define PMUTOP_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "pmutop/sample/events.h"

struct pmutop_opts;

/*
 * Serve profiles of o->pid at o->http until SIGINT/SIGTERM/SIGHUP or the
 * target exits. Returns the process exit status: 0 after a clean shutdown,
 * 1 when the server cannot start (message on stderr), 2 for a bad address.
 */
int http_serve(const struct pmutop_opts *o);

/* A /debug/pprof/profile request, parsed. */
struct http_profile_req {
	double seconds;           /* > 0 and <= the server's maximum */
	struct pmu_event event;   /* the event asked for, or cycles */
	bool event_given;         /* event= was given (no fallback then) */
	uint64_t period;          /* 0 = the event's preset */
};

/*
 * Parse the query parameters of a profile request (each NULL when absent;
 * URL-decoded). "timer" means task-clock. Returns 0, or -EINVAL with a
 * reason for the client in err ("invalid seconds \"abc\" ...").
 */
int http_parse_profile_query(const char *seconds, const char *event, const char *period,
			     unsigned max_seconds, struct http_profile_req *out,
			     char *err, size_t errlen);

/*
 * Parse a listen address: "HOST:PORT", "[V6]:PORT", ":PORT" or "PORT"
 * (both loopback: pmutop never listens on every interface unless the
 * address says so, e.g. 0.0.0.0:6060). HOST may be a name ("localhost").
 * Returns 0 or -EINVAL with err filled.
 */
/*
 * Whether a request's Host header (NULL: none) may be served: IP literals,
 * localhost (and *.localhost), hostname (this machine's), allow (may be
 * NULL). Anything else is a DNS name a web page may have pointed at us
 * (DNS rebinding): -EPERM with the reason in err.
 */
int http_check_host(const char *host, const char *hostname, const char *allow,
		    char *err, size_t errlen);

/* s with & < > " ' as HTML entities and control characters as '?'; malloc'd, NULL on ENOMEM. */
char *http_html_escape(const char *s);

int http_parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *sslen,
		      char *err, size_t errlen);

#endif
