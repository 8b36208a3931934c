/*
 * offcpu.c - pairing switch-outs with switch-ins, in time order (offcpu.h).
 *
 * Records are queued as they are drained and sorted by time at each flush;
 * those at or before the horizon are applied to a per-thread state:
 *
 *   running --switch-out sample/record--> off --switch-in--> running (emit)
 *
 * The switch-out sample (the stack) and the switch-out record (the PREEMPT
 * flag) of one switch are written back to back on the same CPU and join
 * into one block; either alone still makes a block (the sample without its
 * flag counts as voluntary; a record without its sample - throttled - as a
 * block with no stack), so no off-CPU time is dropped for want of one.
 * A second switch-out while off means the switch-in between was lost: the
 * first block is dropped and counted (its length is unknown).
 *
 * Exited threads stay as tombstones (so their late records are recognised)
 * until a second after their exit has passed the horizon.
 */
#include "pmutop/sample/offcpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum rec_kind { R_INITIAL = 0, R_SAMPLE, R_OUT, R_IN, R_NEW };

struct rec {
	uint64_t time;
	uint64_t seq;            /* arrival order: ties keep it */
	uint32_t pid, tid;
	uint8_t kind;
	bool preempt;
	void *payload;
};

enum th_state { T_EMPTY = 0, T_RUNNING, T_OFF, T_DEAD };

struct thread {
	uint32_t tid, pid;
	uint8_t state;
	bool has_sample, has_record, preempt, initial;
	bool born;               /* created during the run, not yet switched in */
	bool looked;             /* offcpu_stackless() listed this block already */
	uint64_t since;          /* T_OFF: block start; T_DEAD: exit time */
	void *payload;
};

struct offcpu {
	struct offcpu_ops ops;
	uint64_t start;
	struct rec *q;
	size_t nq, capq;
	uint64_t seq;
	struct thread *t;        /* open addressing, linear probing, no deletion */
	size_t cap, used, dead;
	struct offcpu_stats st;
};

/* A switch-out sample and its record are written within microseconds. */
#define JOIN_NS 200000ULL
/* Tombstones of exited threads live this long past the horizon. */
#define DEAD_KEEP_NS 1000000000ULL

static size_t slot(size_t cap, uint32_t tid)
{
	return (tid * 2654435761u) & (cap - 1);
}

static struct thread *find(struct offcpu *o, uint32_t tid)
{
	size_t i = slot(o->cap, tid);

	while (o->t[i].state != T_EMPTY) {
		if (o->t[i].tid == tid)
			return &o->t[i];
		i = (i + 1) & (o->cap - 1);
	}
	return NULL;
}

/* Rebuild at `cap`, leaving out tombstones older than `forget_before`. */
static int rehash(struct offcpu *o, size_t cap, uint64_t forget_before)
{
	struct thread *old = o->t, *t = calloc(cap, sizeof(*t));
	size_t old_cap = o->cap;

	if (!t)
		return -ENOMEM;
	o->t = t;
	o->cap = cap;
	o->used = o->dead = 0;
	for (size_t i = 0; i < old_cap; i++) {
		struct thread *e = &old[i];
		if (e->state == T_EMPTY || (e->state == T_DEAD && e->since < forget_before))
			continue;
		size_t j = slot(cap, e->tid);
		while (t[j].state != T_EMPTY)
			j = (j + 1) & (cap - 1);
		t[j] = *e;
		o->used++;
		o->dead += e->state == T_DEAD;
	}
	free(old);
	return 0;
}

static struct thread *get(struct offcpu *o, uint32_t tid, uint32_t pid)
{
	struct thread *e = find(o, tid);
	size_t i;

	if (e)
		return e;
	if ((o->used + 1) * 2 > o->cap && rehash(o, o->cap * 2, 0))
		return NULL;
	i = slot(o->cap, tid);
	while (o->t[i].state != T_EMPTY)
		i = (i + 1) & (o->cap - 1);
	e = &o->t[i];
	memset(e, 0, sizeof(*e));
	e->tid = tid;
	e->pid = pid;
	e->state = T_RUNNING;
	o->used++;
	return e;
}

struct offcpu *offcpu_new(const struct offcpu_ops *ops, uint64_t start)
{
	struct offcpu *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->ops = *ops;
	o->start = start;
	o->cap = 64;
	o->t = calloc(o->cap, sizeof(*o->t));
	if (!o->t) {
		free(o);
		return NULL;
	}
	return o;
}

static void drop(struct offcpu *o, void *payload)
{
	if (payload)
		o->ops.drop(o->ops.arg, payload);
}

void offcpu_free(struct offcpu *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->nq; i++)
		drop(o, o->q[i].payload);
	for (size_t i = 0; i < o->cap; i++)
		if (o->t[i].state == T_OFF)
			drop(o, o->t[i].payload);
	free(o->q);
	free(o->t);
	free(o);
}

static int push(struct offcpu *o, const struct rec *r)
{
	if (o->nq == o->capq) {
		size_t cap = o->capq ? o->capq * 2 : 256;
		struct rec *q = realloc(o->q, cap * sizeof(*q));
		if (!q) {
			drop(o, r->payload);
			return -ENOMEM;
		}
		o->q = q;
		o->capq = cap;
	}
	o->q[o->nq] = *r;
	o->q[o->nq++].seq = o->seq++;
	return 0;
}

int offcpu_sample(struct offcpu *o, uint32_t pid, uint32_t tid, uint64_t time, void *payload)
{
	struct rec r = { .time = time, .pid = pid, .tid = tid, .kind = R_SAMPLE, .payload = payload };

	return push(o, &r);
}

int offcpu_switch(struct offcpu *o, uint32_t pid, uint32_t tid, uint64_t time, bool out,
		  bool preempt)
{
	struct rec r = { .time = time, .pid = pid, .tid = tid, .kind = out ? R_OUT : R_IN,
			 .preempt = out && preempt };

	return push(o, &r);
}

int offcpu_thread_new(struct offcpu *o, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct rec r = { .time = time, .pid = pid, .tid = tid, .kind = R_NEW };

	return push(o, &r);
}

int offcpu_initial(struct offcpu *o, uint32_t pid, uint32_t tid, void *payload)
{
	struct rec r = { .time = o->start, .pid = pid, .tid = tid, .kind = R_INITIAL,
			 .payload = payload };

	return push(o, &r);
}

static void emit(struct offcpu *o, struct thread *e, uint64_t end, int ended_by)
{
	struct offcpu_block b = {
		.pid = e->pid, .tid = e->tid, .start = e->since,
		.end = end > e->since ? end : e->since,
		.preempted = e->preempt, .initial = e->initial, .ended_by = ended_by,
		.payload = e->payload,
	};

	o->st.blocks++;
	o->st.no_stack += !e->payload;
	o->st.ended_by_exit += ended_by == 1;
	o->st.ended_by_stop += ended_by == 2;
	e->payload = NULL;
	e->state = T_RUNNING;
	o->ops.emit(o->ops.arg, &b);
}

/* Start a block on e at r (a sample, a switch-out record or the initial look). */
static void go_off(struct offcpu *o, struct thread *e, const struct rec *r)
{
	if (e->state == T_OFF) {
		o->st.unmatched++; /* the switch-in between was lost */
		drop(o, e->payload);
	}
	e->state = T_OFF;
	e->born = false;
	e->looked = false;
	e->since = r->time;
	e->payload = r->payload;
	e->has_sample = r->kind != R_OUT;
	e->has_record = r->kind != R_SAMPLE;
	e->preempt = r->preempt;
	e->initial = r->kind == R_INITIAL;
}

static void apply(struct offcpu *o, const struct rec *r)
{
	struct thread *e = get(o, r->tid, r->pid);

	if (!e) {
		drop(o, r->payload);
		return;
	}
	if (e->state == T_DEAD) {
		o->st.late++;
		drop(o, r->payload);
		return;
	}
	switch (r->kind) {
	case R_INITIAL:
		/* Only for a thread nothing was recorded about yet. */
		if (e->state == T_RUNNING && !e->has_sample && !e->has_record && !e->since)
			go_off(o, e, r);
		else
			drop(o, r->payload);
		break;
	case R_SAMPLE:
		if (e->state == T_OFF && !e->has_sample && r->time - e->since <= JOIN_NS) {
			e->payload = r->payload; /* its record came first */
			e->has_sample = true;
		} else {
			go_off(o, e, r);
		}
		break;
	case R_OUT:
		if (e->state == T_OFF && !e->has_record && r->time - e->since <= JOIN_NS) {
			e->has_record = true;
			e->preempt = r->preempt;
		} else {
			go_off(o, e, r);
		}
		break;
	case R_NEW:
		e->born = e->state == T_RUNNING; /* runnable: its first switch-in is no block */
		break;
	case R_IN:
		if (e->state == T_OFF) {
			emit(o, e, r->time, 0);
		} else if (e->born) {
			e->born = false;
		} else if (!e->has_sample && !e->has_record && !e->since) {
			/* Blocked since the start, not seen by the initial look. */
			e->state = T_OFF;
			e->since = o->start;
			e->initial = true;
			emit(o, e, r->time, 0);
		} else {
			o->st.orphan_in++; /* its switch-out was lost */
		}
		break;
	}
	/* Seen: a later switch-in is not "blocked since the start". */
	if (!e->since)
		e->since = 1;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Apply queued records at or before horizon (only those of tid when tid != 0). */
static void apply_until(struct offcpu *o, uint64_t horizon, uint32_t tid, uint32_t pid)
{
	size_t k = 0;

	if (o->nq > 1) /* an empty queue may have no array at all */
		qsort(o->q, o->nq, sizeof(*o->q), rec_cmp);
	for (size_t i = 0; i < o->nq; i++) {
		const struct rec *r = &o->q[i];
		bool mine = (!tid && !pid) || (tid && r->tid == tid) || (pid && r->pid == pid);
		if (r->time <= horizon && mine)
			apply(o, r);
		else
			o->q[k++] = *r;
	}
	o->nq = k;
}

void offcpu_flush(struct offcpu *o, uint64_t horizon)
{
	apply_until(o, horizon, 0, 0);
	/* Forget tombstones long past; rebuilding also drops their probes. */
	if (o->dead > 64 && o->dead * 2 > o->used && horizon > DEAD_KEEP_NS)
		rehash(o, o->cap, horizon - DEAD_KEEP_NS);
}

static void end_one(struct offcpu *o, struct thread *e, uint64_t time)
{
	if (e->state == T_OFF)
		emit(o, e, time, 1);
	if (e->state != T_DEAD)
		o->dead++;
	e->state = T_DEAD;
	e->since = time;
}

void offcpu_end_thread(struct offcpu *o, uint32_t tid, uint64_t time)
{
	struct thread *e;

	apply_until(o, time, tid, 0);
	e = get(o, tid, 0);
	if (e)
		end_one(o, e, time);
}

void offcpu_end_process(struct offcpu *o, uint32_t pid, uint64_t time)
{
	apply_until(o, time, 0, pid);
	for (size_t i = 0; i < o->cap; i++)
		if (o->t[i].state != T_EMPTY && o->t[i].state != T_DEAD && o->t[i].pid == pid)
			end_one(o, &o->t[i], time);
}

void offcpu_finish(struct offcpu *o, uint64_t end)
{
	apply_until(o, UINT64_MAX, 0, 0);
	for (size_t i = 0; i < o->cap; i++)
		if (o->t[i].state == T_OFF)
			emit(o, &o->t[i], end, 2);
}

size_t offcpu_stackless(struct offcpu *o, uint64_t before, uint32_t *pids, uint32_t *tids,
			size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < o->cap && n < max; i++) {
		struct thread *e = &o->t[i];
		if (e->state != T_OFF || e->payload || e->looked || e->since >= before)
			continue;
		e->looked = true;
		pids[n] = e->pid;
		tids[n++] = e->tid;
	}
	return n;
}

int offcpu_set_stack(struct offcpu *o, uint32_t tid, void *payload)
{
	struct thread *e = find(o, tid);

	if (!e || e->state != T_OFF || e->payload) {
		drop(o, payload);
		return -ESRCH;
	}
	e->payload = payload;
	o->st.late_looks++;
	return 0;
}

void offcpu_get_stats(const struct offcpu *o, struct offcpu_stats *st)
{
	*st = o->st;
	st->queued = o->nq;
}
