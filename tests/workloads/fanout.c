/*
 * fanout.c - process trees with known work, for following child processes.
 *
 * usage:
 *   fanout run N UNIT_MS      N short-lived children, at most two at a time;
 *                             child i does (i%4 + 1) * UNIT_MS of CPU time in
 *                             work_<i%4 + 1>(): even children after a plain
 *                             fork, odd ones after exec'ing this program
 *                             again ("fanout child K MS"). Ground truth:
 *                             work_1..work_4 get 10/20/30/40 % of the
 *                             children's CPU time (it is CPU time, so the
 *                             shares hold on a loaded machine); the parent
 *                             only waits.
 *   fanout prefork W SECONDS  fork W workers that spin in worker_spin() for
 *                             SECONDS (wall), print their pids (one a line,
 *                             after a line "ready"), wait for them.
 *   fanout spin SECONDS       spin in solo_spin() for SECONDS (wall).
 *   fanout storm SECONDS      fork children that exit at once, as fast as
 *                             possible, for SECONDS; prints how many.
 *   fanout pool W SECONDS MS  fork W workers that each do MS ms of CPU time
 *                             in work_1() per second and sleep the rest, for
 *                             SECONDS (wall); "ready" once all are forked
 *                             (many live, mostly idle processes: bench §8).
 *   fanout rate R SECONDS MS  start R children per second for SECONDS, each
 *                             doing MS ms of CPU time in work_2() (odd ones
 *                             after exec'ing this program); prints how many
 *                             were started (process churn: bench §8).
 *   fanout cross N MS         N children one after another, each MS ms of
 *                             CPU time in work_3() and exit; the parent runs
 *                             on the last CPU, each child moves itself to
 *                             CPU 0 at once: a child's FORK record is in
 *                             one CPU's ring buffer, its samples in
 *                             another's (the order the profiler must
 *                             restore). Needs two CPUs.
 *   fanout child K MS         (internal) MS of CPU time in work_K().
 */
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Spin until this process has used ms more milliseconds of CPU. */
#define WORK_FOR(ms)                                    \
	do {                                            \
		double wl_end_ = cpu_ms() + (ms);       \
		while (cpu_ms() < wl_end_)              \
			WL_SPIN(2000L);                 \
	} while (0)

WL_NOINLINE static void work_1(double ms) { WORK_FOR(ms); }
WL_NOINLINE static void work_2(double ms) { WORK_FOR(ms); }
WL_NOINLINE static void work_3(double ms) { WORK_FOR(ms); }
WL_NOINLINE static void work_4(double ms) { WORK_FOR(ms); }

WL_NOINLINE static void worker_spin(double secs)
{
	double end = wl_now() + secs;

	while (wl_now() < end)
		WL_SPIN(20000L);
}

WL_NOINLINE static void solo_spin(double secs)
{
	double end = wl_now() + secs;

	while (wl_now() < end)
		WL_SPIN(20000L);
}

static void work(int k, double ms)
{
	switch (k) {
	case 1: work_1(ms); break;
	case 2: work_2(ms); break;
	case 3: work_3(ms); break;
	default: work_4(ms); break;
	}
}

static int run(const char *self, long n, double unit)
{
	long running = 0, failed = 0;
	int st;

	for (long i = 0; i < n; i++) {
		int k = (int)(i % 4) + 1;
		pid_t pid;

		if (running == 2) {
			if (wait(&st) > 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
				failed++;
			running--;
		}
		pid = fork();
		if (pid < 0) {
			perror("fanout: fork");
			return 1;
		}
		if (pid == 0) {
			if (i % 2) {
				char ks[8], ms[32];

				snprintf(ks, sizeof(ks), "%d", k);
				snprintf(ms, sizeof(ms), "%.3f", unit * k);
				execl(self, self, "child", ks, ms, (char *)NULL);
				_exit(127);
			}
			work(k, unit * k);
			_exit(0);
		}
		running++;
	}
	while (wait(&st) > 0)
		if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
			failed++;
	fprintf(stderr, "fanout: %ld children, %ld failed\n", n, failed);
	return failed != 0;
}

static int prefork(long w, double secs)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	for (long i = 0; i < w; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			worker_spin(secs);
			_exit(0);
		}
		if (pid > 0)
			printf("%d\n", (int)pid);
	}
	while (wait(NULL) > 0)
		;
	return 0;
}

/* Collect exited children: those already gone, or (all) every one. */
static void reap(bool all)
{
	while (all ? wait(NULL) > 0 : waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static int pool(long w, double secs, double ms)
{
	int go[2];

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* The workers wait until all are forked: the parent forks on a quiet CPU. */
	if (pipe(go)) {
		perror("fanout: pipe");
		return 1;
	}
	for (long i = 0; i < w; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			char c;

			prctl(PR_SET_PDEATHSIG, SIGKILL);  /* the pool ends with its parent */
			close(go[1]);
			if (read(go[0], &c, 1) < 0)
				_exit(1);
			/* Staggered over the second, so the workers do not all wake at once. */
			double end = wl_now() + secs, next = wl_now() + (double)i / (double)w;

			while (wl_now() < end) {
				double now = wl_now();

				if (now < next)
					usleep((useconds_t)((next - now) * 1e6));
				work_1(ms);
				next += 1.0;
			}
			_exit(0);
		}
		if (pid < 0) {
			perror("fanout: fork");
			break;
		}
	}
	close(go[1]);
	printf("ready\n");
	while (wait(NULL) > 0)
		;
	return 0;
}

static int rate(const char *self, double per_s, double secs, double ms)
{
	double start = wl_now(), end = start + secs;
	long n = 0;

	while (wl_now() < end) {
		pid_t pid;

		/* The next start is due at start + n / per_s. */
		while (wl_now() < start + (double)n / per_s)
			usleep(1000);
		pid = fork();
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);  /* kept over exec (not setuid) */
			if (n % 2) {
				char m[32];

				snprintf(m, sizeof(m), "%.3f", ms);
				execl(self, self, "child", "2", m, (char *)NULL);
				_exit(127);
			}
			work_2(ms);
			_exit(0);
		}
		n += pid > 0;
		reap(false);
	}
	reap(true);
	printf("%ld\n", n);
	return 0;
}

static int pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static int cross(long n, double ms)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int st, failed = 0;

	if (ncpu < 2 || pin_to((int)ncpu - 1)) {
		fprintf(stderr, "fanout cross: needs two CPUs (%ld online)\n", ncpu);
		return 2;
	}
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			if (pin_to(0))
				_exit(3);
			work_3(ms);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			failed++;
	}
	fprintf(stderr, "fanout: %ld children, %d failed\n", n, failed);
	return failed != 0;
}

static int storm(double secs)
{
	double end = wl_now() + secs;
	long n = 0;

	while (wl_now() < end) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		n += pid > 0;
		reap(false);
	}
	reap(true);
	printf("%ld\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if ((!strcmp(mode, "run") && argc == 4) || (!strcmp(mode, "rate") && argc == 5)) {
		/* The real path, so an exec'd child is named "fanout", not "exe". */
		static char self[4096];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (n <= 0)
			return 2;
		self[n] = 0;
		if (argc == 5)
			return rate(self, atof(argv[2]), atof(argv[3]), atof(argv[4]));
		return run(self, atol(argv[2]), atof(argv[3]));
	}
	if (!strcmp(mode, "pool") && argc == 5)
		return pool(atol(argv[2]), atof(argv[3]), atof(argv[4]));
	if (!strcmp(mode, "child") && argc == 4) {
		work(atoi(argv[2]), atof(argv[3]));
		return 0;
	}
	if (!strcmp(mode, "prefork") && argc == 4)
		return prefork(atol(argv[2]), atof(argv[3]));
	if (!strcmp(mode, "spin") && argc == 3) {
		solo_spin(atof(argv[2]));
		return 0;
	}
	if (!strcmp(mode, "storm") && argc == 3)
		return storm(atof(argv[2]));
	if (!strcmp(mode, "cross") && argc == 4)
		return cross(atol(argv[2]), atof(argv[3]));
	fprintf(stderr, "usage: fanout run N UNIT_MS | prefork W SECONDS | spin SECONDS | "
		"storm SECONDS | pool W SECONDS MS | rate R SECONDS MS | cross N MS\n");
	return 2;
}
