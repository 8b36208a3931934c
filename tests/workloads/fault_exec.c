/*
 * fault_exec.c - a target that execs another program in the middle of a run.
 *
 * Ground truth: for SECONDS (argv[1]) all time is in pre_exec_spin(), in
 * this image; then the process (same PID, same main thread) execs PROGRAM
 * with its arguments (argv[2]...), whose functions are not in this file. A
 * profiler following the PID must drop this image's symbols and name the
 * new program's functions (e.g. exiter_spin when PROGRAM is the exiter).
 * Exits 127 if the exec fails.
 *
 * usage: fault_exec SECONDS PROGRAM [ARGS...]
 */
#include <string.h>
#include <unistd.h>

#include "workload.h"

WL_NOINLINE static void pre_exec_spin(void)
{
	WL_SPIN(100000L);
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_arg_double(argc, argv, 1, 1.0);

	if (argc < 3) {
		fprintf(stderr, "usage: fault_exec SECONDS PROGRAM [ARGS...]\n");
		return 2;
	}
	while (wl_now() < end)
		pre_exec_spin();
	execv(argv[2], argv + 2);
	fprintf(stderr, "fault_exec: exec %s: %s\n", argv[2], strerror(errno));
	return 127;
}
