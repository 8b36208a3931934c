/*
 * session.h - one live profiling session: the pipeline wired together.
 *
 *   sampler → unwinder → symbolizer → aggregator
 *
 * A session attaches to (or launches) the target, then each session_poll()
 * waits for ring-buffer data, signals or the target's exit and pushes every
 * new sample into the aggregate. Front ends drive it: the batch recorder
 * (record.c) polls until the end and writes the profile; the live view polls
 * between screen refreshes and reads the aggregate to draw it.
 */
#ifndef PMUTOP_SESSION_H
#define PMUTOP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "pmutop/frontend/process.h"
#include "pmutop/sample/events.h"
#include "pmutop/sample/offcpu.h"
#include "pmutop/unwind/unwind.h"

struct aggregate;
struct pmutop_opts;

/* Why a session stopped (or SESSION_RUNNING while it has not). */
enum session_state {
	SESSION_RUNNING = 0,
	SESSION_TARGET_EXITED,
	SESSION_DURATION,   /* --duration elapsed */
	SESSION_SIGNALLED,  /* SIGINT/SIGTERM/SIGHUP to pmutop */
	SESSION_FAILED,     /* an internal error; see session_status().error */
};

/* Counters of one window of a run (unwind outcomes: enum unwind_outcome). */
struct session_counts {
	uint64_t samples, lost, throttled;
	/* What the memory budget merged (aggregate_maintain; agg_info's fields). */
	uint64_t pruned, pruned_samples, threads_folded, leaf_dropped;
	uint64_t outcomes[UNWIND_NOUTCOMES];
};

struct session_status {
	pid_t pid;
	char cmdline[256];
	struct pmu_event event;    /* the (first) event really used (after any fallback) */
	size_t nevents;            /* events sampled; see session_event() */
	uint64_t period;           /* events per sample, or Hz when freq */
	bool freq;
	double elapsed;            /* seconds since sampling started */
	uint64_t samples, lost, throttled;  /* since start: total.samples, ... */
	/*
	 * The run since start, whatever session_reset() did, and the window
	 * since the last reset (the aggregate's; equal to total before any).
	 */
	struct session_counts total, window;
	unsigned resets;           /* session_reset() calls */
	double window_start;       /* seconds from start to the last reset (0: none) */
	/*
	 * Notes for the user, one per line, "" when none: the event fallback
	 * on a machine without a PMU, lowered precision. session_start() does
	 * not print them: the front end shows them (unless -q) once the target
	 * is attached, so that they never precede an unrelated error.
	 */
	const char *notes;
	size_t threads_seen, threads_attached;
	unsigned ncpus;
	double self_cpu;           /* pmutop's own CPU use, % of one CPU, since start */
	enum session_state state;
	int signal;                /* for SESSION_SIGNALLED */
	int exit_status;           /* launched command: wait status, or -1 */
	const char *why;           /* human-readable reason for the state */
	struct unwind_stats unwind; /* fast path vs libunwind, verification */
	uint64_t corrupt, undecodable; /* ring-buffer records dropped (sampler_stats) */
	unsigned skipped_files;    /* target files refused as unsafe (debuginfo_skipped) */
	const char *skipped_first; /* "PATH: why" of the first, valid until session_free */
	char perfmap_note[400];    /* perfmap_note(): the JIT map was throttled or capped, else "" */
	const char *symbol_note;   /* symbol_cache_note(): a Go binary's unusable .gopclntab, else "" */
	char python_note[1024];    /* pyframes_summary(): Python frames read, mismatched, refused; or "" */
	bool follow;               /* child processes are followed */
	struct process_stats procs; /* processes followed, exited, not followed */
	uint64_t unfollowed_samples; /* samples of processes not followed */
	/* -e offcpu: how switch-outs were paired (blocks, lost switches, ...). */
	bool offcpu;
	struct offcpu_stats offcpu_stats;
	uint64_t offcpu_lost;      /* blocks of processes gone before they ended */
	long offcpu_initial;       /* threads found blocked at the start (-1: launched, not looked) */
};

struct session;

/*
 * Validate options, resolve the event (with a fallback to task-clock when no
 * event was named and the machine has no PMU), attach or launch, and start
 * sampling. Returns NULL with an actionable message in err.
 */
struct session *session_start(const struct pmutop_opts *o, char *err, size_t errlen);

/*
 * The exit status for a failed session_start(), as time(1) gives it: e is
 * errno read right after the NULL return (the launched command's exec
 * error, else 0). 127: the command was not found (ENOENT); 126: it was
 * found but could not be executed (no permission, not an executable, a
 * directory); 1: any other failure.
 */
int session_start_exit_status(int e);

/*
 * Wait up to timeout_ms (0: don't wait, -1: until something happens or the
 * duration ends) and process whatever arrived. Returns the state.
 */
enum session_state session_poll(struct session *s, int timeout_ms);

/*
 * When file:line lookups happen (right after session_start()): while
 * sampling from after_ns into the run (default 10 s: short runs do not
 * stall their ring buffers opening debug files), and at the end for at
 * most final_ns (0, the default: until every location has its lines; else
 * the rest is written without file:line). The HTTP endpoint looks lines up
 * as it goes (0) and answers within its time (a few hundred ms at the end).
 */
void session_set_lines(struct session *s, uint64_t after_ns, uint64_t final_ns);

/*
 * Sampling ends at mono_ns (CLOCK_MONOTONIC) instead of --duration after
 * the start: the HTTP endpoint counts `seconds` from the request's arrival,
 * so the session's own start (attaching, reading the target's files) is
 * inside the time the client asked for, not added to it. The profile's
 * duration stays what was really sampled.
 */
void session_set_deadline(struct session *s, uint64_t mono_ns);

/*
 * Stop: drain the buffers one last time, close the counters, and for a
 * launched command end it (SIGTERM if it still runs) and collect its exit
 * status. Idempotent. The aggregate stays readable until session_free().
 */
void session_stop(struct session *s);

/*
 * Start a new window (the live view's "reset"): the aggregate starts empty
 * (the old one is freed; session_aggregate() returns the new one); the
 * status keeps the run's totals since start. Returns 0 or -ENOMEM.
 */
int session_reset(struct session *s);

/*
 * End a window (--dump-every): drain what the kernel delivered, look up
 * its lines, hand the window's aggregate to write(), then start the next
 * window (session_reset). No sample is in two windows or in none: the
 * loop is single-threaded and the aggregate is swapped between records.
 * Returns write()'s result, or -ENOMEM when no new window could start.
 */
int session_window(struct session *s, int (*write)(void *arg, const struct aggregate *a),
		   void *arg);

const struct aggregate *session_aggregate(const struct session *s);
void session_get_status(const struct session *s, struct session_status *st);

/*
 * What pmutop should exit with for a launched command, like time(1): the
 * command's exit status, or 128+N when signal N ended it - when it ended
 * by itself. -1 when nothing was launched or pmutop ended it (--duration,
 * q, SIGINT/SIGTERM to pmutop), and pmutop's own status applies.
 */
int session_command_exit_code(const struct session_status *st);

/* Event k of the run (k < status.nevents) and its period; NULL past the end. */
const struct pmu_event *session_event(const struct session *s, size_t k, uint64_t *period);

/*
 * A line about the unwinding engine for the summary (the ptrace engine's
 * stops and skid), or NULL when there is nothing to say. Returns buf.
 */
const char *session_engine_summary(const struct session *s, char *buf, size_t len);

/* Print status.notes to f, one "pmutop: ..." line each (nothing when none). */
void session_print_notes(const struct session *s, FILE *f);

/* An fd readable when session_poll() has something to do (for a UI's own poll). */
int session_fd(const struct session *s);

void session_free(struct session *s);

#endif
