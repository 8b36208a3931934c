/*
 * record.c - the batch front end: run a session to its end, then write the
 * profile (--dump) or print the table, and a summary on stderr.
 */
#include "pmutop/frontend/record.h"
#include "pmutop/frontend/broken_pipe.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/annotate.h"
#include "pmutop/profile/atomic_write.h"
#include "pmutop/profile/proc_table.h"
#include "pmutop/profile/term_text.h"
#include "pmutop/frontend/cli.h"
#include "pmutop/frontend/dump.h"
#include "pmutop/frontend/push.h"
#include "pmutop/target/proc.h"
#include "pmutop/frontend/session.h"
#include "pmutop/frontend/windows.h"
#include "pmutop/unwind/unwind.h"
#include "pmutop/profile/table.h"

size_t record_threads(const struct aggregate *a)
{
	size_t n, count = 0;
	const struct agg_thread *t = aggregate_threads(a, &n);

	for (size_t i = 0; i < n; i++)
		if (t[i].samples)
			count += t[i].nthreads ? t[i].nthreads : 1;
	return count;
}

void record_print_summary(const struct session *s, FILE *out)
{
	const struct agg_info *info = aggregate_info_const(session_aggregate(s));
	struct session_status st;
	uint64_t total = 0;

	session_get_status(s, &st);
	fprintf(out, "pmutop: stopped: %s\n", st.why);
	{
		char evs[512] = "";
		/* Threads with samples, as --load of the profile counts them. */
		size_t nthreads = record_threads(session_aggregate(s));

		for (size_t k = 0; k < st.nevents; k++) {
			uint64_t period;
			const struct pmu_event *ev = session_event(s, k, &period);
			size_t l = strlen(evs);
			snprintf(evs + l, sizeof(evs) - l, "%s%s (%s %llu)", k ? ", " : "", ev->name,
				 st.freq ? "freq" : "period", (unsigned long long)period);
		}
		fprintf(out,
			"pmutop: %llu samples of %s in %.2f s from %zu thread%s on %u CPU%s; "
			"lost %llu, throttled %llu\n",
			(unsigned long long)st.samples, evs, st.elapsed, nthreads,
			nthreads == 1 ? "" : "s", st.ncpus, st.ncpus == 1 ? "" : "s",
			(unsigned long long)st.lost, (unsigned long long)st.throttled);
	}
	if (st.total.pruned || st.total.threads_folded || st.total.leaf_dropped)
		fprintf(out, "pmutop: memory budget (--max-memory %zuM) reached: dropped the "
			"address detail of %llu leaf samples, folded %llu exited threads into their "
			"names, pruned %llu cold frames into [N cold frames pruned] callers "
			"(%llu samples, %.1f%%; every kept frame's total is exact)\n",
			(size_t)(info->max_memory >> 20), (unsigned long long)st.total.leaf_dropped,
			(unsigned long long)st.total.threads_folded,
			(unsigned long long)st.total.pruned, (unsigned long long)st.total.pruned_samples,
			st.samples ? 100.0 * (double)st.total.pruned_samples / (double)st.samples : 0.0);
	process_stats_print(&st.procs, st.unfollowed_samples, out);
	if (st.offcpu) {
		const struct offcpu_stats *oc = &st.offcpu_stats;
		fprintf(out, "pmutop: offcpu: %llu blocks", (unsigned long long)oc->blocks);
		if (st.offcpu_initial >= 0)
			fprintf(out, " (%ld threads blocked at the start)", st.offcpu_initial);
		fprintf(out, ", %llu without a stack (switch-out sample throttled or lost; %llu more "
			"got theirs from a later look), %llu "
			"ended by exit, %llu still off-CPU at the end; lost switches: %llu switch-outs "
			"without a switch-in (dropped), %llu switch-ins without a switch-out\n",
			(unsigned long long)oc->no_stack, (unsigned long long)oc->late_looks,
			(unsigned long long)oc->ended_by_exit,
			(unsigned long long)oc->ended_by_stop, (unsigned long long)oc->unmatched,
			(unsigned long long)oc->orphan_in);
		if (st.offcpu_lost)
			fprintf(out, "pmutop: offcpu: %llu blocks dropped: their process was gone "
				"(or not followed) when they ended\n",
				(unsigned long long)st.offcpu_lost);
	}
	if (st.lost)
		fprintf(out, "pmutop: WARNING: the kernel dropped %llu samples (buffer full); "
			"try a larger --mmap-pages or a longer --period\n",
			(unsigned long long)st.lost);
	if (st.unwind.verified)
		fprintf(out, "pmutop: unwind check: %llu samples unwound by both the fast path and "
			"libunwind, %llu differ (libunwind stopped short on %llu more)\n",
			(unsigned long long)st.unwind.verified,
			(unsigned long long)st.unwind.mismatches,
			(unsigned long long)st.unwind.ref_short);
	for (int i = 0; i < UNWIND_NOUTCOMES; i++)
		total += info->outcomes[i];
	if (total) {
		fprintf(out, "pmutop: unwind:");
		for (int i = 0; i < UNWIND_NOUTCOMES; i++)
			if (info->outcomes[i])
				fprintf(out, " %s %.1f%%", unwind_outcome_name(i),
					100.0 * (double)info->outcomes[i] / (double)total);
		fprintf(out, "\n");
	}
	if (st.corrupt || st.undecodable)
		fprintf(out, "pmutop: WARNING: dropped ring-buffer data: %llu corrupt record headers "
			"(the rest of that buffer's data skipped), %llu undecodable records\n",
			(unsigned long long)st.corrupt, (unsigned long long)st.undecodable);
	if (st.perfmap_note[0])
		fprintf(out, "pmutop: %s\n", st.perfmap_note);
	if (st.python_note[0])
		fprintf(out, "pmutop: %s\n", st.python_note);
	if (st.symbol_note && st.symbol_note[0])
		fprintf(out, "pmutop: WARNING: %s\n", st.symbol_note);
	if (st.skipped_files) {
		/* The target named the file: escaped, as every name of its (term_text.h). */
		char first[1024];

		fprintf(out, "pmutop: skipped %u unsafe target file%s for symbols (%s%s)\n",
			st.skipped_files, st.skipped_files == 1 ? "" : "s",
			st.skipped_files > 1 ? "first: " : "",
			term_text(st.skipped_first, first, sizeof(first)));
	}
	{
		char line[768];
		if (session_engine_summary(s, line, sizeof(line)))
			fprintf(out, "pmutop: %s\n", line);
	}
}

static void print_exit(const struct pmutop_opts *o, int status, FILE *out)
{
	if (!o->cmd || status < 0)
		return;
	if (WIFEXITED(status))
		fprintf(out, "pmutop: %s exited with status %d\n", o->cmd[0], WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		fprintf(out, "pmutop: %s was killed by signal %d (%s)\n", o->cmd[0],
			WTERMSIG(status), strsignal(WTERMSIG(status)));
}

/* The flame graph page's title: the command, or the pid and its command line. */
static void run_title(const struct pmutop_opts *o, char *buf, size_t len)
{
	size_t l = 0;

	buf[0] = 0;
	if (o->cmd) {
		for (char **a = o->cmd; *a && l + 1 < len; a++)
			l += (size_t)snprintf(buf + l, len - l, "%s%s", a == o->cmd ? "" : " ", *a);
		return;
	}
	l = (size_t)snprintf(buf, len, "pid %d: ", (int)o->pid);
	if (l < len && proc_cmdline(o->pid, buf + l, len - l))
		snprintf(buf + l, len - l, "?");
}

/*
 * --dump on a terminal: poll to the end like the plain loop, and keep one
 * line on stderr current (elapsed, samples, lost, threads), 4 times a second,
 * cut to the terminal's width so that it never wraps.
 */
static void progress_loop(struct session *s)
{
	struct session_status st;
	struct winsize ws;
	double next = 0;
	char line[160];
	size_t cols;

	while (session_poll(s, 250) == SESSION_RUNNING) {
		session_get_status(s, &st);
		if (st.elapsed < next)
			continue;
		next = st.elapsed + 0.25;
		cols = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col ? ws.ws_col : 80;
		snprintf(line, sizeof(line), "pmutop: %.1f s, %llu samples, %llu lost, %zu thread%s "
			 "(Ctrl-C: stop and write)", st.elapsed, (unsigned long long)st.samples,
			 (unsigned long long)st.lost, st.threads_attached,
			 st.threads_attached == 1 ? "" : "s");
		if (cols - 1 < sizeof(line))
			line[cols - 1] = 0;
		fprintf(stderr, "\r%s\033[K", line);
	}
	fprintf(stderr, "\r\033[K");
}

/*
 * One row per process before the function table, when more than one
 * process had samples (children, -p A,B, -a) or --by-process asked.
 */
static void print_processes_table(const struct pmutop_opts *o, const struct aggregate *a,
				  FILE *out, const char *unit)
{
	struct proc_table pt;

	if (proc_table_build(a, NULL, NULL, 0, 0, 0, &pt))
		return;
	if (o->by_process || pt.nrows > 1) {
		proc_table_print(&pt, out, o->top_rows, unit);
		fputc('\n', out);
	}
	proc_table_free(&pt);
}

/*
 * The table: to --table-file FILE, else stdout when attached, stderr when a
 * command was launched (its stdout is the command's: `pmutop -- sort f >
 * out` leaves out as sort wrote it). Returns 0 or 1 (the file failed).
 */
static int print_table(const struct pmutop_opts *o, const struct session *s,
		       const struct session_status *st)
{
	FILE *out = o->cmd ? stderr : stdout;
	struct top_table t;
	char *text = NULL;
	size_t len = 0;
	int rc = 0;

	/*
	 * --table-file: built in memory, then written the way profiles are
	 * (atomic_write.h: a temp file renamed over it; someone else's symlink
	 * or FIFO there refused), not opened and truncated in place.
	 */
	if (o->table_file) {
		out = open_memstream(&text, &len);
		if (!out) {
			fprintf(stderr, "pmutop: cannot write the table to %s: %s\n", o->table_file,
				strerror(errno));
			return 1;
		}
	}
	print_processes_table(o, session_aggregate(s), out, st->event.unit);
	if (top_table_build(session_aggregate(s), 0, TOP_SORT_FLAT, &t) == 0) {
		top_table_print(&t, out, o->top_rows, cli_rows_min_cum(o), st->event.unit);
		top_table_free(&t);
	}
	if (fflush(out) && errno != EPIPE) {
		fprintf(stderr, "pmutop: cannot write the table%s%s: %s\n", o->table_file ? " to " : "",
			o->table_file ? o->table_file : "", strerror(errno));
		rc = 1;
	}
	if (o->table_file) {
		char err[768];

		if (fclose(out) || !text) {
			fprintf(stderr, "pmutop: cannot write the table to %s: %s\n", o->table_file,
				strerror(errno));
			rc = 1;
		} else if (atomic_write_file(o->table_file, text, len, "the table", err,
					     sizeof(err))) {
			fprintf(stderr, "pmutop: %s\n", err);
			rc = 1;
		}
		free(text);
	}
	return rc;
}

/*
 * Whose rights --annotate reads source files with (annotate.h): a command
 * pmutop launched is the operator's (0: host paths); one target process its
 * own; several (-p A,B, -a) no one's, since the function's DWARF may be any
 * of theirs.
 */
static int annotate_sources_of(const struct pmutop_opts *o)
{
	if (o->cmd)
		return 0;
	if (o->system_wide || o->npids > 1 || o->pid <= 0)
		return -1;
	return (int)o->pid;
}

int record_run(const struct pmutop_opts *o)
{
	struct session *s;
	struct session_status st;
	struct windows *w = NULL;
	struct push *push = NULL;
	char err[768] = "", title[1024] = "";
	int rc = 0;

	if (o->dump_every)
		w = windows_new(o, err, sizeof(err));
	if ((o->dump_every ? !w : dump_check(o, err, sizeof(err)) != 0) ||
	    (o->table_file && atomic_write_check(o->table_file, "the table", err, sizeof(err)))) {
		fprintf(stderr, "pmutop: %s\n", err);
		windows_free(w);
		return 2;
	}
	if (o->push && !(push = push_new(o, stderr, err, sizeof(err)))) {
		fprintf(stderr, "pmutop: %s\n", err);
		windows_free(w);
		return 2;
	}
	if (w && push)
		windows_set_push(w, push);
	if (o->dump && !o->cmd)
		run_title(o, title, sizeof(title)); /* while the target still runs */
	s = session_start(o, err, sizeof(err));
	if (!s) {
		int status = session_start_exit_status(errno);

		fprintf(stderr, "pmutop: %s\n", err);
		windows_free(w);
		push_free(push);
		return status;
	}
	if (!o->quiet)
		session_print_notes(s, stderr);
	if (w)
		rc = windows_run(w, s, stderr);
	else if (o->dump && !o->quiet && isatty(STDERR_FILENO))
		progress_loop(s);
	else
		while (session_poll(s, -1) == SESSION_RUNNING)
			;
	session_stop(s);
	session_get_status(s, &st);
	if (!o->quiet)
		record_print_summary(s, stderr);
	if (st.state == SESSION_FAILED) {
		fprintf(stderr, "pmutop: %s\n", st.why);
		rc = 1;
	}
	if (w) {
		if (windows_finish(w, s, stderr))
			rc = 1;
	} else if (push) {
		push_window(push, session_aggregate(s), stderr); /* the whole run: one window */
	}
	if (push && push_finish(push, 10.0, o->quiet, stderr))
		rc = 1;
	if (w) {
		/* written above */
	} else if (o->dump) {
		if (o->cmd)
			run_title(o, title, sizeof(title));
		if (dump_write(o, session_aggregate(s), title, stderr))
			rc = 1;
	}
	if (o->annotate) {
		char root[64];
		struct annotate_opts ao = { .root = root, .sources_of = annotate_sources_of(o) };

		snprintf(root, sizeof(root), "/proc/%d/root", (int)st.pid);
		if (annotate_print_function(session_aggregate(s), o->annotate, &ao, stdout, stderr))
			rc = 1;
		if (fflush(stdout) && errno != EPIPE)
			rc = 1;
	} else if (!o->dump && !o->dump_every && print_table(o, s, &st)) {
		rc = 1;
	}
	print_exit(o, st.exit_status, stderr);
	session_free(s);
	windows_free(w);
	push_free(push);
	/* Output lost to a reader that went away: 141 (broken_pipe.h). */
	rc = broken_pipe_exit_status(rc);
	/* Transparent like time(1): the command's status unless pmutop failed. */
	if (!rc && session_command_exit_code(&st) >= 0)
		rc = session_command_exit_code(&st);
	return rc;
}
