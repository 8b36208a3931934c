/*
 * agg_import.c - an aggregate built from a saved profile (pprof_read.c)
 * instead of from live frames: mappings, functions and locations appended
 * as the file has them, stacks put into the tree, events named.
 */
#include "agg_int.h"

#include <errno.h>
#include <string.h>

int aggregate_import_mapping(struct aggregate *a, uint64_t start, uint64_t limit,
			     uint64_t offset, const char *file, const char *build_id,
			     bool has_functions, uint32_t *id)
{
	const char *f = str_intern(a, file ? file : "");
	const char *b = str_intern(a, build_id ? build_id : "");
	struct agg_mapping *am;

	if (!f || !b || VEC_RESERVE(a->maps) || VEC_RESERVE(a->map_keys))
		return -ENOMEM;
	/* Not in map_ix: live frames never look imported mappings up. */
	am = &a->maps.v[a->maps.n];
	am->id = (uint32_t)a->maps.n + 1;
	am->start = start;
	am->limit = limit;
	am->offset = offset;
	am->file = f;
	am->build_id = b;
	am->has_functions = has_functions;
	am->has_filenames = am->has_line_numbers = am->has_inline_frames = false;
	a->map_keys.v[a->map_keys.n++] = 0;
	a->maps.n++;
	*id = am->id;
	return 0;
}

int aggregate_import_function(struct aggregate *a, const char *name, const char *file,
			      uint32_t *id)
{
	return function_intern(a, name ? name : "", file ? file : "", id);
}

int aggregate_import_location(struct aggregate *a, uint32_t mapping_id, uint64_t address,
			      uint32_t function_id, uint32_t *id)
{
	if (mapping_id > a->maps.n || function_id == 0 || function_id > a->funcs.n)
		return -EINVAL;
	/* Not in loc_ix: one address may carry several (inlined) functions. */
	return location_push(a, mapping_id, address, function_id, id);
}

int aggregate_import_stack(struct aggregate *a, uint32_t tid, const uint32_t *locs,
			   unsigned n, uint64_t samples, const uint64_t *weights, size_t nweights)
{
	struct agg_thread *t;
	struct agg_stack *s;
	uint32_t node = 0;
	unsigned i;

	if (nweights == 0 || nweights > PMUTOP_MAX_EVENTS)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (locs[i] == 0 || locs[i] > a->locs.n)
			return -EINVAL;
	t = thread_get(a, tid);
	if (!t || widen(a, nweights))
		return -ENOMEM;
	for (i = n; i-- > 0;)
		if (!(node = node_get(a, node, locs[i])))
			return -ENOMEM;
	s = stack_get(a, tid, node);
	if (!s)
		return -ENOMEM;
	s->samples += samples;
	for (i = 0; i < nweights; i++) {
		s->weights[i] += weights[i];
		/* The file counts samples per stack, not per event: a stack's
		 * count goes to every event it has weight in. */
		if (weights[i])
			s->ev_samples[i] += samples;
	}
	s->weight = s->weights[0];
	t->samples += samples;
	a->info.samples += samples;
	return 0;
}

void aggregate_share_event_samples(struct aggregate *a, const double *per_sample, size_t nev)
{
	if (nev > a->ev_width) /* the rest are zero in every stack */
		nev = a->ev_width;
	for (size_t i = 0; i < a->stacks.n; i++) {
		struct agg_stack *s = &a->stacks.v[i];
		double r[PMUTOP_MAX_EVENTS], sum = 0, frac[PMUTOP_MAX_EVENTS];
		uint64_t given = 0;
		size_t k, nz = 0;
		bool known = true;

		for (k = 0; k < nev; k++) {
			r[k] = 0;
			if (!s->weights[k])
				continue;
			nz++;
			if (per_sample[k] <= 0)
				known = false;
			else
				r[k] = (double)s->weights[k] / per_sample[k];
			sum += r[k];
		}
		if (nz < 2 || !known || sum <= 0)
			continue;
		/* Largest remainder, so the events' counts add up to the stack's. */
		for (k = 0; k < nev; k++) {
			double x = (double)s->samples * r[k] / sum;

			s->ev_samples[k] = (uint64_t)x;
			frac[k] = s->weights[k] ? x - (double)s->ev_samples[k] : -1;
			given += s->ev_samples[k];
		}
		while (given < s->samples) {
			size_t best = 0;

			for (k = 1; k < nev; k++)
				if (frac[k] > frac[best])
					best = k;
			if (frac[best] < 0)
				break;
			s->ev_samples[best]++;
			frac[best] = -1;
			given++;
		}
	}
}

int aggregate_set_event_k(struct aggregate *a, size_t k, const char *event, const char *unit,
			  uint64_t period)
{
	const char *e = str_intern(a, event ? event : "");
	const char *u = str_intern(a, unit ? unit : "");

	if (k >= PMUTOP_MAX_EVENTS)
		return -EINVAL;
	if (!e || !u)
		return -ENOMEM;
	a->info.events[k].name = e;
	a->info.events[k].unit = u;
	a->info.events[k].period = period;
	a->info.events[k].scale = 1.0;
	if (k == 0) {
		a->info.event = e;
		a->info.event_unit = u;
	} else if (a->info.nevents < k + 1) {
		/* Every stack holds the run's events: readers go up to nevents. */
		if (widen(a, k + 1))
			return -ENOMEM;
		a->info.nevents = k + 1;
	}
	return 0;
}
