/*
 * test_proc_table.c - the profile grouped by process (issue 21): rows per
 * pid from the threads' process labels (the leader's command name, threads
 * counted, samples and weights summed, heaviest first, unknown threads under
 * pid 0), every event's estimate and IPC~ per process in a multi-event run,
 * the printed table; the live view's model restricted to one process (rows,
 * callers, thread list) while its process list stays whole, in both windows;
 * folded stacks rooted at the process.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agg_spec.h"

#include "model.h"
#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/folded.h"
#include "pmutop/profile/proc_table.h"

/*
 * pid 100 "srv": tid 100 (leader) a <- main 10, tid 101 "worker" b <- main 20
 * pid 200 "job": tid 200 c <- main 50 (two samples of 25)
 * tid 7 (no process known): d 4
 */
static struct aggregate *sample(void)
{
	struct aggregate *a = aggregate_new();

	assert_non_null(a);
	agg_add_spec(a, 100, 10, "a@20 main@10");
	agg_add_spec(a, 101, 20, "b@30 main@11");
	agg_add_spec(a, 200, 25, "c@40 main@12");
	agg_add_spec(a, 200, 25, "c@40 main@12");
	agg_add_spec(a, 7, 4, "d@50");
	aggregate_set_thread_name(a, 101, "worker");
	aggregate_set_thread_process(a, 101, 100, "srv");
	aggregate_set_thread_process(a, 100, 100, "srv");
	aggregate_set_thread_process(a, 200, 200, "job");
	return a;
}

static const struct proc_row *prow(const struct proc_table *t, uint32_t pid)
{
	for (size_t i = 0; i < t->nrows; i++)
		if (t->rows[i].pid == pid)
			return &t->rows[i];
	fail_msg("no process %u", pid);
	return NULL;
}

static void test_build(void **state)
{
	struct aggregate *a = sample();
	struct proc_table t;

	(void)state;
	assert_int_equal(proc_table_build(a, NULL, NULL, 0, 0, 0, &t), 0);
	assert_int_equal(t.nrows, 3);
	assert_int_equal(t.total, 84);
	assert_int_equal(t.samples, 5);
	/* Heaviest first. */
	assert_int_equal(t.rows[0].pid, 200);
	assert_int_equal(t.rows[1].pid, 100);
	assert_int_equal(t.rows[2].pid, 0);
	assert_string_equal(prow(&t, 100)->comm, "srv");
	assert_int_equal(prow(&t, 100)->weight, 30);
	assert_int_equal(prow(&t, 100)->samples, 2);
	assert_int_equal(prow(&t, 100)->nthreads, 2);
	assert_int_equal(prow(&t, 200)->weight, 50);
	assert_int_equal(prow(&t, 200)->samples, 2);
	assert_int_equal(prow(&t, 200)->nthreads, 1);
	assert_int_equal(prow(&t, 0)->weight, 4);
	assert_string_equal(prow(&t, 0)->comm, "");
	proc_table_free(&t);
	proc_table_free(&t);  /* twice: a no-op */

	/* Explicit weights: a window where only pid 100's stacks weigh. */
	{
		uint64_t w[] = { 3, 0, 0, 0 }, smp[] = { 1, 0, 0, 0 };

		assert_int_equal(proc_table_build(a, w, smp, 4, 1, 0, &t), 0);
		assert_int_equal(t.nrows, 1);
		assert_int_equal(t.rows[0].pid, 100);
		assert_int_equal(t.rows[0].weight, 3);
		assert_int_equal(t.rows[0].nthreads, 1);
		proc_table_free(&t);
	}
	assert_int_equal(proc_table_build(a, NULL, NULL, 0, 1, 1, &t), -EINVAL);
	aggregate_free(a);
}

/* Two events: every event's estimate per process, and IPC~ from them. */
static void test_events_and_ratio(void **state)
{
	struct aggregate *a = aggregate_new();
	struct agg_info *info;
	struct proc_table t;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(a);
	info = aggregate_info(a);
	info->nevents = 2;
	info->events[0] = (struct agg_event){ .name = "cycles", .unit = "count", .scale = 1.0 };
	info->events[1] = (struct agg_event){ .name = "instructions", .unit = "count", .scale = 1.0 };
	agg_add_spec_ev(a, 1, 0, 1000, "f@10");
	agg_add_spec_ev(a, 1, 1, 2000, "f@10");
	agg_add_spec_ev(a, 2, 0, 3000, "g@20");
	agg_add_spec_ev(a, 2, 1, 1500, "g@20");
	aggregate_set_thread_process(a, 1, 1, "fast");
	aggregate_set_thread_process(a, 2, 2, "slow");
	assert_int_equal(proc_table_build(a, NULL, NULL, 0, 0, 0, &t), 0);
	assert_int_equal(t.nevents, 2);
	assert_int_equal(t.rows[0].pid, 2);  /* more cycles */
	assert_int_equal(prow(&t, 1)->ev[1], 2000);
	assert_int_equal(prow(&t, 2)->ev[0], 3000);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	proc_table_print(&t, f, 0, "count");
	fclose(f);
	/* fast: 2000/1000 = 2.00 IPC; slow: 1500/3000 = 0.50. */
	assert_non_null(strstr(buf, "IPC~"));
	assert_non_null(strstr(buf, "Processes: 2 with samples"));
	{
		char *l1 = strstr(buf, "\n       1 fast"), *l2 = strstr(buf, "\n       2 slow");

		assert_non_null(l1);
		assert_non_null(l2);
		assert_non_null(strstr(l1, "2.00"));
		assert_true(strstr(l2, "0.50") && strstr(l2, "0.50") < strchr(l2 + 1, '\n'));
	}
	free(buf);
	proc_table_free(&t);
	aggregate_free(a);
}

static bool has_row(const struct model *m, const char *name)
{
	for (size_t i = 0; i < model_nrows(m); i++)
		if (!strcmp(model_row(m, i)->name, name))
			return true;
	return false;
}

static void test_model_process(void **state)
{
	struct aggregate *a = sample();
	struct model *m = model_new();
	struct model_thread *th;
	struct proc_table t;
	struct model_edges e;
	size_t n;

	(void)state;
	assert_non_null(m);
	assert_int_equal(model_tick(m, a), 0);
	assert_int_equal(model_total(m), 84);
	assert_int_equal(model_set_process(m, 100), 0);
	assert_int_equal(model_process(m), 100);
	assert_int_equal(model_total(m), 30);
	assert_true(has_row(m, "a") && has_row(m, "b") && has_row(m, "main"));
	assert_false(has_row(m, "c") || has_row(m, "d"));
	/* Callers of main: only this process's stacks. */
	assert_int_equal(model_edges(m, model_row(m, 0)->function_id, &e), 0);
	assert_int_equal(e.total, 30);
	model_edges_free(&e);
	/* Threads: this process's only. */
	assert_int_equal(model_threads(m, NULL, 0, &th, &n), 0);
	assert_int_equal(n, 2);
	assert_true((th[0].tid == 100 || th[0].tid == 101) && (th[1].tid == 100 || th[1].tid == 101));
	free(th);
	/* The process list is never restricted. */
	assert_int_equal(model_processes(m, &t), 0);
	assert_int_equal(t.nrows, 3);
	assert_int_equal(t.total, 84);
	proc_table_free(&t);

	/* The last interval: only pid 200 gained (25 more). */
	agg_add_spec(a, 200, 25, "c@40 main@12");
	assert_int_equal(model_tick(m, a), 0);
	assert_int_equal(model_set_window(m, MODEL_INTERVAL), 0);
	assert_int_equal(model_total(m), 0);  /* pid 100: nothing new */
	assert_int_equal(model_processes(m, &t), 0);
	assert_int_equal(t.nrows, 1);
	assert_int_equal(t.rows[0].pid, 200);
	assert_int_equal(t.rows[0].weight, 25);
	assert_int_equal(t.rows[0].samples, 1);
	proc_table_free(&t);
	assert_int_equal(model_set_process(m, 0), 0);
	assert_int_equal(model_total(m), 25);
	model_free(m);
	aggregate_free(a);
}

static void test_folded_process_root(void **state)
{
	struct aggregate *a = sample();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	assert_int_equal(folded_write_stream(a, FOLDED_ROOT_PROCESS | FOLDED_ROOT_THREAD, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "srv-100;worker;main;b 20\n"));
	assert_non_null(strstr(buf, "job-200;"));
	assert_non_null(strstr(buf, "[unknown process];tid-7;d 4\n"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(folded_write_stream(a, FOLDED_ROOT_PROCESS, f), 0);
	fclose(f);
	/* Both threads of srv fold into the process's root. */
	assert_non_null(strstr(buf, "srv-100;main;a 10\nsrv-100;main;b 20\n"));
	free(buf);
	aggregate_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_events_and_ratio),
		cmocka_unit_test(test_model_process),
		cmocka_unit_test(test_folded_process_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
