/*
 * flamegraph.h - the aggregate as one self-contained HTML page: an
 * interactive flame graph (click to zoom, regex search with the matched
 * share, flame/icicle, hover details for every event, colour by a ratio of
 * two events, red/blue differential against a base profile).
 *
 * The page's own code is real HTML/JS/CSS under ui/web/ (flame.html,
 * flame.js, flame.css), embedded into the binary at build time
 * (flame_assets.S); this file only builds the data: the merged call tree,
 * root first, as JSON inside the page. Names come from the target and may
 * be hostile: they are written with json_write_string_html(), so nothing a
 * target names itself can end the <script> element or run. The page makes
 * no request anywhere (except a live page, which re-fetches its own data
 * from the server that sent it).
 */
#ifndef PMUTOP_FLAMEGRAPH_H
#define PMUTOP_FLAMEGRAPH_H

#include <stdbool.h>
#include <stddef.h>

struct aggregate;

/* Call-tree nodes a page holds at most by default; smaller ones are trimmed. */
#define FLAME_MAX_NODES 300000

struct flame_opts {
	const char *title;            /* command line or profile file, shown in the header */
	const struct aggregate *base; /* --diff-base: the old profile, or NULL */
	const char *base_name;        /* its file name (header) */
	size_t max_nodes;             /* 0: FLAME_MAX_NODES */
	double live_seconds;          /* > 0: a live page that re-fetches
	                                 ?seconds=N&event=E&format=json (HTTP) */
	const char *live_event;       /* the event of a live page */
};

/*
 * Build the page (page = true) or only its data as JSON (page = false: what
 * a live page re-fetches) into a malloc'd buffer *out of *len bytes; the
 * caller frees it. Frames below 1/max_nodes-th of every event's total
 * are left out when the tree is larger than max_nodes (the page says how
 * many). Returns 0, -ENOMEM, or -EINVAL with the reason in err (an
 * embedded asset without its placeholder: a build error).
 */
int flamegraph_encode(const struct aggregate *a, const struct flame_opts *fo, bool page,
		      char **out, size_t *len, char *err, size_t errlen);

/*
 * Write the page to path atomically (atomic_write.h). Returns 0 or -errno
 * with a message naming path in err.
 */
int flamegraph_write(const struct aggregate *a, const struct flame_opts *fo, const char *path,
		     char *err, size_t errlen);

#endif
