/*
 * events.c - event names → perf_event_attr (type, config) and preset periods.
 *
 * The pprof++ spellings (cycles, cacheMisses, ...) and perf's (cpu-cycles,
 * cache-misses, ...) map to the same generic hardware events; rUUEE / r0x...
 * are raw model-specific codes. Preset periods aim at roughly one to a few
 * thousand samples per second on a busy core, which the kernel's default
 * perf_event_max_sample_rate allows with room to spare.
 */
#include "pmutop/sample/events.h"

#include <ctype.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct event_alias {
	const char *spelling;
	const char *canonical;
};

/* Canonical events, in the order --help and errors list them. */
#define EV(n, t, c, p, hw, u)                                                   \
	{ .name = n, .type = t, .config = c, .preset_period = p, .hardware = hw,  \
	  .unit = u, .user = -1, .kernel = -1, .hv = -1 }

static const struct pmu_event builtin[] = {
	EV("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 2000000, true, "count"),
	EV("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 2000000, true, "count"),
	EV("cacheReferences", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, 100000, true, "count"),
	EV("cacheMisses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 10000, true, "count"),
	EV("branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 500000, true, "count"),
	EV("branchMisses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, 10000, true, "count"),
	EV("ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, 2000000, true, "count"),
	EV("stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, 2000000, true, "count"),
	EV("stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, 2000000, true, "count"),
	EV("cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 250000, false, "nanoseconds"),
	/*
	 * pprof++'s "timer": the legacy OS-timer profile (setitimer/SIGPROF at
	 * 100 Hz), kept as a baseline to compare PMU events against. The thread's
	 * CPU clock every 10 ms is what such a timer measures.
	 */
	EV("timer", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 10000000, false, "nanoseconds"),
	EV("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 250000, false, "nanoseconds"),
	EV("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 100, false, "count"),
	EV("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 10, false, "count"),
	EV("cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 1, false, "count"),
	/*
	 * Off-CPU time: every switch-out is sampled (period 1), weighted by the
	 * time until the next switch-in. The sample is taken in the kernel's
	 * scheduler, so it needs kernel mode (kernel = 1) even for user stacks.
	 */
	{ .name = "offcpu", .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CONTEXT_SWITCHES,
	  .preset_period = 1, .unit = "nanoseconds", .user = -1, .kernel = 1, .hv = -1,
	  .offcpu = true },
};

/* The generic cache events worth listing (and suggesting for typos). */
static const char *cache_names[] = {
	"L1-dcache-loads", "L1-dcache-load-misses", "L1-dcache-stores",
	"L1-icache-load-misses", "LLC-loads", "LLC-load-misses", "LLC-stores",
	"LLC-store-misses", "dTLB-loads", "dTLB-load-misses", "iTLB-load-misses",
	"branch-loads", "branch-load-misses", "node-loads", "node-load-misses",
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

const char *events_perf_name(const char *name, char *buf, size_t len)
{
	size_t base = strcspn(name, ":");

	/* pmutop's camelCase names (branchMisses) have perf's spelling as an alias. */
	for (size_t i = 0; i < ARRAY_SIZE(aliases); i++) {
		const char *c = aliases[i].canonical;

		if (strlen(c) == base && !strncmp(name, c, base) && strchr(aliases[i].spelling, '-') &&
		    strcspn(c, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") < base) {
			snprintf(buf, len, "%s%s", aliases[i].spelling, name + base);
			return buf;
		}
	}
	snprintf(buf, len, "%s", name);
	return buf;
}

const char *events_alias(size_t i)
{
	if (i < ARRAY_SIZE(aliases))
		return aliases[i].spelling;
	i -= ARRAY_SIZE(aliases);
	return i < ARRAY_SIZE(cache_names) ? cache_names[i] : NULL;
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

size_t events_name_distance(const char *a, const char *b)
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
		size_t d = events_name_distance(spec, builtin[i].name);
		if (d < best_d)
			best_d = d, best = builtin[i].name;
	}
	for (size_t i = 0; i < ARRAY_SIZE(aliases); i++) {
		size_t d = events_name_distance(spec, aliases[i].spelling);
		if (d < best_d)
			best_d = d, best = aliases[i].spelling;
	}
	for (size_t i = 0; i < ARRAY_SIZE(cache_names); i++) {
		size_t d = events_name_distance(spec, cache_names[i]);
		if (d < best_d)
			best_d = d, best = cache_names[i];
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

/*
 * perf's generic cache events: CACHE-OP[-RESULT], e.g. L1-dcache-load-misses,
 * LLC-loads, dTLB-load-misses (encoded as id | op << 8 | result << 16).
 */
static int parse_cache_event(const char *spec, struct pmu_event *out)
{
	static const struct { const char *name; unsigned id; } caches[] = {
		{ "L1-dcache", PERF_COUNT_HW_CACHE_L1D }, { "L1-icache", PERF_COUNT_HW_CACHE_L1I },
		{ "LLC", PERF_COUNT_HW_CACHE_LL }, { "dTLB", PERF_COUNT_HW_CACHE_DTLB },
		{ "iTLB", PERF_COUNT_HW_CACHE_ITLB }, { "branch", PERF_COUNT_HW_CACHE_BPU },
		{ "node", PERF_COUNT_HW_CACHE_NODE },
	};
	static const struct { const char *name; unsigned op, result; } ops[] = {
		{ "loads", PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
		{ "load-misses", PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS },
		{ "stores", PERF_COUNT_HW_CACHE_OP_WRITE, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
		{ "store-misses", PERF_COUNT_HW_CACHE_OP_WRITE, PERF_COUNT_HW_CACHE_RESULT_MISS },
		{ "prefetches", PERF_COUNT_HW_CACHE_OP_PREFETCH, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
		{ "prefetch-misses", PERF_COUNT_HW_CACHE_OP_PREFETCH, PERF_COUNT_HW_CACHE_RESULT_MISS },
	};

	for (size_t i = 0; i < ARRAY_SIZE(caches); i++) {
		size_t l = strlen(caches[i].name);
		if (strncasecmp(spec, caches[i].name, l) || spec[l] != '-')
			continue;
		for (size_t j = 0; j < ARRAY_SIZE(ops); j++) {
			if (strcasecmp(spec + l + 1, ops[j].name))
				continue;
			memset(out, 0, sizeof(*out));
			snprintf(out->name, sizeof(out->name), "%s-%s", caches[i].name, ops[j].name);
			out->type = PERF_TYPE_HW_CACHE;
			out->config = caches[i].id | (ops[j].op << 8) | (ops[j].result << 16);
			out->preset_period = ops[j].result == PERF_COUNT_HW_CACHE_RESULT_MISS ? 10000 : 100000;
			out->hardware = true;
			out->unit = "count";
			return 0;
		}
	}
	return -ENOENT;
}

static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static bool pfm_ok;

static void pfm_init_once(void)
{
	pfm_ok = pfm_initialize() == PFM_SUCCESS;
}

/*
 * The CPU's own event names through libpfm4 (e.g. INST_RETIRED:ANY_P,
 * MEM_LOAD_L3_MISS_RETIRED:REMOTE_HITM, amd64_fam19h_zen3::...): libpfm4 owns
 * the tables, pmutop does not copy them.
 */
static int parse_pfm_event(const char *spec, struct pmu_event *out)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	char *fstr = NULL;

	pthread_once(&pfm_once, pfm_init_once);
	if (!pfm_ok)
		return -ENOENT;
	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.fstr = &fstr;
	arg.size = sizeof(arg);
	if (pfm_get_os_event_encoding(spec, PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg) != PFM_SUCCESS)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", spec);
	out->type = attr.type;
	out->config = attr.config;
	out->config1 = attr.config1;
	out->config2 = attr.config2;
	out->hardware = attr.type != PERF_TYPE_SOFTWARE;
	out->preset_period = 100000;
	out->unit = "count";
	/* libpfm4's own modifiers (u=, k=, precise=) are part of the encoding. */
	if (attr.precise_ip)
		out->precise = (uint8_t)attr.precise_ip;
	free(fstr);
	return 0;
}

/* Whether name (no modifiers) is one of pmutop's own spellings (not libpfm4's). */
static bool own_name(const char *name)
{
	struct pmu_event tmp;

	return find_named(name) || ((name[0] == 'r' || name[0] == 'R') && !parse_raw(name, &tmp)) ||
	       !parse_cache_event(name, &tmp);
}

/*
 * perf's event modifiers, parsed as perf's parse-events does: the letters
 * u k h G H I p P S D W e b, each at most once except p (up to 3). u, k and
 * h together say which privilege levels count (any one given excludes the
 * others); G/H guest/host; p..ppp precise_ip, P the most the CPU has.
 * Writes a message and returns -EINVAL for what perf rejects and for what
 * pmutop cannot honour (group and counting-only modifiers, guest-only).
 */
static int parse_modifiers(const char *spec, const char *m, struct pmu_event *ev,
			   char *err, size_t errlen)
{
	bool any_level = strpbrk(m, "ukh") != NULL;
	unsigned p = 0;

	if (!*m) {
		snprintf(err, errlen, "empty modifier in event \"%s\" (perf's are u k h G H I p P)",
			 spec);
		return -EINVAL;
	}
	for (const char *c = m; *c; c++) {
		if (!strchr("ukhGHIpPSDWeb", *c)) {
			snprintf(err, errlen, "invalid modifier '%c' in event \"%s\" (perf's are u k h "
				 "G H I p P, lower-case u/k/h for user/kernel/hypervisor; perf "
				 "rejects it too)", *c, spec);
			return -EINVAL;
		}
		if (*c != 'p' && strchr(c + 1, *c)) {
			snprintf(err, errlen, "modifier '%c' given twice in event \"%s\" (perf rejects "
				 "it too)", *c, spec);
			return -EINVAL;
		}
		if (strchr("SDWeb", *c)) {
			snprintf(err, errlen, "modifier '%c' in event \"%s\" is perf's for counting "
				 "groups (S sample-read, D pinned, W weak, e exclusive, b BPF); pmutop "
				 "samples each event on its own: drop it", *c, spec);
			return -EINVAL;
		}
		if (*c == 'G') {
			snprintf(err, errlen, "modifier 'G' in event \"%s\" counts only while a virtual "
				 "machine runs guest code; pmutop profiles host processes and would "
				 "see nothing (use :H, or no modifier)", spec);
			return -EINVAL;
		}
		if (*c == 'p')
			p++;
	}
	if (p > 3) {
		snprintf(err, errlen, "too many 'p' in event \"%s\" (precise levels are :p, :pp and "
			 ":ppp; :P for the most the CPU has)", spec);
		return -EINVAL;
	}
	if ((p || strchr(m, 'P')) && !ev->hardware) {
		snprintf(err, errlen, "precise sampling in \"%s\" needs a hardware PMU event; %s "
			 "is a software event, exact already (drop :p/:P)", spec, ev->name);
		return -EINVAL;
	}
	if (any_level) {
		ev->user = strchr(m, 'u') ? 1 : 0;
		ev->kernel = strchr(m, 'k') ? 1 : 0;
		ev->hv = strchr(m, 'h') ? 1 : 0;
	}
	if (strchr(m, 'H'))
		ev->host_only = true;
	if (strchr(m, 'I'))
		ev->exclude_idle = true;
	if (strchr(m, 'P')) {
		ev->precise = 3;
		ev->precise_max = true; /* lowered by probing to what the CPU accepts */
	} else if (p) {
		ev->precise = (uint8_t)p;
	}
	return 0;
}

int events_parse(const char *spec, struct pmu_event *out, char *err, size_t errlen)
{
	const struct pmu_event *ev;
	const char *colon, *hint;
	char base[128];

	if (!spec || !*spec) {
		snprintf(err, errlen, "empty event name (try -e cycles; see --list-events)");
		return -EINVAL;
	}
	if (strlen(spec) >= sizeof(base)) {
		snprintf(err, errlen, "event name too long: \"%.40s...\"", spec);
		return -EINVAL;
	}
	/*
	 * "NAME:MODS" with one of pmutop's names takes perf's modifiers;
	 * anything else is tried whole with libpfm4, whose names have their own
	 * ":UMASK" parts.
	 */
	snprintf(base, sizeof(base), "%s", spec);
	colon = strrchr(spec, ':');
	if (colon) {
		base[colon - spec] = 0;
		if (!own_name(base))
			snprintf(base, sizeof(base), "%s", spec);
	}
	ev = find_named(base);
	if (ev)
		*out = *ev;
	else if (!((base[0] == 'r' || base[0] == 'R') && parse_raw(base, out) == 0) &&
		 parse_cache_event(base, out) && parse_pfm_event(spec, out)) {
		hint = closest_name(base);
		if (hint)
			snprintf(err, errlen, "unknown event \"%s\"; did you mean \"%s\"? "
				 "(see pmutop --list-events)", spec, hint);
		else
			snprintf(err, errlen, "unknown event \"%s\" (known: cycles, instructions, "
				 "cacheMisses, cacheReferences, branches, branchMisses, cpu-clock, "
				 "task-clock, offcpu, rHEX, perf cache events, libpfm4 names; see pmutop --list-events)",
				 spec);
		return -EINVAL;
	}
	if (!ev)
		out->user = out->kernel = out->hv = -1; /* raw, cache, libpfm4: defaults */
	if (!strcmp(base, spec) && colon)
		return 0; /* libpfm4 consumed the whole spelling, its modifiers included */
	if (strcmp(spec, base) && out->offcpu) {
		snprintf(err, errlen, "event \"%s\": offcpu takes no modifiers (it samples every "
			 "switch-out in the scheduler, user stacks included; --user-only drops the "
			 "kernel frames)", spec);
		return -EINVAL;
	}
	if (strcmp(spec, base)) {
		if (parse_modifiers(spec, spec + strlen(base) + 1, out, err, errlen))
			return -EINVAL;
		/* Keep the modifiers visible in the name users see. */
		snprintf(out->name, sizeof(out->name), "%s", spec);
	}
	return 0;
}

int events_parse_list(const char *spec, struct pmu_event *out, size_t max, size_t *n,
		      char *err, size_t errlen)
{
	char buf[512], *save = NULL, *tok;

	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "event list too long: \"%.40s...\"", spec);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n >= max) {
			snprintf(err, errlen, "too many events (at most %zu)", max);
			return -EINVAL;
		}
		if (events_parse(tok, &out[*n], err, errlen))
			return -EINVAL;
		for (size_t i = 0; i < *n; i++) {
			if (!strcmp(out[i].name, out[*n].name)) {
				snprintf(err, errlen, "event \"%s\" given twice", tok);
				return -EINVAL;
			}
		}
		(*n)++;
	}
	if (!*n) {
		snprintf(err, errlen, "empty event list \"%s\"", spec);
		return -EINVAL;
	}
	return 0;
}

void events_fill_attr(const struct pmu_event *ev, bool kernel, struct perf_event_attr *attr)
{
	attr->type = ev->type;
	attr->config = ev->config;
	attr->config1 = ev->config1;
	attr->config2 = ev->config2;
	attr->precise_ip = ev->precise;
	attr->exclude_user = ev->user == 0;
	attr->exclude_kernel = ev->kernel >= 0 ? ev->kernel == 0 : !kernel;
	attr->exclude_hv = ev->hv != 1;
	attr->exclude_guest = ev->host_only;
	attr->exclude_idle = ev->exclude_idle;
}

/* A disabled counting counter for ev on the calling thread: fd or -errno. */
static int open_on_self(const struct pmu_event *ev, bool kernel)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	events_fill_attr(ev, kernel, &attr);
	attr.disabled = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int events_probe(const struct pmu_event *ev, bool kernel)
{
	int fd = open_on_self(ev, kernel);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/*
 * Count ev on the calling thread over ~20 ms of busy work. Returns events
 * per second of busy CPU - per second of this thread's own CPU time, not
 * of wall time, which on a loaded machine holds time the thread waited to
 * run - or -errno when the event does not open.
 */
static double measure_rate(const struct pmu_event *ev, bool kernel)
{
	struct timespec t0, t1;
	volatile uint64_t x = 1;
	uint64_t count = 0;
	int fd = open_on_self(ev, kernel);

	if (fd < 0)
		return fd;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	do {
		/* A mix of dependent arithmetic, branches and memory touches. */
		static uint8_t buf[1 << 20];
		for (int i = 0; i < 20000; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			buf[(x >> 20) & (sizeof(buf) - 1)] += (uint8_t)x;
			if (x & 0x8000)
				x ^= x >> 7;
		}
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	} while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 20000000L);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &count, sizeof(count)) != sizeof(count))
		count = 0;
	close(fd);
	return (double)count / ((double)(t1.tv_sec - t0.tv_sec) +
				(double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
}

static void list_one(FILE *out, const struct pmu_event *ev, bool kernel)
{
	double rate = measure_rate(ev, kernel);

	if (rate < 0)
		return; /* not usable here: --list-events lists what opens */
	if (ev->offcpu) {
		fprintf(out, "  %-28s %10llu  one sample per block (as often as threads wait)\n",
			ev->name, (unsigned long long)ev->preset_period);
	} else if (ev->unit && !strcmp(ev->unit, "nanoseconds") && ev->preset_period) {
		/* A CPU clock counts nanoseconds of running: the rate is exact. */
		fprintf(out, "  %-28s %10llu  %.0f samples/s per busy thread\n", ev->name,
			(unsigned long long)ev->preset_period, 1e9 / (double)ev->preset_period);
	} else if (rate > 0)
		fprintf(out, "  %-28s %10llu  ~%.0f samples/s per busy thread\n", ev->name,
			(unsigned long long)ev->preset_period, rate / (double)ev->preset_period);
	else
		fprintf(out, "  %-28s %10llu  (rate depends on the workload)\n", ev->name,
			(unsigned long long)ev->preset_period);
}

void events_list(FILE *out, bool kernel)
{
	struct pmu_event ev;
	char err[256];
	unsigned npfm = 0;

	fprintf(out, "Events usable on this machine (probed by opening each on pmutop itself):\n\n");
	fprintf(out, "  %-28s %10s  %s\n", "event", "preset", "rate at the preset period");
	for (size_t i = 0; i < ARRAY_SIZE(builtin); i++)
		list_one(out, &builtin[i], kernel);
	for (size_t i = 0; i < ARRAY_SIZE(cache_names); i++)
		if (events_parse(cache_names[i], &ev, err, sizeof(err)) == 0)
			list_one(out, &ev, kernel);

	/* The CPU's own events, from libpfm4's tables for the PMUs present. */
	pthread_once(&pfm_once, pfm_init_once);
	if (pfm_ok) {
		pfm_pmu_t pmu;
		pfm_for_all_pmus(pmu) {
			pfm_pmu_info_t pinfo;
			memset(&pinfo, 0, sizeof(pinfo));
			pinfo.size = sizeof(pinfo);
			if (pfm_get_pmu_info(pmu, &pinfo) != PFM_SUCCESS || !pinfo.is_present ||
			    pinfo.type != PFM_PMU_TYPE_CORE)
				continue;
			fprintf(out, "\n  %s (%s), through libpfm4:\n", pinfo.name, pinfo.desc);
			for (int idx = pinfo.first_event; idx != -1; idx = pfm_get_event_next(idx)) {
				pfm_event_info_t einfo;
				char name[128];
				memset(&einfo, 0, sizeof(einfo));
				einfo.size = sizeof(einfo);
				if (pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &einfo) != PFM_SUCCESS)
					continue;
				snprintf(name, sizeof(name), "%s::%s", pinfo.name, einfo.name);
				if (parse_pfm_event(name, &ev) == 0) {
					list_one(out, &ev, kernel);
					npfm++;
				}
			}
		}
	}
	if (!npfm)
		fprintf(out, "\n  (libpfm4 found no CPU PMU it knows here: model-specific events "
			"are unavailable; raw rUUEE codes may still work on real hardware)\n");
	fprintf(out, "\nModifiers: EVENT:u (user only), :k (kernel only), :p/:pp/:ppp (precise_ip).\n"
		"Raw codes: rUUEE or r0xUUEE. Several events: -e cycles,instructions.\n");
}
