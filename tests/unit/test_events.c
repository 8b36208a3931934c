/*
 * test_events.c - event spellings beyond the builtin names: modifiers,
 * perf's generic cache events, libpfm4 names (checked against libpfm4's own
 * encoding), comma lists, and the attr bits they turn into.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pmutop/sample/events.h"

static char err[512];

static void modifiers(void **state)
{
	struct pmu_event ev;
	struct perf_event_attr attr;

	(void)state;
	assert_int_equal(events_parse("cycles:u", &ev, err, sizeof(err)), 0);
	assert_int_equal(ev.config, PERF_COUNT_HW_CPU_CYCLES);
	assert_int_equal(ev.user, 1);
	assert_int_equal(ev.kernel, 0);
	assert_string_equal(ev.name, "cycles:u");
	memset(&attr, 0, sizeof(attr));
	events_fill_attr(&ev, true, &attr);
	assert_int_equal(attr.exclude_kernel, 1); /* :u beats --kernel */
	assert_int_equal(attr.exclude_user, 0);

	assert_int_equal(events_parse("instructions:k", &ev, err, sizeof(err)), 0);
	memset(&attr, 0, sizeof(attr));
	events_fill_attr(&ev, false, &attr);
	assert_int_equal(attr.exclude_kernel, 0);
	assert_int_equal(attr.exclude_user, 1);

	assert_int_equal(events_parse("branchMisses:ppp", &ev, err, sizeof(err)), 0);
	assert_int_equal(ev.precise, 3);
	memset(&attr, 0, sizeof(attr));
	events_fill_attr(&ev, false, &attr);
	assert_int_equal(attr.precise_ip, 3);
	assert_int_equal(attr.exclude_kernel, 1); /* no modifier: user only by default */

	assert_int_equal(events_parse("cycles:pppp", &ev, err, sizeof(err)), -EINVAL);
	/* No modifiers: the --kernel default decides. */
	assert_int_equal(events_parse("cycles", &ev, err, sizeof(err)), 0);
	memset(&attr, 0, sizeof(attr));
	events_fill_attr(&ev, true, &attr);
	assert_int_equal(attr.exclude_kernel, 0);
}

/* attr of spec with --kernel off. */
static struct perf_event_attr attr_of(const char *spec)
{
	struct pmu_event ev;
	struct perf_event_attr attr;

	if (events_parse(spec, &ev, err, sizeof(err)))
		fail_msg("\"%s\" rejected: %s", spec, err);
	memset(&attr, 0, sizeof(attr));
	events_fill_attr(&ev, false, &attr);
	return attr;
}

/* What perf's parse-events accepts and rejects, case by case (issue 22). */
static void modifiers_as_perf(void **state)
{
	struct pmu_event ev;
	struct perf_event_attr a;
	static const struct { const char *spec, *why; } rejected[] = {
		{ "task-clock:K", "'K'" },        /* perf: upper-case K is no modifier */
		{ "page-faults:U", "'U'" },
		{ "cycles:x", "'x'" },
		{ "task-clock:uu", "twice" },      /* perf: only p may repeat */
		{ "cycles:kk", "twice" },
		{ "cycles:pppp", "too many" },
		{ "task-clock:", "empty" },
		{ "task-clock:p", "hardware" },    /* precise: a PMU thing */
		{ "page-faults:P", "hardware" },
		{ "cycles:G", "guest" },           /* guest only: nothing of a host process */
		{ "cycles:S", "groups" },          /* perf's group/counting modifiers */
		{ "cycles:D", "groups" },
		{ "cycles:W", "groups" },
		{ "cycles:e", "groups" },
		{ "cycles:b", "groups" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rejected) / sizeof(rejected[0]); i++) {
		if (events_parse(rejected[i].spec, &ev, err, sizeof(err)) != -EINVAL)
			fail_msg("\"%s\" accepted; perf rejects it", rejected[i].spec);
		if (!strstr(err, rejected[i].why) || !strstr(err, rejected[i].spec))
			fail_msg("\"%s\": message \"%s\" lacks \"%s\"", rejected[i].spec, err,
				 rejected[i].why);
	}
	/* u, k, h: any one given excludes the levels not given */
	a = attr_of("task-clock:u");
	assert_true(!a.exclude_user && a.exclude_kernel && a.exclude_hv);
	a = attr_of("task-clock:k");
	assert_true(a.exclude_user && !a.exclude_kernel && a.exclude_hv);
	a = attr_of("page-faults:uk");
	assert_true(!a.exclude_user && !a.exclude_kernel && a.exclude_hv);
	a = attr_of("cycles:h");
	assert_true(a.exclude_user && a.exclude_kernel && !a.exclude_hv);
	a = attr_of("cycles:ku");
	assert_true(!a.exclude_user && !a.exclude_kernel);
	/* H: host only; I: not idle; p..ppp and P */
	a = attr_of("task-clock:H");
	assert_true(a.exclude_guest && !a.exclude_user && a.exclude_kernel);
	a = attr_of("cycles:uI");
	assert_true(a.exclude_idle && a.exclude_kernel);
	a = attr_of("cycles:upp");
	assert_int_equal(a.precise_ip, 2);
	assert_int_equal(events_parse("instructions:P", &ev, err, sizeof(err)), 0);
	assert_true(ev.precise_max);
	assert_int_equal(ev.precise, 3);
	assert_int_equal(events_parse("cycles:p", &ev, err, sizeof(err)), 0);
	assert_false(ev.precise_max);
	/* modifiers keep the event's unit and show in its name */
	assert_int_equal(events_parse("task-clock:u", &ev, err, sizeof(err)), 0);
	assert_string_equal(ev.unit, "nanoseconds");
	assert_string_equal(ev.name, "task-clock:u");
	assert_int_equal(events_parse("page-faults:u", &ev, err, sizeof(err)), 0);
	assert_string_equal(ev.unit, "count");
	/* raw and cache events take them too; without them all levels default */
	a = attr_of("r01c2:u");
	assert_true(a.exclude_kernel && !a.exclude_user);
	a = attr_of("L1-dcache-load-misses:k");
	assert_true(a.exclude_user && !a.exclude_kernel);
	a = attr_of("r01c2");
	assert_true(!a.exclude_user && a.exclude_kernel);
}

static void cache_events(void **state)
{
	struct pmu_event ev;

	(void)state;
	assert_int_equal(events_parse("L1-dcache-load-misses", &ev, err, sizeof(err)), 0);
	assert_int_equal(ev.type, PERF_TYPE_HW_CACHE);
	assert_int_equal(ev.config, PERF_COUNT_HW_CACHE_L1D | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
				    (PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
	assert_int_equal(events_parse("LLC-loads", &ev, err, sizeof(err)), 0);
	assert_int_equal(ev.config, PERF_COUNT_HW_CACHE_LL | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
				    (PERF_COUNT_HW_CACHE_RESULT_ACCESS << 16));
	assert_int_equal(events_parse("dTLB-store-misses", &ev, err, sizeof(err)), 0);
	assert_int_equal(ev.config, PERF_COUNT_HW_CACHE_DTLB | (PERF_COUNT_HW_CACHE_OP_WRITE << 8) |
				    (PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
	assert_int_equal(events_parse("LLC-frobs", &ev, err, sizeof(err)), -EINVAL);
}

/* A name libpfm4 knows resolves to exactly libpfm4's encoding. */
static void libpfm4_names_match_libpfm4(void **state)
{
	static const char *names[] = { "perf::PERF_COUNT_HW_CPU_CYCLES",
				       "perf::PERF_COUNT_HW_BRANCH_MISSES",
				       "perf::PERF_COUNT_SW_CONTEXT_SWITCHES" };
	struct pmu_event ev;

	(void)state;
	assert_int_equal(pfm_initialize(), PFM_SUCCESS);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct perf_event_attr attr;
		pfm_perf_encode_arg_t arg;

		memset(&attr, 0, sizeof(attr));
		memset(&arg, 0, sizeof(arg));
		arg.attr = &attr;
		arg.size = sizeof(arg);
		assert_int_equal(pfm_get_os_event_encoding(names[i], PFM_PLM3, PFM_OS_PERF_EVENT_EXT,
							   &arg), PFM_SUCCESS);
		assert_int_equal(events_parse(names[i], &ev, err, sizeof(err)), 0);
		assert_int_equal(ev.type, attr.type);
		assert_int_equal(ev.config, attr.config);
		assert_int_equal(ev.config1, attr.config1);
	}
}

static void lists(void **state)
{
	struct pmu_event evs[PMUTOP_MAX_EVENTS];
	size_t n = 0;

	(void)state;
	assert_int_equal(events_parse_list("cycles,instructions:u,task-clock", evs,
					   PMUTOP_MAX_EVENTS, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	assert_string_equal(evs[0].name, "cycles");
	assert_string_equal(evs[1].name, "instructions:u");
	assert_string_equal(evs[2].name, "task-clock");
	/* Appends, and refuses duplicates and overflow. */
	assert_int_equal(events_parse_list("branches", evs, PMUTOP_MAX_EVENTS, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 4);
	assert_int_equal(events_parse_list("cycles", evs, PMUTOP_MAX_EVENTS, &n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "twice"));
	n = 0;
	assert_int_equal(events_parse_list("cycles,nope", evs, PMUTOP_MAX_EVENTS, &n, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "nope"));
	n = 0;
	assert_int_equal(events_parse_list("cycles,instructions,branches", evs, 2, &n, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "too many"));
	n = 0;
	assert_int_equal(events_parse_list(",", evs, PMUTOP_MAX_EVENTS, &n, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(modifiers),
		cmocka_unit_test(modifiers_as_perf),
		cmocka_unit_test(cache_events),
		cmocka_unit_test(libpfm4_names_match_libpfm4),
		cmocka_unit_test(lists),
	};
	return cmocka_run_group_tests_name("events", tests, NULL, NULL);
}
