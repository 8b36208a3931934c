/*
 * http_server.c - the HTTP front end: Go's /debug/pprof/profile endpoint
 * with the pprof++ parameters, over libmicrohttpd (see http_server.h).
 *
 * Why libmicrohttpd: a small, long-maintained embedded server that Debian
 * ships (libmicrohttpd-dev); request parsing, URL decoding and keep-alive
 * are not ours to get wrong. It runs with a thread per connection, so a
 * profiling request simply blocks its own thread for `seconds` while it
 * drives a session (session_start, session_poll, pprof_encode) - the same
 * calls record.c makes - and other requests are served meanwhile.
 *
 * Rules:
 *   - one profiling request per event at a time, at most MAX_ACTIVE at
 *     once; others get 429 with Retry-After (seconds until the busy one
 *     ends);
 *   - seconds in (0, --http-max-seconds]; bad parameters get 400 and the
 *     reason; an event this machine cannot count gets 501 right away;
 *   - a client that goes away mid-profile is noticed within POLL_MS (its
 *     socket reports hang-up): the session stops, nothing is sent, the
 *     event is free again;
 *   - every request is logged on stderr: client, request, status, size
 *     (a token's value never: "token=..." is logged without it);
 *   - who may ask (issue 32): a token is made at start and printed once. On
 *     loopback a client whose socket belongs to root or to pmutop's own
 *     user (read from /proc/net/tcp{,6}: the owner of the connection's
 *     other end, like SO_PEERCRED for a unix socket) needs none, so
 *     `go tool pprof http://127.0.0.1:PORT/...` works as before for the
 *     operator; any other local user - or a container sharing the network
 *     namespace with its own user ids - needs `?token=` or an
 *     `Authorization: Bearer` header. Off loopback every request needs it.
 *     A browser's cross-site request (Sec-Fetch-Site: cross-site or
 *     same-site, or an Origin that is not this server) gets 403;
 *   - work a request can make large comes after the slot check (`?pid=`
 *     walks /proc for the target's descendants).
 *
 * Signals: session_start() blocks SIGINT/SIGTERM/SIGHUP in its thread and
 * reads them from a signalfd. Here the main thread blocks them before any
 * thread exists, so every thread inherits the mask and none can be killed
 * by them; the main thread waits on its own signalfd. A process-directed
 * signal may still be read by a worker's session (whichever signalfd is
 * read first): such a session ends as SESSION_SIGNALLED, and the worker
 * sets `stopping` and passes the signal on to the main thread through a
 * pipe at once. So the main thread's poll may report a signal that a
 * session reads first: its signalfd is non-blocking and it then waits for
 * the pipe. Either way `stopping` is set, workers end their sessions
 * within POLL_MS, and MHD_stop_daemon() joins them.
 */
#include "pmutop/frontend/http_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "pmutop/frontend/cli.h"
#include "pmutop/sample/events.h"
#include "pmutop/profile/flamegraph.h"
#include "pmutop/profile/pprof.h"
#include "pmutop/profile/term_text.h"
#include "pmutop/symbols/kallsyms.h"
#include "pmutop/target/proc.h"
#include "pmutop/frontend/session.h"

#define MAX_ACTIVE 4          /* profiling requests at once, all events */
#define POLL_MS 100           /* how often a worker checks its client and `stopping` */
#define FINAL_LINES_MS 200    /* file:line lookups left at the end: at most this long */
#define DEFAULT_SECONDS 30
#define LIVE_SECONDS 3        /* the index's live flame graph: a profile of 3 s at a time */
#define MAX_CONNECTIONS 32
#define MAX_PER_IP 8          /* one client cannot hold every connection */
#define IDLE_SECONDS 30       /* an idle keep-alive connection is closed after this */
#define PTRACE_MIN_PERIOD_NS 1000000ULL /* --unwind=ptrace: at most ~1000 stops/s per thread */

struct slot {
	bool busy;
	char event[64];
	uint64_t deadline_ns;     /* CLOCK_MONOTONIC */
};

struct server {
	const struct pmutop_opts *o;
	pid_t pid;
	char cmdline[256];
	pthread_mutex_t lock;
	struct slot slots[MAX_ACTIVE];
	atomic_bool stopping;
	int wake[2];              /* worker → main: a session read a signal */
	char events_list[2048];   /* events that open here, for the index page */
	char token[80];           /* the credential ("": none asked, --http-token none) */
	bool token_always;        /* off loopback: even root's and our user's requests */
	char hostname[256];       /* this machine's name: an allowed Host */
	struct pmutop_opts so;    /* *o with the shared kernel symbols */
	struct kallsyms *ks;      /* read once, only read by every request's session */
};

/* What one request did, for its log line. */
struct reqlog {
	char client[64];
	char target[512];         /* path?query */
	char note[256];
	double start;
	bool close;               /* end the connection after this response */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- parsing (pure; unit-tested) ------------------------------------------ */

int http_parse_profile_query(const char *seconds, const char *event, const char *period,
			     unsigned max_seconds, struct http_profile_req *out,
			     char *err, size_t errlen)
{
	char evbuf[128];

	memset(out, 0, sizeof(*out));
	out->seconds = DEFAULT_SECONDS < max_seconds ? DEFAULT_SECONDS : max_seconds;
	if (seconds) {
		char *end;
		double v;

		errno = 0;
		v = strtod(seconds, &end);
		if (!*seconds || errno || *end || !isfinite(v) || v <= 0 || v > max_seconds) {
			snprintf(err, errlen, "invalid seconds \"%s\" (expected a number of seconds, "
				 "more than 0 and at most %u)", seconds, max_seconds);
			return -EINVAL;
		}
		out->seconds = v;
	}
	if (event && *event) {
		/* pprof++'s "timer" is an event of its own (events.c). */
		if (events_parse(event, &out->event, evbuf, sizeof(evbuf))) {
			snprintf(err, errlen, "invalid event: %s", evbuf);
			return -EINVAL;
		}
		out->event_given = true;
	} else if (event) {
		snprintf(err, errlen, "invalid event \"\" (give a name such as cycles or task-clock, "
			 "or leave event out)");
		return -EINVAL;
	} else if (events_parse("cycles", &out->event, evbuf, sizeof(evbuf))) {
		snprintf(err, errlen, "%s", evbuf);
		return -EINVAL;
	}
	if (period) {
		unsigned long long v;
		char *end;

		errno = 0;
		v = strtoull(period, &end, 10);
		if (!*period || *period == '-' || *period == '+' || errno || *end || v < 1 ||
		    v > (1ULL << 62)) {
			snprintf(err, errlen, "invalid period \"%s\" (expected a whole number of events "
				 "from 1, e.g. 1000000)", period);
			return -EINVAL;
		}
		out->period = v;
	}
	return 0;
}

int http_parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *sslen,
		      char *err, size_t errlen)
{
	char host[256] = "", *end;
	const char *port_s, *colon;
	struct addrinfo hints = { 0 }, *res = NULL;
	unsigned long port;
	int rc;

	if (!spec || !*spec)
		goto bad;
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');

		if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof(host))
			goto bad;
		memcpy(host, spec + 1, (size_t)(close - spec - 1));
		host[close - spec - 1] = '\0';
		port_s = close + 2;
	} else if ((colon = strrchr(spec, ':'))) {
		if ((size_t)(colon - spec) >= sizeof(host) || memchr(spec, ':', (size_t)(colon - spec)))
			goto bad; /* a bare IPv6 address needs brackets */
		memcpy(host, spec, (size_t)(colon - spec));
		host[colon - spec] = '\0';
		port_s = colon + 1;
	} else {
		port_s = spec;
	}
	errno = 0;
	port = strtoul(port_s, &end, 10);
	if (!*port_s || *end || errno || port > 65535 || *port_s == '-' || *port_s == '+')
		goto bad;
	if (!*host)
		snprintf(host, sizeof(host), "127.0.0.1"); /* loopback unless told otherwise */
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc || !res) {
		snprintf(err, errlen, "invalid listen address \"%s\": cannot resolve \"%s\": %s",
			 spec, host, rc ? gai_strerror(rc) : "no address");
		if (res)
			freeaddrinfo(res);
		return -EINVAL;
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*sslen = res->ai_addrlen;
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
	freeaddrinfo(res);
	return 0;
bad:
	snprintf(err, errlen, "invalid listen address \"%s\" (expected HOST:PORT, e.g. "
		 "127.0.0.1:6060, [::1]:6060 or :6060)", spec ? spec : "");
	return -EINVAL;
}

/* Whether s is an IPv4 address or a bracketed IPv6 one (no DNS involved). */
static bool ip_literal(const char *s, size_t n)
{
	char buf[INET6_ADDRSTRLEN + 2];
	unsigned char bin[16];

	if (n == 0 || n >= sizeof(buf))
		return false;
	if (s[0] == '[') {
		if (n < 3 || s[n - 1] != ']')
			return false;
		memcpy(buf, s + 1, n - 2);
		buf[n - 2] = '\0';
		return inet_pton(AF_INET6, buf, bin) == 1;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	return inet_pton(AF_INET, buf, bin) == 1;
}

int http_check_host(const char *host, const char *hostname, const char *allow,
		    char *err, size_t errlen)
{
	const char *colon;
	size_t n;

	if (!host) /* HTTP/1.0 without Host: not a browser */
		return 0;
	/* Strip the port: the last ':' after any ']'. */
	colon = strrchr(host, ':');
	if (colon && strchr(host, ']') > colon)
		colon = NULL;
	n = colon ? (size_t)(colon - host) : strlen(host);
	if (ip_literal(host, n))
		return 0;
	if ((n == 9 && !strncasecmp(host, "localhost", 9)) ||
	    (n > 10 && !strncasecmp(host + n - 10, ".localhost", 10)))
		return 0;
	if (hostname && *hostname && strlen(hostname) == n && !strncasecmp(host, hostname, n))
		return 0;
	if (allow && *allow && strlen(allow) == n && !strncasecmp(host, allow, n))
		return 0;
	snprintf(err, errlen, "Host \"%.*s\" not allowed: use an IP address, localhost or "
		 "this machine's name, or start pmutop with --http-allow-host NAME (a web page "
		 "must not reach this server through its own DNS name)", (int)(n > 200 ? 200 : n), host);
	return -EPERM;
}

char *http_html_escape(const char *s)
{
	size_t n = 0;
	char *out, *o;

	for (const char *p = s; *p; p++)
		n += *p == '&' ? 5 : *p == '<' || *p == '>' ? 4 : *p == '"' || *p == '\'' ? 6 : 1;
	out = malloc(n + 1);
	if (!out)
		return NULL;
	o = out;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '&': memcpy(o, "&amp;", 5); o += 5; break;
		case '<': memcpy(o, "&lt;", 4); o += 4; break;
		case '>': memcpy(o, "&gt;", 4); o += 4; break;
		case '"': memcpy(o, "&quot;", 6); o += 6; break;
		case '\'': memcpy(o, "&#x27;", 6); o += 6; break;
		default: *o++ = *p < 0x20 || *p == 0x7f ? '?' : (char)*p; break;
		}
	}
	*o = '\0';
	return out;
}

/* ---- responses and logging ------------------------------------------------ */

static void log_request(const struct reqlog *rl, unsigned status, size_t bytes)
{
	struct timespec ts;
	char target[sizeof(rl->target) * 2], note[sizeof(rl->note) * 2];

	clock_gettime(CLOCK_MONOTONIC, &ts);
	/*
	 * The URL is the client's, decoded: no raw escape sequences on our
	 * terminal. Nor in the note: an error quotes the value it refuses
	 * (`?seconds=%1b%5d0;PWNED%07`: "invalid seconds "ESC]0;PWNED BEL"").
	 */
	term_text(rl->target, target, sizeof(target));
	term_text(rl->note, note, sizeof(note));
	flockfile(stderr);
	fprintf(stderr, "pmutop: http: %s \"GET %s\" %u %zu bytes %.2f s%s%s\n", rl->client,
		target, status, bytes,
		(double)ts.tv_sec + (double)ts.tv_nsec / 1e9 - rl->start,
		note[0] ? ": " : "", note);
	funlockfile(stderr);
}

/*
 * Queue a response with body buf[0..len) (copied unless must_free: then
 * owned by MHD). retry_after > 0 adds Retry-After.
 */
static enum MHD_Result respond(struct MHD_Connection *c, struct reqlog *rl, unsigned status,
			       const char *ctype, void *buf, size_t len, bool must_free,
			       unsigned retry_after, bool attachment)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char ra[16];

	r = MHD_create_response_from_buffer(len, buf, must_free ? MHD_RESPMEM_MUST_FREE
							      : MHD_RESPMEM_MUST_COPY);
	if (!r) {
		if (must_free)
			free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (attachment)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION,
					"attachment; filename=\"profile\"");
	if (retry_after) {
		snprintf(ra, sizeof(ra), "%u", retry_after);
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, ra);
	}
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (rl->close)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	log_request(rl, status, len);
	return ret;
}

/* A plain-text error: the message and a newline. */
static enum MHD_Result respond_text(struct MHD_Connection *c, struct reqlog *rl,
				    unsigned status, const char *msg, unsigned retry_after)
{
	char body[1024];
	int n = snprintf(body, sizeof(body), "%s\n", msg);

	if (status >= 400)
		snprintf(rl->note, sizeof(rl->note), "%s", msg);
	return respond(c, rl, status, "text/plain; charset=utf-8", body,
		       n < 0 ? 0 : (size_t)n < sizeof(body) ? (size_t)n : sizeof(body) - 1,
		       false, retry_after, false);
}

static enum MHD_Result add_arg(void *cls, enum MHD_ValueKind kind, const char *key,
			       const char *value)
{
	struct reqlog *rl = cls;
	size_t l = strlen(rl->target);

	(void)kind;
	/* A credential is never logged (the log may be kept, or seen by others). */
	if (!strcmp(key, "token") && value)
		value = "...";
	snprintf(rl->target + l, sizeof(rl->target) - l, "%s%s%s%s",
		 strchr(rl->target, '?') ? "&" : "?", key, value ? "=" : "", value ? value : "");
	return MHD_YES;
}

static void describe_request(struct MHD_Connection *c, const char *url, struct reqlog *rl)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	struct timespec ts;

	snprintf(rl->client, sizeof(rl->client), "?");
	if (ci && ci->client_addr) {
		const struct sockaddr *sa = ci->client_addr;
		char ip[INET6_ADDRSTRLEN] = "?";

		if (sa->sa_family == AF_INET) {
			const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

			inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
			snprintf(rl->client, sizeof(rl->client), "%s:%u", ip, ntohs(in->sin_port));
		} else if (sa->sa_family == AF_INET6) {
			const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

			inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
			snprintf(rl->client, sizeof(rl->client), "[%s]:%u", ip, ntohs(in6->sin6_port));
		}
	}
	snprintf(rl->target, sizeof(rl->target), "%s", url);
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_arg, rl);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	rl->start = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the endpoints ------------------------------------------------------- */

static bool target_alive(const struct server *sv)
{
	return kill(sv->pid, 0) == 0 || errno == EPERM;
}

static enum MHD_Result index_page(struct server *sv, struct MHD_Connection *c, struct reqlog *rl)
{
	char *body = NULL, *cmd = http_html_escape(sv->cmdline);
	int n = !cmd ? -1 : asprintf(&body,
		"<html><head><title>/debug/pprof/</title></head><body>\n"
		"<p>/debug/pprof/ - pmutop %s, PMU sampling profiles of pid %d (%s)</p>\n"
		"<table>\n"
		"<tr><td><a href=\"profile?seconds=%u\">profile</a></td><td>a pprof profile of every "
		"thread, sampled on a PMU event</td></tr>\n"
		"<tr><td><a href=\"flamegraph?seconds=%u\">flamegraph</a></td><td>the same as a flame "
		"graph page (click to zoom, search, hover for details)</td></tr>\n"
		"<tr><td><a href=\"flamegraph?seconds=%u&amp;live=1\">live flame graph</a></td><td>a "
		"flame graph that takes a new profile every %u seconds and redraws itself</td></tr>\n"
		"</table>\n"
		"<p>Parameters of /debug/pprof/profile and /debug/pprof/flamegraph:</p><ul>\n"
		"<li><code>seconds</code>: how long to sample (default %u, at most %u)</li>\n"
		"<li><code>event</code>: %s; <code>timer</code> is the 100 Hz OS-timer baseline; raw codes "
		"<code>rUUEE</code>. Default cycles, or task-clock when this machine has no "
		"hardware PMU (an explicit hardware event there gets 501).</li>\n"
		"<li><code>period</code>: events per sample (default: the event's preset)</li>\n"
		"<li><code>pid</code> (profile only): the samples of one process of the tree, the "
		"target or one of its descendants</li>\n"
		"</ul>\n"
		"<p>One request per event at a time; others get 429 with Retry-After.</p>\n"
		"<p>Example: <code>go tool pprof http://HOST:PORT/debug/pprof/profile?seconds=5&amp;"
		"event=task-clock</code></p>\n"
		"</body></html>\n",
		PMUTOP_VERSION, (int)sv->pid, cmd, DEFAULT_SECONDS, DEFAULT_SECONDS, LIVE_SECONDS,
		LIVE_SECONDS, DEFAULT_SECONDS,
		sv->o->http_max_seconds, sv->events_list);

	free(cmd);
	if (n < 0)
		return respond_text(c, rl, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory", 0);
	return respond(c, rl, MHD_HTTP_OK, "text/html; charset=utf-8", body, (size_t)n, true, 0,
		       false);
}

/*
 * libmicrohttpd's error log: its lines become pmutop's ("pmutop: http:
 * ..."), except the one for our own MHD_NO - returned on purpose when a
 * client went away, and logged by MHD as "Application reported internal
 * error, closing connection" on every such drop.
 */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (strstr(msg, "Application reported internal error"))
		return;
	n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = 0;
	fprintf(stderr, "pmutop: http: %s\n", msg);
}

/* Whether the client hung up (its end of the socket is closed). */
static bool client_gone(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct pollfd p;

	if (!ci)
		return false;
	p.fd = ci->connect_fd;
	p.events = POLLRDHUP;
	p.revents = 0;
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/*
 * Take a profiling slot for event, or say how long until one frees up
 * (*retry, seconds) and why. Returns the slot index or -1.
 */
static int slot_take(struct server *sv, const char *event, double seconds, unsigned *retry,
		     const char **why)
{
	uint64_t now = mono_ns(), soonest = UINT64_MAX;
	int i, free_slot = -1, busy = 0;

	pthread_mutex_lock(&sv->lock);
	for (i = 0; i < MAX_ACTIVE; i++) {
		struct slot *s = &sv->slots[i];

		if (!s->busy) {
			if (free_slot < 0)
				free_slot = i;
			continue;
		}
		busy++;
		if (!strcmp(s->event, event)) {
			*retry = s->deadline_ns > now
				 ? (unsigned)((s->deadline_ns - now + 999999999ULL) / 1000000000ULL) : 1;
			*why = "a profile of this event is already being taken";
			pthread_mutex_unlock(&sv->lock);
			return -1;
		}
		if (s->deadline_ns < soonest)
			soonest = s->deadline_ns;
	}
	if (free_slot < 0) {
		*retry = soonest > now ? (unsigned)((soonest - now + 999999999ULL) / 1000000000ULL) : 1;
		*why = "too many profiles are being taken at once";
		pthread_mutex_unlock(&sv->lock);
		return -1;
	}
	sv->slots[free_slot].busy = true;
	snprintf(sv->slots[free_slot].event, sizeof(sv->slots[free_slot].event), "%s", event);
	sv->slots[free_slot].deadline_ns = now + (uint64_t)(seconds * 1e9);
	pthread_mutex_unlock(&sv->lock);
	(void)busy;
	return free_slot;
}

static bool slots_busy(struct server *sv)
{
	bool busy = false;

	pthread_mutex_lock(&sv->lock);
	for (int i = 0; i < MAX_ACTIVE; i++)
		busy |= sv->slots[i].busy;
	pthread_mutex_unlock(&sv->lock);
	return busy;
}

static void slot_release(struct server *sv, int i)
{
	pthread_mutex_lock(&sv->lock);
	sv->slots[i].busy = false;
	pthread_mutex_unlock(&sv->lock);
}

/* What a profiling request answers. */
enum output {
	OUT_PPROF,   /* /debug/pprof/profile: gzip-compressed pprof */
	OUT_PAGE,    /* /debug/pprof/flamegraph: the flame graph page (flamegraph.h) */
	OUT_JSON,    /* .../flamegraph?format=json: its data, what a live page re-fetches */
};

/* The flame graph page or its data for the session's profile, into *buf. */
static int encode_flame(struct server *sv, struct MHD_Connection *c, const struct session *s,
			enum output out, double seconds, char **buf, size_t *len, char *err,
			size_t errlen)
{
	const char *live = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "live");
	struct session_status st;
	struct flame_opts fo = { 0 };
	char title[512];

	session_get_status(s, &st);
	snprintf(title, sizeof(title), "pid %d: %s", (int)sv->pid, sv->cmdline);
	fo.title = title;
	if (live && strcmp(live, "0")) {
		fo.live_seconds = seconds;
		fo.live_event = st.event.name;
	}
	return flamegraph_encode(session_aggregate(s), &fo, out == OUT_PAGE, buf, len, err, errlen);
}

/* Processes of the served tree looked through for ?pid= (pid_max's default). */
#define TREE_MAX 32768

/*
 * ?pid=N: one process of the served tree (the target or a descendant now),
 * never any other process pmutop's user could sample. *pid is 0 without
 * the parameter. Returns 0, or -EINVAL with the reason in err (a 400).
 */
static int parse_pid(const struct server *sv, const char *v, pid_t *pid, char *err,
		     size_t errlen)
{
	pid_t *desc = NULL;
	size_t n = 0, i;
	unsigned long x;
	char *end;
	bool ok = false;

	*pid = 0;
	if (!v)
		return 0;
	errno = 0;
	x = strtoul(v, &end, 10);
	if (!*v || *v == '-' || errno || *end || !x || x > INT32_MAX) {
		snprintf(err, errlen, "invalid pid \"%s\" (expected a process id)", v);
		return -EINVAL;
	}
	*pid = (pid_t)x;
	if (*pid == sv->pid)
		return 0;
	if (sv->o->no_children) {
		snprintf(err, errlen, "pid %d: this server follows only pid %d (--no-children)",
			 (int)*pid, (int)sv->pid);
		return -EINVAL;
	}
	desc = malloc(TREE_MAX * sizeof(*desc));
	if (desc) {
		int r = proc_descendants(&sv->pid, 1, desc, TREE_MAX, &n);

		for (i = 0; (!r || r == -ENOSPC) && i < n && !ok; i++)
			ok = desc[i] == *pid;
	}
	free(desc);
	if (!ok) {
		snprintf(err, errlen, "pid %d is not pid %d or one of its descendants (this server "
			 "profiles pid %d's process tree)", (int)*pid, (int)sv->pid, (int)sv->pid);
		return -EINVAL;
	}
	return 0;
}

static enum MHD_Result profile(struct server *sv, struct MHD_Connection *c, struct reqlog *rl,
			       enum output out)
{
	struct http_profile_req rq;
	struct pmutop_opts o;
	struct session_status st;
	struct session *s;
	unsigned char *buf = NULL;
	char *page = NULL;
	size_t len = 0;
	const char *why;
	unsigned retry = 0;
	char err[768];
	enum MHD_Result ret;
	bool gone = false;
	pid_t only;                   /* ?pid=: one process's samples (0: all) */
	int slot, r;

	if (http_parse_profile_query(
		    MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "seconds"),
		    MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "event"),
		    MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "period"),
		    sv->o->http_max_seconds, &rq, err, sizeof(err)))
		return respond_text(c, rl, MHD_HTTP_BAD_REQUEST, err, 0);
	if (MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pid") && out != OUT_PPROF)
		return respond_text(c, rl, MHD_HTTP_BAD_REQUEST,
				    "pid= applies to /debug/pprof/profile (pprof's -tagfocus=pid=N "
				    "selects a process in a flame graph's profile)", 0);
	/*
	 * The ptrace engine stops the target for every sample: a tiny period
	 * would keep it stopped. At least 1 ms of time (nanosecond events) or
	 * a preset-sized count: the engine's per-thread bound does the rest.
	 */
	if (sv->o->unwind == UNWIND_ENGINE_PTRACE && rq.period) {
		uint64_t min = !rq.event_given || !rq.event.unit ||
			       !strcmp(rq.event.unit, "nanoseconds") ? PTRACE_MIN_PERIOD_NS
			       : rq.event.preset_period / 10 ? rq.event.preset_period / 10 : 1;

		if (rq.period < min) {
			snprintf(err, sizeof(err), "period %llu is too small for --unwind=ptrace (it "
				 "stops the target per sample): at least %llu for %s",
				 (unsigned long long)rq.period, (unsigned long long)min, rq.event.name);
			return respond_text(c, rl, MHD_HTTP_BAD_REQUEST, err, 0);
		}
	}
	/* Say "not here" now, not after `seconds` of nothing. */
	if (rq.event_given && (r = events_probe(&rq.event, sv->o->kernel)) != 0) {
		if (r == -ENOENT || r == -EOPNOTSUPP || r == -ENODEV) {
			snprintf(err, sizeof(err), "event %s is not supported on this machine (no "
				 "hardware PMU exposed?); try event=task-clock", rq.event.name);
			return respond_text(c, rl, MHD_HTTP_NOT_IMPLEMENTED, err, 0);
		}
		proc_explain_perf_error(-r, getpid(), rq.event.name, err, sizeof(err));
		return respond_text(c, rl, MHD_HTTP_INTERNAL_SERVER_ERROR, err, 0);
	}
	if (atomic_load(&sv->stopping))
		return respond_text(c, rl, MHD_HTTP_SERVICE_UNAVAILABLE, "server shutting down", 0);
	/*
	 * Under --unwind=ptrace this connection's thread is the tracer: a
	 * thread of the target that never stopped (stuck in the kernel) stays
	 * seized until the tracer thread exits. Closing the connection ends
	 * the thread, and the kernel detaches whatever it still holds.
	 */
	if (sv->o->unwind == UNWIND_ENGINE_PTRACE)
		rl->close = true;
	slot = slot_take(sv, rq.event.name, rq.seconds, &retry, &why);
	if (slot < 0)
		return respond_text(c, rl, MHD_HTTP_TOO_MANY_REQUESTS, why, retry);
	/* Only now: it walks /proc (every process's stat) for the target's tree. */
	if (parse_pid(sv, MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pid"), &only,
		      err, sizeof(err))) {
		slot_release(sv, slot);
		return respond_text(c, rl, MHD_HTTP_BAD_REQUEST, err, 0);
	}

	o = *sv->o;
	o.event = rq.event;
	o.events[0] = rq.event;
	o.nevents = 1;
	o.event_given = rq.event_given;
	o.period = rq.period;
	o.freq = 0;
	o.duration = rq.seconds;
	o.dump = NULL;
	o.quiet = true;
	o.http = NULL;
	s = session_start(&o, err, sizeof(err));
	if (!s) {
		slot_release(sv, slot);
		return respond_text(c, rl, target_alive(sv) ? MHD_HTTP_INTERNAL_SERVER_ERROR
							     : MHD_HTTP_SERVICE_UNAVAILABLE, err, 0);
	}
	/* Lines as it goes, and at most FINAL_LINES_MS at the end: the answer
	 * comes `seconds` after the request, not after a debug file's load. */
	session_set_lines(s, 0, FINAL_LINES_MS * 1000000ULL);
	/* `seconds` from the request's arrival: the session's start is inside it. */
	session_set_deadline(s, (uint64_t)(rl->start * 1e9) + (uint64_t)(rq.seconds * 1e9));
	while (session_poll(s, POLL_MS) == SESSION_RUNNING) {
		if (atomic_load(&sv->stopping))
			break;
		if (client_gone(c)) {
			gone = true;
			break;
		}
	}
	/*
	 * A client that went away gets nothing: free its event at once, not
	 * after the final drain, line lookup and teardown (seconds under load,
	 * while the next request for the event got 429).
	 */
	if (gone)
		slot_release(sv, slot);
	session_get_status(s, &st);
	if (st.state == SESSION_SIGNALLED && st.signal) {
		/*
		 * Our signalfd read the server's stop signal: hand it to the
		 * main thread now, not after the final drain (seconds under
		 * load, with the server still taking requests meanwhile).
		 */
		int sig = st.signal;

		atomic_store(&sv->stopping, true);
		/* EAGAIN: the pipe is full of such bytes, main wakes anyway. */
		if (write(sv->wake[1], &sig, sizeof(sig)) < 0 && errno != EAGAIN)
			fprintf(stderr, "pmutop: http: cannot pass %s on to the server: %s\n",
				strsignal(sig), strerror(errno));
	}
	if (!gone && atomic_load(&sv->stopping)) {
		/*
		 * The server stops: answer 503 now, before the final drain and
		 * line lookup (seconds under load) - the main thread waits for
		 * this answer to be queued before it closes the connections.
		 */
		session_free(s);
		ret = respond_text(c, rl, MHD_HTTP_SERVICE_UNAVAILABLE, "server shutting down", 0);
		slot_release(sv, slot);
		return ret;
	}
	session_stop(s);
	session_get_status(s, &st);
	if (gone) {
		snprintf(rl->note, sizeof(rl->note), "client went away after %.1f s; profile dropped",
			 st.elapsed);
		log_request(rl, 499, 0);
		ret = MHD_NO; /* close the connection, send nothing */
	} else if (atomic_load(&sv->stopping)) {
		ret = respond_text(c, rl, MHD_HTTP_SERVICE_UNAVAILABLE, "server shutting down", 0);
	} else if (st.state == SESSION_FAILED) {
		ret = respond_text(c, rl, MHD_HTTP_INTERNAL_SERVER_ERROR, st.why, 0);
	} else if (out != OUT_PPROF &&
		   (r = encode_flame(sv, c, s, out, rq.seconds, &page, &len, err, sizeof(err))) != 0) {
		ret = respond_text(c, rl, MHD_HTTP_INTERNAL_SERVER_ERROR, err, 0);
	} else if (out != OUT_PPROF) {
		snprintf(rl->note, sizeof(rl->note), "%" PRIu64 " samples of %s in %.2f s%s",
			 st.samples, st.event.name, st.elapsed,
			 st.state == SESSION_TARGET_EXITED ? " (target exited)" : "");
		ret = respond(c, rl, MHD_HTTP_OK, out == OUT_PAGE ? "text/html; charset=utf-8"
								  : "application/json", page, len,
			      true, 0, false);
	} else if ((r = pprof_encode_process(session_aggregate(s), (uint32_t)only, &buf,
					     &len)) != 0) {
		snprintf(err, sizeof(err), "cannot encode the profile: %s", strerror(-r));
		ret = respond_text(c, rl, MHD_HTTP_INTERNAL_SERVER_ERROR, err, 0);
	} else {
		snprintf(rl->note, sizeof(rl->note), "%" PRIu64 " samples of %s in %.2f s%s",
			 st.samples, st.event.name, st.elapsed,
			 st.state == SESSION_TARGET_EXITED ? " (target exited)" : "");
		ret = respond(c, rl, MHD_HTTP_OK, "application/octet-stream", buf, len, true, 0,
			      true);
	}
	session_free(s);
	if (!gone)
		slot_release(sv, slot);
	return ret;
}

/* Constant-time comparison of the request's token with ours. */
static bool token_ok(const struct server *sv, struct MHD_Connection *c)
{
	const char *got = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	size_t n = strlen(sv->token), i;
	unsigned char diff = 0;

	if (!got && auth && !strncasecmp(auth, "Bearer ", 7))
		got = auth + 7;
	if (!got || strlen(got) != n)
		return false;
	for (i = 0; i < n; i++)
		diff |= (unsigned char)(got[i] ^ sv->token[i]);
	return diff == 0;
}

/*
 * The uid owning the socket at the other end of a loopback connection: the
 * /proc/net/tcp{,6} entry whose local address is the client's and whose
 * remote port is ours (port). -1 when not found (gone, unreadable).
 */
static long peer_uid(unsigned port, const struct sockaddr *sa)
{
	char want[64], line[512];
	const char *table;
	long uid = -1;
	FILE *f;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		/* The kernel prints the address as the u32 it holds, in host order. */
		snprintf(want, sizeof(want), "%08X:%04X", (unsigned)in->sin_addr.s_addr,
			 (unsigned)ntohs(in->sin_port));
		table = "/proc/net/tcp";
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		uint32_t w[4];
		size_t l = 0;

		memcpy(w, &in6->sin6_addr, sizeof(w));
		for (int i = 0; i < 4; i++)
			l += (size_t)snprintf(want + l, sizeof(want) - l, "%08X", (unsigned)w[i]);
		snprintf(want + l, sizeof(want) - l, ":%04X", (unsigned)ntohs(in6->sin6_port));
		table = "/proc/net/tcp6";
	} else {
		return -1;
	}
	f = fopen(table, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char local[64], remote[64];
		unsigned long u;
		const char *rport;

		if (sscanf(line, " %*d: %63s %63s %*x %*x:%*x %*x:%*x %*x %lu", local, remote, &u) != 3)
			continue;
		rport = strrchr(remote, ':');
		if (!strcmp(local, want) && rport && strtoul(rport + 1, NULL, 16) == port) {
			uid = (long)u;
			break;
		}
	}
	fclose(f);
	return uid;
}

/*
 * May this request have what it asks? A good token, or (on loopback) a
 * client socket owned by root or by pmutop's own user.
 */
static bool authorized(const struct server *sv, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci, *fdi;
	struct sockaddr_storage me;
	socklen_t melen = sizeof(me);
	unsigned port;
	long uid;

	if (!sv->token[0] || token_ok(sv, c))
		return true;
	if (sv->token_always)
		return false;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	fdi = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci || !ci->client_addr || !fdi ||
	    getsockname(fdi->connect_fd, (struct sockaddr *)&me, &melen))
		return false;
	port = me.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&me)->sin_port)
	       : me.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&me)->sin6_port) : 0;
	uid = peer_uid(port, ci->client_addr);
	return uid == 0 || (uid >= 0 && (uid_t)uid == geteuid());
}

/*
 * A browser's request made by another site's page: refused whatever the
 * token (a page must not make the operator's browser fetch profiles).
 * Sec-Fetch-Site is set by browsers and cannot be set by a page; an Origin
 * must name this server (Host), as a same-origin fetch does.
 */
static const char *cross_site(struct MHD_Connection *c)
{
	const char *sfs = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site");
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");

	if (sfs && (!strcasecmp(sfs, "cross-site") || !strcasecmp(sfs, "same-site")))
		return "a request from another site's page (Sec-Fetch-Site) is refused";
	if (origin && strcmp(origin, "null")) {
		const char *o = !strncasecmp(origin, "http://", 7) ? origin + 7 : NULL;

		if (!o || !host || strcasecmp(o, host))
			return "a request whose Origin is not this server is refused";
	} else if (origin) {
		return "a request with Origin: null (a sandboxed or file page) is refused";
	}
	return NULL;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **req_cls)
{
	static int seen;
	struct server *sv = cls;
	struct reqlog rl = { 0 };
	bool head;

	(void)version;
	(void)upload_data;
	if (!*req_cls) { /* headers only so far: answer once the request is complete */
		*req_cls = &seen;
		return MHD_YES;
	}
	if (*upload_data_size) { /* a body: not wanted, skip it */
		*upload_data_size = 0;
		return MHD_YES;
	}
	describe_request(c, url, &rl);
	{
		char why[512];

		if (http_check_host(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host"),
				    sv->hostname, sv->o->http_allow_host, why, sizeof(why)))
			return respond_text(c, &rl, MHD_HTTP_FORBIDDEN, why, 0);
		const char *xs = cross_site(c);

		if (xs)
			return respond_text(c, &rl, MHD_HTTP_FORBIDDEN, xs, 0);
		if (!authorized(sv, c))
			return respond_text(c, &rl, MHD_HTTP_UNAUTHORIZED,
					    "missing or wrong token: add ?token=TOKEN (printed when "
					    "pmutop started) or Authorization: Bearer TOKEN", 0);
	}
	head = !strcmp(method, "HEAD");
	if (strcmp(method, "GET") && !head)
		return respond_text(c, &rl, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET is supported", 0);
	if (!strcmp(url, "/healthz")) {
		if (!target_alive(sv))
			return respond_text(c, &rl, MHD_HTTP_SERVICE_UNAVAILABLE, "target exited", 0);
		return respond(c, &rl, MHD_HTTP_OK, "text/plain; charset=utf-8", "ok\n", 3, false,
			       0, false);
	}
	if (!strcmp(url, "/debug/pprof/") || !strcmp(url, "/debug/pprof"))
		return index_page(sv, c, &rl);
	if (!strcmp(url, "/debug/pprof/profile")) {
		if (head)
			return respond_text(c, &rl, MHD_HTTP_METHOD_NOT_ALLOWED,
					    "use GET: a profile takes `seconds` to sample", 0);
		return profile(sv, c, &rl, OUT_PPROF);
	}
	if (!strcmp(url, "/debug/pprof/flamegraph")) {
		const char *fmt = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "format");

		if (head)
			return respond_text(c, &rl, MHD_HTTP_METHOD_NOT_ALLOWED,
					    "use GET: a flame graph takes `seconds` to sample", 0);
		if (fmt && strcmp(fmt, "html") && strcmp(fmt, "json"))
			return respond_text(c, &rl, MHD_HTTP_BAD_REQUEST,
					    "invalid format (expected html or json)", 0);
		return profile(sv, c, &rl, fmt && !strcmp(fmt, "json") ? OUT_JSON : OUT_PAGE);
	}
	/* Profiles arrive symbolized; tell pprof there is nothing to look up. */
	if (!strcmp(url, "/debug/pprof/symbol"))
		return respond(c, &rl, MHD_HTTP_OK, "text/plain; charset=utf-8", "num_symbols: 0\n",
			       15, false, 0, false);
	return respond_text(c, &rl, MHD_HTTP_NOT_FOUND,
			    "not found (try /debug/pprof/, /debug/pprof/profile, "
			    "/debug/pprof/flamegraph or /healthz)", 0);
}

/* ---- the server ----------------------------------------------------------- */

static void list_events(struct server *sv)
{
	size_t l = 0;

	for (size_t i = 0; events_builtin(i); i++) {
		const struct pmu_event *ev = events_builtin(i);

		if (events_probe(ev, sv->o->kernel) != 0)
			continue;
		l += (size_t)snprintf(sv->events_list + l, sizeof(sv->events_list) - l, "%s<code>%s</code>",
				      l ? ", " : "", ev->name);
		if (l >= sizeof(sv->events_list))
			break;
	}
	if (!l)
		snprintf(sv->events_list, sizeof(sv->events_list), "(none opens here)");
}

static bool is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

/*
 * The token: --http-token's, else a random one, like Jupyter's. Off
 * loopback every request needs it (anyone on the network could read the
 * target's code addresses, names and command line, and stop it under
 * --unwind=ptrace); on loopback every local user other than root and ours
 * (see authorized()). "none" turns it off, with a warning off loopback.
 */
static int setup_token(struct server *sv, const struct sockaddr_storage *ss)
{
	const char *t = sv->o->http_token;
	unsigned char rnd[16];

	if (t && !strcmp(t, "none")) {
		if (!is_loopback(ss))
			fprintf(stderr, "pmutop: WARNING: --http on a non-loopback address without a "
				"token: anyone who can reach it can profile pid %d\n", (int)sv->pid);
		return 0;
	}
	if (t) {
		if (strlen(t) >= sizeof(sv->token) || strlen(t) < 8) {
			fprintf(stderr, "pmutop: --http-token must have 8 to %zu characters\n",
				sizeof(sv->token) - 1);
			return -EINVAL;
		}
		snprintf(sv->token, sizeof(sv->token), "%s", t);
		sv->token_always = !is_loopback(ss);
		return 0;
	}
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		fprintf(stderr, "pmutop: cannot make an HTTP token: %s\n", strerror(errno));
		return -EIO;
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(sv->token + 2 * i, 3, "%02x", rnd[i]);
	sv->token_always = !is_loopback(ss);
	if (sv->token_always)
		fprintf(stderr, "pmutop: WARNING: --http listens beyond loopback: every request needs "
			"?token=%s (or --http-token)\n", sv->token);
	else
		fprintf(stderr, "pmutop: http: local users other than root and uid %u need "
			"?token=%s (or Authorization: Bearer)\n", (unsigned)geteuid(), sv->token);
	return 0;
}

static void addr_text(const struct sockaddr_storage *ss, unsigned port, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, port);
	} else {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, port);
	}
}

int http_serve(const struct pmutop_opts *o)
{
	struct server *sv = calloc(1, sizeof(*sv));
	struct sockaddr_storage ss;
	socklen_t sslen;
	struct MHD_Daemon *d = NULL;
	const union MHD_DaemonInfo *di;
	sigset_t mask, old;
	char err[768], where[96];
	int sigfd = -1, pidfd = -1, rc = 1;
	unsigned flags, port;

	if (!sv) {
		fprintf(stderr, "pmutop: out of memory\n");
		return 1;
	}
	sv->so = *o;
	sv->o = &sv->so;
	sv->pid = o->pid;
	sv->wake[0] = sv->wake[1] = -1;
	pthread_mutex_init(&sv->lock, NULL);
	if (http_parse_listen(o->http, &ss, &sslen, err, sizeof(err))) {
		fprintf(stderr, "pmutop: %s\n", err);
		rc = 2;
		goto out;
	}
	if (proc_check_target(sv->pid, err, sizeof(err))) {
		fprintf(stderr, "pmutop: %s\n", err);
		goto out;
	}
	proc_cmdline(sv->pid, sv->cmdline, sizeof(sv->cmdline));
	/* Kernel symbols once (unreadable or hidden: each session says why). */
	if (!o->user_only) {
		char kerr[256];

		sv->ks = kallsyms_load(NULL, kerr, sizeof(kerr));
		sv->so.kallsyms = sv->ks;
	}
	list_events(sv);
	if (gethostname(sv->hostname, sizeof(sv->hostname)) != 0)
		sv->hostname[0] = '\0';
	if (setup_token(sv, &ss) != 0)
		goto out;

	/* Before any thread exists, so that all of them inherit it (see the header). */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &mask, &old);
	signal(SIGPIPE, SIG_IGN);
	/*
	 * Non-blocking: a session's signalfd reads the same process-wide
	 * pending signal, and may take it between our poll and our read. A
	 * blocking read then waited for a next signal that never came, with
	 * the session's wake byte unread (timeout(1) SIGKILLed the server 5 s
	 * after its SIGTERM, about one stop in ten with a profile in flight).
	 */
	sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	pidfd = (int)syscall(SYS_pidfd_open, sv->pid, 0);
	if (sigfd < 0 || pipe2(sv->wake, O_CLOEXEC | O_NONBLOCK)) {
		fprintf(stderr, "pmutop: cannot set up the server: %s\n", strerror(errno));
		goto restore;
	}

	/* ITC: MHD_quiesce_daemon() at stop needs it in this threading mode. */
	flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
		MHD_USE_ERROR_LOG | MHD_USE_ITC;
	/* MHD's messages go through mhd_log (ours deliberate are dropped there). */
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					     : ((struct sockaddr_in6 *)&ss)->sin6_port);
	d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, handle, sv,
			     /* First, or MHD warns through its own logger. */
			     MHD_OPTION_EXTERNAL_LOGGER, mhd_log, (void *)NULL,
			     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
			     MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)MAX_PER_IP,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_SECONDS,
			     MHD_OPTION_END);
	if (!d) {
		addr_text(&ss, port, where, sizeof(where));
		fprintf(stderr, "pmutop: cannot listen on %s (in use, or not an address of this "
			"machine?)\n", where);
		goto restore;
	}
	di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	if (di && di->port)
		port = di->port;
	addr_text(&ss, port, where, sizeof(where));
	char cmdtext[sizeof(sv->cmdline) * 2];

	fprintf(stderr, "pmutop: serving profiles of pid %d (%s) at http://%s/debug/pprof/ "
		"(profile?seconds=N&event=E&period=P, at most %u s)\n", (int)sv->pid,
		term_text(sv->cmdline, cmdtext, sizeof(cmdtext)),
		where, o->http_max_seconds);

	for (;;) {
		struct pollfd p[3] = {
			{ .fd = sigfd, .events = POLLIN },
			{ .fd = sv->wake[0], .events = POLLIN },
			{ .fd = pidfd, .events = POLLIN },
		};
		int n = poll(p, pidfd >= 0 ? 3 : 2, pidfd >= 0 ? -1 : 1000);

		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "pmutop: poll failed: %s\n", strerror(errno));
			break;
		}
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
				fprintf(stderr, "pmutop: %s: stopping the server\n",
					strsignal((int)si.ssi_signo));
				break;
			}
			/* A session took it: its wake byte follows (see above). */
			if (errno != EAGAIN && errno != EINTR) {
				fprintf(stderr, "pmutop: reading signals failed: %s\n",
					strerror(errno));
				break;
			}
		}
		if (p[1].revents & POLLIN) {
			int sig = 0;

			if (read(sv->wake[0], &sig, sizeof(sig)) == sizeof(sig))
				fprintf(stderr, "pmutop: %s: stopping the server\n", strsignal(sig));
			break;
		}
		if ((pidfd >= 0 && (p[2].revents & POLLIN)) || (pidfd < 0 && !target_alive(sv))) {
			fprintf(stderr, "pmutop: target %d exited: stopping the server\n", (int)sv->pid);
			/* Profiles in flight end by themselves now: let them be sent. */
			for (int i = 0; i < 50 && slots_busy(sv); i++)
				usleep(100000);
			break;
		}
	}
	rc = 0;
	atomic_store(&sv->stopping, true);
	/*
	 * Requests in flight answer 503 within POLL_MS (profile()): wait for
	 * their answers before closing the connections (MHD_stop_daemon cut
	 * them: curl saw an empty reply), then a moment for the bytes to go.
	 */
	MHD_quiesce_daemon(d);
	for (int i = 0; i < 50 && slots_busy(sv); i++)
		usleep(20000);
	usleep(100000);
	MHD_stop_daemon(d); /* joins the connection threads */
	/*
	 * Stopped cleanly: keep SIGINT/SIGTERM/SIGHUP blocked until pmutop
	 * exits. A stop signal often comes twice (timeout(1) sends it to its
	 * child and then to its process group; a shell's Ctrl-C reaches every
	 * process of the job): restoring the mask here delivered the pending
	 * second one with its default action and pmutop died by it (exit 143)
	 * after a clean stop. Blocked signals die with the process.
	 */
	goto out;
restore:
	pthread_sigmask(SIG_SETMASK, &old, NULL);
out:
	if (sigfd >= 0)
		close(sigfd);
	if (pidfd >= 0)
		close(pidfd);
	if (sv->wake[0] >= 0)
		close(sv->wake[0]);
	if (sv->wake[1] >= 0)
		close(sv->wake[1]);
	pthread_mutex_destroy(&sv->lock);
	kallsyms_free(sv->ks);
	free(sv);
	return rc;
}
