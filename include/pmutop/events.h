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

struct pmu_event {
	char name[64];          /* canonical name shown to users ("cycles") */
	uint32_t type;          /* PERF_TYPE_* */
	uint64_t config;        /* PERF_COUNT_* or raw code */
	uint64_t preset_period; /* events between samples when no --period/-F */
	bool hardware;          /* needs a PMU (not a software/timer event) */
	const char *unit;       /* what one event is: "cycles", "nanoseconds", ... */
};

/*
 * Parse an event spelling into *out. Returns 0, or -EINVAL with a message in
 * err (naming the spelling and, when close, "did you mean ...").
 */
int events_parse(const char *spec, struct pmu_event *out, char *err, size_t errlen);

/* Iterate the named (non-raw) events: returns NULL past the end. */
const struct pmu_event *events_builtin(size_t i);

/*
 * Probe whether the event can be opened on this machine by opening a
 * counting (non-sampling) counter on the calling thread. Returns 0 or -errno.
 */
int events_probe(const struct pmu_event *ev, bool kernel);

#endif
