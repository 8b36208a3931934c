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
		cmocka_unit_test(cache_events),
		cmocka_unit_test(libpfm4_names_match_libpfm4),
		cmocka_unit_test(lists),
	};
	return cmocka_run_group_tests_name("events", tests, NULL, NULL);
}
