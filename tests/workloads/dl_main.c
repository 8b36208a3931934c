/*
 * dl_main.c - a PIE that dlopen()s a library in the middle of the run.
 *
 * Ground truth: for the first PHASE1 seconds (argv[2], default 1) all time is
 * in pie_hot_function(), in a position-independent executable (so its
 * addresses are only known relative to the load base). Then it dlopen()s
 * libhot.so (argv[3], or the libhot.so next to this executable found via
 * /proc/self/exe) and spends the rest of argv[1] seconds (default 3) in
 * libhot_spin(). A profile attached from the start sees the dlopen happen
 * after attach and must still name both functions.
 *
 * PHASE1_SECONDS "usr1": the first phase lasts until SIGUSR1 (at most 60 s),
 * and the second TOTAL_SECONDS from then - so a test can end the first
 * phase once its profiler samples, whatever the machine's speed.
 *
 * usage: dl_main [TOTAL_SECONDS [PHASE1_SECONDS|usr1 [PATH/libhot.so]]]
 */
#include <dlfcn.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

WL_NOINLINE static void pie_hot_function(void)
{
	WL_SPIN(100000L);
}

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

int main(int argc, char **argv)
{
	double total = wl_arg_double(argc, argv, 1, 3.0);
	int by_signal = argc > 2 && !strcmp(argv[2], "usr1");
	double phase1 = by_signal ? 60 : wl_arg_double(argc, argv, 2, 1.0);
	double start = wl_now();
	char path[PATH_MAX];
	double (*spin)(double);
	void *lib;
	double left;

	if (by_signal)
		signal(SIGUSR1, on_usr1);
	while (!go && wl_now() - start < phase1)
		pie_hot_function();
	if (by_signal)
		start = wl_now(); /* TOTAL_SECONDS from the signal */

	if (argc > 3) {
		snprintf(path, sizeof(path), "%s", argv[3]);
	} else {
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
		char *slash;

		if (n < 0) {
			perror("dl_main: readlink /proc/self/exe");
			return 1;
		}
		path[n] = '\0';
		slash = strrchr(path, '/');
		if (!slash || (size_t)(slash - path) + sizeof("/libhot.so") > sizeof(path)) {
			fprintf(stderr, "dl_main: cannot place libhot.so next to %s\n", path);
			return 1;
		}
		strcpy(slash + 1, "libhot.so");
	}

	lib = dlopen(path, RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "dl_main: dlopen %s: %s\n", path, dlerror());
		return 1;
	}
	*(void **)&spin = dlsym(lib, "libhot_spin");
	if (!spin) {
		fprintf(stderr, "dl_main: dlsym libhot_spin: %s\n", dlerror());
		return 1;
	}
	left = total - (wl_now() - start);
	if (left > 0)
		spin(left);
	dlclose(lib);
	return 0;
}
