/*
 * vfork_stuck.c - a thread that cannot be stopped by ptrace for a while.
 *
 * Ground truth: the main thread spins in spin_main (CPU time to sample);
 * the thread "stuck" calls vfork() and its child sleeps STUCK seconds
 * before _exit: until then the vforking thread waits in the kernel
 * (killable, not interruptible), so PTRACE_INTERRUPT cannot stop it - what
 * a thread blocked on a hung NFS or FUSE file looks like to a tracer.
 *
 * usage: vfork_stuck [SECONDS [STUCK]]   (default 10 s, stuck 8 s)
 */
#include <pthread.h>
#include <unistd.h>

#include "workload.h"

static double stuck_secs;

static void *stuck(void *arg)
{
	pid_t p;

	(void)arg;
	pthread_setname_np(pthread_self(), "stuck");
	p = vfork();
	if (p == 0) {
		usleep((useconds_t)(stuck_secs * 1e6));
		_exit(0);
	}
	return NULL;
}

WL_NOINLINE static void spin_main(void)
{
	WL_SPIN(100000L);
}

int main(int argc, char **argv)
{
	double secs = wl_arg_double(argc, argv, 1, 10.0), end;
	pthread_t t;

	stuck_secs = wl_arg_double(argc, argv, 2, 8.0);
	end = wl_now() + secs;
	if (pthread_create(&t, NULL, stuck, NULL))
		return 1;
	while (wl_now() < end)
		spin_main();
	pthread_join(t, NULL);
	return 0;
}
