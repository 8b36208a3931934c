/*
 * speedscope.c - the aggregate as speedscope's JSON (see speedscope.h).
 *
 * Drawn from the folded lines (folded.h) like the SVG: each line is one
 * sample of the "sampled" profile, weighted by its event count, so
 * speedscope's "Left Heavy" and "Sandwich" views show what pmutop's other
 * outputs show. The lines are sorted by stack, not by time (the aggregate
 * keeps no time order), which speedscope's "Time Order" view then shows
 * as is. Names go through json_write_string: any byte a target names a
 * function with stays valid JSON.
 */
#include "pmutop/profile/speedscope.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/atomic_write.h"
#include "pmutop/profile/folded.h"
#include "pmutop/profile/json.h"
#include "pmutop/profile/strtab.h"

int speedscope_write_stream(const struct aggregate *a, const char *name, FILE *out)
{
	const struct agg_info *info = aggregate_info_const(a);
	bool ns = info->event_unit && !strcmp(info->event_unit, "nanoseconds");
	struct folded_line *v = NULL;
	struct strtab frames = { 0 };
	uint32_t **idx = NULL;
	uint32_t *nidx = NULL;
	uint64_t total = 0;
	size_t nv = 0;
	int rc;

	if ((rc = folded_lines(a, 0, &v, &nv)))
		return rc;
	idx = calloc(nv ? nv : 1, sizeof(*idx));
	nidx = calloc(nv ? nv : 1, sizeof(*nidx));
	if (!idx || !nidx) {
		rc = -ENOMEM;
		goto out;
	}
	/* Split each line at ';' in place and number its frames. */
	for (size_t i = 0; i < nv; i++) {
		uint32_t n = 1, k = 0;

		for (const char *c = v[i].text; *c; c++)
			n += *c == ';';
		idx[i] = malloc(n * sizeof(**idx));
		if (!idx[i]) {
			rc = -ENOMEM;
			goto out;
		}
		for (char *s = v[i].text; s;) {
			char *semi = strchr(s, ';');
			int64_t f;

			if (semi)
				*semi = '\0';
			if ((f = strtab_add(&frames, s)) < 0) {
				rc = -ENOMEM;
				goto out;
			}
			idx[i][k++] = (uint32_t)f;
			s = semi ? semi + 1 : NULL;
		}
		nidx[i] = k;
		total += v[i].weight;
	}
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
	      "\"shared\":{\"frames\":[", out);
	for (size_t f = 0; f < frames.n; f++) {
		fputs(f ? ",\n{\"name\":" : "\n{\"name\":", out);
		json_write_string(out, frames.v[f]);
		fputc('}', out);
	}
	fputs("]},\n\"profiles\":[{\"type\":\"sampled\",\"name\":", out);
	json_write_string(out, info->event ? info->event : "samples");
	fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\n\"samples\":[",
		ns ? "nanoseconds" : "none", total);
	for (size_t i = 0; i < nv; i++) {
		fputs(i ? ",\n[" : "\n[", out);
		for (uint32_t k = 0; k < nidx[i]; k++)
			fprintf(out, k ? ",%" PRIu32 : "%" PRIu32, idx[i][k]);
		fputc(']', out);
	}
	fputs("],\n\"weights\":[", out);
	for (size_t i = 0; i < nv; i++)
		fprintf(out, i ? ",%" PRIu64 : "%" PRIu64, v[i].weight);
	fputs("]}],\n\"name\":", out);
	json_write_string(out, name ? name : "pmutop");
	fputs(",\"activeProfileIndex\":0,\"exporter\":\"pmutop " PMUTOP_VERSION "\"}\n", out);
	if (fflush(out) != 0 || ferror(out))
		rc = -EIO;
out:
	for (size_t i = 0; idx && i < nv; i++)
		free(idx[i]);
	free(idx);
	free(nidx);
	strtab_free(&frames);
	folded_lines_free(v, nv);
	return rc;
}

struct speedscope_fill {
	const struct aggregate *a;
	const char *name;
};

static int speedscope_fill(FILE *out, void *arg)
{
	const struct speedscope_fill *f = arg;

	return speedscope_write_stream(f->a, f->name, out);
}

int speedscope_write(const struct aggregate *a, const char *name, const char *path, char *err,
		     size_t errlen)
{
	struct speedscope_fill f = { a, name };

	return atomic_write_text(path, "speedscope profile", speedscope_fill, &f, err, errlen);
}
