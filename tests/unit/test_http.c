/*
 * test_http.c - unit tests of the HTTP front end's pure parts: the
 * /debug/pprof/profile query (seconds, event, period: defaults, bounds,
 * pprof++ spellings, the reasons given for 400s) and the --http listen
 * address (loopback unless an address is given).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmutop/frontend/http_server.h"
#include "pmutop/profile/term_text.h"

static void test_query_defaults(void **state)
{
	struct http_profile_req rq;
	char err[256];

	(void)state;
	assert_int_equal(http_parse_profile_query(NULL, NULL, NULL, 300, &rq, err, sizeof(err)), 0);
	assert_true(rq.seconds == 30);
	assert_string_equal(rq.event.name, "cycles");
	assert_false(rq.event_given);
	assert_true(rq.period == 0);
	/* A maximum below Go's default of 30 s caps the default too. */
	assert_int_equal(http_parse_profile_query(NULL, NULL, NULL, 10, &rq, err, sizeof(err)), 0);
	assert_true(rq.seconds == 10);
}

static void test_query_values(void **state)
{
	struct http_profile_req rq;
	char err[256];

	(void)state;
	assert_int_equal(http_parse_profile_query("5", "branchMisses", "20000", 300, &rq, err,
						  sizeof(err)), 0);
	assert_true(rq.seconds == 5);
	assert_string_equal(rq.event.name, "branchMisses");
	assert_true(rq.event_given);
	assert_true(rq.period == 20000);
	assert_int_equal(http_parse_profile_query("0.5", "timer", NULL, 300, &rq, err, sizeof(err)), 0);
	assert_true(rq.seconds == 0.5);
	assert_string_equal(rq.event.name, "timer");
	assert_int_equal(http_parse_profile_query("300", "cache-misses", NULL, 300, &rq, err,
						  sizeof(err)), 0);
	assert_string_equal(rq.event.name, "cacheMisses");
	assert_int_equal(http_parse_profile_query(NULL, "r01c2", NULL, 300, &rq, err, sizeof(err)), 0);
	assert_true(rq.event.config == 0x1c2);
}

static void expect_bad(const char *s, const char *e, const char *p, const char *reason)
{
	struct http_profile_req rq;
	char err[256] = "";

	assert_int_equal(http_parse_profile_query(s, e, p, 300, &rq, err, sizeof(err)), -EINVAL);
	if (!strstr(err, reason))
		fail_msg("for seconds=%s event=%s period=%s: \"%s\" lacks \"%s\"", s ? s : "-",
			 e ? e : "-", p ? p : "-", err, reason);
}

static void test_query_bad(void **state)
{
	(void)state;
	expect_bad("abc", NULL, NULL, "invalid seconds \"abc\"");
	expect_bad("", NULL, NULL, "invalid seconds");
	expect_bad("0", NULL, NULL, "more than 0");
	expect_bad("-1", NULL, NULL, "invalid seconds");
	expect_bad("301", NULL, NULL, "at most 300");
	expect_bad("nan", NULL, NULL, "invalid seconds");
	expect_bad("inf", NULL, NULL, "invalid seconds");
	expect_bad("1e9", NULL, NULL, "at most 300");
	expect_bad("5", "bogus", NULL, "invalid event");
	expect_bad("5", "", NULL, "invalid event \"\"");
	expect_bad("5", NULL, "0", "invalid period \"0\"");
	expect_bad("5", NULL, "-3", "invalid period");
	expect_bad("5", NULL, "+3", "invalid period");
	expect_bad("5", NULL, "12abc", "invalid period \"12abc\"");
	expect_bad("5", NULL, "", "invalid period");
	expect_bad("5", NULL, "99999999999999999999", "invalid period");
}

static uint16_t port_of(const struct sockaddr_storage *ss)
{
	return ntohs(ss->ss_family == AF_INET ? ((const struct sockaddr_in *)ss)->sin_port
					      : ((const struct sockaddr_in6 *)ss)->sin6_port);
}

static void test_listen(void **state)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char err[256], ip[INET6_ADDRSTRLEN];

	(void)state;
	assert_int_equal(http_parse_listen("127.0.0.1:6060", &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(port_of(&ss), 6060);
	/* No host: loopback, never every interface. */
	assert_int_equal(http_parse_listen(":6061", &ss, &len, err, sizeof(err)), 0);
	inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip, sizeof(ip));
	assert_string_equal(ip, "127.0.0.1");
	assert_int_equal(port_of(&ss), 6061);
	assert_int_equal(http_parse_listen("6062", &ss, &len, err, sizeof(err)), 0);
	inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip, sizeof(ip));
	assert_string_equal(ip, "127.0.0.1");
	assert_int_equal(http_parse_listen("0.0.0.0:0", &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(port_of(&ss), 0);
	assert_int_equal(http_parse_listen("[::1]:6063", &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(port_of(&ss), 6063);

	assert_int_equal(http_parse_listen("", &ss, &len, err, sizeof(err)), -EINVAL);
	assert_int_equal(http_parse_listen("127.0.0.1:", &ss, &len, err, sizeof(err)), -EINVAL);
	assert_int_equal(http_parse_listen("127.0.0.1:65536", &ss, &len, err, sizeof(err)), -EINVAL);
	assert_int_equal(http_parse_listen("127.0.0.1:-1", &ss, &len, err, sizeof(err)), -EINVAL);
	assert_int_equal(http_parse_listen("::1:80", &ss, &len, err, sizeof(err)), -EINVAL);
	assert_int_equal(http_parse_listen("[::1]80", &ss, &len, err, sizeof(err)), -EINVAL);
	assert_int_equal(http_parse_listen("1.2.3.4.5:80", &ss, &len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "1.2.3.4.5"));
}

/* DNS rebinding: only names that cannot be a web page's own pass. */
static void test_host_check(void **state)
{
	char err[512];

	(void)state;
	assert_int_equal(http_check_host(NULL, "box", NULL, err, sizeof(err)), 0);
	assert_int_equal(http_check_host("127.0.0.1:6060", "box", NULL, err, sizeof(err)), 0);
	assert_int_equal(http_check_host("10.1.2.3", "box", NULL, err, sizeof(err)), 0);
	assert_int_equal(http_check_host("[::1]:6060", "box", NULL, err, sizeof(err)), 0);
	assert_int_equal(http_check_host("LocalHost:1", "box", NULL, err, sizeof(err)), 0);
	assert_int_equal(http_check_host("a.localhost", "box", NULL, err, sizeof(err)), 0);
	assert_int_equal(http_check_host("box:6060", "box", NULL, err, sizeof(err)), 0);
	assert_int_equal(http_check_host("prof.example:80", "box", "prof.example", err,
					 sizeof(err)), 0);
	assert_int_equal(http_check_host("attacker.example", "box", NULL, err, sizeof(err)),
			 -EPERM);
	assert_non_null(strstr(err, "attacker.example"));
	assert_non_null(strstr(err, "--http-allow-host"));
	assert_int_equal(http_check_host("localhost.attacker.example", "box", NULL, err,
					 sizeof(err)), -EPERM);
	assert_int_equal(http_check_host("127.0.0.1.nip.io", "box", NULL, err, sizeof(err)), -EPERM);
	assert_int_equal(http_check_host("[::1", "box", NULL, err, sizeof(err)), -EPERM);
	assert_int_equal(http_check_host("", "box", NULL, err, sizeof(err)), -EPERM);
	assert_int_equal(http_check_host("boxy", "box", NULL, err, sizeof(err)), -EPERM);
}

static void test_html_escape(void **state)
{
	char *e = http_html_escape("a<script>alert('x')</script>&\"\x1b[2J");

	(void)state;
	assert_non_null(e);
	assert_string_equal(e, "a&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&amp;&quot;?[2J");
	free(e);
}

static void test_term_text(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(term_text("ok", buf, sizeof(buf)), "ok");
	assert_string_equal(term_text("\x1b]0;owned\x07", buf, sizeof(buf)), "\\x1b]0;owned\\x07");
	assert_string_equal(term_text("a\\b", buf, sizeof(buf)), "a\\\\b");
	/* UTF-8 stays, C1 controls (UTF-8 or raw) do not. */
	assert_string_equal(term_text("f\xc3\xbc\xe2\x82\xac", buf, sizeof(buf)), "f\xc3\xbc\xe2\x82\xac");
	assert_string_equal(term_text("\xc2\x9b" "1m", buf, sizeof(buf)), "\\x9b1m");
	assert_string_equal(term_text("\x9b" "1m", buf, sizeof(buf)), "\\x9b1m");
	/* Cut at a whole piece, never inside an escape. */
	assert_string_equal(term_text("ab\x1b", buf, 5), "ab");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query_defaults),
		cmocka_unit_test(test_query_values),
		cmocka_unit_test(test_query_bad),
		cmocka_unit_test(test_listen),
		cmocka_unit_test(test_host_check),
		cmocka_unit_test(test_html_escape),
		cmocka_unit_test(test_term_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
