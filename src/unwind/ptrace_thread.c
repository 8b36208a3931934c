/*
 * ptrace_thread.c - stop one thread briefly, read its registers and stack,
 * let it go (see ptrace_thread.h).
 *
 * Only PTRACE_SEIZE is used, never PTRACE_ATTACH: a seized thread is not
 * stopped by the attach itself, gets no stray SIGSTOP/SIGTRAP, and reports
 * group-stops as PTRACE_EVENT_STOP so they can be kept with PTRACE_LISTEN.
 * No ptrace options are set: PTRACE_O_EXITKILL would kill the target with
 * pmutop, and clone/exec tracing would add stops the target pays for. When
 * pmutop dies, the kernel detaches every tracee (exit_ptrace) and resumes
 * threads in our trap stops, so a target is never left in 't' state.
 */
#include "pmutop/unwind/ptrace_thread.h"

#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pmutop/sample/perf_record.h"

#define PAGE 4096u
#define MAX_IOV 32

void pt_classify(int status, struct pt_stop *out)
{
	out->sig = 0;
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		out->ev = PT_GONE;
		return;
	}
	if (!WIFSTOPPED(status)) {
		out->ev = PT_OTHER_EVENT;
		return;
	}
	out->sig = WSTOPSIG(status);
	switch ((unsigned)status >> 16) {
	case 0:
		out->ev = PT_SIGNAL;
		break;
	case PTRACE_EVENT_STOP:
		/* A seized group-stop reports its stop signal; our interrupt, SIGTRAP. */
		if (out->sig == SIGSTOP || out->sig == SIGTSTP || out->sig == SIGTTIN ||
		    out->sig == SIGTTOU) {
			out->ev = PT_GROUP_STOP;
		} else {
			out->ev = PT_INTERRUPT;
			out->sig = 0;
		}
		break;
	default:
		out->ev = PT_OTHER_EVENT;
		out->sig = 0;
		break;
	}
}

int pt_seize(pid_t tid)
{
	return ptrace(PTRACE_SEIZE, tid, NULL, NULL) ? -errno : 0;
}

int pt_interrupt(pid_t tid)
{
	return ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) ? -errno : 0;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool stop_requested(const sigset_t *stop_set)
{
	sigset_t pend;

	if (!stop_set || sigpending(&pend))
		return false;
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(stop_set, sig) == 1 && sigismember(&pend, sig) == 1)
			return true;
	return false;
}

int pt_wait(pid_t tid, int timeout_ms, const sigset_t *stop_set, int *status)
{
	int64_t deadline = mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	sigset_t cur, chld;
	bool chld_blocked;
	long nap_ns = 20000;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	chld_blocked = sigprocmask(SIG_BLOCK, NULL, &cur) == 0 && sigismember(&cur, SIGCHLD) == 1;
	for (;;) {
		pid_t r = waitpid(tid, status, __WALL | WNOHANG);
		int64_t left;

		if (r == tid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (stop_requested(stop_set))
			return -EINTR;
		left = deadline - mono_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		if (chld_blocked) {
			/* Short naps so a quit signal (left pending) is seen soon. */
			struct timespec ts = { 0, (left < 10 ? left : 10) * 1000000L };
			sigtimedwait(&chld, NULL, &ts);
		} else {
			struct timespec ts = { 0, nap_ns };
			nanosleep(&ts, NULL);
			if (nap_ns < 2000000)
				nap_ns *= 2;
		}
	}
}

int pt_resume(pid_t tid, const struct pt_stop *st)
{
	long r;

	switch (st->ev) {
	case PT_GONE:
		return 0;
	case PT_GROUP_STOP:
		r = ptrace(PTRACE_LISTEN, tid, NULL, NULL);
		break;
	case PT_SIGNAL:
		r = ptrace(PTRACE_CONT, tid, NULL, (void *)(long)st->sig);
		break;
	default:
		r = ptrace(PTRACE_CONT, tid, NULL, NULL);
		break;
	}
	return r ? -errno : 0;
}

int pt_detach(pid_t tid, const struct pt_stop *st)
{
	long sig = st && st->ev == PT_SIGNAL ? st->sig : 0;

	if (st && st->ev == PT_GONE)
		return 0;
	/* A group-stopped thread re-enters its group-stop after the detach. */
	return ptrace(PTRACE_DETACH, tid, NULL, (void *)sig) ? -errno : 0;
}

int pt_stop_and_detach(pid_t tid, int timeout_ms)
{
	int status, r;
	struct pt_stop st;

	r = pt_interrupt(tid);
	if (r)
		return r == -ESRCH ? 0 : r; /* gone, or not ours */
	r = pt_wait(tid, timeout_ms, NULL, &status);
	if (r)
		return r == -ECHILD ? 0 : r;
	pt_classify(status, &st);
	if (st.ev == PT_GONE)
		return 0;
	r = pt_detach(tid, &st);
	return r == -ESRCH ? 0 : r;
}

int pt_get_regs(pid_t tid, struct user_regs_struct *regs)
{
	struct iovec iov = { regs, sizeof(*regs) };

	if (ptrace(PTRACE_GETREGSET, tid, (void *)(long)NT_PRSTATUS, &iov))
		return -errno;
	return iov.iov_len >= offsetof(struct user_regs_struct, ss) ? 0 : -EIO;
}

void pt_regs_to_sample(const struct user_regs_struct *r, struct perf_sample *s)
{
	/* perf's packed order for PMUTOP_REGS_MASK: AX BX CX DX SI DI BP SP IP R8..R15 */
	const uint64_t v[PMUTOP_NREGS] = {
		r->rax, r->rbx, r->rcx, r->rdx, r->rsi, r->rdi, r->rbp, r->rsp, r->rip,
		r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15,
	};

	memcpy(s->regs, v, sizeof(v));
	s->abi = PERF_SAMPLE_REGS_ABI_64;
	s->ip = r->rip;
	s->misc = PERF_RECORD_MISC_USER;
}

int pt_read_stack(pid_t pid, uint64_t addr, void *buf, size_t cap, size_t *got)
{
	struct iovec local = { buf, cap }, remote[MAX_IOV];
	uint64_t a = addr;
	size_t left = cap;
	unsigned n = 0;
	ssize_t r;

	*got = 0;
	while (left && n < MAX_IOV) {
		size_t chunk = PAGE - (size_t)(a & (PAGE - 1));
		if (chunk > left)
			chunk = left;
		remote[n].iov_base = (void *)(uintptr_t)a;
		remote[n].iov_len = chunk;
		n++;
		a += chunk;
		left -= chunk;
	}
	local.iov_len = cap - left;
	if (!n)
		return 0;
	r = process_vm_readv(pid, &local, 1, remote, n, 0);
	if (r < 0)
		return -errno;
	*got = (size_t)r;
	return 0;
}

static int status_field(const char *path, const char *key, long *out)
{
	char line[256];
	size_t kl = strlen(key);
	FILE *f = fopen(path, "re");

	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, kl) == 0) {
			*out = strtol(line + kl, NULL, 10);
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return -ENOENT;
}

int pt_tracer_pid(pid_t pid)
{
	char path[64];
	long v = 0;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	r = status_field(path, "TracerPid:", &v);
	return r ? r : (int)v;
}

int pt_explain_seize_error(int err_no, pid_t pid, pid_t tid, char *err, size_t errlen)
{
	char path[64], comm[64] = "";
	long tracer = 0, scope = -1;

	if (err_no == ESRCH) {
		snprintf(err, errlen, "thread %d of PID %d exited before it could be traced",
			 (int)tid, (int)pid);
		return -err_no;
	}
	if (err_no != EPERM) {
		snprintf(err, errlen, "cannot ptrace thread %d of PID %d: %s", (int)tid, (int)pid,
			 strerror(err_no));
		return -err_no;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	if (status_field(path, "TracerPid:", &tracer) || tracer == 0) {
		int t = pt_tracer_pid(pid);
		tracer = t > 0 ? t : 0;
	}
	if (tracer > 0) {
		FILE *f;
		snprintf(path, sizeof(path), "/proc/%ld/comm", tracer);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
		snprintf(err, errlen,
			 "cannot ptrace PID %d: thread %d is already traced by PID %ld (%s); a thread "
			 "can have only one tracer (a debugger, strace, another profiler). Detach it "
			 "first, or use --unwind=snapshot, which needs no ptrace",
			 (int)pid, (int)tid, tracer, comm[0] ? comm : "?");
		return -EPERM;
	}
	{
		FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
		if (f) {
			if (fscanf(f, "%ld", &scope) != 1)
				scope = -1;
			fclose(f);
		}
	}
	if (scope >= 1 && geteuid() != 0)
		snprintf(err, errlen,
			 "cannot ptrace PID %d: permission denied (kernel.yama.ptrace_scope=%ld lets "
			 "only %s trace it; run as root, or `sysctl kernel.yama.ptrace_scope=0`), "
			 "or use --unwind=snapshot, which needs no ptrace",
			 (int)pid, scope, scope == 1 ? "its ancestors" : "root");
	else
		snprintf(err, errlen,
			 "cannot ptrace PID %d: permission denied (tracing another user's process, a "
			 "setuid or non-dumpable one needs root or CAP_SYS_PTRACE); --unwind=snapshot "
			 "needs no ptrace",
			 (int)pid);
	return -EPERM;
}

char pt_thread_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512];
	const char *p;
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return '?';
	buf[r] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

const char *pt_state_name(char state)
{
	switch (state) {
	case 'R': return "running";
	case 'S': return "sleeping";
	case 'D': return "disk sleep";
	case 'T': return "stopped";
	case 't': return "tracing stop";
	case 'Z': return "zombie";
	case 'X': return "dead";
	case 'I': return "idle";
	case 'P': return "parked";
	default: return "unknown";
	}
}

int pt_blocked_sample(pid_t pid, pid_t tid, void *buf, size_t cap, struct perf_sample *s,
		      long *nr)
{
	char path[96], line[512];
	unsigned long long v[8];
	size_t got;
	int fd, n, r;
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, line, sizeof(line) - 1);
	r = len < 0 ? -errno : 0;
	close(fd);
	if (r)
		return r;
	line[len > 0 ? len : 0] = 0;
	if (!strncmp(line, "running", 7))
		return -EAGAIN;
	/* "NR ARG1..ARG6 SP PC" in a system call, "-1 SP PC" blocked outside one. */
	if (sscanf(line, "%ld", nr) != 1)
		return -EIO;
	n = *nr < 0 ? sscanf(line, "%*d %llx %llx", &v[0], &v[1])
		    : sscanf(line, "%*d %llx %llx %llx %llx %llx %llx %llx %llx", &v[0], &v[1],
			     &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	if (n != (*nr < 0 ? 2 : 8))
		return -EIO;
	memset(s, 0, sizeof(*s));
	s->pid = (uint32_t)pid;
	s->tid = (uint32_t)tid;
	s->abi = PERF_SAMPLE_REGS_ABI_64;
	s->regs[7] = v[n - 2]; /* SP, in PMUTOP_REGS_MASK's packed order */
	s->regs[8] = v[n - 1]; /* IP */
	s->ip = v[n - 1];
	s->misc = PERF_RECORD_MISC_USER;
	r = pt_read_stack(pid, v[n - 2], buf, cap, &got);
	if (r)
		return r;
	s->stack = buf;
	s->stack_size = got;
	return 0;
}

int pt_snapshot(pid_t pid, pid_t tid, void *buf, size_t cap, struct perf_sample *s,
		int timeout_ms)
{
	struct user_regs_struct regs;
	struct pt_stop st;
	size_t got = 0;
	int status, r;

	r = pt_seize(tid);
	if (r)
		return r;
	r = pt_interrupt(tid);
	if (!r)
		r = pt_wait(tid, timeout_ms, NULL, &status);
	/* Not stopped in time: waiting again would only double the cost (issue 32). */
	if (r == -ETIMEDOUT)
		return r;
	if (r) {
		pt_stop_and_detach(tid, timeout_ms);
		return r;
	}
	pt_classify(status, &st);
	if (st.ev == PT_GONE)
		return -ESRCH;
	memset(s, 0, sizeof(*s));
	r = pt_get_regs(tid, &regs);
	if (!r) {
		pt_regs_to_sample(&regs, s);
		s->pid = (uint32_t)pid;
		s->tid = (uint32_t)tid;
		r = pt_read_stack(pid, regs.rsp, buf, cap, &got);
		s->stack = buf;
		s->stack_size = got;
	}
	pt_detach(tid, &st);
	return r;
}

struct snap_job {
	pid_t pid, tid;
	void *buf;
	size_t cap;
	struct perf_sample *s;
	int timeout_ms, rc;
};

static void *snap_thread(void *arg)
{
	struct snap_job *j = arg;

	j->rc = pt_snapshot(j->pid, j->tid, j->buf, j->cap, j->s, j->timeout_ms);
	return NULL;
}

int pt_snapshot_once(pid_t pid, pid_t tid, void *buf, size_t cap, struct perf_sample *s,
		     int timeout_ms)
{
	struct snap_job j = { pid, tid, buf, cap, s, timeout_ms, 0 };
	pthread_t th;
	int r = pthread_create(&th, NULL, snap_thread, &j);

	if (r)
		return -r;
	pthread_join(th, NULL);
	return j.rc;
}
