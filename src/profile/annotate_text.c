/*
 * annotate_text.c - the instruction-level view as text (pmutop --annotate).
 *
 * Laid out so that it can be read beside `objdump -d` of the same file:
 * the address column is the ELF virtual address exactly as objdump prints
 * it ("    1139:"), the instruction text follows, and to the left one
 * column per recorded event gives the share of this function's samples of
 * that event at the line. Source file:line is interleaved wherever it
 * changes, with the source text when the file is readable here, the way
 * perf annotate and objdump -S do. Names, paths and notes come from the
 * profile (a target's symbols and DWARF) and are escaped (term_text.h).
 */
#include "pmutop/profile/annotate.h"
#include "pmutop/profile/term_text.h"

#include <inttypes.h>
#include <string.h>

/* An event's column: as wide as its name, at least "100.00%". */
static int colw(const struct annotation *an, size_t e)
{
	int n = (int)strlen(an->ev_name[e]);

	return n < 8 ? 8 : n;
}

/* Zero is left blank so that the hot lines stand out. */
static void pct(FILE *f, int width, uint64_t w, uint64_t total)
{
	if (!w || !total)
		fprintf(f, " %*s", width, "");
	else
		fprintf(f, " %*.2f%%", width - 1, 100.0 * (double)w / (double)total);
}

/* Characters that would act on a terminal are shown as '?'. */
static void put_clean(FILE *f, const char *s, size_t max)
{
	for (size_t i = 0; s[i] && i < max; i++) {
		unsigned char c = (unsigned char)s[i];

		fputc(c == '\t' ? ' ' : (c < 0x20 || c == 0x7f) ? '?' : c, f);
	}
}

static void header(struct annotation *an, FILE *f)
{
	term_fputs(an->func, f);
	if (strcmp(an->func, an->symbol)) {
		fputs("  (inlined into ", f);
		term_fputs(an->symbol, f);
		fputc(')', f);
	}
	if (*an->path) {
		fputs("  in ", f);
		term_fputs(an->path, f);
	}
	if (*an->build_id) {
		fputs("  build-id ", f);
		term_fputs(an->build_id, f);
	}
	fputc('\n', f);
	for (size_t e = 0; e < an->nev; e++) {
		fprintf(f, "  %s: %" PRIu64 " %s here", an->ev_name[e], an->total[e], an->ev_unit[e]);
		if (an->profile_total[e])
			fprintf(f, ", %.2f%% of the profile",
				100.0 * (double)an->total[e] / (double)an->profile_total[e]);
		fputc('\n', f);
	}
	fprintf(f, "  %" PRIu64 " samples", an->samples);
	if (an->unplaced)
		fprintf(f, " (%" PRIu64 " at addresses that start no instruction: the binary "
			"may not be the one profiled)", an->unplaced);
	fputc('\n', f);
	if (an->n) {
		long h = annotation_hottest(an, 0);

		if (h >= 0)
			fprintf(f, "  hottest: %" PRIx64 " (%.2f%% of %s)\n", an->insns[h].in.addr,
				100.0 * (double)an->insns[h].w[0] / (double)an->total[0],
				an->ev_name[0]);
	}
	for (size_t i = 0; i < an->nnotes; i++) {
		fputs("  note: ", f);
		term_fputs(an->notes[i], f);
		fputc('\n', f);
	}
	fputc('\n', f);
	for (size_t e = 0; e < an->nev; e++)
		fprintf(f, " %*s", colw(an, e), an->ev_name[e]);
	if (an->cycles_ev >= 0)
		fprintf(f, " %7s", "CPI~");
	fprintf(f, "  %8s  %s\n", "address:", an->n ? "instruction" : "");
}

static void source_line(struct annotation *an, FILE *f, const char *file, uint32_t line)
{
	const char *base = strrchr(file, '/');
	const char *text = annotation_source_line(an, file, line);
	size_t pad = (an->cycles_ev >= 0 ? 8 : 0) + 12;

	for (size_t e = 0; e < an->nev; e++)
		pad += (size_t)colw(an, e) + 1;

	fprintf(f, "%*s", (int)pad, "");
	term_fputs(base ? base + 1 : file, f);
	fprintf(f, ":%u", line);
	if (text) {
		fputs("   ", f);
		while (*text == ' ' || *text == '\t')
			text++;
		put_clean(f, text, 120);
	}
	fputc('\n', f);
}

void annotation_print(struct annotation *an, FILE *f)
{
	const char *file = NULL;
	uint32_t line = 0, block = UINT32_MAX;

	header(an, f);
	if (!an->n) {
		for (size_t i = 0; i < an->naddrs; i++) {
			for (size_t e = 0; e < an->nev; e++)
				pct(f, colw(an, e), an->addrs[i].w[e], an->total[e]);
			fprintf(f, "  %8" PRIx64 ":\n", an->addrs[i].addr);
		}
		return;
	}
	for (size_t i = 0; i < an->n; i++) {
		const struct ann_insn *x = &an->insns[i];

		if (x->file && (x->line != line || !file || strcmp(x->file, file))) {
			file = x->file;
			line = x->line;
			source_line(an, f, file, line);
		}
		for (size_t e = 0; e < an->nev; e++)
			pct(f, colw(an, e), x->w[e], an->total[e]);
		if (an->cycles_ev >= 0) {
			const struct ann_block *b = &an->blocks[x->block];

			if (x->block != block && b->has_cpi)
				fprintf(f, " %7.2f", b->cpi);
			else
				fprintf(f, " %7s", "");
		}
		block = x->block;
		fprintf(f, "  %8" PRIx64 ":  ", x->in.addr);
		put_clean(f, x->text, sizeof(x->text));
		fputc('\n', f);
	}
}

int annotate_print_function(const struct aggregate *a, const char *func,
			    const struct annotate_opts *o, FILE *out, FILE *errf)
{
	struct annotation *an = NULL;
	char err[1024];
	int rc = annotate_build(a, func, o, &an, err, sizeof(err));

	if (rc) {
		/* err quotes the profile's names ("matches several functions: ..."). */
		fputs("pmutop: --annotate ", errf);
		term_fputs(func, errf);
		fputs(": ", errf);
		term_fputs(err, errf);
		fputc('\n', errf);
		return rc;
	}
	annotation_print(an, out);
	annotation_free(an);
	return 0;
}
