/*
 * test_resolve.c - what options name on this machine (resolve.h), on real
 * threads of this test: a thread id given to -p means its process (with a
 * note), -t picks the process of its threads, threads of two processes and
 * kernel threads are refused, and periods too short are raised.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_args.h"

#include "pmutop/frontend/cli.h"
#include "pmutop/frontend/resolve.h"
#include "pmutop/target/proc.h"

static pthread_barrier_t started, done;
static pid_t worker_tid;

static void *worker(void *arg)
{
	(void)arg;
	worker_tid = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&started);
	pthread_barrier_wait(&done);
	return NULL;
}

static void thread_ids_mean_their_process(void **state)
{
	struct pmutop_opts o;
	pthread_t th;
	char tid[16], err[512];

	(void)state;
	pthread_barrier_init(&started, NULL, 2);
	pthread_barrier_init(&done, NULL, 2);
	assert_int_equal(pthread_create(&th, NULL, worker, NULL), 0);
	pthread_barrier_wait(&started);
	snprintf(tid, sizeof(tid), "%d", (int)worker_tid);

	/* -p TID: the process, and one note saying so */
	assert_int_equal(parse(&o, "-p", tid, NULL), 0);
	assert_int_equal(resolve_target(&o, err, sizeof(err)), 0);
	assert_int_equal(o.pid, getpid());
	assert_int_equal(o.nnotes, 1);
	assert_non_null(strstr(o.notes[0], tid));
	assert_non_null(strstr(o.notes[0], "-t "));
	/* -p PID: no note */
	assert_int_equal(parse(&o, "-p", "1", NULL), 0);
	o.pid = getpid();
	assert_int_equal(resolve_target(&o, err, sizeof(err)), 0);
	assert_int_equal(o.nnotes, 0);
	/* -t TID: only that thread, of this process */
	assert_int_equal(parse(&o, "-t", tid, NULL), 0);
	assert_int_equal(resolve_target(&o, err, sizeof(err)), 0);
	assert_int_equal(o.pid, getpid());
	assert_int_equal(o.ntids, 1);
	/* -t with threads of two processes (ours and init) */
	{
		char two[40];
		snprintf(two, sizeof(two), "%s,1", tid);
		assert_int_equal(parse(&o, "-t", two, NULL), 0);
		assert_int_equal(resolve_target(&o, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "one process"));
	}
	pthread_barrier_wait(&done);
	pthread_join(th, NULL);
	/* the thread is gone now */
	assert_int_equal(parse(&o, "-t", tid, NULL), 0);
	assert_int_not_equal(resolve_target(&o, err, sizeof(err)), 0);
	assert_non_null(strstr(err, tid));
}

static void kernel_threads_are_refused(void **state)
{
	struct pmutop_opts o;
	char err[512];
	pid_t tgid;
	bool kthread = false;

	(void)state;
	/* kthreadd is pid 2 on Linux, unless in a pid namespace */
	if (proc_thread_group(2, &tgid, &kthread) || !kthread)
		skip();
	assert_int_equal(parse(&o, "-p", "2", NULL), 0);
	assert_int_equal(resolve_target(&o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "kernel thread"));
	assert_non_null(strstr(err, ":k"));
}

static void periods_too_short_are_raised(void **state)
{
	struct pmutop_opts o;

	(void)state;
	assert_int_equal(parse(&o, "-p", "1", "-e", "task-clock", "--period", "1", NULL), 0);
	assert_int_equal(resolve_min_period(&o, 100000), 10000);   /* ns */
	assert_int_equal(resolve_min_period(&o, 1000), 1000000);
	assert_int_equal(parse(&o, "-p", "1", "-e", "page-faults", NULL), 0);
	assert_int_equal(resolve_min_period(&o, 100000), 1);       /* rare software events */
	assert_int_equal(parse(&o, "-p", "1", "-e", "branchMisses", NULL), 0);
	assert_int_equal(resolve_min_period(&o, 100000), 1000);
	/* no -e: cycles may become task-clock on a machine without a PMU */
	assert_int_equal(parse(&o, "-p", "1", NULL), 0);
	assert_int_equal(resolve_min_period(&o, 100000), 10000);
	/* several events: the strictest */
	assert_int_equal(parse(&o, "-p", "1", "-e", "page-faults,task-clock", NULL), 0);
	assert_int_equal(resolve_min_period(&o, 100000), 10000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(thread_ids_mean_their_process),
		cmocka_unit_test(kernel_threads_are_refused),
		cmocka_unit_test(periods_too_short_are_raised),
	};
	return cmocka_run_group_tests_name("resolve", tests, NULL, NULL);
}
