/*
 * proc.c - facts about a target read from /proc, and the pre-flight checks.
 *
 * The checks exist so that a user who cannot profile a process learns which
 * knob to turn (kernel.perf_event_paranoid, kernel.yama.ptrace_scope, the
 * process's owner) in one message, before pmutop opens anything.
 */
#include "pmutop/target/proc.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int proc_list_threads(pid_t pid, pid_t *tids, size_t cap, size_t *n)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		if (*n < cap)
			tids[*n] = (pid_t)tid;
		(*n)++;
	}
	closedir(d);
	if (*n > cap)
		return -ENOSPC;
	return 0;
}

static ssize_t read_small_file(const char *path, char *buf, size_t len)
{
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	r = read(fd, buf, len - 1);
	if (r < 0)
		r = -errno;
	else
		buf[r] = 0;
	close(fd);
	return r;
}

int proc_thread_name(pid_t pid, pid_t tid, char *buf, size_t len)
{
	char path[64];
	ssize_t r;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	r = read_small_file(path, buf, len);
	if (r < 0)
		return (int)r;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

int proc_argv(pid_t pid, char *buf, size_t len, size_t *nbytes)
{
	char path[64];
	ssize_t r;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	r = read_small_file(path, buf, len);
	if (r < 0)
		return (int)r;
	*nbytes = (size_t)r;
	return 0;
}

int proc_cmdline(pid_t pid, char *buf, size_t len)
{
	size_t n = 0;
	int r = proc_argv(pid, buf, len, &n);

	if (r)
		return r;
	for (size_t i = 0; i + 1 < n; i++)
		if (buf[i] == 0)
			buf[i] = ' ';
	return 0;
}

/* The parent pid in /proc/PID/stat (after the ")" that ends the command name). */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512];
	const char *p;
	ssize_t r;
	int ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	r = read_small_file(path, buf, sizeof(buf));
	if (r <= 0)
		return 0;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return 0;
	return (pid_t)ppid;
}

int proc_descendants(const pid_t *roots, size_t nroots, pid_t *out, size_t cap, size_t *n)
{
	struct { pid_t pid, ppid; } *all = NULL;
	size_t nall = 0, capall = 0;
	struct dirent *de;
	DIR *d = opendir("/proc");

	*n = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long v = strtol(de->d_name, &end, 10);

		if (*end || v <= 0)
			continue;
		if (nall == capall) {
			size_t nc = capall ? capall * 2 : 1024;
			void *q = realloc(all, nc * sizeof(*all));
			if (!q) {
				closedir(d);
				free(all);
				return -ENOMEM;
			}
			all = q;
			capall = nc;
		}
		all[nall].pid = (pid_t)v;
		all[nall].ppid = parent_of((pid_t)v);
		nall++;
	}
	closedir(d);
	/* Breadth first from the roots: out[] doubles as the queue. */
	for (size_t i = 0; i < nroots && *n < cap; i++)
		out[(*n)++] = roots[i];
	for (size_t q = 0; q < *n; q++)
		for (size_t i = 0; i < nall; i++) {
			bool known = false;

			if (all[i].ppid != out[q])
				continue;
			for (size_t k = 0; k < *n && !known; k++)
				known = out[k] == all[i].pid;
			if (known)
				continue;
			if (*n == cap) {
				free(all);
				return -ENOSPC;
			}
			out[(*n)++] = all[i].pid;
		}
	free(all);
	return 0;
}

int proc_sysctl_int(const char *name, long *value)
{
	char path[128], buf[64];
	ssize_t r;

	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	r = read_small_file(path, buf, sizeof(buf));
	if (r < 0)
		return (int)r;
	*value = strtol(buf, NULL, 10);
	return 0;
}

int proc_thread_group(pid_t tid, pid_t *tgid, bool *kernel_thread)
{
	char path[64], buf[2048];
	const char *p;
	unsigned long flags = 0;
	ssize_t r;
	int f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	r = read_small_file(path, buf, sizeof(buf));
	if (r <= 0)
		return r < 0 ? (int)r : -ESRCH;
	p = strstr(buf, "\nTgid:");
	if (!p || sscanf(p + 6, "%d", &f) != 1)
		return -EINVAL;
	*tgid = (pid_t)f;
	/* stat's 9th field, after the ")" closing comm: flags, PF_KTHREAD = 0x00200000 */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	r = read_small_file(path, buf, sizeof(buf));
	p = r > 0 ? strrchr(buf, ')') : NULL;
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return r < 0 ? (int)r : -EINVAL;
	*kernel_thread = flags & 0x00200000;
	return 0;
}

int proc_start_realtime(pid_t pid, struct timespec *when)
{
	char path[64], buf[1024];
	const char *p;
	unsigned long long ticks;
	struct timespec boot, real;
	long hz = sysconf(_SC_CLK_TCK);
	int64_t since_ns, start_ns;
	ssize_t r;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	r = read_small_file(path, buf, sizeof(buf));
	if (r <= 0)
		return r < 0 ? (r == -ENOENT ? -ESRCH : (int)r) : -EINVAL;
	/* Field 22, starttime: the 20th after the ")" that ends comm. */
	p = strrchr(buf, ')');
	if (!p || hz <= 0 ||
	    sscanf(p + 1, " %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
		   "%*s %*s %*s %llu", &ticks) != 1)
		return -EINVAL;
	if (clock_gettime(CLOCK_BOOTTIME, &boot) || clock_gettime(CLOCK_REALTIME, &real))
		return -errno;
	since_ns = ((int64_t)boot.tv_sec * 1000000000LL + boot.tv_nsec) -
		   (int64_t)(ticks / (unsigned long long)hz) * 1000000000LL -
		   (int64_t)(ticks % (unsigned long long)hz) * (1000000000LL / hz);
	start_ns = (int64_t)real.tv_sec * 1000000000LL + real.tv_nsec - since_ns;
	when->tv_sec = (time_t)(start_ns / 1000000000LL);
	when->tv_nsec = (long)(start_ns % 1000000000LL);
	return 0;
}

/* Whether pmutop holds capability cap (CapEff of /proc/self/status). */
static bool have_cap(int cap)
{
	char buf[4096], *p;
	unsigned long long eff;

	if (read_small_file("/proc/self/status", buf, sizeof(buf)) <= 0)
		return false;
	p = strstr(buf, "\nCapEff:");
	if (!p || sscanf(p + 8, "%llx", &eff) != 1)
		return false;
	return cap < 64 && (eff >> cap) & 1;
}

#define CAP_SYS_PTRACE_BIT 19
#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38

/* A capability set of /proc/PID/status ("CapPrm", "CapEff"); false when unreadable. */
static bool cap_set(pid_t pid, const char *field, unsigned long long *set)
{
	char path[64], buf[4096], key[16], *p;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	snprintf(key, sizeof(key), "\n%s:", field);
	if (read_small_file(path, buf, sizeof(buf)) <= 0 || !(p = strstr(buf, key)))
		return false;
	return sscanf(p + strlen(key), "%llx", set) == 1;
}

/* capabilities(7)'s names, by number. */
static const char *const cap_names[] = {
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
	"CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW",
	"CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT",
	"CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE",
	"CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE",
	"CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ",
	"CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE",
};

/*
 * Root was refused PID's memory (/proc/PID/maps: e_no): say what is known
 * of why instead of asking for the root pmutop already is.
 */
static int explain_root_refused(pid_t pid, int e_no, char *err, size_t errlen)
{
	unsigned long long theirs = 0, ours = 0, extra;
	char names[256] = "";
	size_t len = 0;

	if (cap_set(pid, "CapPrm", &theirs) && cap_set(0, "CapEff", &ours) &&
	    (extra = theirs & ~ours) != 0) {
		for (unsigned b = 0; b < 64 && len + 1 < sizeof(names); b++) {
			if (!(extra >> b & 1))
				continue;
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
						len ? ", " : "",
						b < sizeof(cap_names) / sizeof(cap_names[0]) ?
						cap_names[b] : "CAP_?");
		}
	}
	snprintf(err, errlen, "cannot profile PID %d: the kernel refused to let pmutop read its "
		 "memory (/proc/%d/maps: %s), although pmutop runs as root%s%s%s%s",
		 (int)pid, (int)pid, strerror(e_no),
		 have_cap(CAP_SYS_PTRACE_BIT) ? " with CAP_SYS_PTRACE" : " (without CAP_SYS_PTRACE: "
		 "a capability bounding set dropped it)",
		 names[0] ? "; the process holds capabilities pmutop lacks (" : "", names,
		 names[0] ? "), so it is more privileged than pmutop: only a process holding "
			    "them too may read it" :
			    "; a security module (or a protected process) forbids it: profile another "
			    "process");
	return -EACCES;
}

int proc_check_target(pid_t pid, char *err, size_t errlen)
{
	char path[64];
	struct stat st;
	long paranoid = 2;

	if (kill(pid, 0) && errno == ESRCH) {
		snprintf(err, errlen, "no such process: PID %d", (int)pid);
		return -ESRCH;
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st)) {
		snprintf(err, errlen, "no such process: PID %d", (int)pid);
		return -ESRCH;
	}
	/* A zombie has no threads to sample and no memory to read. */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	{
		char buf[512];
		ssize_t r = read_small_file(path, buf, sizeof(buf));
		const char *p = r > 0 ? strrchr(buf, ')') : NULL;
		if (p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X')) {
			snprintf(err, errlen, "PID %d is a zombie (exited, not yet reaped): nothing to profile",
				 (int)pid);
			return -ESRCH;
		}
	}
	if (geteuid() == 0) {
		int fd;

		/* Root may still be refused a process: find out now, and why. */
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			return 0;
		}
		if (errno == EACCES || errno == EPERM)
			return explain_root_refused(pid, errno, err, errlen);
		return 0;
	}
	proc_sysctl_int("kernel/perf_event_paranoid", &paranoid);
	/*
	 * perf_event_open on another task and reading its memory both need
	 * ptrace access rights (PTRACE_MODE_READ_REALCREDS): same uid and not
	 * setuid, or CAP_SYS_PTRACE. (Yama's ptrace_scope restricts
	 * PTRACE_ATTACH, which --unwind=ptrace and --stacks use: those paths
	 * explain a refusal themselves, see ptrace_thread.c.)
	 */
	if (st.st_uid != geteuid() && !have_cap(CAP_SYS_PTRACE_BIT)) {
		snprintf(err, errlen,
			 "permission denied: PID %d belongs to uid %u and you are uid %u; profiling "
			 "another user's process needs root or CAP_SYS_PTRACE (and CAP_PERFMON)",
			 (int)pid, (unsigned)st.st_uid, (unsigned)geteuid());
		return -EPERM;
	}
	if (paranoid > 2 && !have_cap(CAP_PERFMON_BIT) && !have_cap(CAP_SYS_ADMIN_BIT)) {
		snprintf(err, errlen,
			 "permission denied: kernel.perf_event_paranoid=%ld forbids perf events for "
			 "unprivileged users; run as root or `sysctl kernel.perf_event_paranoid=2`",
			 paranoid);
		return -EACCES;
	}
	return 0;
}

int proc_explain_perf_error(int err_no, pid_t tid, const char *event,
			    char *err, size_t errlen)
{
	long paranoid = 2;

	proc_sysctl_int("kernel/perf_event_paranoid", &paranoid);
	switch (err_no) {
	case EACCES:
	case EPERM:
		snprintf(err, errlen,
			 "cannot open a %s counter on tid %d: %s (kernel.perf_event_paranoid=%ld; "
			 "user-mode sampling of your own processes needs <= 2, --kernel needs <= 1, "
			 "other users' processes need root or CAP_PERFMON+CAP_SYS_PTRACE)",
			 event, (int)tid, strerror(err_no), paranoid);
		break;
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		snprintf(err, errlen,
			 "event %s is not supported on this machine (no hardware PMU exposed, e.g. "
			 "in this VM: `perf stat -e %s true` shows the same); use a software event "
			 "such as -e task-clock or -e cpu-clock",
			 event, event);
		break;
	case EINVAL:
		snprintf(err, errlen,
			 "the kernel rejected the %s counter for tid %d (Invalid argument): the event "
			 "code, period or frequency is not valid here (frequency above "
			 "kernel.perf_event_max_sample_rate?)",
			 event, (int)tid);
		break;
	case EMFILE:
	case ENFILE:
		snprintf(err, errlen,
			 "out of file descriptors while opening counters (tid %d): pmutop needs one "
			 "per thread and CPU; raise `ulimit -n`",
			 (int)tid);
		break;
	case ESRCH:
		snprintf(err, errlen, "thread %d exited before its counter could be opened", (int)tid);
		break;
	default:
		snprintf(err, errlen, "cannot open a %s counter on tid %d: %s", event, (int)tid,
			 strerror(err_no));
	}
	return -err_no;
}

const char *proc_kernel_sampling_hint(char *buf, size_t len)
{
	long paranoid = 2;

	proc_sysctl_int("kernel/perf_event_paranoid", &paranoid);
	snprintf(buf, len, "kernel.perf_event_paranoid=%ld; kernel mode needs <= 1, root or "
		 "CAP_PERFMON: sysctl kernel.perf_event_paranoid=1", paranoid);
	return buf;
}
