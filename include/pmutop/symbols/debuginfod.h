/*
 * debuginfod.h - debug files and executables by GNU build-id from the
 * debuginfod servers named in DEBUGINFOD_URLS, through libdebuginfod (the
 * elfutils client: its cache, ~/.cache/debuginfod_client or
 * $DEBUGINFOD_CACHE_PATH, and its knobs DEBUGINFOD_TIMEOUT,
 * DEBUGINFOD_MAXTIME, DEBUGINFOD_MAXSIZE apply).
 *
 * Why a fetcher with a thread: a profiler must never wait on the network
 * while it samples (ring buffers overflow). A fetcher takes requests
 * without blocking, fetches them one after the other on a thread of its
 * own (started on the first request, gone when the queue is empty), and
 * the session collects the results when it can afford to wait: at the end
 * (debuginfod_wait) or, during a long run, whatever has arrived.
 *
 * Nothing a server sends is trusted: a file is used only when it is an
 * ELF file whose GNU build-id note is the one asked for (and, for an
 * executable, one with code); anything else is dropped from the cache and
 * noted. When a server does not answer (connection refused, timeout,
 * unknown host) the rest of the queue is not asked for: one timeout, not
 * one per file.
 */
#ifndef PMUTOP_DEBUGINFOD_H
#define PMUTOP_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum dfd_kind {
	DFD_DEBUGINFO,   /* the separate debug file (.symtab, DWARF) */
	DFD_EXECUTABLE,  /* the binary itself (code bytes, for --annotate) */
};

/* Whether DEBUGINFOD_URLS names a server (--no-debuginfod unsets it). */
bool debuginfod_enabled(void);

struct dfd_fetcher;

/* A fetcher, or NULL when debuginfod is not enabled (or ENOMEM). */
struct dfd_fetcher *dfd_fetcher_new(void);
/* Cancels the transfer in flight, waits for the thread, closes every fd. NULL: no-op. */
void dfd_fetcher_free(struct dfd_fetcher *f);

/*
 * Ask for build-id bid's file of this kind (lower-case hex). Never blocks
 * on the network; asking again for the same file is a no-op. Returns 0,
 * -EINVAL (not a build-id) or -ENOMEM.
 */
int dfd_request(struct dfd_fetcher *f, enum dfd_kind kind, const char *bid);

/*
 * The result of a request: a new fd on the verified file (the caller
 * closes it) and *path (may be NULL; malloc'd, the file in the client's
 * cache). -EINPROGRESS while it is still queued or being fetched (only
 * when !block; block waits for it), -ENOENT when it was not found, not
 * asked for, rejected or the servers did not answer.
 */
int dfd_take(struct dfd_fetcher *f, enum dfd_kind kind, const char *bid, bool block,
	     char **path);

/*
 * Wait until every request is answered. When that takes more than half a
 * second, one line "pmutop: debuginfod: fetching N files... (Ctrl-C: go
 * on without them)" goes to
 * progress (NULL: silent); afterwards the notes (files rejected, servers
 * not answering) go there too, once. stop (may be NULL) is asked every
 * 100 ms: when it says so, the transfers are cancelled and -EINTR is
 * returned; so are they after max_ms (0: no limit), -ETIMEDOUT. 0
 * otherwise.
 */
int dfd_wait(struct dfd_fetcher *f, FILE *progress, unsigned max_ms, bool (*stop)(void *arg),
	     void *arg);

/* Files fetched and verified / rejected / not found or not answered, so far. */
void dfd_counts(const struct dfd_fetcher *f, unsigned *fetched, unsigned *rejected,
		unsigned *failed);

/*
 * One file now, blocking (bounded by the client's timeouts): for callers
 * that do not sample (--annotate on a saved profile). The verified fd or
 * -errno (-ENOENT when debuginfod is not enabled); *path (may be NULL) the
 * file in the client's cache (malloc'd); why (may be NULL) gets the reason
 * for a failure or a rejection.
 */
int dfd_fetch_now(enum dfd_kind kind, const char *bid, char **path, char *why, size_t whylen);

#endif
