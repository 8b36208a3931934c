/*
 * svg.c - the aggregate as an SVG flame graph in flamegraph.pl's shape
 * (see svg.h).
 *
 * It draws from the folded lines (folded.h), so the SVG shows exactly the
 * stacks `--format folded | flamegraph.pl` would: the lines are merged into
 * a call tree (children keyed by parent and name), children laid out by
 * name as flamegraph.pl does, and each node wider than MIN_WIDTH pixels
 * becomes a <g> of <title>, <rect> and <text>. The script at the end is
 * this file's own: zoom by rewriting the x/width of every frame from its
 * original layout (kept in data-x / data-w), search by a regex over the
 * names with the matched share computed on merged intervals (a match
 * nested in another is counted once).
 */
#include "pmutop/profile/svg.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/atomic_write.h"
#include "pmutop/profile/folded.h"
#include "pmutop/profile/strtab.h"
#include "pmutop/profile/u64map.h"
#include "pmutop/unwind/unwind.h"

#define IMAGE_WIDTH 1200.0
#define FRAME_HEIGHT 16
#define FONT_SIZE 12
#define FONT_WIDTH 0.59   /* average glyph width / font size (flamegraph.pl's) */
#define XPAD 10.0
#define YPAD_TOP (FONT_SIZE * 5)
#define YPAD_BOTTOM (FONT_SIZE * 2 + 10)
#define MIN_WIDTH 0.1     /* pixels: narrower frames are not drawn */

struct snode {
	uint32_t name;        /* strtab index */
	uint32_t parent;
	uint32_t depth;
	uint32_t first;       /* first child in kids[] */
	uint32_t nkids;
	uint64_t value;       /* weight of the frame and everything above it */
	double x;             /* left edge, in weight units */
};

struct stree {
	struct strtab names;
	struct snode *n;
	uint32_t nn, cap;
	struct u64map child;  /* (parent << 32 | name) -> node */
	uint32_t *kids;       /* children of each node, by node: first..first+nkids */
	uint32_t maxdepth;
};

/* The child of parent named name (strtab index), made if new; -ENOMEM. */
static int64_t child_get(struct stree *t, uint32_t parent, uint32_t name)
{
	uint64_t key = (uint64_t)parent << 32 | name;
	int64_t slot;
	bool found;

	slot = u64map_slot(&t->child, key, &found);
	if (slot < 0)
		return -ENOMEM;
	if (found)
		return t->child.vals[slot] - 1;
	if (t->nn == t->cap) {
		uint32_t ncap = t->cap * 2;
		struct snode *nn = realloc(t->n, ncap * sizeof(*nn));

		if (!nn)
			return -ENOMEM;
		t->n = nn;
		t->cap = ncap;
	}
	t->n[t->nn] = (struct snode){ .name = name, .parent = parent,
				      .depth = t->n[parent].depth + 1 };
	if (t->n[t->nn].depth > t->maxdepth)
		t->maxdepth = t->n[t->nn].depth;
	u64map_put(&t->child, slot, key, t->nn);
	return t->nn++;
}

/* Lines root first → tree; the lines' texts are split in place at ';'. */
static int tree_build(struct stree *t, struct folded_line *v, size_t nv)
{
	int64_t root_name = strtab_add(&t->names, "all");

	t->cap = 1024;
	t->n = malloc(t->cap * sizeof(*t->n));
	if (!t->n || root_name < 0)
		return -ENOMEM;
	t->n[0] = (struct snode){ .name = (uint32_t)root_name };
	t->nn = 1;
	for (size_t i = 0; i < nv; i++) {
		uint32_t cur = 0;
		char *s = v[i].text;

		t->n[0].value += v[i].weight;
		while (s) {
			char *semi = strchr(s, ';');
			int64_t name, c;

			if (semi)
				*semi = '\0';
			name = strtab_add(&t->names, s);
			if (name < 0 || (c = child_get(t, cur, (uint32_t)name)) < 0)
				return -ENOMEM;
			cur = (uint32_t)c;
			t->n[cur].value += v[i].weight;
			s = semi ? semi + 1 : NULL;
		}
	}
	return 0;
}

static int kid_cmp(const void *x, const void *y, void *arg)
{
	const struct stree *t = arg;
	const struct snode *a = &t->n[*(const uint32_t *)x];
	const struct snode *b = &t->n[*(const uint32_t *)y];

	return strcmp(t->names.v[a->name], t->names.v[b->name]);
}

/* Children lists sorted by name, then every node's x (parents come first). */
static int tree_layout(struct stree *t)
{
	uint32_t *fill;

	t->kids = malloc((t->nn ? t->nn : 1) * sizeof(*t->kids));
	fill = calloc(t->nn, sizeof(*fill));
	if (!t->kids || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (uint32_t i = 1; i < t->nn; i++)
		t->n[t->n[i].parent].nkids++;
	for (uint32_t i = 0, off = 0; i < t->nn; i++) {
		t->n[i].first = off;
		off += t->n[i].nkids;
	}
	for (uint32_t i = 1; i < t->nn; i++) {
		struct snode *p = &t->n[t->n[i].parent];

		t->kids[p->first + fill[t->n[i].parent]++] = i;
	}
	free(fill);
	for (uint32_t i = 0; i < t->nn; i++) {
		struct snode *p = &t->n[i];
		double x = p->x;

		if (p->nkids > 1)
			qsort_r(t->kids + p->first, p->nkids, sizeof(*t->kids), kid_cmp, t);
		for (uint32_t k = 0; k < p->nkids; k++) {
			struct snode *c = &t->n[t->kids[p->first + k]];

			c->x = x;
			x += (double)c->value;
		}
	}
	return 0;
}

static void tree_free(struct stree *t)
{
	strtab_free(&t->names);
	free(t->n);
	u64map_free(&t->child);
	free(t->kids);
}

/* The length of the valid UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
	uint32_t cp;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
		return 0;
	return n;
}

/*
 * s as XML character data, at most maxchars characters ("..": cut); every
 * byte XML cannot hold (control bytes, invalid UTF-8) shows as U+FFFD.
 */
static void xml_text(FILE *out, const char *str, size_t maxchars)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t total = 0, keep, chars;

	for (const unsigned char *p = s; *p; total++) {
		size_t l = utf8_len(p);

		p += l ? l : 1;
	}
	keep = total <= maxchars ? total : maxchars >= 2 ? maxchars - 2 : 0;
	for (chars = 0; *s && chars < keep; chars++) {
		size_t l = utf8_len(s);

		if (l == 0 || (*s < 0x20 && *s != '\t') || *s == 0x7f) {
			fputs("\xef\xbf\xbd", out);
			s++;
		} else if (*s == '&') {
			fputs("&amp;", out), s++;
		} else if (*s == '<') {
			fputs("&lt;", out), s++;
		} else if (*s == '>') {
			fputs("&gt;", out), s++;
		} else if (*s == '"') {
			fputs("&quot;", out), s++;
		} else {
			fwrite(s, 1, l, out);
			s += l;
		}
	}
	if (keep < total)
		fputs("..", out);
}

/* What a frame's weight counts, for its tooltip: "ns" of a clock, else the event. */
static const char *weight_unit(const struct aggregate *a)
{
	const struct agg_info *info = aggregate_info_const(a);

	if (info->event_unit && !strcmp(info->event_unit, "nanoseconds"))
		return "ns";
	return info->event && *info->event ? info->event : "events";
}

/* flamegraph.pl's "hot" palette, by a hash of the name so colours are stable. */
static void frame_colour(const char *name, char *buf, size_t len)
{
	uint64_t h = 1469598103934665603ULL;

	if (!strcmp(name, "all") || !strncmp(name, "[unknown", 8) || strstr(name, "cold frames pruned") ||
	    !strcmp(name, "[no stack]")) {
		snprintf(buf, len, "rgb(200,200,200)");
		return;
	}
	for (const char *c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	h ^= h >> 33; /* FNV's low bits are weak: mix them */
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	snprintf(buf, len, "rgb(%u,%u,%u)", 205 + (unsigned)(h % 51), (unsigned)((h >> 8) % 231),
		 (unsigned)((h >> 16) % 56));
}

static const char svg_script[] =
"<script type=\"text/ecmascript\"><![CDATA[\n"
"'use strict';\n"
"var svg = document.documentElement, frames = [], details, matchedtxt, unzoombtn, searchbtn,\n"
"    XPAD = %g, WIDTH = %g, FS = %d, FW = %g, zoomed = null, term = null;\n"
"function nameOf(g) { var t = g.querySelector('title').textContent, i = t.lastIndexOf(' (');\n"
"  return i < 0 ? t : t.substring(0, i); }\n"
"function fit(g) { var r = g.querySelector('rect'), tx = g.querySelector('text'),\n"
"  w = +r.getAttribute('width'), n = nameOf(g), c = Math.floor((w - 6) / (FS * FW));\n"
"  tx.setAttribute('x', +r.getAttribute('x') + 3);\n"
"  if (c < 3) { tx.textContent = ''; return; }\n"
"  tx.textContent = n.length > c ? n.substring(0, c - 2) + '..' : n; }\n"
"function zoom(g) {\n"
"  var x0 = +g.getAttribute('data-x'), w0 = +g.getAttribute('data-w'),\n"
"      y0 = +g.querySelector('rect').getAttribute('y'), ratio = (WIDTH - 2 * XPAD) / w0;\n"
"  zoomed = g; unzoombtn.classList.remove('hide');\n"
"  frames.forEach(function (e) {\n"
"    var x = +e.getAttribute('data-x'), w = +e.getAttribute('data-w'),\n"
"        y = +e.querySelector('rect').getAttribute('y'), r = e.querySelector('rect');\n"
"    if (y > y0 && x <= x0 + 1e-6 && x + w >= x0 + w0 - 1e-6) {\n"
"      e.classList.remove('hide'); e.classList.add('parent');\n"
"      r.setAttribute('x', XPAD); r.setAttribute('width', WIDTH - 2 * XPAD);\n"
"    } else if (y > y0 || x + w <= x0 + 1e-6 || x >= x0 + w0 - 1e-6) {\n"
"      e.classList.add('hide');\n"
"    } else {\n"
"      e.classList.remove('hide', 'parent');\n"
"      r.setAttribute('x', XPAD + (x - x0) * ratio); r.setAttribute('width', w * ratio);\n"
"    }\n"
"    if (!e.classList.contains('hide')) fit(e);\n"
"  });\n"
"  if (term) search(term);\n"
"}\n"
"function unzoom() {\n"
"  zoomed = null; unzoombtn.classList.add('hide');\n"
"  frames.forEach(function (e) {\n"
"    var r = e.querySelector('rect');\n"
"    e.classList.remove('hide', 'parent');\n"
"    r.setAttribute('x', XPAD + +e.getAttribute('data-x'));\n"
"    r.setAttribute('width', +e.getAttribute('data-w')); fit(e);\n"
"  });\n"
"  if (term) search(term);\n"
"}\n"
"function search(t) {\n"
"  var re, spans = [], total = WIDTH - 2 * XPAD, sum = 0, end = -1;\n"
"  try { re = new RegExp(t); } catch (err) { matchedtxt.textContent = 'bad regex: ' + err.message; return; }\n"
"  term = t; searchbtn.textContent = 'Reset Search';\n"
"  frames.forEach(function (e) {\n"
"    var r = e.querySelector('rect');\n"
"    if (!r.hasAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute('fill'));\n"
"    if (re.test(nameOf(e))) {\n"
"      r.setAttribute('fill', 'rgb(230,0,230)');\n"
"      spans.push([+e.getAttribute('data-x'), +e.getAttribute('data-w')]);\n"
"    } else r.setAttribute('fill', r.getAttribute('data-fill'));\n"
"  });\n"
"  spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
"  spans.forEach(function (s) {\n"
"    var a = Math.max(s[0], end), b = s[0] + s[1];\n"
"    if (b > a) { sum += b - a; end = b; }\n"
"  });\n"
"  matchedtxt.textContent = 'Matched: ' + (100 * sum / total).toFixed(2) + '%%';\n"
"}\n"
"function resetSearch() {\n"
"  term = null; searchbtn.textContent = 'Search'; matchedtxt.textContent = '';\n"
"  frames.forEach(function (e) { var r = e.querySelector('rect');\n"
"    if (r.hasAttribute('data-fill')) r.setAttribute('fill', r.getAttribute('data-fill')); });\n"
"}\n"
"function askSearch() {\n"
"  if (term) { resetSearch(); return; }\n"
"  var t = prompt('Search for (regular expression):', '');\n"
"  if (t) search(t);\n"
"}\n"
"window.addEventListener('load', function () {\n"
"  details = document.getElementById('details'); matchedtxt = document.getElementById('matched');\n"
"  unzoombtn = document.getElementById('unzoom'); searchbtn = document.getElementById('search');\n"
"  frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
"  frames.forEach(function (g) {\n"
"    g.addEventListener('click', function () { zoom(g); });\n"
"    g.addEventListener('mouseover', function () { details.textContent = g.querySelector('title').textContent; });\n"
"    g.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
"  });\n"
"  unzoombtn.addEventListener('click', unzoom);\n"
"  searchbtn.addEventListener('click', askSearch);\n"
"  window.addEventListener('keydown', function (ev) {\n"
"    if (ev.keyCode === 114 || ((ev.ctrlKey || ev.metaKey) && ev.keyCode === 70)) {\n"
"      ev.preventDefault(); askSearch();\n"
"    } else if (ev.key === 'Escape') { resetSearch(); unzoom(); }\n"
"  });\n"
"  /* The root is at the bottom: open there, not on the empty top of a deep graph. */\n"
"  window.scrollTo(0, svg.getBoundingClientRect().height);\n"
"});\n"
"]]></script>\n";

static void human(double v, char *buf, size_t len)
{
	if (v >= 1e9)
		snprintf(buf, len, "%.3g G", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, len, "%.3g M", v / 1e6);
	else
		snprintf(buf, len, "%.0f", v);
}

/* The header's second and third lines: what the run was and every reduction. */
static void write_facts(FILE *out, const struct aggregate *a, double y)
{
	const struct agg_info *info = aggregate_info_const(a);
	uint64_t cut = info->outcomes[UNWIND_MAX_DEPTH];
	char buf[64];

	human((double)info->samples, buf, sizeof(buf));
	fprintf(out, "<text class=\"facts\" x=\"%g\" y=\"%g\">", XPAD, y);
	xml_text(out, info->event ? info->event : "samples", 64);
	fprintf(out, ": %" PRIu64 " samples, %.1f s", info->samples, (double)info->duration_ns / 1e9);
	if (info->lost)
		fprintf(out, "; lost %" PRIu64 " samples (%.1f%%)", info->lost,
			100.0 * (double)info->lost / (double)(info->lost + info->samples));
	if (cut)
		fprintf(out, "; %" PRIu64 " stacks cut at --max-depth", cut);
	if (info->pruned)
		fprintf(out, "; %" PRIu64 " cold frames pruned over the memory budget "
			"(%" PRIu64 " samples lost frames)", info->pruned, info->pruned_samples);
	if (info->threads_folded)
		fprintf(out, "; %" PRIu64 " exited threads folded", info->threads_folded);
	fputs("</text>\n", out);
}

int svg_write_stream(const struct aggregate *a, const char *title, FILE *out)
{
	struct folded_line *v = NULL;
	struct stree t = { 0 };
	size_t nv = 0;
	double height, scale, ybase;
	char colour[32];
	int rc;

	if ((rc = folded_lines(a, 0, &v, &nv)) || (rc = tree_build(&t, v, nv)) ||
	    (rc = tree_layout(&t)))
		goto out;
	height = YPAD_TOP + (double)(t.maxdepth + 1) * FRAME_HEIGHT + YPAD_BOTTOM;
	scale = t.n[0].value ? (IMAGE_WIDTH - 2 * XPAD) / (double)t.n[0].value : 0;
	ybase = height - YPAD_BOTTOM;
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" "
		"xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
		"<!-- Flame graph by pmutop %s: one rect per frame, width proportional to its "
		"weight; click to zoom, Ctrl-F to search. -->\n"
		"<style type=\"text/css\">\n"
		"text { font-family: Verdana, sans-serif; font-size: %dpx; fill: rgb(0,0,0); }\n"
		"#title { text-anchor: middle; font-size: %dpx; }\n"
		"#search, #unzoom { cursor: pointer; }\n"
		"#search:hover, #unzoom:hover { fill: rgb(0,0,255); }\n"
		".hide { display: none; }\n"
		".parent { opacity: 0.5; }\n"
		"g.f:hover rect { stroke: black; stroke-width: 0.5; cursor: pointer; }\n"
		"</style>\n",
		IMAGE_WIDTH, height, IMAGE_WIDTH, height, PMUTOP_VERSION, FONT_SIZE, FONT_SIZE + 5);
	fprintf(out, svg_script, XPAD, IMAGE_WIDTH, FONT_SIZE, FONT_WIDTH);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%g\" height=\"%g\" fill=\"rgb(248,248,248)\"/>\n",
		IMAGE_WIDTH, height);
	fprintf(out, "<text id=\"title\" x=\"%g\" y=\"%d\">Flame Graph</text>\n", IMAGE_WIDTH / 2,
		FONT_SIZE * 2);
	fprintf(out, "<text class=\"cmd\" x=\"%g\" y=\"%d\">", XPAD, FONT_SIZE * 3 + 4);
	xml_text(out, title ? title : "", 180);
	fputs("</text>\n", out);
	write_facts(out, a, FONT_SIZE * 4 + 6);
	fprintf(out, "<text id=\"unzoom\" class=\"hide\" x=\"%g\" y=\"%d\">Reset Zoom</text>\n", XPAD,
		FONT_SIZE * 2);
	fprintf(out, "<text id=\"search\" x=\"%g\" y=\"%d\" text-anchor=\"end\">Search</text>\n",
		IMAGE_WIDTH - XPAD, FONT_SIZE * 2);
	fprintf(out, "<text id=\"matched\" x=\"%g\" y=\"%g\" text-anchor=\"end\"> </text>\n",
		IMAGE_WIDTH - XPAD, height - FONT_SIZE);
	fprintf(out, "<text id=\"details\" x=\"%g\" y=\"%g\"> </text>\n", XPAD, height - FONT_SIZE);
	for (uint32_t i = 0; i < t.nn; i++) {
		const struct snode *s = &t.n[i];
		const char *name = t.names.v[s->name];
		double x = s->x * scale, w = (double)s->value * scale, y;
		size_t chars;

		if (w < MIN_WIDTH)
			continue;
		y = ybase - (double)(s->depth + 1) * FRAME_HEIGHT;
		chars = w > 6 ? (size_t)((w - 6) / (FONT_SIZE * FONT_WIDTH)) : 0;
		frame_colour(name, colour, sizeof(colour));
		fprintf(out, "<g class=\"f\" data-x=\"%.3f\" data-w=\"%.3f\"><title>", x, w);
		xml_text(out, name, (size_t)-1);
		fprintf(out, " (%" PRIu64 " ", s->value);
		xml_text(out, weight_unit(a), 64);
		fprintf(out, ", %.2f%%)</title>", 100.0 * (double)s->value / (double)t.n[0].value);
		fprintf(out, "<rect x=\"%.3f\" y=\"%g\" width=\"%.3f\" height=\"%d\" fill=\"%s\" "
			"rx=\"2\" ry=\"2\"/><text x=\"%.3f\" y=\"%g\">", XPAD + x, y, w,
			FRAME_HEIGHT - 1, colour, XPAD + x + 3, y + FRAME_HEIGHT - 4.5);
		if (chars >= 3)
			xml_text(out, name, chars);
		fputs("</text></g>\n", out);
	}
	fputs("</svg>\n", out);
	if (fflush(out) != 0 || ferror(out))
		rc = -EIO;
out:
	tree_free(&t);
	folded_lines_free(v, nv);
	return rc;
}

struct svg_fill {
	const struct aggregate *a;
	const char *title;
};

static int svg_fill(FILE *out, void *arg)
{
	const struct svg_fill *f = arg;

	return svg_write_stream(f->a, f->title, out);
}

int svg_write(const struct aggregate *a, const char *title, const char *path, char *err,
	      size_t errlen)
{
	struct svg_fill f = { a, title };

	return atomic_write_text(path, "SVG flame graph", svg_fill, &f, err, errlen);
}
