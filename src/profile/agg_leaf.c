/*
 * agg_leaf.c - where each stack's leaf samples landed, address by address
 * (the instruction view and the pprof writer read it).
 *
 * A location is a source position, so one stack's leaf samples may lie on
 * several instructions of its leaf line; the leaf-address histogram counts
 * per address, and the parts here share each stack's samples over the
 * addresses of its leaf location as the histogram's counts lie.
 */
#include "agg_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u32_pair(const void *p, const void *q)
{
	const uint32_t *x = p, *y = q;

	return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* Split v over parts in proportion to share[0..n) (sum total); exact: largest remainders. */
static void split_exact(uint64_t v, const uint64_t *share, uint64_t total, size_t n,
			uint64_t *out, double *frac)
{
	uint64_t given = 0;

	for (size_t i = 0; i < n; i++) {
		double x = total ? (double)v * (double)share[i] / (double)total : 0;

		out[i] = (uint64_t)x;
		frac[i] = x - (double)out[i];
		given += out[i];
	}
	while (given < v && n) {
		size_t best = 0;

		for (size_t i = 1; i < n; i++)
			if (frac[i] > frac[best])
				best = i;
		out[best]++;
		frac[best] = -1;
		given++;
	}
}

/*
 * The leaf parts one stack at a time. Setting up takes what each address
 * has left once the stacks that name it exactly (a location of its own)
 * have taken theirs; after that a stack's parts depend on nothing but
 * those leftovers, so they are computed when asked, into a buffer the
 * iterator owns, and a caller that streams them (the pprof writer) never
 * holds all of them: 80 bytes a part, 8 MiB at the end of a long run.
 */
struct agg_leaf_iter {
	const struct aggregate *a;
	size_t nev;
	uint64_t *rs;                   /* per address: leaf samples left */
	uint32_t (*byloc)[2];           /* (location id, address index), sorted */
	uint32_t *first;                /* first[L] .. first[L + 1]: location L in byloc */
	uint64_t *sh, *res;             /* split_exact's scratch, per address */
	double *frac;
	struct agg_leaf_part *parts;    /* the current stack's parts */
};

void aggregate_leaf_iter_free(struct agg_leaf_iter *it)
{
	if (!it)
		return;
	free(it->rs);
	free(it->byloc);
	free(it->first);
	free(it->sh);
	free(it->res);
	free(it->frac);
	free(it->parts);
	free(it);
}

/* The leaf of stack st: its location, whether that is one address, and its range in byloc. */
static uint32_t leaf_of(const struct agg_leaf_iter *it, const struct agg_stack *st, bool *exact,
			uint32_t *lo, uint32_t *hi)
{
	const struct aggregate *a = it->a;
	uint32_t leaf = st->leaf;

	/* A location that was merged into another stands for one address. */
	*exact = leaf && leaf <= a->loc_canon.n && a->loc_canon.v[leaf - 1];
	*lo = leaf ? it->first[leaf] : 0;
	*hi = leaf ? it->first[leaf + 1] : 0;
	return leaf;
}

struct agg_leaf_iter *aggregate_leaf_iter_new(const struct aggregate *a)
{
	struct agg_leaf_iter *it = calloc(1, sizeof(*it));
	size_t na = a->addrs.n, i, k;

	if (!it)
		return NULL;
	it->a = a;
	it->nev = a->info.nevents > 1 ? a->info.nevents : 1;
	it->rs = calloc(na + 1, sizeof(*it->rs));
	it->byloc = calloc(na + 1, sizeof(*it->byloc));
	it->first = calloc(a->locs.n + 2, sizeof(*it->first));
	it->sh = calloc(na + 1, sizeof(*it->sh));
	it->res = calloc(na + 1, sizeof(*it->res));
	it->frac = calloc(na + 1, sizeof(*it->frac));
	it->parts = calloc(na + 1, sizeof(*it->parts));
	if (!it->rs || !it->byloc || !it->first || !it->sh || !it->res || !it->frac ||
	    !it->parts) {
		aggregate_leaf_iter_free(it);
		return NULL;
	}
	for (i = 0; i < na; i++) {
		it->rs[i] = a->addrs.v[i].leaf_samples;
		it->byloc[i][0] = a->addrs.v[i].loc_id;
		it->byloc[i][1] = (uint32_t)i;
	}
	qsort(it->byloc, na, sizeof(*it->byloc), cmp_u32_pair);
	for (i = 0, k = 0; k <= a->locs.n + 1; k++) {
		while (i < na && it->byloc[i][0] < k)
			i++;
		it->first[k] = (uint32_t)i;
	}
	/* The stacks whose leaf is exactly one address take their samples first. */
	for (size_t s = 0; s < a->stacks.n; s++) {
		const struct agg_stack *st = &a->stacks.v[s];
		uint32_t leaf, lo, hi, ai;
		bool exact;

		leaf = leaf_of(it, st, &exact, &lo, &hi);
		if (!leaf || !exact)
			continue;
		ai = address_find(a, a->locs.v[leaf - 1].mapping_id, a->locs.v[leaf - 1].address);
		if (ai != UINT32_MAX)
			it->rs[ai] = it->rs[ai] > st->samples ? it->rs[ai] - st->samples : 0;
	}
	return it;
}

size_t aggregate_leaf_iter_stack(struct agg_leaf_iter *it, size_t s,
				 const struct agg_leaf_part **out)
{
	const struct aggregate *a = it->a;
	const struct agg_stack *st = &a->stacks.v[s];
	struct agg_leaf_part *parts = it->parts;
	size_t nev = it->nev, n, w, k;
	uint32_t leaf, lo, hi, ai;
	bool exact;

	*out = parts;
	leaf = leaf_of(it, st, &exact, &lo, &hi);
	if (!leaf || exact || hi - lo <= 1) {
		const struct agg_location *l = leaf ? &a->locs.v[leaf - 1] : NULL;

		ai = !leaf ? UINT32_MAX :
		     exact || hi == lo ? address_find(a, l->mapping_id, l->address)
				       : it->byloc[lo][1];
		memset(&parts[0], 0, sizeof(parts[0]));
		parts[0].stack = (uint32_t)s;
		parts[0].addr = ai;
		parts[0].samples = st->samples;
		for (k = 0; k < nev; k++)
			parts[0].weights[k] = st->weights[k];
		return 1;
	}
	/* Several addresses: the stack's samples split as the leftovers lie. */
	n = hi - lo;
	memset(parts, 0, n * sizeof(*parts));
	for (uint32_t j = lo; j < hi; j++) {
		parts[j - lo].stack = (uint32_t)s;
		parts[j - lo].addr = it->byloc[j][1];
	}
	/*
	 * Samples first, as the leftovers lie; then each event's weight as
	 * the samples went (else a one-sample stack would become a part per
	 * address of its line, each with a sliver of weight: 20 times the
	 * samples in a written profile).
	 */
	for (size_t kk = 0; kk <= nev; kk++) {
		uint64_t tot = 0, v;

		k = kk == 0 ? nev : kk - 1;
		v = k == nev ? st->samples : st->weights[k];
		for (size_t j = 0; j < n; j++) {
			it->sh[j] = k == nev ? it->rs[parts[j].addr] : parts[j].samples;
			tot += it->sh[j];
		}
		if (!tot) /* nothing left to go by: the first address */
			it->sh[0] = tot = 1;
		split_exact(v, it->sh, tot, n, it->res, it->frac);
		for (size_t j = 0; j < n; j++) {
			if (k == nev)
				parts[j].samples = it->res[j];
			else
				parts[j].weights[k] = it->res[j];
		}
	}
	/* Keep the parts that hold something. */
	for (size_t j = w = 0; j < n; j++) {
		bool any = parts[j].samples != 0;

		for (k = 0; k < nev && !any; k++)
			any = parts[j].weights[k] != 0;
		if (any)
			parts[w++] = parts[j];
	}
	return w;
}

int aggregate_leaf_parts(const struct aggregate *a, struct agg_leaf_part **out, size_t *nout)
{
	struct agg_leaf_iter *it = aggregate_leaf_iter_new(a);
	struct agg_leaf_part *parts = NULL, *v;
	const struct agg_leaf_part *p;
	size_t np = 0, cap = 0, n;

	*out = NULL;
	*nout = 0;
	if (!it)
		return -ENOMEM;
	for (size_t s = 0; s < a->stacks.n; s++) {
		n = aggregate_leaf_iter_stack(it, s, &p);
		if (np + n > cap) {
			cap = 2 * (np + n) + 256;
			v = realloc(parts, cap * sizeof(*v));
			if (!v) {
				free(parts);
				aggregate_leaf_iter_free(it);
				return -ENOMEM;
			}
			parts = v;
		}
		memcpy(&parts[np], p, n * sizeof(*p));
		np += n;
	}
	aggregate_leaf_iter_free(it);
	*out = parts;
	*nout = np;
	return 0;
}
