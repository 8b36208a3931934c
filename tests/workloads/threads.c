/*
 * threads.c - ten threads doing identical work.
 *
 * Ground truth: threads "worker0" .. "worker9" (pthread_setname_np) each run
 * the same loop in thread_work() for the whole run and never block, so under
 * the fair scheduler each gets 10% of the process's CPU time. A profile
 * grouped by the thread label should show every worker at ~10%; the main
 * thread sleeps in pthread_join() and gets ~0%.
 *
 * The workers start together (barrier) and stop at a common deadline,
 * argv[1] seconds after start (default 5), then the process exits 0.
 *
 * "Equal" holds only on a machine with CPUs to spare: ten threads on two
 * busy CPUs get what the scheduler gives them, a few pp apart. So each
 * thread also measures what it really ran: when THREADS_CPU_FILE is set,
 * the process writes one line per worker to that file before it exits,
 *
 *   TID NAME CPU_NS SYS_NS COUNT
 *
 * CPU_NS being the worker's CLOCK_THREAD_CPUTIME_ID read as it stops, i.e.
 * all it ran from creation to its last loop, SYS_NS the kernel part of it
 * (RUSAGE_THREAD, tick-sampled), and COUNT the worker's own count of the
 * event THREADS_COUNT_EVENT names ("task-clock" or "cycles"; -1 when unset),
 * from a counter it opens on itself as it starts. A profiler that launches
 * the program and records until it exits sees that same window, so each
 * worker's share of the workers' COUNT (or CPU time) is the exact truth for
 * its share of the samples (tests/e2e/t_threads.sh, t_unwind_engines.sh).
 * The count, not only the CPU time, because the kernel's task-clock is not
 * the thread's CPU clock when a tracer stops the thread at every sample
 * (--unwind=ptrace: up to 5% more on some threads); it is what the
 * profiler's samples are drawn from.
 *
 * usage: [THREADS_CPU_FILE=FILE [THREADS_COUNT_EVENT=EVENT]] threads [SECONDS]
 */
#include <pthread.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workload.h"

#define NTHREADS 10
/* ~0.2-0.5 ms of work between clock reads. */
#define CHUNK 100000L

static pthread_barrier_t start_barrier;
static double deadline;

/* What each worker ran, filled in by the worker as it stops. */
static struct {
	pid_t tid;
	char name[16];
	long long cpu_ns, sys_ns, count;
} ran[NTHREADS];

WL_NOINLINE static void thread_work(void)
{
	WL_SPIN(CHUNK);
}

static long long tv_ns(struct timeval tv)
{
	return (long long)tv.tv_sec * 1000000000LL + (long long)tv.tv_usec * 1000LL;
}

/*
 * A counter of THREADS_COUNT_EVENT on the calling thread, counting from now:
 * its fd, -1 when no event is asked for; exits 1 when it cannot be opened.
 * Kernel time is counted as a profiler would sample it: included where
 * perf_event_paranoid lets this user, else left out.
 */
static int open_count(void)
{
	const char *ev = getenv("THREADS_COUNT_EVENT");
	struct perf_event_attr a;
	int fd;

	if (!ev || !*ev)
		return -1;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	if (!strcmp(ev, "task-clock")) {
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_TASK_CLOCK;
	} else if (!strcmp(ev, "cycles")) {
		a.type = PERF_TYPE_HARDWARE;
		a.config = PERF_COUNT_HW_CPU_CYCLES;
	} else {
		fprintf(stderr, "threads: THREADS_COUNT_EVENT=%s: task-clock or cycles\n", ev);
		exit(1);
	}
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		a.exclude_kernel = 1;
		fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	}
	if (fd < 0) {
		fprintf(stderr, "threads: counting %s on a worker: %s\n", ev, strerror(errno));
		exit(1);
	}
	return fd;
}

/* The calling worker's CPU time and count so far, into ran[idx]. */
static void record_cpu(long idx, const char *name, int count_fd)
{
	struct timespec ts;
	struct rusage ru;
	uint64_t v;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	getrusage(RUSAGE_THREAD, &ru);
	ran[idx].count = -1;
	if (count_fd >= 0) {
		if (read(count_fd, &v, sizeof(v)) != (ssize_t)sizeof(v)) {
			fprintf(stderr, "threads: reading the count: %s\n", strerror(errno));
			exit(1);
		}
		ran[idx].count = (long long)v;
		close(count_fd);
	}
	ran[idx].cpu_ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	ran[idx].sys_ns = tv_ns(ru.ru_stime);
	ran[idx].tid = gettid();
	snprintf(ran[idx].name, sizeof(ran[idx].name), "%s", name);
}

/* ran[] to the file named by THREADS_CPU_FILE (if set); 0 or 1 on error. */
static int write_cpu_file(void)
{
	const char *path = getenv("THREADS_CPU_FILE");
	FILE *f;
	int bad;

	if (!path || !*path)
		return 0;
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "threads: %s: %s\n", path, strerror(errno));
		return 1;
	}
	for (int i = 0; i < NTHREADS; i++)
		fprintf(f, "%d %s %lld %lld %lld\n", (int)ran[i].tid, ran[i].name,
			ran[i].cpu_ns, ran[i].sys_ns, ran[i].count);
	bad = ferror(f);
	if (fclose(f) || bad) {
		fprintf(stderr, "threads: writing %s failed\n", path);
		return 1;
	}
	return 0;
}

static void *worker(void *arg)
{
	int count_fd = open_count();
	long idx = (long)arg;
	char name[16];

	snprintf(name, sizeof(name), "worker%ld", idx);
	pthread_setname_np(pthread_self(), name);
	pthread_barrier_wait(&start_barrier);
	while (wl_now() < deadline)
		thread_work();
	record_cpu(idx, name, count_fd);
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = wl_arg_double(argc, argv, 1, 5.0);
	pthread_t tids[NTHREADS];
	int err;

	pthread_barrier_init(&start_barrier, NULL, NTHREADS + 1);
	deadline = wl_now() + secs;
	for (long i = 0; i < NTHREADS; i++) {
		err = pthread_create(&tids[i], NULL, worker, (void *)i);
		if (err) {
			fprintf(stderr, "threads: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	pthread_barrier_wait(&start_barrier);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(tids[i], NULL);
	return write_cpu_file();
}
