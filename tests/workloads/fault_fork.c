/*
 * fault_fork.c - a target that keeps forking short-lived child processes.
 *
 * Ground truth: the parent spends its time in parent_spin() for SECONDS
 * (argv[1], default 3); every INTERVAL seconds (argv[2], default 0.2) it
 * forks a child that spins in child_spin() for the same INTERVAL and exits
 * (the parent reaps it). A profiler following the parent's threads only
 * (no --children) must show parent_spin and never child_spin, nor any tid
 * that is not the parent's. The pids of the children are printed to stdout,
 * one per line, so a test can look for them.
 *
 * usage: fault_fork [SECONDS [INTERVAL]]
 */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

WL_NOINLINE static void parent_spin(void)
{
	WL_SPIN(20000L);
}

WL_NOINLINE static void child_spin(void)
{
	WL_SPIN(20000L);
}

int main(int argc, char **argv)
{
	double secs = wl_arg_double(argc, argv, 1, 3.0);
	double interval = wl_arg_double(argc, argv, 2, 0.2);
	double end = wl_now() + secs, next = 0;
	unsigned forks = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while (wl_now() < end) {
		double t = wl_now();

		if (t >= next) {
			pid_t pid = fork();

			if (pid == 0) {
				double cend = wl_now() + interval;

				while (wl_now() < cend)
					child_spin();
				_exit(0);
			}
			if (pid > 0) {
				printf("%d\n", (int)pid);
				forks++;
			}
			next = t + interval;
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		parent_spin();
	}
	while (wait(NULL) > 0)
		;
	fprintf(stderr, "fault_fork: %u children\n", forks);
	return 0;
}
