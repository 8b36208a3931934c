/*
 * dump.c - write a finished profile in the format --dump asks for (see
 * dump.h). The writers live in profile/ (pprof, folded, flamegraph, svg,
 * speedscope); this
 * file picks one, names the per-event files of --dump-split, reads the
 * --diff-base profile. "-" (stdout) is atomic_write's business.
 */
#include "pmutop/frontend/dump.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pmutop/frontend/cli.h"
#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/atomic_write.h"
#include "pmutop/profile/flamegraph.h"
#include "pmutop/profile/folded.h"
#include "pmutop/profile/pprof.h"
#include "pmutop/profile/pprof_read.h"
#include "pmutop/profile/speedscope.h"
#include "pmutop/profile/svg.h"

static bool is_stdout(const char *path)
{
	return !strcmp(path, "-");
}

int dump_check(const struct pmutop_opts *o, char *err, size_t errlen)
{
	struct aggregate *base = NULL;
	int rc;

	if (o->dump && o->dump_ext_unknown) {
		struct stat sb;
		enum dump_format f;

		/* A FIFO or device is written in place, whatever its name: pprof. */
		if (stat(o->dump, &sb) || !(S_ISFIFO(sb.st_mode) || S_ISCHR(sb.st_mode)))
			return cli_dump_format(o->dump, &f, err, errlen);
	}
	if (o->dump && (rc = pprof_check_writable(o->dump, err, errlen)))
		return rc;
	if (o->diff_base) {
		if ((rc = pprof_read_file(o->diff_base, &base, err, errlen)))
			return rc;
		aggregate_free(base);
	}
	return 0;
}

/*
 * FILE.pb.gz → FILE.EVENT.pb.gz (or FILE.EVENT when FILE has no .pb.gz/.gz),
 * malloc'd (never cut short); NULL on ENOMEM.
 */
static char *split_name(const char *path, const char *event)
{
	const char *base = strrchr(path, '/');
	const char *ext = NULL;
	size_t plen = strlen(path);
	char *out;
	int n;

	base = base ? base + 1 : path;
	if (plen > 6 && !strcmp(path + plen - 6, ".pb.gz") && path + plen - 6 > base)
		ext = path + plen - 6;
	else if (plen > 3 && !strcmp(path + plen - 3, ".gz") && path + plen - 3 > base)
		ext = path + plen - 3;
	if (ext)
		n = asprintf(&out, "%.*s.%s%s", (int)(ext - path), path, event, ext);
	else
		n = asprintf(&out, "%s.%s", path, event);
	if (n < 0)
		return NULL;
	/* Event names may carry ':' modifiers or '/' (never a path separator here). */
	for (char *c = out + (base - path); *c; c++)
		if (*c == '/')
			*c = '_';
	return out;
}

static int write_html(const struct pmutop_opts *o, const struct aggregate *a, const char *title,
		      char *err, size_t errlen)
{
	struct flame_opts fo = { .title = title, .base_name = o->diff_base };
	struct aggregate *base = NULL;
	int rc;

	if (o->diff_base && (rc = pprof_read_file(o->diff_base, &base, err, errlen)))
		return rc;
	fo.base = base;
	rc = flamegraph_write(a, &fo, o->dump, err, errlen);
	aggregate_free(base);
	return rc;
}

/* --dump-split: one pprof file per event. */
static int write_split(const struct pmutop_opts *o, const struct aggregate *a, FILE *log)
{
	const struct agg_info *info = aggregate_info_const(a);
	char err[768];
	int rc = 0;

	for (size_t k = 0; k < info->nevents; k++) {
		char *path = split_name(o->dump, info->events[k].name);

		if (!path) {
			fprintf(stderr, "pmutop: cannot name the file of event %zu: %s\n", k,
				strerror(ENOMEM));
			rc = 1;
		} else if (pprof_write_event(a, (int)k, path, err, sizeof(err))) {
			fprintf(stderr, "pmutop: %s\n", err);
			rc = 1;
		} else if (!o->quiet) {
			fprintf(log, "pmutop: wrote %s\n", path);
		}
		free(path);
	}
	return rc;
}

/*
 * path as one shell word for a hint the user pastes: as is when it holds only
 * safe characters, else single-quoted; "./" before a leading "-" so no tool
 * takes it for an option.
 */
static const char *shell_word(const char *path, char *buf, size_t len)
{
	const char *dot = path[0] == '-' ? "./" : "";
	size_t k;

	if (!path[strspn(path, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			 "0123456789_./+-=:,@%")]) {
		snprintf(buf, len, "%s%s", dot, path);
		return buf;
	}
	k = (size_t)snprintf(buf, len, "'%s", dot);
	for (const char *c = path; *c && k + 5 < len; c++) {
		if (*c == '\'') {
			memcpy(buf + k, "'\\''", 4);
			k += 4;
		} else {
			buf[k++] = *c;
		}
	}
	snprintf(buf + k, len - k, "'");
	return buf;
}

/* The flame graph a folded file's hint writes: never the folded file itself. */
static const char *flame_name(const char *folded, char *out, size_t len)
{
	static const char *const exts[] = { ".folded", ".collapsed", ".txt", ".stacks", ".svg" };
	size_t n = strlen(folded);

	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		size_t k = strlen(exts[i]);
		if (n > k && !strcmp(folded + n - k, exts[i])) {
			n -= k;
			break;
		}
	}
	snprintf(out, len, "%.*s.svg", (int)n, folded);
	if (!strcmp(out, folded))
		snprintf(out, len, "%.*s.flame.svg", (int)n, folded);
	return out;
}

int dump_write(const struct pmutop_opts *o, const struct aggregate *a, const char *title,
	       FILE *log)
{
	char in[8192], out[8192], svg[4200];
	const char *what;
	char err[768];
	int rc;

	switch (o->format) {
	case DUMP_FOLDED:
		rc = folded_write(a, (o->folded_threads ? FOLDED_ROOT_THREAD : 0u) |
				     (o->folded_processes ? FOLDED_ROOT_PROCESS : 0u),
				  o->dump, err, sizeof(err));
		what = "folded stacks";
		break;
	case DUMP_HTML:
		rc = write_html(o, a, title, err, sizeof(err));
		what = o->diff_base ? "differential flame graph" : "flame graph";
		break;
	case DUMP_SVG:
		rc = svg_write(a, title, o->dump, err, sizeof(err));
		what = "SVG flame graph";
		break;
	case DUMP_SPEEDSCOPE:
		rc = speedscope_write(a, title, o->dump, err, sizeof(err));
		what = "speedscope profile";
		break;
	case DUMP_PPROF:
	default:
		if (o->dump_split && aggregate_info_const(a)->nevents >= 2)
			return write_split(o, a, log);
		rc = pprof_write(a, o->dump, err, sizeof(err));
		what = "profile";
		break;
	}
	if (rc) {
		fprintf(stderr, "pmutop: %s\n", err);
		return 1;
	}
	if (o->quiet)
		return 0;
	if (is_stdout(o->dump))
		fprintf(log, "pmutop: wrote the %s to stdout\n", what);
	else if (o->format == DUMP_FOLDED)
		fprintf(log, "pmutop: wrote %s (folded stacks: flamegraph.pl %s > %s)\n", o->dump,
			shell_word(o->dump, in, sizeof(in)),
			shell_word(flame_name(o->dump, svg, sizeof(svg)), out, sizeof(out)));
	else if (o->format == DUMP_HTML || o->format == DUMP_SVG)
		fprintf(log, "pmutop: wrote %s (%s: open it in a browser)\n", o->dump, what);
	else if (o->format == DUMP_SPEEDSCOPE)
		fprintf(log, "pmutop: wrote %s (%s: open it at https://www.speedscope.app or with "
			"speedscope %s)\n", o->dump, what, shell_word(o->dump, in, sizeof(in)));
	else
		fprintf(log, "pmutop: wrote %s (view: go tool pprof -top %s)\n", o->dump,
			shell_word(o->dump, in, sizeof(in)));
	return 0;
}
