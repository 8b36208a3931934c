/*
 * stacks_target.c - threads parked in known places, for `pmutop --stacks`
 * and the ptrace engine's safety tests.
 *
 * Ground truth, from "ready" on stdout until argv[1] seconds (default 10)
 * have passed:
 *   thread "sleeper"  stk_sleeper_thread -> stk_sleep_in_nanosleep -> nanosleep
 *   thread "spinner"  stk_spinner_thread -> stk_busy_named_function (running)
 *   thread "reader"   stk_reader_thread -> stk_block_on_pipe_read -> read(pipe)
 *   main thread       main -> stk_main_wait -> nanosleep
 * Then main writes one byte into the pipe, tells the others to stop, joins
 * them and checks each did its work: the reader read that byte, the
 * spinner spun, the sleeper woke up. It prints "stacks_target: ok usr1=N"
 * and exits 0, or says what went wrong and exits 1. N counts SIGUSR1s
 * (handled with SA_RESTART), so a test can check that signals sent while a
 * tracer held the process were delivered.
 *
 * SIGUSR2 ends the wait early (the test has read the stacks).
 *
 * usage: stacks_target [SECONDS]
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

static volatile sig_atomic_t usr1_count;
static volatile int stop_flag;
static int pipefd[2];
static pthread_barrier_t placed;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_count++;
}

WL_NOINLINE static void stk_sleep_in_nanosleep(void)
{
	struct timespec ts = { 0, 50 * 1000000L };

	nanosleep(&ts, NULL); /* EINTR by SIGUSR1 is fine: the caller loops */
}

WL_NOINLINE static void *stk_sleeper_thread(void *arg)
{
	long *wakeups = arg;

	pthread_setname_np(pthread_self(), "sleeper");
	pthread_barrier_wait(&placed);
	while (!stop_flag) {
		stk_sleep_in_nanosleep();
		(*wakeups)++;
	}
	return NULL;
}

WL_NOINLINE static long stk_busy_named_function(void)
{
	long rounds = 0;

	while (!stop_flag) {
		WL_SPIN(10000);
		rounds++;
	}
	return rounds;
}

WL_NOINLINE static void *stk_spinner_thread(void *arg)
{
	long *rounds = arg;

	pthread_setname_np(pthread_self(), "spinner");
	pthread_barrier_wait(&placed);
	*rounds = stk_busy_named_function();
	return NULL;
}

WL_NOINLINE static int stk_block_on_pipe_read(void)
{
	char c = 0;
	ssize_t r;

	do
		r = read(pipefd[0], &c, 1);
	while (r < 0 && errno == EINTR);
	return r == 1 ? c : -1;
}

WL_NOINLINE static void *stk_reader_thread(void *arg)
{
	int *got = arg;

	pthread_setname_np(pthread_self(), "reader");
	pthread_barrier_wait(&placed);
	*got = stk_block_on_pipe_read();
	return NULL;
}

/* SIGUSR2: finish now (the test has read the stacks; no need to wait out SECONDS). */
static volatile sig_atomic_t finish_now;

static void on_usr2(int sig)
{
	(void)sig;
	finish_now = 1;
}

WL_NOINLINE static void stk_main_wait(double secs)
{
	double end = wl_now() + secs;

	while (wl_now() < end && !finish_now) {
		struct timespec ts = { 0, 20 * 1000000L };
		nanosleep(&ts, NULL);
	}
}

int main(int argc, char **argv)
{
	double secs = wl_arg_double(argc, argv, 1, 10.0);
	struct sigaction sa;
	pthread_t sleeper, spinner, reader;
	long wakeups = 0, rounds = 0;
	int got = 0, bad = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	if (pipe(pipefd)) {
		perror("stacks_target: pipe");
		return 1;
	}
	pthread_barrier_init(&placed, NULL, 4);
	if (pthread_create(&sleeper, NULL, stk_sleeper_thread, &wakeups) ||
	    pthread_create(&spinner, NULL, stk_spinner_thread, &rounds) ||
	    pthread_create(&reader, NULL, stk_reader_thread, &got)) {
		fprintf(stderr, "stacks_target: pthread_create failed\n");
		return 1;
	}
	pthread_barrier_wait(&placed);
	printf("ready\n");
	fflush(stdout);

	stk_main_wait(secs);

	stop_flag = 1;
	if (write(pipefd[1], "x", 1) != 1) {
		perror("stacks_target: write");
		return 1;
	}
	pthread_join(sleeper, NULL);
	pthread_join(spinner, NULL);
	pthread_join(reader, NULL);
	if (got != 'x') {
		fprintf(stderr, "stacks_target: the reader did not get its byte (%d)\n", got);
		bad = 1;
	}
	if (rounds <= 0) {
		fprintf(stderr, "stacks_target: the spinner did not spin\n");
		bad = 1;
	}
	if (wakeups <= 0) {
		fprintf(stderr, "stacks_target: the sleeper never woke up\n");
		bad = 1;
	}
	printf("stacks_target: %s usr1=%d\n", bad ? "FAILED" : "ok", (int)usr1_count);
	return bad;
}
