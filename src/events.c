/*
 * events.c - event names → perf_event_attr (type, config) and preset periods.
 *
 * The pprof++ spellings (cycles, cacheMisses, ...) and perf's (cpu-cycles,
 * cache-misses, ...) map to the same generic hardware events; rUUEE / r0x...
 * are raw model-specific codes. Preset periods aim at roughly one to a few
 * thousand samples per second on a busy core, which the kernel's default
 * perf_event_max_sample_rate allows with room to spare.
 */
#include "pmutop/events.h"

#include <ctype.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct event_alias {
	const char *spelling;
	const char *canonical;
};

/* Canonical events, in the order --help and errors list them. */
static const struct pmu_event builtin[] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 2000000, true, "count" },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 2000000, true, "count" },
	{ "cacheReferences", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, 100000, true, "count" },
	{ "cacheMisses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 10000, true, "count" },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 500000, true, "count" },
	{ "branchMisses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, 10000, true, "count" },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, 2000000, true, "count" },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, 2000000, true, "count" },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, 2000000, true, "count" },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 250000, false, "nanoseconds" },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 250000, false, "nanoseconds" },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 100, false, "count" },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 10, false, "count" },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 1, false, "count" },
};

static const struct event_alias aliases[] = {
	{ "cpu-cycles", "cycles" },
	{ "cache-references", "cacheReferences" },
	{ "cache-misses", "cacheMisses" },
	{ "branch-instructions", "branches" },
	{ "branch-misses", "branchMisses" },
	{ "cpuclock", "cpu-clock" },
	{ "taskclock", "task-clock" },
	{ "faults", "page-faults" },
	{ "cs", "context-switches" },
	{ "migrations", "cpu-migrations" },
	{ "idle-cycles-frontend", "stalled-cycles-frontend" },
	{ "idle-cycles-backend", "stalled-cycles-backend" },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

const struct pmu_event *events_builtin(size_t i)
{
	return i < ARRAY_SIZE(builtin) ? &builtin[i] : NULL;
}

static const struct pmu_event *find_named(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(aliases); i++)
		if (!strcasecmp(name, aliases[i].spelling))
			name = aliases[i].canonical;
	for (size_t i = 0; i < ARRAY_SIZE(builtin); i++)
		if (!strcasecmp(name, builtin[i].name))
			return &builtin[i];
	return NULL;
}

/* Case-insensitive Levenshtein distance, capped for short names. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t row[64];

	if (la >= ARRAY_SIZE(row) || lb >= ARRAY_SIZE(row))
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = tolower((unsigned char)a[i - 1]) !=
				      tolower((unsigned char)b[j - 1]);
			size_t best = diag + cost;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static const char *closest_name(const char *spec)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1;

	for (size_t i = 0; i < ARRAY_SIZE(builtin); i++) {
		size_t d = edit_distance(spec, builtin[i].name);
		if (d < best_d)
			best_d = d, best = builtin[i].name;
	}
	for (size_t i = 0; i < ARRAY_SIZE(aliases); i++) {
		size_t d = edit_distance(spec, aliases[i].spelling);
		if (d < best_d)
			best_d = d, best = aliases[i].spelling;
	}
	/* Only suggest when the typo is small relative to the word. */
	return best_d <= 3 && best_d < strlen(spec) ? best : NULL;
}

static int parse_raw(const char *spec, struct pmu_event *out)
{
	const char *hex = spec + 1;
	char *end;
	unsigned long long code;

	if (!strncasecmp(hex, "0x", 2))
		hex += 2;
	if (!*hex || !isxdigit((unsigned char)*hex))
		return -EINVAL;
	errno = 0;
	code = strtoull(hex, &end, 16);
	if (errno || *end)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "r%llx", code);
	out->type = PERF_TYPE_RAW;
	out->config = code;
	out->preset_period = 100000;
	out->hardware = true;
	out->unit = "count";
	return 0;
}

int events_parse(const char *spec, struct pmu_event *out, char *err, size_t errlen)
{
	const struct pmu_event *ev;
	const char *hint;

	if (!spec || !*spec) {
		snprintf(err, errlen, "empty event name (try -e cycles; see --help for the list)");
		return -EINVAL;
	}
	ev = find_named(spec);
	if (ev) {
		*out = *ev;
		return 0;
	}
	if ((spec[0] == 'r' || spec[0] == 'R') && parse_raw(spec, out) == 0)
		return 0;
	hint = closest_name(spec);
	if (hint)
		snprintf(err, errlen, "unknown event \"%s\"; did you mean \"%s\"? (see --help for the list)",
			 spec, hint);
	else
		snprintf(err, errlen, "unknown event \"%s\" (known: cycles, instructions, cacheMisses, "
			 "cacheReferences, branches, branchMisses, cpu-clock, task-clock, rHEX; see --help)",
			 spec);
	return -EINVAL;
}

int events_probe(const struct pmu_event *ev, bool kernel)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = ev->type;
	attr.config = ev->config;
	attr.disabled = 1;
	attr.exclude_kernel = !kernel;
	attr.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}
