/*
 * fuzz_module.c - fuzz target: arbitrary bytes as an ELF image.
 *
 * The input is handed to module_cache_get_image() (the path the vDSO takes;
 * files go through the same parser, module_parse()), and every query the
 * unwinder and symbolizer make is then asked of the result: symbols across
 * and around the executable range, reads of the image at the unwind table,
 * the text and the edges of the address space, load bias for a spread of
 * mapping offsets, build-id. ASan/UBSan turn any read outside the image or
 * the module's own arrays into a crash. A fresh cache per input keeps
 * memory flat and runs independent.
 */
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "pmutop/target/module.h"

/* Touch every byte of a string the module hands out (ASan checks it). */
static size_t fuzz_strlen_touch(const char *s)
{
	return s ? strlen(s) : 0;
}

static void fuzz_query_module(const struct module *m)
{
	static unsigned char buf[65536];
	uint64_t lo, hi, v, sz, off, bias, flo, fhi;
	volatile size_t sink = 0;

	sink += fuzz_strlen_touch(module_path(m));
	sink += fuzz_strlen_touch(module_build_id(m));
	sink += module_nsyms(m);

	module_text_range(m, &lo, &hi);
	for (unsigned k = 0; k <= 32; k++) {
		uint64_t span = hi > lo ? hi - lo : 0;
		uint64_t a = lo + span / 32 * k;

		sink += fuzz_strlen_touch(module_symbolize(m, a, &off));
		sink += fuzz_strlen_touch(module_symbolize(m, a - 1, NULL));
		sink += fuzz_strlen_touch(module_symbolize(m, a + 1, &off));
		if (module_read(m, a, buf, 64) == 0)
			sink += buf[63];
		/* FDE ranges: .eh_frame_hdr's table, else the walked .eh_frame / .debug_frame. */
		if (module_fde_range(m, a, &flo, &fhi) == 0)
			sink += (size_t)(fhi - flo);
	}
	sink += fuzz_strlen_touch(module_symbolize(m, 0, &off));
	sink += fuzz_strlen_touch(module_symbolize(m, UINT64_MAX, &off));

	if (module_eh_frame_hdr(m, &v, &sz) == 0) {
		size_t n = sz < sizeof(buf) ? (size_t)sz : sizeof(buf);

		if (module_read(m, v, buf, n) == 0 && n)
			sink += buf[n - 1];
		if (module_read(m, v, buf, 12) == 0)
			sink += buf[11];
	}
	if (module_read(m, lo, buf, sizeof(buf)) == 0)
		sink += buf[sizeof(buf) - 1];
	(void)module_read(m, 0, buf, 8);
	(void)module_read(m, UINT64_MAX - 7, buf, 8);
	(void)module_read(m, UINT64_MAX - 3, buf, 8);
	(void)module_read(m, hi - 4, buf, 8);

	for (uint64_t pg = 0; pg < 16; pg++)
		if (module_bias(m, 0x7f0000000000ULL + pg * 4096, pg * 4096, &bias) == 0)
			sink += (size_t)bias;
	(void)module_bias(m, 0, UINT64_MAX & ~4095ULL, &bias);
	(void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct module_cache *c = module_cache_new();
	struct module *m;

	if (!c)
		return 0;
	m = module_cache_get_image(c, "[fuzz]", data, size);
	if (m) {
		fuzz_query_module(m);
		/* The cache hands back the same module for the same bytes. */
		if (module_cache_get_image(c, "[fuzz]", data, size) != m)
			__builtin_trap();
	}
	module_cache_free(c);
	return 0;
}
