/*
 * test_gopclntab.c - Go's function table (target/gopclntab.c) against an
 * independent reference, and on broken tables.
 *
 * Reference: the Go linker's ELF symbol table. go_stacks (built by `make
 * workloads` with Debian's Go) keeps .symtab and .gopclntab; at every 16th
 * byte of its text, the function .gopclntab names must be the ELF symbol
 * there (minus the ".abi0" the linker appends to assembly functions; Go
 * shortens generic type names like "[5]" to "[...]" in .gopclntab only), and
 * its entry the symbol's start. go_stacks_stripped (-ldflags='-s -w') must
 * name main.spinLeaf at the address go_stacks has it (same source, same
 * compiler: same layout), with file:line in go_stacks.go. Broken tables
 * (cut at many lengths, an old magic) must be refused with a message or
 * answer without reading outside the bytes (ASan in check-asan).
 * Skipped (passes with a message) when the Go workloads are not built.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pmutop/target/gopclntab.h"
#include "pmutop/target/module.h"

static const char *wl_path(const char *name, char *buf, size_t len)
{
	const char *dir = getenv("WORKLOAD_DIR");

	snprintf(buf, len, "%s/%s", dir && *dir ? dir : "build/workloads", name);
	return buf;
}

static struct module *open_wl(struct module_cache *c, const char *name)
{
	char path[4096];
	struct stat st;

	wl_path(name, path, sizeof(path));
	if (stat(path, &st) != 0)
		return NULL;
	return module_cache_get(c, path, path, st.st_dev, st.st_ino);
}

static void names_match_symtab(void **state)
{
	struct module_cache *c = module_cache_new();
	struct module *m = open_wl(c, "go_stacks");
	const struct gopclntab *t;
	const char *err;
	uint64_t lo, hi, checked = 0, agree = 0;

	(void)state;
	if (!m) {
		print_message("go_stacks not built: skipped\n");
		module_cache_free(c);
		return;
	}
	t = module_gopclntab(m, &err);
	assert_non_null(t);
	assert_true(module_is_go(m));
	assert_int_equal(gopclntab_version(t), 118); /* Debian's Go 1.19 */
	module_text_range(m, &lo, &hi);
	for (uint64_t a = lo; a < hi; a += 16) {
		uint64_t off;
		const char *sym = module_symbolize(m, a, &off);
		struct gofunc f;
		size_t l;

		if (!sym || gopclntab_func(t, a, &f) != 0)
			continue;
		checked++;
		l = strlen(sym);
		if (l > 5 && !strcmp(sym + l - 5, ".abi0"))
			l -= 5;
		if (strlen(f.name) == l && !strncmp(sym, f.name, l) && f.entry == a - off)
			agree++;
		else if (checked - agree <= 5)
			print_message("%#llx: symtab %s, gopclntab %s\n", (unsigned long long)a, sym, f.name);
	}
	print_message("%llu of %llu addresses agree\n", (unsigned long long)agree,
		      (unsigned long long)checked);
	assert_true(checked > 10000);
	assert_true(agree * 1000 >= checked * 995);
	module_cache_free(c);
}

static void stripped_named(void **state)
{
	struct module_cache *c = module_cache_new();
	struct module *full = open_wl(c, "go_stacks"), *s = open_wl(c, "go_stacks_stripped");
	const struct gopclntab *t;
	struct goline lines[8];
	struct gofunc f;
	const char *err, *sym;
	uint64_t lo, hi, off, a, spin = 0;
	unsigned n;

	(void)state;
	if (!full || !s) {
		print_message("go_stacks / go_stacks_stripped not built: skipped\n");
		module_cache_free(c);
		return;
	}
	assert_int_equal(module_nsyms(s), 0); /* really stripped */
	module_text_range(full, &lo, &hi);
	for (a = lo; a < hi && !spin; a += 4)
		if ((sym = module_symbolize(full, a, &off)) && !strcmp(sym, "main.spinLeaf"))
			spin = a + 8;
	assert_true(spin != 0);
	t = module_gopclntab(s, &err);
	assert_non_null(t);
	assert_int_equal(gopclntab_func(t, spin, &f), 0);
	assert_string_equal(f.name, "main.spinLeaf");
	n = gopclntab_lines(t, &f, spin, lines, 8);
	assert_true(n >= 1);
	assert_string_equal(lines[n - 1].func, "main.spinLeaf");
	assert_non_null(lines[n - 1].file);
	assert_non_null(strstr(lines[n - 1].file, "go_stacks.go"));
	assert_true(lines[n - 1].line > 0);
	module_cache_free(c);
}

/* The table of go_stacks, cut at many lengths and with an old magic. */
static void broken_tables(void **state)
{
	struct module_cache *c = module_cache_new();
	struct module *m = open_wl(c, "go_stacks_stripped");
	struct gopclntab_src src;
	const struct gopclntab *t;
	const char *err;
	char msg[160];
	uint8_t *copy;
	uint64_t lo, hi;
	size_t len;

	(void)state;
	if (!m) {
		print_message("go_stacks_stripped not built: skipped\n");
		module_cache_free(c);
		return;
	}
	t = module_gopclntab(m, &err);
	assert_non_null(t);
	module_text_range(m, &lo, &hi);
	/* The section's bytes: find the header by its magic in the image. */
	{
		uint64_t v = 0x400000, got = 0;
		uint8_t hdr[8];

		for (; v < hi + (64u << 20) && !got; v += 16)
			if (module_read(m, v, hdr, 8) == 0 && !memcmp(hdr, "\xf0\xff\xff\xff\0\0\x01\x08", 8))
				got = v;
		assert_true(got != 0);
		len = 1u << 20;
		copy = malloc(len);
		assert_non_null(copy);
		while (len && module_read(m, got, copy, len) != 0)
			len /= 2;
		src = (struct gopclntab_src){ .data = copy, .len = len, .vaddr = got };
	}
	for (size_t cut = 0; cut <= src.len; cut = cut < 256 ? cut + 1 : cut * 2) {
		struct gopclntab *b;
		struct gofunc f;
		struct goline lines[8];
		int32_t sp;
		uint8_t *part = malloc(cut ? cut : 1); /* exact size: ASan sees any overrun */

		memcpy(part, copy, cut);
		src.data = part;
		src.len = cut;
		b = gopclntab_new(&src, msg, sizeof(msg));
		if (!b) {
			assert_true(strlen(msg) > 0);
		} else {
			for (uint64_t a = lo; a < hi; a += (hi - lo) / 97 + 1)
				if (gopclntab_func(b, a, &f) == 0) {
					(void)gopclntab_spdelta(b, &f, a, &sp);
					(void)gopclntab_lines(b, &f, a, lines, 8);
				}
			gopclntab_free(b);
		}
		free(part);
	}
	copy[0] = 0xfb; /* Go 1.2-1.15 */
	src.data = copy;
	src.len = len;
	assert_null(gopclntab_new(&src, msg, sizeof(msg)));
	assert_non_null(strstr(msg, "not supported"));
	free(copy);
	module_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_match_symtab),
		cmocka_unit_test(stripped_named),
		cmocka_unit_test(broken_tables),
	};
	return cmocka_run_group_tests_name("gopclntab", tests, NULL, NULL);
}
