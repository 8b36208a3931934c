/*
 * test_flamegraph.c - unit tests of the HTML flame graph writer: the page
 * is the embedded template with its placeholders filled (styles, data,
 * script inline, nothing loaded from elsewhere), the call tree merges
 * stacks root first with per-event values, trimming keeps the largest
 * frames and says how many it left out, the differential page carries the
 * base's values, and hostile names (</script>, quotes, control bytes,
 * invalid UTF-8) cannot end the data element. The page in a real browser
 * is tested by tests/e2e/t_flame_html.sh.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "agg_spec.h"

#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/flamegraph.h"

static char *encode(const struct aggregate *a, const struct flame_opts *fo, bool page)
{
	char *buf = NULL, err[256] = "";
	size_t len = 0;

	assert_int_equal(flamegraph_encode(a, fo, page, &buf, &len, err, sizeof(err)), 0);
	assert_non_null(buf);
	assert_int_equal(strlen(buf), len);
	return buf;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static struct aggregate *sample(void)
{
	struct aggregate *a = aggregate_new();

	assert_non_null(a);
	agg_add_spec(a, 1, 10, "a@20 main@10");
	agg_add_spec(a, 2, 30, "b@30 main@11");
	agg_add_spec(a, 1, 5, "b@31 a@21 main@12");
	return a;
}

/* The page: template, inline style and script, data element, no external loads. */
static void test_page(void **state)
{
	struct aggregate *a = sample();
	struct flame_opts fo = { .title = "./prog --arg" };
	char *page = encode(a, &fo, true);

	(void)state;
	assert_true(!strncmp(page, "<!DOCTYPE html>", 15));
	assert_non_null(strstr(page, "<style>"));
	assert_non_null(strstr(page, "<script type=\"application/json\" id=\"pmutop-data\">{\"version\":1,"));
	assert_null(strstr(page, "href=\"flame.css\""));
	assert_null(strstr(page, "src=\"flame.js\""));
	assert_null(strstr(page, "http://"));
	assert_null(strstr(page, "https://"));
	/* The data element and the script: two closing tags, no more. */
	assert_int_equal(count(page, "</script"), 2);
	assert_int_equal(count(page, "</style"), 1);
	assert_non_null(strstr(page, "\"title\":\"./prog --arg\""));
	free(page);
	aggregate_free(a);
}

/*
 * The tree: root 45 = main 45; under main a 15 (10 own + 5 via b), b 30;
 * under a, b 5. Pre-order with children by name: all, main, a, b(a), b.
 */
static void test_tree(void **state)
{
	struct aggregate *a = sample();
	char *json = encode(a, NULL, false);

	(void)state;
	assert_non_null(strstr(json, "\"depth\":[0,1,2,3,2]"));
	assert_non_null(strstr(json, "\"value\":[[45,45,15,5,30]]"));
	assert_non_null(strstr(json, "\"samples\":[[3,3,2,1,1]]"));
	assert_non_null(strstr(json, "\"trimmed\":{\"nodes\":0,"));
	assert_non_null(strstr(json, "\"diff\":null"));
	assert_non_null(strstr(json, "\"live\":null"));
	free(json);
	aggregate_free(a);
}

/* Over the limit: the smallest frames go, the page says how many. */
static void test_trim(void **state)
{
	struct aggregate *a = sample();
	struct flame_opts fo = { .max_nodes = 4 };
	char *json = encode(a, &fo, false);

	(void)state;
	/* b under a (5 of 45) is the smallest: all, main, a, b remain. */
	assert_non_null(strstr(json, "\"depth\":[0,1,2,2]"));
	assert_non_null(strstr(json, "\"value\":[[45,45,15,30]]"));
	assert_non_null(strstr(json, "\"trimmed\":{\"nodes\":1,"));
	free(json);
	aggregate_free(a);
}

/* Several events: one value and one samples array per event. */
static void test_events(void **state)
{
	struct aggregate *a = aggregate_new();
	struct agg_info *info = aggregate_info(a);
	char *json;

	(void)state;
	info->nevents = 2;
	info->events[0] = (struct agg_event){ "cycles", "count", 1000, 1.0 };
	info->events[1] = (struct agg_event){ "instructions", "count", 1000, 1.0 };
	agg_add_spec_ev(a, 1, 0, 4000, "f@10 main@1");
	agg_add_spec_ev(a, 1, 1, 2000, "f@10 main@1");
	agg_add_spec_ev(a, 1, 1, 1000, "g@20 main@1");
	json = encode(a, NULL, false);
	assert_non_null(strstr(json, "\"value\":[[4000,4000,4000,0],[3000,3000,2000,1000]]"));
	assert_non_null(strstr(json, "{\"name\":\"instructions\",\"unit\":\"count\",\"period\":1000"));
	free(json);
	aggregate_free(a);
}

/* --diff-base: the base's weights by frame path, and what only the base has. */
static void test_diff(void **state)
{
	struct aggregate *a = sample(), *b = aggregate_new();
	struct flame_opts fo = { .base = b, .base_name = "old.pb.gz" };
	char *json;

	(void)state;
	agg_add_spec(b, 7, 20, "a@99 main@98");   /* other addresses: same frames */
	agg_add_spec(b, 7, 40, "gone@97 main@98");
	json = encode(a, &fo, false);
	assert_non_null(strstr(json, "\"base\":[60,60,20,0,0]"));
	assert_non_null(strstr(json, "\"diff\":{\"file\":\"old.pb.gz\","));
	assert_non_null(strstr(json, "\"total\":60,\"base_only\":40}"));
	free(json);
	aggregate_free(b);
	aggregate_free(a);
}

/* A hostile name is data: escaped, never the end of the element. */
static void test_hostile(void **state)
{
	struct aggregate *a = aggregate_new();
	char *page;

	(void)state;
	agg_add_spec(a, 1, 10, "</script><script>alert(1)</script>&\"'\x01\xff\xe2\x80\xa8<!--@10 main@1");
	page = encode(a, NULL, true);
	assert_null(strstr(page, "alert(1)</script>"));
	assert_null(strstr(page, "<script>alert"));
	assert_null(strstr(page, "<!--\""));
	assert_int_equal(count(page, "</script"), 2);
	assert_non_null(strstr(page, "\"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"
				     "\\u0026\\\"\\u0027\\u0001\\ufffd\\u2028\\u003c!--\""));
	free(page);
	aggregate_free(a);
}

/* JIT (named, anonymous memory), unknown (no symbol) and user frames differ. */
static void test_kinds(void **state)
{
	struct aggregate *a = aggregate_new();
	uint32_t anon, lib, fj, fu, fx, lj, lu, lx;
	const char *p;
	char *json;
	int v[16];

	(void)state;
	assert_int_equal(aggregate_import_mapping(a, 0x1000, 0x2000, 0, "", "", true, &anon), 0);
	assert_int_equal(aggregate_import_mapping(a, 0x4000, 0x8000, 0, "/lib/x.so", "", false, &lib), 0);
	assert_int_equal(aggregate_import_function(a, "jit_fn", "", &fj), 0);
	assert_int_equal(aggregate_import_function(a, "user_fn", "/lib/x.so", &fu), 0);
	assert_int_equal(aggregate_import_function(a, "x.so+0x1234", "/lib/x.so", &fx), 0);
	assert_int_equal(aggregate_import_location(a, anon, 0x1100, fj, &lj), 0);
	assert_int_equal(aggregate_import_location(a, lib, 0x4100, fu, &lu), 0);
	assert_int_equal(aggregate_import_location(a, lib, 0x5234, fx, &lx), 0);
	assert_int_equal(aggregate_import_stack(a, 1, (uint32_t[]){ lj, lx, lu }, 3, 1, (uint64_t[]){ 1 }, 1), 0);
	json = encode(a, NULL, false);
	p = strstr(json, "\"frames\":[");
	assert_non_null(p);
	/* Four frames of (name, module, file, kind), in order of first sight. */
	assert_int_equal(sscanf(p, "\"frames\":[%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d]",
				&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8],
				&v[9], &v[10], &v[11], &v[12], &v[13], &v[14], &v[15]), 16);
	assert_int_equal(v[3], 5);  /* the root, "all" */
	assert_int_equal(v[7], 2);  /* jit_fn: named, in anonymous memory */
	assert_int_equal(v[11], 0); /* user_fn */
	assert_int_equal(v[15], 3); /* x.so+0x1234: no symbol */
	free(json);
	aggregate_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_page),
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_trim),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_kinds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
