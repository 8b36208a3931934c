/*
 * test_offcpu.c - unit tests of the off-CPU pairing (sample/offcpu.c):
 * blocks from switch-out to switch-in whatever order the CPU buffers
 * deliver them in, the preempt flag joined from the record, lost switches
 * counted, blocks ended by exit and by the end of recording, threads
 * blocked from the start, new threads, the horizon, payload ownership.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>

#include "pmutop/sample/offcpu.h"

#define MS 1000000ULL
#define T0 (1000 * MS)

struct got {
	struct offcpu_block b[64];
	int payload[64];         /* the int the payload pointed to, -1 when NULL */
	size_t n;
	int dropped, live;       /* payloads dropped; allocated and not yet freed */
};

static void emit(void *arg, const struct offcpu_block *b)
{
	struct got *g = arg;

	assert_true(g->n < 64);
	g->b[g->n] = *b;
	g->payload[g->n++] = b->payload ? *(int *)b->payload : -1;
	if (b->payload)
		g->live--;
	free(b->payload);
}

static void drop(void *arg, void *payload)
{
	struct got *g = arg;

	g->dropped++;
	g->live--;
	free(payload);
}

static void *stack_id(struct got *g, int id)
{
	int *p = malloc(sizeof(*p));

	assert_non_null(p);
	*p = id;
	g->live++;
	return p;
}

static struct offcpu *tracker(struct got *g)
{
	const struct offcpu_ops ops = { emit, drop, g };
	struct offcpu *o;

	memset(g, 0, sizeof(*g));
	o = offcpu_new(&ops, T0);
	assert_non_null(o);
	return o;
}

/* Out on CPU 0 (sample + record), in on CPU 1: drained CPU 1 first. */
static void pairs_across_cpus(void **state)
{
	struct got g;
	struct offcpu *o = tracker(&g);
	struct offcpu_stats st;

	(void)state;
	/* CPU 1's buffer: the thread came back at +30 ms, left again at +40. */
	offcpu_switch(o, 10, 11, T0 + 30 * MS, false, false);
	offcpu_sample(o, 10, 11, T0 + 40 * MS, stack_id(&g, 2));
	offcpu_switch(o, 10, 11, T0 + 40 * MS + 1000, true, true);
	/* CPU 0's buffer: it left at +10 ms, back at +45 ms. */
	offcpu_sample(o, 10, 11, T0 + 10 * MS, stack_id(&g, 1));
	offcpu_switch(o, 10, 11, T0 + 10 * MS + 500, true, false);
	offcpu_switch(o, 10, 11, T0 + 45 * MS, false, false);
	offcpu_flush(o, T0 + 100 * MS);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.payload[0], 1);
	assert_int_equal(g.b[0].end - g.b[0].start, 20 * MS);
	assert_false(g.b[0].preempted);
	assert_int_equal(g.payload[1], 2);
	assert_int_equal(g.b[1].end - g.b[1].start, 5 * MS);
	assert_true(g.b[1].preempted);
	offcpu_get_stats(o, &st);
	assert_int_equal(st.unmatched, 0);
	assert_int_equal(st.orphan_in, 0);
	offcpu_free(o);
	assert_int_equal(g.live, 0);
}

/* Nothing past the horizon is paired yet; a later flush does it. */
static void waits_for_horizon(void **state)
{
	struct got g;
	struct offcpu *o = tracker(&g);
	struct offcpu_stats st;

	(void)state;
	offcpu_sample(o, 10, 11, T0 + 10 * MS, stack_id(&g, 1));
	offcpu_switch(o, 10, 11, T0 + 50 * MS, false, false);
	offcpu_flush(o, T0 + 20 * MS);
	assert_int_equal(g.n, 0);
	offcpu_get_stats(o, &st);
	assert_int_equal(st.queued, 1);
	offcpu_flush(o, T0 + 60 * MS);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.b[0].end - g.b[0].start, 40 * MS);
	offcpu_free(o);
	assert_int_equal(g.live, 0);
}

/* A lost switch-in: the first block is dropped and counted; a lone switch-in counted. */
static void lost_switches_counted(void **state)
{
	struct got g;
	struct offcpu *o = tracker(&g);
	struct offcpu_stats st;

	(void)state;
	offcpu_thread_new(o, 10, 12, T0 + 1 * MS);
	offcpu_switch(o, 10, 12, T0 + 2 * MS, false, false); /* its first run */
	offcpu_sample(o, 10, 12, T0 + 10 * MS, stack_id(&g, 1));
	offcpu_sample(o, 10, 12, T0 + 20 * MS, stack_id(&g, 2));
	offcpu_switch(o, 10, 12, T0 + 25 * MS, false, false);
	offcpu_switch(o, 10, 12, T0 + 30 * MS, false, false);
	offcpu_flush(o, T0 + 100 * MS);
	offcpu_get_stats(o, &st);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.payload[0], 2);
	assert_int_equal(g.b[0].end - g.b[0].start, 5 * MS);
	assert_int_equal(st.unmatched, 1);
	assert_int_equal(st.orphan_in, 1);
	assert_int_equal(g.dropped, 1);
	offcpu_free(o);
	assert_int_equal(g.live, 0);
}

/* A throttled sample: the record alone still makes a block, without a stack. */
static void record_without_sample(void **state)
{
	struct got g;
	struct offcpu *o = tracker(&g);
	struct offcpu_stats st;

	(void)state;
	offcpu_switch(o, 10, 13, T0 + 5 * MS, true, true);
	offcpu_switch(o, 10, 13, T0 + 8 * MS, false, false);
	offcpu_flush(o, T0 + 100 * MS);
	offcpu_get_stats(o, &st);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.payload[0], -1);
	assert_true(g.b[0].preempted);
	assert_int_equal(st.no_stack, 1);
	offcpu_free(o);
}

/* A stackless block that lasts is listed once and can be given a stack. */
static void late_look(void **state)
{
	struct got g;
	struct offcpu *o = tracker(&g);
	uint32_t pids[4], tids[4];
	struct offcpu_stats st;

	(void)state;
	offcpu_thread_new(o, 10, 30, T0);
	offcpu_switch(o, 10, 30, T0 + 10 * MS, true, false); /* its sample was lost */
	offcpu_sample(o, 10, 31, T0 + 10 * MS, stack_id(&g, 1)); /* one with a stack */
	offcpu_flush(o, T0 + 500 * MS);
	assert_int_equal(offcpu_stackless(o, T0 + 5 * MS, pids, tids, 4), 0); /* too recent */
	assert_int_equal(offcpu_stackless(o, T0 + 300 * MS, pids, tids, 4), 1);
	assert_int_equal(tids[0], 30);
	assert_int_equal(pids[0], 10);
	assert_int_equal(offcpu_stackless(o, T0 + 300 * MS, pids, tids, 4), 0); /* once */
	assert_int_equal(offcpu_set_stack(o, 30, stack_id(&g, 5)), 0);
	assert_int_equal(offcpu_set_stack(o, 31, stack_id(&g, 6)), -ESRCH); /* has one */
	offcpu_switch(o, 10, 30, T0 + 600 * MS, false, false);
	offcpu_flush(o, T0 + 700 * MS);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.payload[0], 5);
	assert_int_equal(g.b[0].end - g.b[0].start, 590 * MS);
	assert_int_equal(offcpu_set_stack(o, 30, stack_id(&g, 7)), -ESRCH); /* ended */
	offcpu_get_stats(o, &st);
	assert_int_equal(st.late_looks, 1);
	assert_int_equal(st.no_stack, 0);
	offcpu_free(o);
	assert_int_equal(g.live, 0);
}

/* Exit ends a block at the exit time; later records of the thread are late. */
static void exit_ends_block(void **state)
{
	struct got g;
	struct offcpu *o = tracker(&g);
	struct offcpu_stats st;

	(void)state;
	offcpu_sample(o, 10, 14, T0 + 10 * MS, stack_id(&g, 1));
	offcpu_end_thread(o, 14, T0 + 70 * MS);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.b[0].end - g.b[0].start, 60 * MS);
	assert_int_equal(g.b[0].ended_by, 1);
	offcpu_switch(o, 10, 14, T0 + 69 * MS, false, false); /* another CPU, drained late */
	offcpu_flush(o, T0 + 100 * MS);
	offcpu_get_stats(o, &st);
	assert_int_equal(g.n, 1);
	assert_int_equal(st.late, 1);
	assert_int_equal(st.ended_by_exit, 1);
	/* The process's end ends its other threads' blocks too. */
	offcpu_sample(o, 10, 15, T0 + 80 * MS, stack_id(&g, 2));
	offcpu_sample(o, 20, 21, T0 + 80 * MS, stack_id(&g, 3));
	offcpu_end_process(o, 10, T0 + 90 * MS);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.payload[1], 2);
	assert_int_equal(g.b[1].end - g.b[1].start, 10 * MS);
	offcpu_free(o); /* thread 21's block is still open: its payload is dropped */
	assert_int_equal(g.live, 0);
}

/* Blocked the whole run: from the start to the end of recording. */
static void initial_and_finish(void **state)
{
	struct got g;
	struct offcpu *o = tracker(&g);

	(void)state;
	offcpu_initial(o, 10, 16, stack_id(&g, 7));
	offcpu_flush(o, T0 + 2000 * MS);
	assert_int_equal(g.n, 0);
	/* A thread never looked at: its first switch-in ends a block from the start. */
	offcpu_switch(o, 10, 17, T0 + 300 * MS, false, false);
	/* A thread created during the run: its first switch-in is no block. */
	offcpu_thread_new(o, 10, 18, T0 + 400 * MS);
	offcpu_switch(o, 10, 18, T0 + 401 * MS, false, false);
	offcpu_finish(o, T0 + 3000 * MS);
	assert_int_equal(g.n, 2);
	for (size_t i = 0; i < g.n; i++) {
		if (g.b[i].tid == 16) {
			assert_int_equal(g.payload[i], 7);
			assert_int_equal(g.b[i].end - g.b[i].start, 3000 * MS);
			assert_int_equal(g.b[i].ended_by, 2);
			assert_true(g.b[i].initial);
		} else {
			assert_int_equal(g.b[i].tid, 17);
			assert_int_equal(g.payload[i], -1);
			assert_int_equal(g.b[i].end - g.b[i].start, 300 * MS);
			assert_true(g.b[i].initial);
		}
	}
	offcpu_free(o);
	assert_int_equal(g.live, 0);
}

/*
 * The look at start comes after a record of the thread (a switch-in: it was
 * blocked from the start, stack unknown): the look is not used.
 */
static void initial_after_activity_dropped(void **state)
{
	struct got g;
	struct offcpu *o = tracker(&g);

	(void)state;
	offcpu_switch(o, 10, 19, T0 + 1 * MS, false, false);
	offcpu_flush(o, T0 + 10 * MS);
	offcpu_initial(o, 10, 19, stack_id(&g, 9));
	offcpu_finish(o, T0 + 20 * MS);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.payload[0], -1);
	assert_int_equal(g.b[0].end - g.b[0].start, 1 * MS);
	assert_int_equal(g.dropped, 1);
	offcpu_free(o);
	assert_int_equal(g.live, 0);
}

/* Many exited threads: tombstones are forgotten, pairing still right. */
static void churn(void **state)
{
	struct got g;
	struct offcpu *o = tracker(&g);
	struct offcpu_stats st;

	(void)state;
	for (uint32_t t = 100; t < 20100; t++) {
		uint64_t at = T0 + (uint64_t)(t - 100) * MS;
		offcpu_thread_new(o, 10, t, at);
		offcpu_switch(o, 10, t, at + 1, false, false);
		offcpu_end_thread(o, t, at + 2);
		if (t % 100 == 0)
			offcpu_flush(o, at);
	}
	offcpu_sample(o, 10, 5, T0 + 30000 * MS, stack_id(&g, 1));
	offcpu_switch(o, 10, 5, T0 + 30001 * MS, false, false);
	offcpu_finish(o, T0 + 40000 * MS);
	offcpu_get_stats(o, &st);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.b[0].end - g.b[0].start, MS);
	assert_int_equal(st.orphan_in, 0);
	offcpu_free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pairs_across_cpus),
		cmocka_unit_test(waits_for_horizon),
		cmocka_unit_test(lost_switches_counted),
		cmocka_unit_test(record_without_sample),
		cmocka_unit_test(late_look),
		cmocka_unit_test(exit_ends_block),
		cmocka_unit_test(initial_and_finish),
		cmocka_unit_test(initial_after_activity_dropped),
		cmocka_unit_test(churn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
