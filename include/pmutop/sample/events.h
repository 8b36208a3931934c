/*
 * events.h - the vocabulary of events pmutop can sample on.
 *
 * Turns a user's event spelling ("cycles", "branch-misses", "r01c2",
 * "task-clock", ...) into the perf_event_attr type/config pair plus a preset
 * sampling period, so the rest of pmutop never deals with names.
 */
#ifndef PMUTOP_EVENTS_H
#define PMUTOP_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pmu_event {
	char name[64];          /* canonical name shown to users ("cycles") */
	uint32_t type;          /* PERF_TYPE_* */
	uint64_t config;        /* PERF_COUNT_* or raw code */
	uint64_t preset_period; /* events between samples when no --period/-F */
	bool hardware;          /* needs a PMU (not a software/timer event) */
	const char *unit;       /* "count" or "nanoseconds" (pprof sample unit) */
	uint64_t config1, config2; /* extra encoding (libpfm4 events) */
	uint8_t precise;        /* :p / :pp / :ppp → precise_ip 1..3 */
	bool precise_max;       /* :P: lower precise to what the CPU accepts */
	int8_t user, kernel, hv; /* :u :k :h modifiers: 1 = count, 0 = exclude, -1 = default */
	bool host_only;         /* :H: exclude guest mode */
	bool exclude_idle;      /* :I */
	/*
	 * -e offcpu: a context-switch counter sampled at every switch-out
	 * (kernel mode: the kernel drops it under exclude_kernel), with
	 * PERF_RECORD_SWITCH records; its samples weigh the time until the
	 * thread runs again (sample/offcpu.h), in nanoseconds.
	 */
	bool offcpu;
};

/* At most this many events in one run (-e a,b,c or repeated -e). */
#define PMUTOP_MAX_EVENTS 8

/*
 * Parse an event spelling into *out. Returns 0, or -EINVAL with a message in
 * err (naming the spelling and, when close, "did you mean ...").
 */
int events_parse(const char *spec, struct pmu_event *out, char *err, size_t errlen);

/*
 * Parse a comma-separated list ("cycles,instructions:u") appending to
 * out[*n..max). Returns 0 or -EINVAL (err names the bad element).
 */
int events_parse_list(const char *spec, struct pmu_event *out, size_t max, size_t *n,
		      char *err, size_t errlen);

/*
 * Fill the event-identity part of a perf_event_attr (type, config, precise_ip
 * and exclude_user/kernel/hv from the modifiers, or from `kernel` when the
 * event has none). attr must be zeroed by the caller.
 */
struct perf_event_attr;
void events_fill_attr(const struct pmu_event *ev, bool kernel, struct perf_event_attr *attr);

/*
 * Print the events usable on this machine (each probed by opening it on the
 * calling thread), their preset periods and a measured samples/s estimate.
 */
void events_list(FILE *out, bool kernel);

/* Iterate the named (non-raw) events: returns NULL past the end. */
const struct pmu_event *events_builtin(size_t i);

/*
 * Case-insensitive Levenshtein distance between two names, for "did you
 * mean" (event names here, option names in cli_habits.c); (size_t)-1 when a
 * name is 64 characters or longer.
 */
size_t events_name_distance(const char *a, const char *b);

/* Iterate the other accepted spellings (perf's names, cache events): NULL past the end. */
const char *events_alias(size_t i);

/*
 * name (an event's name, with any ":modifiers") as perf spells it, for a
 * hint the user pastes into perf: branchMisses:u -> branch-misses:u,
 * cacheMisses -> cache-misses; other names as they are. Written to buf;
 * returns buf.
 */
const char *events_perf_name(const char *name, char *buf, size_t len);

/*
 * Probe whether the event can be opened on this machine by opening a
 * counting (non-sampling) counter on the calling thread. Returns 0 or -errno.
 */
int events_probe(const struct pmu_event *ev, bool kernel);

#endif
