/*
 * agg_budget.c - the aggregate's memory budget: what it holds, and the
 * rebuild that merges when it holds too much.
 *
 * aggregate_maintain() rebuilds by copying what is alive into a fresh
 * aggregate (a copying collector): locations that debug info showed to be
 * one source position fold into one, and - only over the budget - the
 * degradations apply, cheapest loss first: per-address leaf detail (the
 * instruction view's histogram: caller-only entries, then the rarest
 * leaves), then exited threads folded into one record per name, then cold
 * subtrees of the calling-context tree. A pruned subtree becomes one
 * "[N cold frames pruned]" child of the kept caller it hung from, holding
 * all of the subtree's samples, so every kept frame's cumulative counts
 * stay exact and only the shape below a cold caller is lost. Copying is
 * simpler and as fast as editing hash tables in place, and it hands the
 * memory back.
 */
#include "agg_int.h"

#include <errno.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- what the aggregate holds ---- */

#define VEC_BYTES(vec) ((vec).cap * sizeof(*(vec).v))
#define IX_BYTES(ix) (((ix).mask + 1) * sizeof(struct slot))

size_t aggregate_bytes(const struct aggregate *a)
{
	return sizeof(*a) + VEC_BYTES(a->maps) + VEC_BYTES(a->map_keys) +
	       VEC_BYTES(a->funcs) + VEC_BYTES(a->locs) + VEC_BYTES(a->nodes) +
	       VEC_BYTES(a->stacks) + VEC_BYTES(a->threads) + VEC_BYTES(a->strs) +
	       VEC_BYTES(a->addrs) + VEC_BYTES(a->loc_canon) + VEC_BYTES(a->pending) +
	       a->fredir_n * sizeof(*a->fredir) + 3 * a->scratch_cap * sizeof(*a->scratch) +
	       IX_BYTES(a->map_ix) + IX_BYTES(a->func_ix) + IX_BYTES(a->loc_ix) +
	       IX_BYTES(a->node_ix) + IX_BYTES(a->stack_ix) + IX_BYTES(a->thread_ix) +
	       IX_BYTES(a->str_ix) + IX_BYTES(a->addr_ix) + a->arena.bytes;
}

/* ---- copying ---- */

/*
 * Copying what is alive from a into a fresh aggregate b. The remap arrays
 * give, per old id (index id - 1), the new id or 0 while not copied yet.
 */
struct copy {
	struct aggregate *a, *b;
	uint32_t *map, *func, *loc, *tid; /* tid: per old thread record */
	uint32_t *node;                   /* per old node: the new node */
};

static uint32_t canon_root(const struct aggregate *a, uint32_t id)
{
	while (a->loc_canon.v[id - 1])
		id = a->loc_canon.v[id - 1];
	return id;
}

static int copy_mapping(struct copy *c, uint32_t old, uint32_t *id)
{
	const struct agg_mapping *om;
	struct agg_mapping *nm;
	const char *file, *build_id;
	uint64_t key;

	if (!old || c->map[old - 1]) {
		*id = old ? c->map[old - 1] : 0;
		return 0;
	}
	om = &c->a->maps.v[old - 1];
	file = str_intern(c->b, om->file);
	build_id = str_intern(c->b, om->build_id);
	if (!file || !build_id || VEC_RESERVE(c->b->maps) || VEC_RESERVE(c->b->map_keys))
		return -ENOMEM;
	key = c->a->map_keys.v[old - 1];
	nm = &c->b->maps.v[c->b->maps.n];
	*nm = *om;
	nm->id = (uint32_t)c->b->maps.n + 1;
	nm->file = file;
	nm->build_id = build_id;
	c->b->map_keys.v[c->b->map_keys.n++] = key;
	/* Imported mappings have no key and are not indexed. */
	if (key && mapping_index(c->b, key, (uint32_t)c->b->maps.n))
		return -ENOMEM;
	c->b->maps.n++;
	*id = c->map[old - 1] = nm->id;
	return 0;
}

static int copy_function(struct copy *c, uint32_t old, uint32_t *id)
{
	const struct agg_function *of = &c->a->funcs.v[old - 1];
	struct agg_function *nf;
	int err;

	if (c->func[old - 1]) {
		*id = c->func[old - 1];
		return 0;
	}
	err = function_intern(c->b, of->name, of->file, id);
	if (err)
		return err;
	nf = &c->b->funcs.v[*id - 1];
	if (of->system_name && !nf->system_name) {
		nf->system_name = str_intern(c->b, of->system_name);
		if (!nf->system_name)
			return -ENOMEM;
	}
	if (!nf->start_line)
		nf->start_line = of->start_line;
	c->func[old - 1] = *id;
	return 0;
}

/* The new id of old location `old` (merged ones go to their canonical). */
static int copy_location(struct copy *c, uint32_t old, uint32_t *id)
{
	const struct agg_location *ol;
	struct agg_location *nl;
	struct agg_line *lines = NULL;
	uint32_t mid, fid, nid, canon;
	int err;

	old = canon_root(c->a, old);
	if (c->loc[old - 1]) {
		*id = c->loc[old - 1];
		return 0;
	}
	ol = &c->a->locs.v[old - 1];
	err = copy_mapping(c, ol->mapping_id, &mid);
	if (!err)
		err = copy_function(c, ol->function_id, &fid);
	if (err)
		return err;
	if (ol->nlines) {
		lines = arena_alloc(&c->b->arena, ol->nlines * sizeof(*lines),
				    alignof(struct agg_line));
		if (!lines)
			return -ENOMEM;
		for (uint32_t i = 0; i < ol->nlines; i++) {
			err = copy_function(c, ol->lines[i].function_id, &lines[i].function_id);
			if (err)
				return err;
			lines[i].line = ol->lines[i].line;
		}
	}
	err = location_push(c->b, mid, ol->address, fid, &nid);
	if (err)
		return err;
	nl = &c->b->locs.v[nid - 1];
	nl->nlines = ol->nlines;
	nl->lines = lines;
	nl->exact = ol->exact;
	err = pos_canonical(c->b, nid, &canon);
	if (err)
		return err;
	if (canon != nid) { /* cannot happen for a consistent a; merge anyway */
		c->b->locs.n--;
		c->b->loc_canon.n--;
	}
	*id = c->loc[old - 1] = canon;
	return 0;
}

/*
 * The group record of exited threads named `name` of process pid in b
 * (created on demand): a process keeps its own groups, so its pid and comm
 * labels survive the folding.
 */
static struct agg_thread *thread_group(struct aggregate *b, const char *name, uint32_t pid,
				       const char *comm)
{
	size_t groups = 0;
	struct agg_thread *t;

	for (size_t i = 0; i < b->threads.n; i++) {
		if (!b->threads.v[i].folded)
			continue;
		groups++;
		if (strcmp(b->threads.v[i].name, name) == 0 && b->threads.v[i].pid == pid)
			return &b->threads.v[i];
	}
	if (groups >= b->lim.max_names && strcmp(name, "[other threads]") != 0)
		return thread_group(b, "[other threads]", 0, "");
	t = thread_get(b, AGG_TID_GROUP + (uint32_t)groups + 1);
	if (!t)
		return NULL;
	t->nthreads = 0;
	t->folded = true;
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->pid = pid;
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	return t;
}

static int copy_threads(struct copy *c, bool fold)
{
	for (size_t i = 0; i < c->a->threads.n; i++) {
		const struct agg_thread *ot = &c->a->threads.v[i];
		struct agg_thread *nt;

		if (ot->folded || (fold && ot->exited)) {
			nt = thread_group(c->b, ot->name[0] ? ot->name : "?", ot->pid, ot->comm);
			if (!nt)
				return -ENOMEM;
			if (!ot->folded)
				c->b->info.threads_folded++;
			/* Threads with samples (COMM records also name unsampled ones). */
			nt->nthreads += ot->folded ? ot->nthreads : ot->samples ? 1 : 0;
		} else {
			nt = thread_get(c->b, ot->tid);
			if (!nt)
				return -ENOMEM;
			memcpy(nt->name, ot->name, sizeof(nt->name));
			nt->pid = ot->pid;
			memcpy(nt->comm, ot->comm, sizeof(nt->comm));
			nt->exited = ot->exited;
			if (nt->exited)
				c->b->exited++;
		}
		nt->samples += ot->samples;
		c->tid[i] = nt->tid;
	}
	return 0;
}

/*
 * What a rebuild over the budget gives up, decided from estimates before
 * copying: the address table's floor (leaf counts below it are dropped;
 * 1 drops caller-only entries), whether exited threads fold, and which
 * subtrees stay (prune_cut).
 */
struct plan {
	uint64_t min_leaf;
	bool fold;
	bool prune;
	uint64_t cut;   /* nodes with subtree counts above it stay, */
	size_t ties;    /* and this many of those equal to it */
};

/*
 * Trees larger than this are not rebuilt only to fold merged locations
 * while sampling: copying a node costs ~0.1-0.3 us, so this bounds that
 * rebuild to a few tens of ms - about what the ring buffers absorb.
 */
#define MERGE_REBUILD_MAX_NODES 200000

/* Bytes one entry costs in a table at most 70% full, with its slot. */
#define ENTRY_BYTES(type) (sizeof(type) + sizeof(struct slot) * 10 / 7 + 1)

static int u64_desc(const void *x, const void *y)
{
	uint64_t p = *(const uint64_t *)x, q = *(const uint64_t *)y;

	return p < q ? 1 : p > q ? -1 : 0;
}

/* Per node: the samples of its subtree (every thread's records). */
static uint64_t *subtree_samples(const struct aggregate *a)
{
	uint64_t *cum = calloc(a->nodes.n + 1, sizeof(*cum));

	if (!cum)
		return NULL;
	for (size_t i = 0; i < a->stacks.n; i++)
		cum[a->stacks.v[i].node] += a->stacks.v[i].samples;
	/* Children have larger ids than their parents: callees first. */
	for (size_t n = a->nodes.n; n-- > 1;)
		cum[a->nodes.v[n].parent] += cum[n];
	return cum;
}

/*
 * Which nodes stay so that at most keep do (the root aside): those whose
 * subtree count is above *cut, and *ties of those equal to it (the first
 * in id order - the worst case, a new path every sample, has most nodes at
 * one sample, and cutting all of them would prune far past the budget).
 * Kept nodes form a tree, since a node's count is at least its children's
 * and ties are taken callers first.
 */
static int prune_cut(const struct aggregate *a, const uint64_t *cum, size_t keep,
		     uint64_t *cut, size_t *ties)
{
	size_t n = a->nodes.n - 1, above = 0;
	uint64_t *v;

	*cut = 0;
	*ties = 0;
	if (keep >= n)
		return 0;
	if (!keep) {
		*cut = UINT64_MAX;
		return 0;
	}
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v, cum + 1, n * sizeof(*v));
	qsort(v, n, sizeof(*v), u64_desc);
	*cut = v[keep - 1];
	while (above < keep && v[above] > *cut)
		above++;
	*ties = keep - above;
	free(v);
	return 0;
}

static int make_plan(const struct aggregate *a, const uint64_t *cum, struct plan *p)
{
	size_t budget = a->lim.max_memory, target = budget / 3 * 2;
	size_t est = aggregate_bytes(a), nleaf = 0, ncaller;
	size_t per_addr = ENTRY_BYTES(struct agg_address);

	memset(p, 0, sizeof(*p));
	if (est <= target)
		return 0;
	/* 1. Address detail: caller-only entries, then the rarest leaves. */
	for (size_t i = 0; i < a->addrs.n; i++)
		nleaf += a->addrs.v[i].leaf_samples > 0;
	ncaller = a->addrs.n - nleaf;
	p->min_leaf = 1;
	est -= est > ncaller * per_addr ? ncaller * per_addr : est;
	if (est > target && nleaf) {
		size_t drop = (est - target) / per_addr + 1, k = 0;
		uint64_t *v;

		if (drop >= nleaf)
			drop = nleaf - nleaf / 8; /* an eighth stays: the hottest */
		v = malloc(nleaf * sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (size_t i = 0; i < a->addrs.n; i++)
			if (a->addrs.v[i].leaf_samples)
				v[k++] = a->addrs.v[i].leaf_samples;
		qsort(v, nleaf, sizeof(*v), u64_desc);
		p->min_leaf = v[nleaf - drop] + 1; /* the drop-th rarest and below */
		free(v);
		est -= drop * per_addr;
	}
	if (est <= target)
		return 0;
	/* 2. Exited threads, folded into their names: their records merge. */
	if (a->exited) {
		size_t recs = 0;

		for (size_t i = 0; i < a->stacks.n; i++) {
			uint32_t ref = thread_find(a, a->stacks.v[i].tid);

			recs += ref && a->threads.v[ref - 1].exited;
		}
		p->fold = true;
		/* A thread pool's threads share their stacks: most records merge. */
		recs -= recs / 4;
		est -= est > recs * ENTRY_BYTES(struct agg_stack) ? recs * ENTRY_BYTES(struct agg_stack)
								  : est;
	}
	if (est <= target)
		return 0;
	/*
	 * 3. Cold subtrees: what is left over the target goes in proportion to
	 * the nodes (each brings its records, locations and strings along).
	 */
	/*
	 * Nodes do not carry the bytes alone (records merge less than nodes
	 * go, arrays keep up to twice their use): aim at 70% of the share.
	 */
	p->prune = true;
	return prune_cut(a, cum, (size_t)((double)a->nodes.n * 0.7 * (double)target / (double)est),
			 &p->cut, &p->ties);
}

/* The "[N cold frames pruned]" location of b. */
static int pruned_location(struct aggregate *b, uint32_t n, uint32_t *id)
{
	char name[64];
	uint32_t fid, nid;
	int err;

	snprintf(name, sizeof(name), "[%u cold frame%s pruned]", n, n == 1 ? "" : "s");
	err = function_intern(b, name, "", &fid);
	if (!err)
		err = location_push(b, 0, 0, fid, &nid);
	if (!err)
		err = pos_canonical(b, nid, id);
	if (err)
		return err;
	if (*id != nid) { /* the same N under another caller */
		b->locs.n--;
		b->loc_canon.n--;
	}
	return 0;
}

/*
 * The tree of b: kept nodes in id order (callers first), and for each kept
 * caller with cold callees one pruned node taking them all (p->prune
 * false: every node kept; pruned nodes of earlier rebuilds then stay as
 * they are).
 */
static int copy_nodes(struct copy *c, const uint64_t *cum, const struct plan *p)
{
	const struct aggregate *a = c->a;
	struct aggregate *b = c->b;
	uint32_t *top = NULL, *count = NULL, *pnode = NULL;
	size_t nn = a->nodes.n;
	int err = -ENOMEM;

	if (p->prune) {
		size_t ties = p->ties;

		top = calloc(nn, sizeof(*top));      /* pruned: its kept ancestor + 1 */
		count = calloc(nn, sizeof(*count));  /* kept: frames pruned under it */
		pnode = calloc(nn, sizeof(*pnode));  /* kept: its pruned node in b */
		if (!top || !count || !pnode)
			goto out;
		for (size_t n = 1; n < nn; n++) {
			const struct cct_node *o = &a->nodes.v[n];
			bool parent_kept = o->parent == 0 || !top[o->parent];

			if (!o->pruned && parent_kept &&
			    (cum[n] > p->cut || (cum[n] == p->cut && ties && ties--)))
				continue;
			top[n] = parent_kept ? o->parent + 1 : top[o->parent];
			count[top[n] - 1] += o->pruned ? o->pruned : 1;
			if (!o->pruned)
				b->info.pruned++;
		}
	}
	for (size_t n = 1; n < nn; n++) {
		const struct cct_node *o = &a->nodes.v[n];
		uint32_t loc, k;

		if (top && top[n]) {
			k = top[n] - 1;
			if (!pnode[k]) {
				if ((err = pruned_location(b, count[k], &loc)))
					goto out;
				pnode[k] = node_get(b, c->node[k], loc);
				if (!pnode[k])
					goto nomem;
				b->nodes.v[pnode[k]].pruned = count[k];
			}
			c->node[n] = pnode[k];
			continue;
		}
		if ((err = copy_location(c, o->loc, &loc)))
			goto out;
		c->node[n] = node_get(b, c->node[o->parent], loc);
		if (!c->node[n])
			goto nomem;
		b->nodes.v[c->node[n]].pruned = o->pruned;
	}
	err = 0;
	goto out;
nomem:
	err = -ENOMEM;
out:
	free(top);
	free(count);
	free(pnode);
	return err;
}

static int copy_stacks(struct copy *c)
{
	const struct aggregate *a = c->a;
	struct aggregate *b = c->b;

	for (size_t k = 0; k < a->stacks.n; k++) {
		const struct agg_stack *os = &a->stacks.v[k];
		uint32_t ref = thread_find(a, os->tid);
		uint32_t tid = ref ? c->tid[ref - 1] : os->tid;
		uint32_t nn = c->node[os->node];
		struct agg_stack *ns;

		/* Stacks that lost frames now (not those pruned before). */
		if (os->node && b->nodes.v[nn].pruned && !a->nodes.v[os->node].pruned)
			b->info.pruned_samples += os->samples;
		ns = stack_get(b, tid, nn);
		if (!ns)
			return -ENOMEM;
		ns->samples += os->samples;
		for (size_t e = 0; e < a->ev_width; e++) {
			ns->weights[e] += os->weights[e];
			ns->ev_samples[e] += os->ev_samples[e];
		}
		ns->weight = ns->weights[0];
	}
	return 0;
}

/*
 * The address table: entries whose location survived and whose leaf count
 * reaches min_leaf (1: caller-only entries go - they come back on their
 * next sample; more: the rarest leaves too, counted as dropped).
 */
static int copy_addresses(struct copy *c, uint64_t min_leaf)
{
	const struct aggregate *a = c->a;
	struct aggregate *b = c->b;
	int err = 0;

	for (size_t i = 0; !err && i < a->addrs.n; i++) {
		const struct agg_address *oa = &a->addrs.v[i];
		uint32_t mid;

		if (oa->leaf_samples < min_leaf) {
			b->info.leaf_dropped += oa->leaf_samples;
			continue;
		}
		/* Caller-only addresses of locations no node keeps: forget. */
		if (!oa->leaf_samples && !c->loc[canon_root(a, oa->loc_id) - 1])
			continue;
		err = copy_mapping(c, oa->mapping_id, &mid);
		if (err || (err = VEC_RESERVE(b->addrs)))
			break;
		b->addrs.v[b->addrs.n] = *oa;
		b->addrs.v[b->addrs.n].mapping_id = mid;
		err = copy_location(c, oa->loc_id, &b->addrs.v[b->addrs.n].loc_id);
		if (!err)
			err = address_index(b, (uint32_t)b->addrs.n);
		if (!err)
			b->addrs.n++;
	}
	return err;
}

int agg_rebuild(struct aggregate *a, bool over_budget)
{
	struct aggregate *b = aggregate_new(), tmp;
	struct copy c = { .a = a, .b = b };
	uint64_t *cum = NULL;
	struct plan p = { 0 };
	int err = -ENOMEM;

	if (!b)
		return -ENOMEM;
	if (over_budget) {
		cum = subtree_samples(a);
		if (!cum || (err = make_plan(a, cum, &p)))
			goto out;
		err = -ENOMEM;
	}
	b->lim = a->lim;
	b->info = a->info;
	if (over_budget)
		b->info.compactions++;
	b->ev_width = a->ev_width; /* no stacks yet: nothing to move */
	c.map = calloc(a->maps.n + 1, sizeof(*c.map));
	c.func = calloc(a->funcs.n + 1, sizeof(*c.func));
	c.loc = calloc(a->locs.n + 1, sizeof(*c.loc));
	c.tid = calloc(a->threads.n + 1, sizeof(*c.tid));
	c.node = calloc(a->nodes.n + 1, sizeof(*c.node));
	if (!c.map || !c.func || !c.loc || !c.tid || !c.node)
		goto out;
	/*
	 * A rebuild that keeps everything sizes its tables up front (they
	 * then never double and move during the copy); one that prunes does
	 * not, or the new tables would be as large as the old.
	 */
	if (!p.prune && (index_presize(&b->stack_ix, a->stacks.n) ||
			   index_presize(&b->node_ix, a->nodes.n)))
		goto out;
	if (a->info.event && !(b->info.event = str_intern(b, a->info.event)))
		goto out;
	if (a->info.event_unit && !(b->info.event_unit = str_intern(b, a->info.event_unit)))
		goto out;
	if ((err = copy_threads(&c, p.fold)) || (err = copy_nodes(&c, cum, &p)) ||
	    (err = copy_stacks(&c)) || (err = copy_addresses(&c, p.min_leaf)))
		goto out;
	/* Every redirect: addresses named later must still land on the DWARF function. */
	for (uint32_t f = 1; f < a->fredir_n && f <= a->funcs.n; f++)
		if (a->fredir[f] && a->fredir[f] <= a->funcs.n) {
			uint32_t from, to;

			if ((err = copy_function(&c, f, &from)) ||
			    (err = copy_function(&c, a->fredir[f], &to)) ||
			    (err = func_redirect(b, from, to)))
				goto out;
		}
	/* Swap the insides: a keeps its address, the old contents go. */
	tmp = *a;
	b->generation = a->generation + 1;
	*a = *b;
	*b = tmp;
	err = 0;
out:
	aggregate_free(b);
	free(cum);
	free(c.map);
	free(c.func);
	free(c.loc);
	free(c.tid);
	free(c.node);
	return err;
}

uint64_t aggregate_generation(const struct aggregate *a)
{
	return a->generation;
}

int aggregate_maintain(struct aggregate *a, bool force, bool lines)
{
	/* 10 ms of DWARF lookups at a time (the sampling loop drains in between). */
	int err = lines ? aggregate_resolve_lines_for(a, 10 * 1000000ULL) : 0;
	bool over;

	if (err || a->pending.n)
		return err; /* pending locations hold ids: rebuild once they are done */
	over = aggregate_bytes(a) > a->lim.max_memory;
	/*
	 * Merged locations alone wait until they are a good part of the table:
	 * a location merged into another is still a valid location (its lines
	 * are the other's), so outputs stay right, and a reloaded library
	 * (dlopen/dlclose: new addresses, the same lines) merges a few dozen
	 * every second - a rebuild for each copied the whole tree once a
	 * second (issue 23: 228 rebuilds in 250 s on tests/workloads/longrun).
	 * And only while the copy is short (the sampling loop waits for it):
	 * a larger tree keeps its merged locations until a forced rebuild at
	 * the end of the run.
	 */
	if (!force && !over && (a->merged == 0 || a->merged * 4 < a->locs.n ||
				a->nodes.n > MERGE_REBUILD_MAX_NODES))
		return 0;
	return agg_rebuild(a, over);
}
