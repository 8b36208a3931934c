/*
 * record.c - a profiling session from start to profile.
 *
 * The loop is single-threaded and event-driven: one epoll set holds the
 * sampler's buffers, a signalfd (SIGINT/SIGTERM/SIGHUP) and a pidfd that
 * becomes readable when the target exits. Each wakeup drains the ring
 * buffers and pushes every sample through unwind → symbolize → aggregate.
 * Whatever ends the session (duration, signal, target exit), the buffers are
 * drained once more before the counters close and the profile is written,
 * so no collected sample is lost.
 */
#include "pmutop/record.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pmutop/aggregate.h"
#include "pmutop/cli.h"
#include "pmutop/maps.h"
#include "pmutop/module.h"
#include "pmutop/perf_record.h"
#include "pmutop/pprof.h"
#include "pmutop/proc.h"
#include "pmutop/sampler.h"
#include "pmutop/symbolize.h"
#include "pmutop/unwind.h"
#include "table.h"

#define RESCAN_INTERVAL_NS (50 * 1000000ULL)
#define MAPS_RELOAD_MIN_NS (100 * 1000000ULL)

struct session {
	const struct pmutop_opts *o;
	pid_t pid;
	bool launched;
	struct module_cache *modules;
	struct maps *maps;
	struct unwinder *unwinder;
	struct aggregate *agg;
	struct sampler *sampler;
	uint64_t *ips;
	struct frame *frames;
	uint64_t last_maps_reload;
	char proc_comm[16];
};

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Counters need one fd per thread and CPU: use all the fds we may have. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void name_thread(struct session *s, uint32_t tid)
{
	const struct agg_thread *t = aggregate_thread(s->agg, tid);
	char name[32];

	if (t && t->name[0])
		return;
	if (proc_thread_name(s->pid, (pid_t)tid, name, sizeof(name)))
		snprintf(name, sizeof(name), "%s", s->proc_comm[0] ? s->proc_comm : "?");
	aggregate_set_thread_name(s->agg, tid, name);
}

static void handle_sample(struct session *s, const struct perf_sample *smp)
{
	struct agg_info *info = aggregate_info(s->agg);
	enum unwind_outcome outcome;
	unsigned n;

	if (getenv("PMUTOP_DEBUG_SAMPLES"))
		fprintf(stderr, "S tid=%u cpu=%u t=%llu ip=%llx period=%llu\n", smp->tid, smp->cpu, (unsigned long long)smp->time, (unsigned long long)smp->ip, (unsigned long long)smp->period);
	if (smp->pid != (uint32_t)s->pid) {
		info->foreign++; /* a forked child on kernels without inherit_thread */
		return;
	}
	n = unwinder_unwind(s->unwinder, smp, s->ips, s->o->max_depth, &outcome);
	/*
	 * An IP outside every known mapping means we missed a mapping (the
	 * vDSO after exec, a race at attach): re-read /proc/PID/maps, rarely.
	 */
	if (n && !maps_find(s->maps, s->ips[0])) {
		uint64_t t = now_ns(CLOCK_MONOTONIC);
		if (t - s->last_maps_reload > MAPS_RELOAD_MIN_NS) {
			s->last_maps_reload = t;
			if (maps_load_proc(s->maps) == 0) {
				unwinder_flush(s->unwinder);
				n = unwinder_unwind(s->unwinder, smp, s->ips, s->o->max_depth, &outcome);
			}
		}
	}
	info->outcomes[outcome]++;
	symbolize_stack(s->maps, s->ips, n, s->frames);
	name_thread(s, smp->tid);
	/* On failure (ENOMEM) the aggregate counts nothing; the summary shows it. */
	aggregate_add(s->agg, smp->tid, s->frames, n, smp->period ? smp->period : info->period);
}

static int on_record(void *arg, const struct perf_rec *r)
{
	struct session *s = arg;
	struct agg_info *info = aggregate_info(s->agg);

	switch (r->kind) {
	case PREC_SAMPLE:
		handle_sample(s, &r->sample);
		break;
	case PREC_MMAP:
		if (r->mmap.pid != (uint32_t)s->pid)
			break;
		maps_add(s->maps, r->mmap.start, r->mmap.len, r->mmap.pgoff,
			 makedev(r->mmap.maj, r->mmap.min), r->mmap.ino,
			 (r->mmap.prot & 4) != 0, r->mmap.filename);
		/* New code at an address may replace old code with cached unwind rules. */
		if (r->mmap.prot & 4)
			unwinder_flush(s->unwinder);
		break;
	case PREC_COMM:
		if (r->comm.pid != (uint32_t)s->pid)
			break;
		if (r->comm.exec) {
			maps_reset(s->maps);
			unwinder_flush(s->unwinder);
			snprintf(s->proc_comm, sizeof(s->proc_comm), "%s", r->comm.comm);
		}
		aggregate_set_thread_name(s->agg, r->comm.tid, r->comm.comm);
		break;
	case PREC_EXIT:
		if (r->task.pid == (uint32_t)s->pid)
			sampler_thread_exited(s->sampler, (pid_t)r->task.tid);
		break;
	case PREC_LOST:
	case PREC_LOST_SAMPLES:
		info->lost += r->lost;
		break;
	case PREC_THROTTLE:
		info->throttled++;
		break;
	default:
		break;
	}
	return 0;
}

/*
 * Fork the command, stopped before exec until counters are attached: the
 * child waits on a pipe, then execs; exec failure comes back through a
 * close-on-exec pipe. Returns the child's pid or -1 with err filled.
 */
static pid_t launch(char **cmd, int *go_fd, int *status_fd, char *err, size_t errlen)
{
	int go[2], status[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) || pipe2(status, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(status[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* pmutop gave up before starting us */
		execvp(cmd[0], cmd);
		e = errno;
		if (write(status[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(status[1]);
	*go_fd = go[1];
	*status_fd = status[0];
	return pid;
}

static int resolve_event(const struct pmutop_opts *o, struct pmu_event *ev, char *err, size_t errlen)
{
	int r;

	*ev = o->event;
	r = events_probe(ev, o->kernel);
	if (r == 0)
		return 0;
	if (!o->event_given && ev->hardware && (r == -ENOENT || r == -EOPNOTSUPP || r == -ENODEV)) {
		struct pmu_event fb;
		char e2[128];
		if (events_parse("task-clock", &fb, e2, sizeof(e2)) == 0 && events_probe(&fb, o->kernel) == 0) {
			fprintf(stderr, "pmutop: no hardware PMU here (%s is not supported); "
				"falling back to task-clock\n", ev->name);
			*ev = fb;
			return 0;
		}
	}
	return proc_explain_perf_error(-r, getpid(), ev->name, err, errlen);
}

static void print_summary(struct session *s, const struct pmu_event *ev, uint64_t period, bool freq)
{
	const struct agg_info *info = aggregate_info_const(s->agg);
	struct sampler_stats st;
	uint64_t total = 0;

	sampler_get_stats(s->sampler, &st);
	for (int i = 0; i < UNWIND_NOUTCOMES; i++)
		total += info->outcomes[i];
	fprintf(stderr,
		"pmutop: %llu samples of %s (%s %llu) in %.2f s from %zu threads on %u CPUs; "
		"lost %llu, throttled %llu\n",
		(unsigned long long)info->samples, ev->name, freq ? "freq" : "period",
		(unsigned long long)period, (double)info->duration_ns / 1e9, st.threads_seen,
		st.ncpus, (unsigned long long)info->lost, (unsigned long long)info->throttled);
	if (info->lost)
		fprintf(stderr, "pmutop: WARNING: the kernel dropped %llu samples (buffer full); "
			"try a larger --mmap-pages or a longer --period\n",
			(unsigned long long)info->lost);
	if (total) {
		fprintf(stderr, "pmutop: unwind:");
		for (int i = 0; i < UNWIND_NOUTCOMES; i++)
			if (info->outcomes[i])
				fprintf(stderr, " %s %.1f%%", unwind_outcome_name(i),
					100.0 * (double)info->outcomes[i] / (double)total);
		fprintf(stderr, "\n");
	}
}

static void session_free(struct session *s)
{
	sampler_free(s->sampler);
	unwinder_free(s->unwinder);
	maps_free(s->maps);
	aggregate_free(s->agg);
	module_cache_free(s->modules);
	free(s->ips);
	free(s->frames);
}

static int wait_child(pid_t pid, bool kill_it)
{
	int status = 0;

	if (kill_it)
		kill(pid, SIGTERM);
	for (int i = 0; i < 200; i++) {
		pid_t r = waitpid(pid, &status, kill_it ? WNOHANG : 0);
		if (r == pid)
			return status;
		if (r < 0)
			return -1;
		struct timespec ts = { 0, 10 * 1000000 };
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return status;
}

int record_run(const struct pmutop_opts *o)
{
	struct session s = { .o = o };
	struct sampler_config cfg = { 0 };
	struct pmu_event ev;
	char err[768] = "";
	int go_fd = -1, status_fd = -1, pidfd = -1, sigfd = -1, ep = -1, rc = 1;
	sigset_t mask;
	uint64_t start_mono, deadline = 0, next_rescan;
	const char *why = "target exited";
	bool stop = false, child_running = false;

	raise_fd_limit();
	if (o->dump && pprof_check_writable(o->dump, err, sizeof(err))) {
		fprintf(stderr, "pmutop: %s\n", err);
		return 2;
	}
	if (resolve_event(o, &ev, err, sizeof(err))) {
		fprintf(stderr, "pmutop: %s\n", err);
		return 1;
	}

	if (o->cmd) {
		s.pid = launch(o->cmd, &go_fd, &status_fd, err, sizeof(err));
		if (s.pid < 0) {
			fprintf(stderr, "pmutop: cannot start %s: %s\n", o->cmd[0], err);
			return 1;
		}
		s.launched = true;
		child_running = true;
	} else {
		s.pid = o->pid;
		if (proc_check_target(s.pid, err, sizeof(err))) {
			fprintf(stderr, "pmutop: %s\n", err);
			return 1;
		}
	}

	s.modules = module_cache_new();
	s.maps = s.modules ? maps_new(s.pid, s.modules) : NULL;
	s.unwinder = s.maps ? unwinder_new(s.maps) : NULL;
	s.agg = aggregate_new();
	s.ips = calloc(o->max_depth + 2, sizeof(*s.ips));
	s.frames = calloc(o->max_depth + 2, sizeof(*s.frames));
	if (!s.unwinder || !s.agg || !s.ips || !s.frames) {
		fprintf(stderr, "pmutop: out of memory setting up\n");
		goto out;
	}
	if (!s.launched) {
		int r = maps_load_proc(s.maps);
		if (r) {
			fprintf(stderr, "pmutop: cannot read /proc/%d/maps: %s%s\n", (int)s.pid, strerror(-r),
				r == -EACCES || r == -EPERM ? " (reading another user's process needs root "
				"or CAP_SYS_PTRACE)" : "");
			goto out;
		}
		proc_thread_name(s.pid, s.pid, s.proc_comm, sizeof(s.proc_comm));
	}

	cfg.pid = s.pid;
	cfg.event = ev;
	cfg.freq = o->freq != 0;
	cfg.period = o->freq ? o->freq : (o->period ? o->period : ev.preset_period);
	cfg.kernel = o->kernel;
	cfg.stack_size = o->stack_size;
	cfg.mmap_pages = o->mmap_pages;
	cfg.enable_on_exec = s.launched;
	s.sampler = sampler_new(&cfg, err, sizeof(err));
	if (!s.sampler) {
		fprintf(stderr, "pmutop: %s\n", err);
		goto out;
	}
	{
		struct agg_info *info = aggregate_info(s.agg);
		info->event = ev.name;
		info->event_unit = ev.unit;
		info->period = cfg.freq ? 0 : cfg.period;
		info->start_ns = now_ns(CLOCK_REALTIME);
	}

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	pidfd = (int)syscall(SYS_pidfd_open, s.pid, 0);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (sigfd < 0 || ep < 0) {
		fprintf(stderr, "pmutop: cannot set up the event loop: %s\n", strerror(errno));
		goto out;
	}
	{
		struct epoll_event e1 = { .events = EPOLLIN, .data.u32 = 0 };
		struct epoll_event e2 = { .events = EPOLLIN, .data.u32 = 1 };
		struct epoll_event e3 = { .events = EPOLLIN, .data.u32 = 2 };
		epoll_ctl(ep, EPOLL_CTL_ADD, sampler_fd(s.sampler), &e1);
		epoll_ctl(ep, EPOLL_CTL_ADD, sigfd, &e2);
		if (pidfd >= 0)
			epoll_ctl(ep, EPOLL_CTL_ADD, pidfd, &e3);
	}

	if (s.launched) {
		char c = 'g';
		if (write(go_fd, &c, 1) != 1) {
			fprintf(stderr, "pmutop: cannot start %s: %s\n", o->cmd[0], strerror(errno));
			goto out;
		}
		close(go_fd);
		go_fd = -1;
		/* EOF: exec succeeded (the pipe is close-on-exec); else its errno. */
		int e;
		if (read(status_fd, &e, sizeof(e)) == sizeof(e)) {
			fprintf(stderr, "pmutop: cannot run %s: %s\n", o->cmd[0], strerror(e));
			goto out;
		}
	}

	start_mono = now_ns(CLOCK_MONOTONIC);
	if (o->duration > 0)
		deadline = start_mono + (uint64_t)(o->duration * 1e9);
	next_rescan = start_mono + RESCAN_INTERVAL_NS;

	while (!stop) {
		struct epoll_event evs[4];
		uint64_t t = now_ns(CLOCK_MONOTONIC), wake = next_rescan;
		int n, timeout;

		if (deadline && deadline < wake)
			wake = deadline;
		timeout = wake > t ? (int)((wake - t + 999999) / 1000000) : 0;
		n = epoll_wait(ep, evs, 4, timeout);
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "pmutop: epoll_wait: %s\n", strerror(errno));
			break;
		}
		sampler_drain(s.sampler, on_record, &s);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u32 == 1) {
				struct signalfd_siginfo si;
				if (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
					why = si.ssi_signo == SIGINT ? "interrupted (SIGINT)"
					    : si.ssi_signo == SIGTERM ? "terminated (SIGTERM)" : "hung up (SIGHUP)";
					stop = true;
				}
			} else if (evs[i].data.u32 == 2) {
				why = "target exited";
				stop = true;
			}
		}
		t = now_ns(CLOCK_MONOTONIC);
		if (deadline && t >= deadline) {
			why = "duration elapsed";
			stop = true;
		}
		if (!stop && t >= next_rescan) {
			int r = sampler_rescan(s.sampler);
			if (r == -ESRCH && pidfd < 0) {
				why = "target exited";
				stop = true;
			}
			next_rescan = t + RESCAN_INTERVAL_NS;
		}
	}
	/* Everything written before the counters close is still ours. */
	sampler_drain(s.sampler, on_record, &s);
	aggregate_info(s.agg)->duration_ns = now_ns(CLOCK_MONOTONIC) - start_mono;

	if (!o->quiet) {
		fprintf(stderr, "pmutop: stopped: %s\n", why);
		print_summary(&s, &ev, cfg.period, cfg.freq);
	}
	rc = 0;
	if (o->dump) {
		if (pprof_write(s.agg, o->dump, err, sizeof(err))) {
			fprintf(stderr, "pmutop: %s\n", err);
			rc = 1;
		} else if (!o->quiet) {
			fprintf(stderr, "pmutop: wrote %s (view: go tool pprof -top %s)\n", o->dump, o->dump);
		}
	} else {
		struct top_table t;
		if (top_table_build(s.agg, 0, TOP_SORT_FLAT, &t) == 0) {
			top_table_print(&t, stdout, o->top_rows, ev.unit);
			top_table_free(&t);
		}
		fflush(stdout);
	}
out:
	if (go_fd >= 0)
		close(go_fd); /* the child reads EOF and exits without exec */
	if (child_running) {
		int st = wait_child(s.pid, !strcmp(why, "duration elapsed") || strstr(why, "SIG") != NULL);
		if (!o->quiet || rc) {
			if (st >= 0 && WIFEXITED(st))
				fprintf(stderr, "pmutop: %s exited with status %d\n", o->cmd[0], WEXITSTATUS(st));
			else if (st >= 0 && WIFSIGNALED(st))
				fprintf(stderr, "pmutop: %s was killed by signal %d (%s)\n", o->cmd[0],
					WTERMSIG(st), strsignal(WTERMSIG(st)));
		}
	}
	if (ep >= 0)
		close(ep);
	if (sigfd >= 0)
		close(sigfd);
	if (pidfd >= 0)
		close(pidfd);
	if (status_fd >= 0)
		close(status_fd);
	session_free(&s);
	return rc;
}
