/*
 * flamegraph.c - the aggregate as a self-contained HTML flame graph (see
 * flamegraph.h).
 *
 * The stacks are merged into one call tree here, not in the browser: a
 * profile's 100,000 distinct stacks share most of their frames, so the tree
 * is far smaller than the stacks and the page only has to lay it out. A
 * frame is a function name plus its kind (user, kernel, JIT, unknown,
 * inlined), so the same name in two modules merges as flamegraph.pl and
 * pprof merge it, and a base profile (--diff-base) with its own ids maps
 * onto the same frames. Children are sorted by name (flamegraph.pl's
 * order), so two pages of one program line up.
 *
 * The JSON sits in <script type="application/json">; the page reads it with
 * JSON.parse and draws names with canvas fillText / textContent only.
 */
#include "pmutop/profile/flamegraph.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/atomic_write.h"
#include "pmutop/profile/json.h"
#include "pmutop/profile/strtab.h"
#include "pmutop/profile/u64map.h"
#include "pmutop/unwind/unwind.h"

/* The page's code, embedded by flame_assets.S from ui/web/ (NUL-terminated). */
extern const char pmutop_flame_html[], pmutop_flame_js[], pmutop_flame_css[];

/* Frame kinds; the page's colours and legend use the same numbers. */
enum {
	KIND_USER = 0,
	KIND_KERNEL,
	KIND_JIT,
	KIND_UNKNOWN,
	KIND_INLINE,
	KIND_ROOT,
};

/* ---- the call tree ---------------------------------------------------- */

struct fframe {
	uint32_t name, module, file;  /* string indices */
	int kind;
};

struct fnode {
	uint32_t frame;
	uint32_t first_child, next_sibling; /* node indices; 0 = none (0 is the root) */
	uint32_t depth;
	int64_t line;                 /* first line seen; -1: several */
	bool keep;
};

struct tree {
	struct strtab strs;
	struct u64map frame_of;       /* (name << 3 | kind) → frame */
	struct u64map child_of;       /* (parent << 32 | frame) → node */
	struct fframe *frames;
	uint32_t nframes, cframes;
	struct fnode *nodes;
	uint32_t nnodes, cnodes;
	uint64_t *vals;               /* nnodes x nval: weights[nev], samples[nev], base */
	size_t nev, nval;
	bool diff;
};

/* One frame of a location, outermost first. */
struct chain_ent {
	uint32_t frame;
	int64_t line;
};

/* Each location of one aggregate as its frames (outermost first). */
struct chains {
	uint32_t *off;                /* per location id - 1: start in ents; off[n] = end */
	struct chain_ent *ents;
};

static bool is_hex_tail(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))
			return false;
	return true;
}

/* Names pmutop and pprof give code without a symbol: "0x1234", "lib.so+0x1234". */
static bool unnamed(const char *name)
{
	const char *p;

	if (!name || !*name)
		return true;
	if (!strncmp(name, "0x", 2) && is_hex_tail(name + 2))
		return true;
	p = strstr(name, "+0x");
	return p && is_hex_tail(p + 3) && !strchr(p + 3, '+');
}

static int location_kind(const struct agg_location *l, const struct agg_mapping *m,
			 const char *name, bool inlined)
{
	const char *f = m ? m->file : "";

	if (l->address >= 0xffff800000000000ULL || !strncmp(f, "[kernel", 7) ||
	    !strncmp(f, "[vmlinux", 8) || !strncmp(name, "[k] ", 4))
		return KIND_KERNEL;
	if (unnamed(name))
		return KIND_UNKNOWN;
	/* Named code in memory no file backs: a JIT's perf map named it. */
	if (m && (!*f || !strncmp(f, "//anon", 6) || !strncmp(f, "[anon", 5) ||
	    !strncmp(f, "memfd:", 6) || !strncmp(f, "/memfd:", 7) || strstr(f, "/perf-")))
		return KIND_JIT;
	return inlined ? KIND_INLINE : KIND_USER;
}

static int64_t frame_get(struct tree *t, const char *name, const char *module, const char *file,
			 int kind)
{
	int64_t ni = strtab_add(&t->strs, name), mi, fi, slot;
	bool found;

	if (ni < 0)
		return -ENOMEM;
	slot = u64map_slot(&t->frame_of, (uint64_t)ni << 3 | (uint64_t)kind, &found);
	if (slot < 0)
		return -ENOMEM;
	if (found)
		return t->frame_of.vals[slot] - 1;
	mi = strtab_add(&t->strs, module);
	fi = strtab_add(&t->strs, file);
	if (mi < 0 || fi < 0)
		return -ENOMEM;
	if (t->nframes == t->cframes) {
		uint32_t nc = t->cframes ? t->cframes * 2 : 1024;
		struct fframe *nf = realloc(t->frames, nc * sizeof(*nf));

		if (!nf)
			return -ENOMEM;
		t->frames = nf;
		t->cframes = nc;
	}
	t->frames[t->nframes] = (struct fframe){ (uint32_t)ni, (uint32_t)mi, (uint32_t)fi, kind };
	u64map_put(&t->frame_of, slot, (uint64_t)ni << 3 | (uint64_t)kind, t->nframes++);
	return t->nframes - 1;
}

static void chains_free(struct chains *c)
{
	free(c->off);
	free(c->ents);
}

/* The frames of every location of a (strings point into a: it must outlive t). */
static int chains_build(struct tree *t, const struct aggregate *a, struct chains *c)
{
	size_t nloc, nfun, nmap, total = 0;
	const struct agg_location *locs = aggregate_locations(a, &nloc);
	const struct agg_function *funs = aggregate_functions(a, &nfun);
	const struct agg_mapping *maps = aggregate_mappings(a, &nmap);

	for (size_t i = 0; i < nloc; i++)
		total += locs[i].nlines ? locs[i].nlines : 1;
	c->off = malloc((nloc + 1) * sizeof(*c->off));
	c->ents = malloc((total ? total : 1) * sizeof(*c->ents));
	if (!c->off || !c->ents)
		return -ENOMEM;
	total = 0;
	for (size_t i = 0; i < nloc; i++) {
		const struct agg_location *l = &locs[i];
		const struct agg_mapping *m = l->mapping_id && l->mapping_id <= nmap
					      ? &maps[l->mapping_id - 1] : NULL;
		uint32_t n = l->nlines ? l->nlines : 1;

		c->off[i] = (uint32_t)total;
		for (uint32_t k = 0; k < n; k++) {
			/* lines[] is innermost first; the chain is outermost first. */
			uint32_t fid = l->nlines ? l->lines[n - 1 - k].function_id : l->function_id;
			int64_t line = l->nlines ? l->lines[n - 1 - k].line : 0;
			const struct agg_function *f = fid && fid <= nfun ? &funs[fid - 1] : NULL;
			const char *name = f && f->name && *f->name ? f->name : "[unknown]";
			int kind = location_kind(l, m, name, k > 0);
			int64_t fr = frame_get(t, name, m ? m->file : "", f ? f->file : "", kind);

			if (fr < 0)
				return -ENOMEM;
			c->ents[total++] = (struct chain_ent){ (uint32_t)fr, line };
		}
	}
	c->off[nloc] = (uint32_t)total;
	return 0;
}

static int64_t node_child(struct tree *t, uint32_t parent, uint32_t frame, int64_t line)
{
	uint64_t key = (uint64_t)parent << 32 | frame;
	int64_t slot;
	bool found;
	struct fnode *p;
	uint32_t id;

	slot = u64map_slot(&t->child_of, key, &found);
	if (slot < 0)
		return -ENOMEM;
	if (found) {
		struct fnode *n = &t->nodes[t->child_of.vals[slot] - 1];

		if (n->line != line)
			n->line = -1;
		return t->child_of.vals[slot] - 1;
	}
	if (t->nnodes == t->cnodes) {
		uint32_t nc = t->cnodes * 2;
		struct fnode *nn = realloc(t->nodes, nc * sizeof(*nn));
		uint64_t *nv;

		if (!nn)
			return -ENOMEM;
		t->nodes = nn;
		nv = realloc(t->vals, (size_t)nc * t->nval * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		t->vals = nv;
		t->cnodes = nc;
	}
	id = t->nnodes++;
	p = &t->nodes[parent];
	t->nodes[id] = (struct fnode){ .frame = frame, .next_sibling = p->first_child,
				       .depth = p->depth + 1, .line = line };
	p->first_child = id;
	memset(&t->vals[(size_t)id * t->nval], 0, t->nval * sizeof(uint64_t));
	u64map_put(&t->child_of, slot, key, id);
	return id;
}

static void add_values(struct tree *t, uint32_t node, const struct agg_stack *s, bool base,
		       size_t base_ev)
{
	uint64_t *v = &t->vals[(size_t)node * t->nval];

	if (base) {
		v[2 * t->nev] += s->weights[base_ev];
		return;
	}
	for (size_t k = 0; k < t->nev; k++) {
		v[k] += s->weights[k];
		v[t->nev + k] += s->ev_samples[k];
	}
}

/*
 * Add every stack of a: its weights and samples per event (base = false),
 * or event base_ev's weight into the base column (base = true).
 */
static int tree_add(struct tree *t, const struct aggregate *a, bool base, size_t base_ev)
{
	struct chains c = { 0 };
	struct agg_path path = { 0 };
	const struct agg_stack *st;
	const uint32_t *locs;
	size_t nst, nloc;
	int rc;

	if ((rc = chains_build(t, a, &c)))
		goto out;
	st = aggregate_stacks(a, &nst);
	aggregate_locations(a, &nloc);
	for (size_t i = 0; i < nst; i++) {
		const struct agg_stack *s = &st[i];
		uint32_t cur = 0;

		if (!(locs = aggregate_stack_path(a, s, &path))) {
			rc = -ENOMEM;
			goto out;
		}
		add_values(t, cur, s, base, base_ev);
		for (uint32_t j = s->nlocs; j-- > 0;) {
			uint32_t lid = locs[j];

			if (!lid || lid > nloc)
				continue;
			for (uint32_t e = c.off[lid - 1]; e < c.off[lid]; e++) {
				int64_t n = node_child(t, cur, c.ents[e].frame, c.ents[e].line);

				if (n < 0) {
					rc = -ENOMEM;
					goto out;
				}
				cur = (uint32_t)n;
				add_values(t, cur, s, base, base_ev);
			}
		}
	}
out:
	chains_free(&c);
	agg_path_free(&path);
	return rc;
}

static void tree_free(struct tree *t)
{
	strtab_free(&t->strs);
	u64map_free(&t->frame_of);
	u64map_free(&t->child_of);
	free(t->frames);
	free(t->nodes);
	free(t->vals);
}

static int tree_init(struct tree *t, size_t nev, bool diff)
{
	int64_t root;

	memset(t, 0, sizeof(*t));
	t->nev = nev;
	t->diff = diff;
	t->nval = 2 * nev + (diff ? 1 : 0);
	t->cnodes = 4096;
	t->nodes = malloc(t->cnodes * sizeof(*t->nodes));
	t->vals = calloc((size_t)t->cnodes * t->nval, sizeof(*t->vals));
	root = frame_get(t, "all", "", "", KIND_ROOT);
	if (!t->nodes || !t->vals || root < 0)
		return -ENOMEM;
	t->nodes[0] = (struct fnode){ .frame = (uint32_t)root };
	t->nnodes = 1;
	return 0;
}

/* ---- trimming and order ------------------------------------------------ */

static int cmp_double_desc(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? 1 : a > b ? -1 : 0;
}

/* A node's largest share of any event's total (the base's too). */
static double node_share(const struct tree *t, uint32_t i)
{
	const uint64_t *v = &t->vals[(size_t)i * t->nval], *root = t->vals;
	double best = 0;

	for (size_t k = 0; k < t->nev; k++)
		if (root[k] && (double)v[k] / (double)root[k] > best)
			best = (double)v[k] / (double)root[k];
	return best;
}

/*
 * Mark the nodes to write: every node with a value in the new profile (a
 * frame seen only in the base has no width), and when more than max remain,
 * those whose largest share reaches the max-th largest. A child never has
 * more than its parent, so what is kept stays a tree. *thr gets the cut.
 */
static int tree_mark(struct tree *t, size_t max, size_t *trimmed, double *thr)
{
	size_t live = 0, k = 0;
	double *shares;

	*trimmed = 0;
	*thr = 0;
	for (uint32_t i = 0; i < t->nnodes; i++) {
		const uint64_t *v = &t->vals[(size_t)i * t->nval];
		bool any = i == 0;

		for (size_t e = 0; e < t->nev && !any; e++)
			any = v[e] || v[t->nev + e];
		t->nodes[i].keep = any;
		live += any;
	}
	if (live <= max)
		return 0;
	shares = malloc(live * sizeof(*shares));
	if (!shares)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->nnodes; i++)
		if (t->nodes[i].keep)
			shares[k++] = node_share(t, i);
	qsort(shares, k, sizeof(*shares), cmp_double_desc);
	*thr = shares[max - 1];
	/* Ties at the cut could overshoot max: then cut strictly above it. */
	{
		size_t at_or_above = max;

		while (at_or_above < k && shares[at_or_above] >= *thr)
			at_or_above++;
		for (uint32_t i = 1; i < t->nnodes; i++) {
			double s;

			if (!t->nodes[i].keep)
				continue;
			s = node_share(t, i);
			if (at_or_above > max ? s <= *thr : s < *thr) {
				t->nodes[i].keep = false;
				(*trimmed)++;
			}
		}
	}
	free(shares);
	return 0;
}

static int cmp_child(const void *pa, const void *pb, void *ctx)
{
	const struct tree *t = ctx;
	const struct fframe *a = &t->frames[t->nodes[*(const uint32_t *)pa].frame];
	const struct fframe *b = &t->frames[t->nodes[*(const uint32_t *)pb].frame];
	int c = strcmp(t->strs.v[a->name], t->strs.v[b->name]);

	return c ? c : a->kind - b->kind;
}

/* The kept nodes in pre-order, children sorted by name: *order (malloc'd), *n. */
static int tree_order(struct tree *t, uint32_t **order, size_t *n)
{
	uint32_t *out = malloc(t->nnodes * sizeof(*out));
	uint32_t *stack = malloc(t->nnodes * sizeof(*stack));
	uint32_t *kids = malloc(t->nnodes * sizeof(*kids));
	size_t sp = 0, no = 0;

	if (!out || !stack || !kids) {
		free(out);
		free(stack);
		free(kids);
		return -ENOMEM;
	}
	stack[sp++] = 0;
	while (sp) {
		uint32_t id = stack[--sp], nk = 0;

		out[no++] = id;
		for (uint32_t c = t->nodes[id].first_child; c; c = t->nodes[c].next_sibling)
			if (t->nodes[c].keep)
				kids[nk++] = c;
		qsort_r(kids, nk, sizeof(*kids), cmp_child, t);
		while (nk)
			stack[sp++] = kids[--nk]; /* first child on top */
	}
	free(stack);
	free(kids);
	*order = out;
	*n = no;
	return 0;
}

/* ---- JSON --------------------------------------------------------------- */

static void json_u64_array(FILE *f, const char *key, const struct tree *t, const uint32_t *order,
			   size_t n, size_t col)
{
	fprintf(f, "%s[", key);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", t->vals[(size_t)order[i] * t->nval + col]);
	fputc(']', f);
}

static bool any_line(const struct tree *t, const uint32_t *order, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (t->nodes[order[i]].line)
			return true;
	return false;
}

/* Base weight of the frames that only the base has (their topmost nodes). */
static uint64_t base_only(const struct tree *t)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < t->nnodes; i++) {
		const struct fnode *n = &t->nodes[i];

		if (!n->keep)
			continue;
		for (uint32_t c = n->first_child; c; c = t->nodes[c].next_sibling) {
			const uint64_t *v = &t->vals[(size_t)c * t->nval];
			bool any = false;

			for (size_t e = 0; e < t->nev && !any; e++)
				any = v[e] || v[t->nev + e];
			if (!any)
				sum += v[2 * t->nev];
		}
	}
	return sum;
}

static void write_events(FILE *f, const struct agg_info *info, size_t nev, const uint64_t *root)
{
	fputs("\"events\":[", f);
	for (size_t k = 0; k < nev; k++) {
		const char *name = info->nevents ? info->events[k].name : info->event;
		const char *unit = info->nevents ? info->events[k].unit : info->event_unit;
		uint64_t period = info->nevents ? info->events[k].period : info->period;
		double scale = info->nevents ? info->events[k].scale : 1.0;

		fprintf(f, "%s{\"name\":", k ? "," : "");
		json_write_string_html(f, name ? name : "samples");
		fputs(",\"unit\":", f);
		json_write_string_html(f, unit ? unit : "count");
		fprintf(f, ",\"period\":%" PRIu64 ",\"scale\":%.6g,\"total\":%" PRIu64
			",\"samples\":%" PRIu64 "}", period, scale > 0 ? scale : 1.0, root[k],
			root[nev + k]);
	}
	fputs("],", f);
}

static void write_header(FILE *f, const struct aggregate *a, const struct flame_opts *fo,
			 size_t nev, const uint64_t *root)
{
	const struct agg_info *info = aggregate_info_const(a);
	size_t nthreads;

	aggregate_threads(a, &nthreads);
	fputs("{\"version\":1,\"title\":", f);
	json_write_string_html(f, fo && fo->title ? fo->title : "");
	fputc(',', f);
	write_events(f, info, nev, root);
	fprintf(f, "\"start_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64 ",\"samples\":%" PRIu64
		",\"lost\":%" PRIu64 ",\"throttled\":%" PRIu64 ",\"threads\":%zu,\"unwind\":[",
		info->start_ns, info->duration_ns, info->samples, info->lost, info->throttled,
		nthreads);
	for (int i = 0, first = 1; i < UNWIND_NOUTCOMES; i++) {
		if (!info->outcomes[i])
			continue;
		fprintf(f, "%s[", first ? "" : ",");
		json_write_string_html(f, unwind_outcome_name(i));
		fprintf(f, ",%" PRIu64 "]", info->outcomes[i]);
		first = 0;
	}
	/* Every way the data was reduced before it reached the page (the page names each). */
	fprintf(f, "],\"reduced\":{\"max_depth\":%" PRIu64 ",\"pruned\":%" PRIu64
		",\"pruned_samples\":%" PRIu64 ",\"threads_folded\":%" PRIu64
		",\"leaf_dropped\":%" PRIu64 ",\"max_memory\":%" PRIu64 "},",
		info->outcomes[UNWIND_MAX_DEPTH], info->pruned, info->pruned_samples,
		info->threads_folded, info->leaf_dropped, info->max_memory);
}

/* The event of the base to compare with events[0]: the same name, else its first. */
static size_t base_event(const struct aggregate *a, const struct aggregate *base)
{
	const struct agg_info *ia = aggregate_info_const(a), *ib = aggregate_info_const(base);
	const char *want = ia->nevents ? ia->events[0].name : ia->event;

	for (size_t k = 0; k < ib->nevents; k++)
		if (want && ib->events[k].name && !strcmp(want, ib->events[k].name))
			return k;
	return 0;
}

static int write_data(FILE *f, const struct aggregate *a, const struct flame_opts *fo,
		      char *err, size_t errlen)
{
	const struct agg_info *info = aggregate_info_const(a);
	size_t nev = info->nevents ? info->nevents : 1, max, trimmed, n, bev = 0;
	bool diff = fo && fo->base;
	uint32_t *order = NULL;
	struct tree t;
	double thr;
	int rc;

	max = fo && fo->max_nodes ? fo->max_nodes : FLAME_MAX_NODES;
	if (max < 2)
		max = 2;
	if ((rc = tree_init(&t, nev, diff)) || (rc = tree_add(&t, a, false, 0)))
		goto out;
	if (diff) {
		bev = base_event(a, fo->base);
		if ((rc = tree_add(&t, fo->base, true, bev)))
			goto out;
	}
	if ((rc = tree_mark(&t, max, &trimmed, &thr)) || (rc = tree_order(&t, &order, &n)))
		goto out;

	write_header(f, a, fo, nev, t.vals);
	fputs("\"strings\":[", f);
	for (uint32_t i = 0; i < t.strs.n; i++) {
		if (i)
			fputc(',', f);
		json_write_string_html(f, t.strs.v[i]);
	}
	fputs("],\"frames\":[", f);
	for (uint32_t i = 0; i < t.nframes; i++)
		fprintf(f, "%s%u,%u,%u,%d", i ? "," : "", t.frames[i].name, t.frames[i].module,
			t.frames[i].file, t.frames[i].kind);
	fputs("],\"nodes\":{\"frame\":[", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%u", i ? "," : "", t.nodes[order[i]].frame);
	fputs("],\"depth\":[", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%u", i ? "," : "", t.nodes[order[i]].depth);
	fputc(']', f);
	if (any_line(&t, order, n)) { /* left out when no frame has a line: smaller pages */
		fputs(",\"line\":[", f);
		for (size_t i = 0; i < n; i++)
			fprintf(f, "%s%" PRId64, i ? "," : "", t.nodes[order[i]].line);
		fputc(']', f);
	}
	fputs(",\"value\":[", f);
	for (size_t k = 0; k < nev; k++)
		json_u64_array(f, k ? "," : "", &t, order, n, k);
	fputs("],\"samples\":[", f);
	for (size_t k = 0; k < nev; k++)
		json_u64_array(f, k ? "," : "", &t, order, n, nev + k);
	fputc(']', f);
	if (diff)
		json_u64_array(f, ",\"base\":", &t, order, n, 2 * nev);
	fputs("},\"diff\":", f);
	if (diff) {
		const struct agg_info *bi = aggregate_info_const(fo->base);

		fputs("{\"file\":", f);
		json_write_string_html(f, fo->base_name ? fo->base_name : "");
		fputs(",\"event\":", f);
		json_write_string_html(f, bi->nevents ? bi->events[bev].name : bi->event);
		fprintf(f, ",\"total\":%" PRIu64 ",\"base_only\":%" PRIu64 "}", t.vals[2 * nev],
			base_only(&t));
	} else {
		fputs("null", f);
	}
	fprintf(f, ",\"trimmed\":{\"nodes\":%zu,\"below\":%.6g,\"max\":%zu}", trimmed, thr, max);
	fputs(",\"live\":", f);
	if (fo && fo->live_seconds > 0) {
		fprintf(f, "{\"seconds\":%.6g,\"event\":", fo->live_seconds);
		json_write_string_html(f, fo->live_event ? fo->live_event : "");
		fputc('}', f);
	} else {
		fputs("null", f);
	}
	fputs("}", f);
out:
	if (rc)
		snprintf(err, errlen, "cannot build the flame graph: %s", strerror(-rc));
	free(order);
	tree_free(&t);
	return rc;
}

/*
 * The template's placeholders: the stylesheet link, the data element and
 * the script tag a developer's copy of ui/web/flame.html loads directly.
 */
static const char PH_CSS[] = "<link rel=\"stylesheet\" href=\"flame.css\">";
static const char PH_DATA[] = "<script type=\"application/json\" id=\"pmutop-data\"></script>";
static const char PH_JS[] = "<script src=\"flame.js\"></script>";

int flamegraph_encode(const struct aggregate *a, const struct flame_opts *fo, bool page,
		      char **out, size_t *len, char *err, size_t errlen)
{
	const char *html = pmutop_flame_html;
	const char *css = strstr(html, PH_CSS), *data = strstr(html, PH_DATA);
	const char *js = strstr(html, PH_JS);
	char *buf = NULL;
	size_t blen = 0;
	FILE *f;
	int rc = 0;

	*out = NULL;
	*len = 0;
	if (page && (!css || !data || !js || !(css < data && data < js))) {
		snprintf(err, errlen, "the embedded ui/web/flame.html lacks its placeholders "
			 "(stylesheet link, data element, script tag, in that order)");
		return -EINVAL;
	}
	f = open_memstream(&buf, &blen);
	if (!f) {
		snprintf(err, errlen, "cannot build the flame graph: %s", strerror(errno));
		return -ENOMEM;
	}
	if (page) {
		fwrite(html, 1, (size_t)(css - html), f);
		fprintf(f, "<style>\n%s</style>", pmutop_flame_css);
		fwrite(css + strlen(PH_CSS), 1, (size_t)(data - css) - strlen(PH_CSS), f);
		fputs("<script type=\"application/json\" id=\"pmutop-data\">", f);
	}
	rc = write_data(f, a, fo, err, errlen);
	if (page && !rc) {
		fputs("</script>", f);
		fwrite(data + strlen(PH_DATA), 1, (size_t)(js - data) - strlen(PH_DATA), f);
		fprintf(f, "<script>\n%s</script>", pmutop_flame_js);
		fputs(js + strlen(PH_JS), f);
	}
	if (fclose(f) && !rc) {
		snprintf(err, errlen, "cannot build the flame graph: out of memory");
		rc = -ENOMEM;
	}
	if (rc) {
		free(buf);
		return rc;
	}
	*out = buf;
	*len = blen;
	return 0;
}

int flamegraph_write(const struct aggregate *a, const struct flame_opts *fo, const char *path,
		     char *err, size_t errlen)
{
	char *buf;
	size_t len;
	int rc = flamegraph_encode(a, fo, true, &buf, &len, err, errlen);

	if (rc)
		return rc;
	rc = atomic_write_file(path, buf, len, "flame graph", err, errlen);
	free(buf);
	return rc;
}
