/*
 * folded.c - the aggregate as collapsed stacks (see folded.h).
 *
 * Each stack becomes one text line, root first; lines are then sorted so
 * that stacks folding to the same text (per-thread stacks when thread names
 * are left out) sit next to each other and are summed. The output is
 * deterministic: the same aggregate always gives the same bytes.
 *
 * The weight is the stack's event count for the run's first event
 * (agg_stack.weight), so a flame graph is drawn in events, like
 * `go tool pprof`'s default sample type.
 */
#include "pmutop/profile/folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/atomic_write.h"

int folded_append_frame(char *buf, size_t cap, size_t *len, const char *name)
{
	size_t l = *len, i;

	if (!name || !*name)
		name = "[unknown]";
	if (l && l + 1 >= cap)
		return -ENOSPC;
	if (l)
		buf[l++] = ';';
	for (i = 0; name[i]; i++) {
		unsigned char c = (unsigned char)name[i];

		if (l + 1 >= cap) {
			buf[*len] = '\0'; /* as it was */
			return -ENOSPC;
		}
		buf[l++] = c == ';' ? ':' : (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	buf[l] = '\0';
	*len = l;
	return 0;
}

static int fline_cmp(const void *x, const void *y)
{
	return strcmp(((const struct folded_line *)x)->text, ((const struct folded_line *)y)->text);
}

static const char *func_name(const struct agg_function *fn, size_t nf, uint32_t id)
{
	return id && id <= nf ? fn[id - 1].name : NULL;
}

/* Append the frames of location id (outermost inlined caller first). */
static int append_location(char *buf, size_t cap, size_t *len,
			   const struct agg_location *loc, size_t nl, uint32_t id,
			   const struct agg_function *fn, size_t nf)
{
	const struct agg_location *l;

	if (!id || id > nl)
		return folded_append_frame(buf, cap, len, NULL);
	l = &loc[id - 1];
	if (!l->nlines || !l->lines)
		return folded_append_frame(buf, cap, len, func_name(fn, nf, l->function_id));
	for (uint32_t k = l->nlines; k-- > 0;) {
		int rc = folded_append_frame(buf, cap, len, func_name(fn, nf, l->lines[k].function_id));

		if (rc)
			return rc;
	}
	return 0;
}

int folded_lines(const struct aggregate *a, unsigned roots, struct folded_line **out,
		       size_t *nout)
{
	size_t ns, nl, nf, i, n = 0, cap = 4096;
	const struct agg_stack *st = aggregate_stacks(a, &ns);
	const struct agg_location *loc = aggregate_locations(a, &nl);
	const struct agg_function *fn = aggregate_functions(a, &nf);
	struct folded_line *v = calloc(ns ? ns : 1, sizeof(*v));
	char *buf = malloc(cap);
	struct agg_path path = { 0 };
	const uint32_t *locs;
	int rc = 0;

	if (!v || !buf) {
		rc = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < ns; i++) {
		size_t len = 0;

		if (!st[i].weight)
			continue;
		locs = aggregate_stack_path(a, &st[i], &path);
		if (!locs) {
			rc = -ENOMEM;
			goto fail;
		}
		buf[0] = '\0';
		for (;;) {
			len = 0;
			buf[0] = '\0';
			rc = 0;
			if (roots & FOLDED_ROOT_PROCESS) {
				const struct agg_thread *t = aggregate_thread(a, st[i].tid);
				char pname[48];

				if (t && t->pid)
					snprintf(pname, sizeof(pname), "%s-%" PRIu32,
						 t->comm[0] ? t->comm : "?", t->pid);
				else
					snprintf(pname, sizeof(pname), "[unknown process]");
				rc = folded_append_frame(buf, cap, &len, pname);
			}
			if (!rc && (roots & FOLDED_ROOT_THREAD)) {
				const struct agg_thread *t = aggregate_thread(a, st[i].tid);
				char tname[48];

				/* By name, so a pool of same-named threads folds together. */
				if (t && t->name[0])
					snprintf(tname, sizeof(tname), "%s", t->name);
				else
					snprintf(tname, sizeof(tname), "tid-%" PRIu32, st[i].tid);
				rc = folded_append_frame(buf, cap, &len, tname);
			}
			/* Root first: locations are stored leaf first. */
			for (uint32_t k = st[i].nlocs; !rc && k-- > 0;)
				rc = append_location(buf, cap, &len, loc, nl, locs[k], fn, nf);
			if (!rc && st[i].nlocs == 0)
				rc = folded_append_frame(buf, cap, &len, "[no stack]");
			if (rc != -ENOSPC)
				break;
			{
				char *nb = realloc(buf, cap * 2);

				if (!nb) {
					rc = -ENOMEM;
					goto fail;
				}
				buf = nb;
				cap *= 2;
			}
		}
		v[n].text = strdup(buf);
		if (!v[n].text) {
			rc = -ENOMEM;
			goto fail;
		}
		v[n++].weight = st[i].weight;
	}
	qsort(v, n, sizeof(*v), fline_cmp);
	/* Merge equal texts. */
	if (n) {
		size_t w = 0;

		for (i = 1; i < n; i++) {
			if (strcmp(v[w].text, v[i].text) == 0) {
				v[w].weight += v[i].weight;
				free(v[i].text);
			} else {
				v[++w] = v[i];
			}
		}
		n = w + 1;
	}
	free(buf);
	agg_path_free(&path);
	*out = v;
	*nout = n;
	return 0;
fail:
	while (n--)
		free(v[n].text);
	free(v);
	free(buf);
	agg_path_free(&path);
	return rc;
}

void folded_lines_free(struct folded_line *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].text);
	free(v);
}

int folded_write_stream(const struct aggregate *a, unsigned roots, FILE *out)
{
	struct folded_line *v;
	size_t n, i;
	int rc = folded_lines(a, roots, &v, &n);

	if (rc)
		return rc;
	for (i = 0; i < n; i++)
		if (fprintf(out, "%s %" PRIu64 "\n", v[i].text, v[i].weight) < 0)
			break;
	folded_lines_free(v, n);
	if (i < n || fflush(out) != 0 || ferror(out))
		return -EIO;
	return 0;
}

struct folded_fill {
	const struct aggregate *a;
	unsigned roots;
};

static int folded_fill(FILE *out, void *arg)
{
	const struct folded_fill *f = arg;

	return folded_write_stream(f->a, f->roots, out);
}

int folded_write(const struct aggregate *a, unsigned roots, const char *path,
		 char *err, size_t errlen)
{
	struct folded_fill f = { a, roots };

	return atomic_write_text(path, "folded stacks", folded_fill, &f, err, errlen);
}
