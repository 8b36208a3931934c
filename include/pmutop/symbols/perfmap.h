/*
 * perfmap.h - names for JIT-generated code from the target's perf map.
 *
 * The perf map convention (Linux perf's tools/perf/Documentation/jit-interface.txt,
 * used by Node --perf-basic-prof, Java agents, LuaJIT, .NET, ...): the
 * process appends lines "START SIZE name" (hex START and SIZE) to
 * /tmp/perf-PID.map as it generates code. pmutop reads the file of the
 * target's own mount namespace (/proc/PID/root/tmp/...) under the PID the
 * target knows itself by (the last NSpid in /proc/PID/status), so JIT code
 * in a container is named too.
 *
 * The file is re-read when it changes: its size/mtime is checked at most
 * every 200 ms, and at most every 10 ms while addresses are missing from it.
 * Growth by appending (the usual case) parses only the new lines. A file
 * last written before the process started is a dead process's with the
 * same pid (maps outlive JITs killed with SIGKILL): it is not read.
 */
#ifndef PMUTOP_PERFMAP_H
#define PMUTOP_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct perfmap;

/*
 * A perf map reader for process pid (nothing is read until the first
 * lookup). host_paths: the target shares our mount namespace, so
 * /tmp/perf-PID.map may be opened directly when /proc/PID/root is not
 * readable. NULL on ENOMEM.
 */
struct perfmap *perfmap_new(pid_t pid, bool host_paths);
void perfmap_free(struct perfmap *pm);

/*
 * The name of the JIT function containing addr and the offset into it, or
 * NULL. May re-read the file (see above). Names stay valid until
 * perfmap_free(), even across re-reads.
 */
const char *perfmap_lookup(struct perfmap *pm, uint64_t addr, uint64_t *off);

/*
 * Parse one perf map line "START SIZE name" (hex numbers, with or without
 * 0x; the name runs to the end of the line, spaces included). On success
 * returns 0 and points *name at the name inside line (with *namelen its
 * length, trailing CR/LF excluded). -EINVAL for a malformed line.
 */
int perfmap_parse_line(const char *line, uint64_t *start, uint64_t *size,
		       const char **name, size_t *namelen);

/* Entries currently loaded (for tests and the summary). */
size_t perfmap_count(const struct perfmap *pm);

/* The file read for pid ("/proc/PID/root/tmp/perf-NSPID.map"); for tests. */
const char *perfmap_path(const struct perfmap *pm);

/*
 * A line for the summary when the map was throttled (rewritten faster than
 * once a second), capped (PERFMAP_MAX_TOTAL of names held) or left unread
 * as older than the process, else NULL.
 * Returns buf.
 */
const char *perfmap_note(const struct perfmap *pm, char *buf, size_t len);

#endif
