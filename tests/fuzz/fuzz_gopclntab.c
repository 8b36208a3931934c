/*
 * fuzz_gopclntab.c - fuzz target: arbitrary bytes as Go's .gopclntab.
 *
 * The input is the table itself (at ELF vaddr 0x500000; text at 0x401000),
 * and also what the inline trees and runtime.firstmoduledata are read
 * from, so a corrupt table can point anywhere in it. Every query the
 * unwinder and the symbolizer make is asked for a spread of addresses
 * across the table's text range and around it: the function, its top-frame
 * flag, the SP delta, the file:line and inline chain. A bad table must give
 * errors or empty answers, never a read outside the input (ASan/UBSan).
 */
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "pmutop/target/gopclntab.h"

#define FZ_VADDR 0x500000ULL

struct fz_image {
	const uint8_t *data;
	size_t size;
};

static int fz_read(const void *arg, uint64_t vaddr, void *buf, size_t len)
{
	const struct fz_image *im = arg;

	if (vaddr < FZ_VADDR || vaddr - FZ_VADDR > im->size || im->size - (vaddr - FZ_VADDR) < len)
		return -1;
	memcpy(buf, im->data + (vaddr - FZ_VADDR), len);
	return 0;
}

static size_t fz_touch(const char *s)
{
	return s ? strlen(s) : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_image im = { data, size };
	struct gopclntab_src src = {
		.data = data, .len = size, .vaddr = FZ_VADDR, .text_vaddr = 0x401000,
		.mdata = data, .mdata_len = size, .read = fz_read, .arg = &im,
	};
	char err[160];
	struct gopclntab *t = gopclntab_new(&src, err, sizeof(err));
	volatile size_t sink = 0;
	struct goline lines[16];
	struct gofunc f;
	int32_t sp;

	if (!t) {
		sink += fz_touch(err);
		return 0;
	}
	sink += (size_t)gopclntab_version(t) + gopclntab_nfunc(t);
	for (unsigned k = 0; k < 256; k++) {
		uint64_t pc = 0x401000 + (uint64_t)k * 37 - 64;

		if (gopclntab_func(t, pc, &f) != 0)
			continue;
		sink += fz_touch(f.name) + gopclntab_is_top(&f);
		if (gopclntab_spdelta(t, &f, pc, &sp) == 0)
			sink += (size_t)sp;
		for (unsigned i = 0, n = gopclntab_lines(t, &f, pc, lines, 16); i < n; i++)
			sink += fz_touch(lines[i].func) + fz_touch(lines[i].file) + (size_t)lines[i].line;
	}
	(void)gopclntab_func(t, 0, &f);
	(void)gopclntab_func(t, UINT64_MAX, &f);
	gopclntab_free(t);
	(void)sink;
	return 0;
}
