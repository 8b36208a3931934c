/*
 * test_ptrace_thread.c - the ptrace helpers shared by --stacks and the
 * ptrace engine: wait-status classification, register order, page-wise
 * stack reads that stop at a mapping's end, and a real seize / interrupt /
 * GETREGSET / detach round trip on a child, including the "already traced
 * by PID N (name)" message a second tracer gets.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "pmutop/sample/perf_record.h"
#include "pmutop/unwind/ptrace_thread.h"

/* A waitpid status of a ptrace-stop: sig, and an event in bits 16+. */
static int stopped(int sig, int event)
{
	return event << 16 | sig << 8 | 0x7f;
}

static void classify(void **state)
{
	struct pt_stop st;

	(void)state;
	pt_classify(stopped(SIGTRAP, PTRACE_EVENT_STOP), &st);
	assert_int_equal(st.ev, PT_INTERRUPT);
	assert_int_equal(st.sig, 0);
	pt_classify(stopped(SIGSTOP, PTRACE_EVENT_STOP), &st);
	assert_int_equal(st.ev, PT_GROUP_STOP);
	assert_int_equal(st.sig, SIGSTOP);
	pt_classify(stopped(SIGTSTP, PTRACE_EVENT_STOP), &st);
	assert_int_equal(st.ev, PT_GROUP_STOP);
	pt_classify(stopped(SIGUSR1, 0), &st);
	assert_int_equal(st.ev, PT_SIGNAL);
	assert_int_equal(st.sig, SIGUSR1);
	/* A SIGSTOP being delivered is a signal-delivery-stop, not yet a group-stop. */
	pt_classify(stopped(SIGSTOP, 0), &st);
	assert_int_equal(st.ev, PT_SIGNAL);
	pt_classify(stopped(SIGTRAP, PTRACE_EVENT_EXEC), &st);
	assert_int_equal(st.ev, PT_OTHER_EVENT);
	pt_classify(3 << 8, &st);            /* exited with status 3 */
	assert_int_equal(st.ev, PT_GONE);
	pt_classify(SIGKILL, &st);           /* killed */
	assert_int_equal(st.ev, PT_GONE);
}

static void regs_in_perf_order(void **state)
{
	struct user_regs_struct r;
	struct perf_sample s;

	(void)state;
	memset(&r, 0, sizeof(r));
	memset(&s, 0, sizeof(s));
	r.rax = 1, r.rbx = 2, r.rcx = 3, r.rdx = 4, r.rsi = 5, r.rdi = 6, r.rbp = 7;
	r.rsp = 8, r.rip = 9, r.r8 = 10, r.r15 = 17;
	pt_regs_to_sample(&r, &s);
	for (int i = 0; i < 9; i++)
		assert_int_equal(s.regs[i], (uint64_t)i + 1);
	assert_int_equal(s.regs[9], 10);
	assert_int_equal(s.regs[16], 17);
	assert_int_equal(s.ip, 9);
	assert_int_equal(s.abi, PERF_SAMPLE_REGS_ABI_64);
	assert_int_equal(s.misc, PERF_RECORD_MISC_USER);
}

static void stack_read_stops_at_mapping_end(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, (size_t)page * 3, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static uint8_t buf[4 * 4096];
	size_t got = 0;

	(void)state;
	assert_true(m != MAP_FAILED);
	memset(m, 0xab, (size_t)page * 2);
	munmap(m + 2 * page, (size_t)page); /* a hole after two pages */
	/* From the middle of the first page: one and a half pages are readable. */
	assert_int_equal(pt_read_stack(getpid(), (uint64_t)(uintptr_t)(m + page / 2), buf,
				       sizeof(buf), &got), 0);
	assert_int_equal(got, (size_t)page + (size_t)page / 2);
	assert_int_equal(buf[0], 0xab);
	assert_int_equal(buf[got - 1], 0xab);
	/* Nothing readable at all. */
	assert_int_not_equal(pt_read_stack(getpid(), (uint64_t)(uintptr_t)(m + 2 * page), buf, 64,
					   &got), 0);
	assert_int_equal(got, 0);
	munmap(m, (size_t)page * 2);
}

static pid_t spawn_sleeper(void)
{
	pid_t p = fork();

	if (p == 0) {
		for (;;)
			pause();
	}
	return p;
}

static void seize_stop_read_detach(void **state)
{
	struct user_regs_struct r;
	struct pt_stop st;
	pid_t child = spawn_sleeper();
	int status;
	char s;

	(void)state;
	assert_true(child > 0);
	usleep(20000);
	assert_int_equal(pt_tracer_pid(child), 0);
	if (pt_seize(child) == -EPERM) {
		/* ptrace forbidden here (seccomp, Yama scope 3): nothing to test. */
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
		skip();
	}
	assert_int_equal(pt_tracer_pid(child), getpid());
	assert_int_equal(pt_interrupt(child), 0);
	assert_int_equal(pt_wait(child, 2000, NULL, &status), 0);
	pt_classify(status, &st);
	assert_int_equal(st.ev, PT_INTERRUPT);
	assert_int_equal(pt_get_regs(child, &r), 0);
	assert_true(r.rsp != 0 && r.rip != 0);
	s = pt_thread_state(child, child);
	assert_int_equal(s, 't');
	assert_string_equal(pt_state_name(s), "tracing stop");
	/* Resume, then stop and detach again in one call. */
	assert_int_equal(pt_resume(child, &st), 0);
	assert_int_equal(pt_stop_and_detach(child, 2000), 0);
	usleep(20000);
	assert_int_equal(pt_tracer_pid(child), 0);
	s = pt_thread_state(child, child);
	assert_true(s == 'S' || s == 'R');
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	/* Nothing to wait for: a timeout, not a hang. */
	assert_int_equal(pt_wait(getpid() + 100000, 10, NULL, &status) < 0, 1);
}

static void second_tracer_is_named(void **state)
{
	pid_t child = spawn_sleeper(), other;
	int pfd[2], status;
	char msg[512] = "";
	ssize_t n;

	(void)state;
	assert_int_equal(pipe(pfd), 0);
	if (pt_seize(child) == -EPERM) {
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
		skip();
	}
	other = fork();
	if (other == 0) {
		char err[512];
		int r = pt_seize(child);
		if (r)
			pt_explain_seize_error(-r, child, child, err, sizeof(err));
		else
			snprintf(err, sizeof(err), "seize succeeded");
		if (write(pfd[1], err, strlen(err)) < 0)
			_exit(2);
		_exit(0);
	}
	close(pfd[1]);
	n = read(pfd[0], msg, sizeof(msg) - 1);
	assert_true(n > 0);
	msg[n] = 0;
	waitpid(other, &status, 0);
	{
		char want[64];
		snprintf(want, sizeof(want), "already traced by PID %d (", (int)getpid());
		assert_non_null(strstr(msg, want));
		assert_non_null(strstr(msg, "--unwind=snapshot"));
	}
	assert_int_equal(pt_stop_and_detach(child, 2000), 0);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	close(pfd[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(classify),
		cmocka_unit_test(regs_in_perf_order),
		cmocka_unit_test(stack_read_stops_at_mapping_end),
		cmocka_unit_test(seize_stop_read_detach),
		cmocka_unit_test(second_tracer_is_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
