/*
 * worker.c - the symbol stage's background threads (see worker.h).
 */
#include "pmutop/symbols/worker.h"

#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <time.h>

/*
 * The workers' stack: libdw recurses over a CU's nested DIEs in its scope
 * walks, which debuginfo.c bounds at 4096 levels (well under 1 MB).
 */
#define WORKER_STACK (16u << 20)

int worker_start(struct worker *w, pthread_mutex_t *mu, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int rc;

	if (w->running)
		return 0;
	if (w->joinable) {
		/* The last worker found the queue empty and is ending: reap it. */
		pthread_mutex_unlock(mu);
		pthread_join(w->thread, NULL);
		pthread_mutex_lock(mu);
		w->joinable = false;
		if (w->running)
			return 0;
	}
	sigfillset(&all);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* A stack of known size whatever `ulimit -s` says (reserved, touched as used). */
	if (pthread_attr_init(&attr) == 0) {
		pthread_attr_setstacksize(&attr, WORKER_STACK);
		rc = pthread_create(&w->thread, &attr, fn, arg);
		pthread_attr_destroy(&attr);
	} else {
		rc = pthread_create(&w->thread, NULL, fn, arg);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -rc;
	w->running = w->joinable = true;
	return 0;
}

void worker_lower_priority(void)
{
	/* Per thread on Linux; raising the nice value is always allowed. */
	setpriority(PRIO_PROCESS, 0, getpriority(PRIO_PROCESS, 0) + 5);
}

void worker_timedwait(pthread_cond_t *cv, pthread_mutex_t *mu, unsigned ms)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	until.tv_sec += ms / 1000;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(cv, mu, &until);
}
