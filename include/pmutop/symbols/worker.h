/*
 * worker.h - the symbol stage's background threads (debug info loads,
 * debuginfod fetches): one worker per queue, started when work arrives,
 * ending when the queue is empty.
 *
 * What both need the same way, in one place: signals stay with the
 * session's thread (it reads them from a signalfd), except the ones a
 * fault raises in the worker itself - blocked, a SIGBUS from a mapped file
 * truncated under the worker would kill pmutop instead of reaching
 * module.c's handler; the worker runs five nice levels below the thread
 * that started it, which drains the ring buffers (session.c); and it has
 * a 16 MiB stack whatever `ulimit -s` says, for libdw's recursive scope
 * walks (debuginfo.c bounds their depth).
 */
#ifndef PMUTOP_SYMBOLS_WORKER_H
#define PMUTOP_SYMBOLS_WORKER_H

#include <pthread.h>
#include <stdbool.h>

struct worker {
	pthread_t thread;
	bool running;            /* serving the queue (the thread clears it when done) */
	bool joinable;           /* started and not joined yet */
};

/*
 * Start w's thread on fn(arg) unless it is running. Call with mu (the
 * queue's lock) held; it is dropped while a worker that is ending is
 * joined. Returns 0, or -errno when no thread could be started.
 */
int worker_start(struct worker *w, pthread_mutex_t *mu, void *(*fn)(void *), void *arg);

/*
 * Wait on cv (mu held) for at most ms milliseconds: how the session's
 * thread waits for a worker while it keeps checking for a stop.
 */
void worker_timedwait(pthread_cond_t *cv, pthread_mutex_t *mu, unsigned ms);

/* At the top of fn: the worker's share of the CPU (below the drain's). */
void worker_lower_priority(void);

#endif
