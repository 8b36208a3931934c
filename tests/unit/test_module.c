/*
 * test_module.c - ELF modules against ground truth from the running process:
 * the dynamic loader's view (dl_iterate_phdr) of this test binary and libc,
 * and hand-made symbols with known bounds (top-level asm below). Then corrupt
 * and truncated ELF files and images, which must never crash the parser.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "pmutop/target/module.h"

/*
 * Symbols with known layout:
 *   tsym_pad:    2 bytes with .size 2, then 2 unsymbolized bytes
 *   tsym_nosize: no .size (st_size 0): extends to the next symbol
 *   tsym_after:  4 bytes
 */
__asm__(".pushsection .text\n"
	".p2align 4\n"
	".type tsym_pad, @function\n"
	"tsym_pad:\n"
	"  nop\n"
	"  ret\n"
	".size tsym_pad, .-tsym_pad\n"
	"  int3\n"
	"  int3\n"
	".type tsym_nosize, @function\n"
	"tsym_nosize:\n"
	"  nop\n"
	"  nop\n"
	"  nop\n"
	"  ret\n"
	".type tsym_after, @function\n"
	"tsym_after:\n"
	"  nop\n"
	"  nop\n"
	"  nop\n"
	"  ret\n"
	".size tsym_after, .-tsym_after\n"
	".popsection\n");

/*
 * tfde_rows: one FDE whose CFI has five rows (a row starts at each push and
 * pop): every address in it must get the FDE's whole range, not its row's.
 * tfde_rows_end marks its end.
 */
__asm__(".pushsection .text\n"
	".p2align 4\n"
	".type tfde_rows, @function\n"
	"tfde_rows:\n"
	"  .cfi_startproc\n"
	"  push %rbx\n"
	"  .cfi_adjust_cfa_offset 8\n"
	"  .cfi_offset %rbx, -16\n"
	"  push %rbp\n"
	"  .cfi_adjust_cfa_offset 8\n"
	"  .cfi_offset %rbp, -24\n"
	"  nop\n"
	"  nop\n"
	"  pop %rbp\n"
	"  .cfi_adjust_cfa_offset -8\n"
	"  pop %rbx\n"
	"  .cfi_adjust_cfa_offset -8\n"
	"  ret\n"
	"  .cfi_endproc\n"
	".size tfde_rows, .-tfde_rows\n"
	".type tfde_rows_end, @function\n"
	"tfde_rows_end:\n"
	"  ret\n"
	".size tfde_rows_end, .-tfde_rows_end\n"
	".popsection\n");

__attribute__((visibility("hidden"))) void tfde_rows(void);
__attribute__((visibility("hidden"))) void tfde_rows_end(void);
__attribute__((visibility("hidden"))) void tsym_pad(void);
__attribute__((visibility("hidden"))) void tsym_nosize(void);
__attribute__((visibility("hidden"))) void tsym_after(void);

static volatile int sink;
static char bss_probe[8192] __attribute__((used));

__attribute__((noinline, noclone, used))
static int module_test_target(int x)
{
	int i, acc = 0;

	for (i = 0; i < x; i++)
		acc += sink * i;
	return acc;
}

/* ---- helpers ------------------------------------------------------------ */

struct self_map {
	uint64_t start, end, pgoff, dev, ino;
	char path[4096];
};

/* The /proc/self/maps line containing addr. */
static int find_self_map(uint64_t addr, struct self_map *out)
{
	char line[4096 + 256];
	FILE *f = fopen("/proc/self/maps", "re");
	int found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off, ino;
		unsigned maj, min;
		int n = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu %n", &s, &e, &off, &maj, &min,
			   &ino, &n) < 6)
			continue;
		if (addr < s || addr >= e)
			continue;
		out->start = s;
		out->end = e;
		out->pgoff = off;
		out->dev = makedev(maj, min);
		out->ino = ino;
		snprintf(out->path, sizeof(out->path), "%s", line + n);
		out->path[strcspn(out->path, "\n")] = '\0';
		found = 1;
		break;
	}
	fclose(f);
	return found;
}

struct loader_view {
	uint64_t bias;
	char build_id[129];
	uint64_t ehf_vaddr;
	int have_ehf;
};

static int main_object_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct loader_view *v = data;

	(void)size;
	v->bias = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_GNU_EH_FRAME) {
			v->have_ehf = 1;
			v->ehf_vaddr = ph->p_vaddr;
		}
		if (ph->p_type == PT_NOTE && !v->build_id[0]) {
			const unsigned char *p = (const void *)(info->dlpi_addr + ph->p_vaddr);
			const unsigned char *end = p + ph->p_memsz;

			while (p + sizeof(ElfW(Nhdr)) <= end) {
				const ElfW(Nhdr) *nh = (const void *)p;
				const unsigned char *name = p + sizeof(*nh);
				const unsigned char *desc = name + ((nh->n_namesz + 3) & ~3u);

				if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
				    memcmp(name, "GNU", 4) == 0) {
					for (unsigned k = 0; k < nh->n_descsz; k++)
						sprintf(v->build_id + 2 * k, "%02x", desc[k]);
					break;
				}
				p = desc + ((nh->n_descsz + 3) & ~3u);
			}
		}
	}
	return 1;  /* the first object is the main program */
}

static struct module *self_module(struct module_cache *c, struct self_map *sm)
{
	assert_true(find_self_map((uintptr_t)&module_test_target, sm));
	return module_cache_get(c, "/proc/self/exe", sm->path, sm->dev, sm->ino);
}

static void *read_file(const char *path, size_t *len)
{
	struct stat st;
	void *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)st.st_size, 0), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

static void write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* Call everything on a module that may be NULL or built from garbage. */
static void exercise(const struct module *m)
{
	uint64_t lo, hi, v, off, bias, size;
	unsigned char buf[64];

	if (!m)
		return;
	assert_non_null(module_path(m));
	assert_true(strlen(module_build_id(m)) <= 128);
	module_text_range(m, &lo, &hi);
	(void)module_eh_frame_hdr(m, &v, &size);
	for (uint64_t pg = 0; pg < 0x10000; pg += 0x1000)
		(void)module_bias(m, 0x7f0000000000ULL, pg, &bias);
	for (v = lo; v < hi && v - lo < 0x20000; v += 7) {
		const char *name = module_symbolize(m, v, &off);

		if (name)
			assert_true(strlen(name) < 1 << 20);
		(void)module_read(m, v, buf, sizeof(buf));
	}
	(void)module_symbolize(m, 0, &off);
	(void)module_symbolize(m, UINT64_MAX, &off);
	(void)module_read(m, UINT64_MAX - 8, buf, sizeof(buf));
	(void)module_read(m, 0, buf, sizeof(buf));
}

static char tmpdir[] = "/tmp/pmutop-test-module-XXXXXX";

static int setup_tmp(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_tmp(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---- the running executable -------------------------------------------- */

static void test_exe_symbolize(void **state)
{
	struct module_cache *c = module_cache_new();
	struct self_map sm;
	struct module *m;
	uint64_t bias, off = 99, vaddr;
	const char *name;

	(void)state;
	assert_non_null(c);
	m = self_module(c, &sm);
	assert_non_null(m);
	assert_string_equal(module_path(m), sm.path);
	assert_true(module_nsyms(m) > 10);
	assert_int_equal(module_bias(m, sm.start, sm.pgoff, &bias), 0);

	vaddr = (uintptr_t)&module_test_target - bias;
	name = module_symbolize(m, vaddr, &off);
	assert_non_null(name);
	assert_string_equal(name, "module_test_target");
	assert_int_equal(off, 0);
	name = module_symbolize(m, vaddr + 3, &off);
	assert_non_null(name);
	assert_string_equal(name, "module_test_target");
	assert_int_equal(off, 3);

	assert_string_equal(module_symbolize(m, (uintptr_t)&test_exe_symbolize - bias, &off),
			    "test_exe_symbolize");
	module_cache_free(c);
}

static void test_exe_matches_loader(void **state)
{
	struct module_cache *c = module_cache_new();
	struct loader_view lv = { 0 };
	struct self_map sm;
	struct module *m;
	uint64_t bias, v, size, lo, hi;

	(void)state;
	dl_iterate_phdr(main_object_cb, &lv);
	m = self_module(c, &sm);
	assert_non_null(m);

	assert_int_equal(module_bias(m, sm.start, sm.pgoff, &bias), 0);
	assert_int_equal(bias, lv.bias);

	assert_int_equal(strlen(module_build_id(m)), 40);
	assert_string_equal(module_build_id(m), lv.build_id);

	assert_true(lv.have_ehf);
	assert_int_equal(module_eh_frame_hdr(m, &v, &size), 0);
	assert_int_equal(v, lv.ehf_vaddr);
	assert_true(size > 8);

	module_text_range(m, &lo, &hi);
	v = (uintptr_t)&module_test_target - bias;
	assert_true(lo <= v && v < hi);
	assert_true(hi - lo >= sm.end - sm.start - 0x1000);
	module_cache_free(c);
}

static void test_exe_read(void **state)
{
	struct module_cache *c = module_cache_new();
	unsigned char buf[256], zero[256] = { 0 };
	struct self_map sm;
	struct module *m;
	uint64_t bias, lo, hi;

	(void)state;
	m = self_module(c, &sm);
	assert_non_null(m);
	assert_int_equal(module_bias(m, sm.start, sm.pgoff, &bias), 0);

	/* Code is not relocated: the file bytes are what is in memory. */
	assert_int_equal(module_read(m, (uintptr_t)&module_test_target - bias, buf, 64), 0);
	assert_memory_equal(buf, (const void *)&module_test_target, 64);

	/* .bss comes from no file bytes and reads as zero. */
	assert_int_equal(module_read(m, (uintptr_t)bss_probe - bias + 100, buf, sizeof(buf)), 0);
	assert_memory_equal(buf, zero, sizeof(buf));

	/* Nothing is loaded far above the image or at the top of the address space. */
	module_text_range(m, &lo, &hi);
	assert_int_equal(module_read(m, hi + (1ULL << 40), buf, 8), -EFAULT);
	assert_int_equal(module_read(m, UINT64_MAX - 3, buf, 8), -EFAULT);
	/* A zero-length read always succeeds. */
	assert_int_equal(module_read(m, hi + (1ULL << 40), buf, 0), 0);
	module_cache_free(c);
}

static void test_asm_symbol_bounds(void **state)
{
	struct module_cache *c = module_cache_new();
	struct self_map sm;
	struct module *m;
	uint64_t bias, off, pad, nosize, after;
	const char *name;

	(void)state;
	m = self_module(c, &sm);
	assert_non_null(m);
	assert_int_equal(module_bias(m, sm.start, sm.pgoff, &bias), 0);
	pad = (uintptr_t)&tsym_pad - bias;
	nosize = (uintptr_t)&tsym_nosize - bias;
	after = (uintptr_t)&tsym_after - bias;
	assert_int_equal(nosize, pad + 4);
	assert_int_equal(after, nosize + 4);

	assert_string_equal(module_symbolize(m, pad + 1, &off), "tsym_pad");
	assert_int_equal(off, 1);
	/* The padding after a sized symbol belongs to nobody. */
	assert_null(module_symbolize(m, pad + 2, &off));
	assert_null(module_symbolize(m, pad + 3, &off));
	/* A size-0 symbol reaches up to the next one. */
	name = module_symbolize(m, nosize + 3, &off);
	assert_non_null(name);
	assert_string_equal(name, "tsym_nosize");
	assert_int_equal(off, 3);
	assert_string_equal(module_symbolize(m, after, &off), "tsym_after");
	assert_int_equal(off, 0);
	module_cache_free(c);
}

static void test_fde_range_whole_function(void **state)
{
	struct module_cache *c = module_cache_new();
	struct self_map sm;
	struct module *m;
	uint64_t bias, start, lo, hi, len;

	(void)state;
	m = self_module(c, &sm);
	assert_non_null(m);
	assert_int_equal(module_bias(m, sm.start, sm.pgoff, &bias), 0);
	start = (uintptr_t)&tfde_rows - bias;
	len = (uintptr_t)&tfde_rows_end - (uintptr_t)&tfde_rows;
	/* push, push, nop, nop, pop, pop, ret: 1 + 1 + 1 + 1 + 1 + 1 + 1 bytes. */
	assert_int_equal(len, 7);
	for (uint64_t a = start; a < start + len; a++) {
		assert_int_equal(module_fde_range(m, a, &lo, &hi), 0);
		assert_int_equal(lo, start);
		assert_int_equal(hi, start + len);
	}
	module_cache_free(c);
}

static void test_cache(void **state)
{
	struct module_cache *c = module_cache_new();
	struct self_map sm;
	struct module *a, *b;
	char path[256];

	(void)state;
	a = self_module(c, &sm);
	assert_non_null(a);
	/* Same inode, different open path: the cached module. */
	b = module_cache_get(c, sm.path, "other-name", sm.dev, sm.ino);
	assert_ptr_equal(a, b);

	/* Missing and non-ELF files give NULL, and stay NULL. */
	assert_null(module_cache_get(c, "/nonexistent/pmutop/x.so", "/nonexistent/pmutop/x.so", 0, 0));
	assert_null(module_cache_get(c, "/nonexistent/pmutop/x.so", "/nonexistent/pmutop/x.so", 0, 0));
	snprintf(path, sizeof(path), "%s/text", tmpdir);
	write_file(path, "hello, this is not an ELF file at all\n", 38);
	assert_null(module_cache_get(c, path, path, 0, 0));
	/* Devices are never opened. */
	assert_null(module_cache_get(c, "/dev/null", "/dev/null", 0, 0));

	/* Negative entries stick even after the file becomes valid: tried once. */
	snprintf(path, sizeof(path), "%s/late", tmpdir);
	assert_null(module_cache_get(c, path, path, 0, 0));
	assert_int_equal(symlink("/proc/self/exe", path), 0);
	assert_null(module_cache_get(c, path, path, 0, 0));
	/* ... but under another key it opens. */
	assert_non_null(module_cache_get(c, path, "late-2", 0, 0));

	/* Several open paths: the first that opens wins. */
	{
		const char *paths[] = { "/nonexistent/a", "/dev/null", "/proc/self/exe" };

		assert_non_null(module_cache_get_any(c, paths, 3, "any", 0, 0));
		assert_null(module_cache_get_any(c, paths, 2, "any-none", 0, 0));
	}

	/* Many entries: the table grows and lookups still find them. */
	for (int i = 0; i < 500; i++) {
		snprintf(path, sizeof(path), "/nonexistent/%d", i);
		assert_null(module_cache_get(c, path, path, 1, (uint64_t)i + 1000));
	}
	assert_ptr_equal(module_cache_get(c, "/nonexistent", "x", sm.dev, sm.ino), a);
	module_cache_free(c);
	module_cache_free(NULL);
}

static void test_image(void **state)
{
	struct module_cache *c = module_cache_new();
	struct self_map sm;
	struct module *f, *img, *img2;
	uint64_t bias, off;
	size_t len;
	void *bytes;

	(void)state;
	f = self_module(c, &sm);
	assert_non_null(f);
	bytes = read_file("/proc/self/exe", &len);
	img = module_cache_get_image(c, "exe-image", bytes, len);
	assert_non_null(img);
	assert_ptr_not_equal(img, f);
	assert_string_equal(module_path(img), "exe-image");
	assert_int_equal(module_nsyms(img), module_nsyms(f));
	assert_string_equal(module_build_id(img), module_build_id(f));
	assert_int_equal(module_bias(img, sm.start, sm.pgoff, &bias), 0);
	assert_string_equal(module_symbolize(img, (uintptr_t)&module_test_target - bias, &off),
			    "module_test_target");

	/* The bytes were copied: the caller's buffer can go. Same bytes, same module. */
	img2 = module_cache_get_image(c, "exe-image", bytes, len);
	assert_ptr_equal(img, img2);
	((unsigned char *)bytes)[len - 1] ^= 0xff;
	img2 = module_cache_get_image(c, "exe-image", bytes, len);
	assert_ptr_not_equal(img, img2);
	free(bytes);
	assert_string_equal(module_symbolize(img, (uintptr_t)&module_test_target - bias, &off),
			    "module_test_target");

	assert_null(module_cache_get_image(c, "garbage", "not elf", 7));
	assert_null(module_cache_get_image(c, "empty", "", 0));
	module_cache_free(c);
}

/* ---- eviction of unmapped files (module_cache_evict) ---------------------- */

static unsigned evict_calls;
static const struct module *evict_last;

static void on_evict(void *arg, const struct module *m)
{
	(void)arg;
	evict_calls++;
	evict_last = m;
	/* Called before the module is released: its parsed state is still there. */
	assert_false(module_evicted(m));
	assert_true(module_nsyms(m) > 0);
}

/* A copy of this test binary at dir/name: path, dev and ino out. */
static void exe_copy(const char *name, const void *bytes, size_t len, char *path, size_t plen,
		     uint64_t *dev, uint64_t *ino)
{
	struct stat st;

	snprintf(path, plen, "%s/%s", tmpdir, name);
	write_file(path, bytes, len);
	assert_int_equal(stat(path, &st), 0);
	*dev = st.st_dev;
	*ino = st.st_ino;
}

/*
 * Files no one maps any more go, least recently used first, past `keep`;
 * the module stays a shell (path, build-id) and is parsed back, the same
 * pointer, when the same file is mapped again; another file under the same
 * inode gets a new module. Images (the vDSO) are never evicted.
 */
static void test_evict(void **state)
{
	struct module_cache *c = module_cache_new();
	struct module_cache_stats st;
	struct self_map sm;
	struct module *self, *a, *b, *cm, *d, *d2, *img;
	char pa[512], pb[512], pc[512], pd[512], bid[129];
	uint64_t da, ia, db, ib, dc, ic, dd, id, bias, off, vaddr;
	size_t len;
	void *bytes;

	(void)state;
	self = self_module(c, &sm);
	assert_non_null(self);
	assert_int_equal(module_bias(self, sm.start, sm.pgoff, &bias), 0);
	vaddr = (uintptr_t)&module_test_target - bias;
	bytes = read_file("/proc/self/exe", &len);
	exe_copy("ev-a", bytes, len, pa, sizeof(pa), &da, &ia);
	exe_copy("ev-b", bytes, len, pb, sizeof(pb), &db, &ib);
	exe_copy("ev-c", bytes, len, pc, sizeof(pc), &dc, &ic);
	exe_copy("ev-d", bytes, len, pd, sizeof(pd), &dd, &id);
	a = module_cache_get(c, pa, pa, da, ia);
	b = module_cache_get(c, pb, pb, db, ib);
	cm = module_cache_get(c, pc, pc, dc, ic);
	img = module_cache_get_image(c, "[vdso]", bytes, len);
	assert_true(a && b && cm && img);
	snprintf(bid, sizeof(bid), "%s", module_build_id(cm));

	/* Nothing past keep: nothing goes. */
	module_cache_mark_begin(c);
	assert_int_equal(module_cache_evict(c, 4, on_evict, NULL), 0);
	assert_int_equal(evict_calls, 0);

	/* Round 1: self, a and b still mapped, c not: c goes (keep 0). */
	module_cache_mark_begin(c);
	module_cache_mark(c, self);
	module_cache_mark(c, a);
	module_cache_mark(c, b);
	module_cache_mark(c, NULL); /* a mapping without a module */
	assert_int_equal(module_cache_evict(c, 0, on_evict, NULL), 1);
	assert_int_equal(evict_calls, 1);
	assert_ptr_equal(evict_last, cm);
	assert_true(module_evicted(cm));
	/* A shell: the same path and build-id, no symbols, no code, no libelf handle. */
	assert_string_equal(module_path(cm), pc);
	assert_string_equal(module_build_id(cm), bid);
	assert_int_equal(module_nsyms(cm), 0);
	assert_null(module_symbolize(cm, vaddr, &off));
	assert_null(module_elf(cm));
	assert_int_not_equal(module_bias(cm, sm.start, sm.pgoff, &bias), 0);
	assert_false(module_evicted(a) || module_evicted(b) || module_evicted(img));

	/* Round 2: only a and self mapped; b unmapped but within keep 1. */
	module_cache_mark_begin(c);
	module_cache_mark(c, self);
	module_cache_mark(c, a);
	assert_int_equal(module_cache_evict(c, 1, on_evict, NULL), 0);

	/* Round 3: d is newer than b: b, the least recently used, goes; d stays. */
	d = module_cache_get(c, pd, pd, dd, id);
	assert_non_null(d);
	module_cache_mark_begin(c);
	module_cache_mark(c, self);
	module_cache_mark(c, a);
	assert_int_equal(module_cache_evict(c, 1, on_evict, NULL), 1);
	assert_ptr_equal(evict_last, b);
	assert_false(module_evicted(d));
	/* The image is never a candidate, even with keep 0 and nothing marked. */
	module_cache_mark_begin(c);
	assert_int_equal(module_cache_evict(c, 0, on_evict, NULL), 3); /* self, a and d */
	assert_false(module_evicted(img));
	assert_string_equal(module_symbolize(img, vaddr, &off), "module_test_target");

	/* Mapped again: the same file is parsed back into the same module. */
	assert_ptr_equal(module_cache_get(c, pc, pc, dc, ic), cm);
	assert_false(module_evicted(cm));
	assert_string_equal(module_symbolize(cm, vaddr, &off), "module_test_target");
	assert_string_equal(module_build_id(cm), bid);
	/* A path that no longer opens: NULL, and the shell is tried again next time. */
	assert_null(module_cache_get(c, "/nonexistent/pmutop/ev-a", pa, da, ia));
	assert_true(module_evicted(a));
	assert_ptr_equal(module_cache_get(c, pa, pa, da, ia), a);

	/* Another file under d's inode (rewritten in place): a new module. */
	{
		FILE *f = fopen(pd, "ae");

		assert_non_null(f);
		assert_int_equal(fputs("appended: another file", f) >= 0, 1);
		assert_int_equal(fclose(f), 0);
	}
	d2 = module_cache_get(c, pd, pd, dd, id);
	assert_non_null(d2);
	assert_ptr_not_equal(d2, d);
	assert_true(module_evicted(d)); /* the old shell stays, never reused */
	assert_string_equal(module_symbolize(d2, vaddr, &off), "module_test_target");
	assert_ptr_equal(module_cache_get(c, pd, pd, dd, id), d2);

	module_cache_get_stats(c, &st);
	assert_int_equal(st.evicted, 5);
	assert_int_equal(st.reopened, 2);
	assert_int_equal(st.replaced, 1);
	assert_int_equal(st.resident, 3); /* c, a and d2 (self stays evicted) */
	assert_int_equal(evict_calls, 5);
	free(bytes);
	module_cache_free(c);
}

/* ---- libc ---------------------------------------------------------------- */

/* test_parse_hook's hook: counts its calls, evicts like an owner with nothing mapped. */
struct hook_state {
	struct module_cache *c;
	size_t keep;
	unsigned calls;
	bool inside;
};

static void count_parse(void *arg)
{
	struct hook_state *h = arg;
	struct module_cache_stats st;

	assert_false(h->inside); /* never from within itself */
	h->inside = true;
	h->calls++;
	module_cache_mark_begin(h->c);
	module_cache_evict(h->c, h->keep, NULL, NULL);
	module_cache_get_stats(h->c, &st);
	assert_true(st.resident <= h->keep);
	h->inside = false;
}

/*
 * The parse hook runs before every file parsed (new, or evicted and mapped
 * again) and never on a hit, so an owner can cap the files parsed however
 * many are parsed between its own rounds; and a round in two steps: a
 * doomed module marked back is kept.
 */
static void test_parse_hook(void **state)
{
	struct module_cache *c = module_cache_new();
	struct hook_state h = { .c = c, .keep = 2 };
	struct module_cache_stats st;
	struct module *m[8];
	char path[8][512];
	uint64_t dev[8], ino[8];
	size_t len;
	void *bytes;

	(void)state;
	bytes = read_file("/proc/self/exe", &len);
	for (int i = 0; i < 8; i++) {
		char name[16];

		snprintf(name, sizeof(name), "ph-%d", i);
		exe_copy(name, bytes, len, path[i], sizeof(path[i]), &dev[i], &ino[i]);
	}
	module_cache_set_parse_hook(c, count_parse, &h);
	for (int i = 0; i < 8; i++) {
		m[i] = module_cache_get(c, path[i], path[i], dev[i], ino[i]);
		assert_non_null(m[i]);
		module_cache_get_stats(c, &st);
		/* keep before the parse, plus the file just parsed. */
		assert_true(st.resident <= h.keep + 1);
		assert_int_equal(h.calls, i + 1);
	}
	/* A hit parses nothing: no call. */
	assert_ptr_equal(module_cache_get(c, path[7], path[7], dev[7], ino[7]), m[7]);
	assert_int_equal(h.calls, 8);
	/* An evicted file mapped again is parsed again: a call first. */
	assert_true(module_evicted(m[0]));
	assert_ptr_equal(module_cache_get(c, path[0], path[0], dev[0], ino[0]), m[0]);
	assert_false(module_evicted(m[0]));
	assert_int_equal(h.calls, 9);
	module_cache_get_stats(c, &st);
	assert_int_equal(st.evicted, 6);
	assert_int_equal(st.reopened, 1);
	assert_int_equal(st.resident, 3);

	/* Two steps: the two oldest of m[6], m[7], m[0] are doomed; m[6] taken back. */
	module_cache_set_parse_hook(c, NULL, NULL);
	module_cache_mark_begin(c);
	assert_int_equal(module_cache_doom(c, 1), 2);
	assert_true(module_doomed(m[6]) && module_doomed(m[7]));
	assert_false(module_doomed(m[0]) || module_doomed(NULL));
	module_cache_mark(c, m[6]);
	assert_false(module_doomed(m[6]));
	assert_int_equal(module_cache_marked(c), 1);
	assert_int_equal(module_cache_evict_doomed(c, on_evict, NULL), 1);
	assert_true(module_evicted(m[7]));
	assert_false(module_evicted(m[6]) || module_evicted(m[0]));
	assert_false(module_doomed(m[7]));
	/* Nothing doomed any more: a second call evicts nothing. */
	assert_int_equal(module_cache_evict_doomed(c, on_evict, NULL), 0);
	/* Without the hook, parsing calls nothing. */
	assert_non_null(module_cache_get(c, path[1], path[1], dev[1], ino[1]));
	assert_int_equal(h.calls, 9);
	free(bytes);
	module_cache_free(c);
}

static void test_libc_getpid(void **state)
{
	struct module_cache *c = module_cache_new();
	struct self_map sm;
	struct module *m;
	uint64_t bias, off;
	const char *name;

	(void)state;
	assert_true(find_self_map((uintptr_t)&getpid, &sm));
	if (!strstr(sm.path, "libc")) {
		/* A non-PIE build resolves &getpid to a PLT stub in the executable. */
		skip();
	}
	m = module_cache_get(c, sm.path, sm.path, sm.dev, sm.ino);
	assert_non_null(m);
	assert_true(module_nsyms(m) > 100);
	assert_int_equal(strlen(module_build_id(m)) > 0, 1);
	assert_int_equal(module_bias(m, sm.start, sm.pgoff, &bias), 0);
	name = module_symbolize(m, (uintptr_t)&getpid - bias, &off);
	assert_non_null(name);
	if (strcmp(name, "getpid") != 0 && strcmp(name, "__getpid") != 0)
		fail_msg("getpid symbolized as %s", name);
	assert_int_equal(off, 0);

	/* (Not a function sanitizers intercept: &fopen would be in libasan.) */
	name = module_symbolize(m, (uintptr_t)&getppid - bias + 1, &off);
	assert_non_null(name);
	assert_non_null(strstr(name, "getppid"));
	assert_int_equal(off, 1);
	module_cache_free(c);
}

/* ---- corrupt input ------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void fill_random(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)rng();
}

static void test_corrupt_files(void **state)
{
	struct module_cache *c = module_cache_new();
	unsigned char *img, *copy;
	const Elf64_Ehdr *eh;
	char path[256];
	size_t len, i;
	int k = 0;

	(void)state;
	img = read_file("/proc/self/exe", &len);
	copy = malloc(len);
	assert_non_null(copy);
	eh = (const void *)img;
	assert_int_equal(eh->e_ident[EI_CLASS], ELFCLASS64);

	/* Random bytes, with and without an ELF magic in front. */
	for (i = 0; i < 16; i++) {
		size_t n = 64 + rng() % 8192;

		fill_random(copy, n);
		if (i & 1)
			memcpy(copy, img, i < 8 ? 4 : 16);
		snprintf(path, sizeof(path), "%s/random-%d", tmpdir, k++);
		write_file(path, copy, n);
		exercise(module_cache_get(c, path, path, 0, 0));
	}

	/* Truncated copies of this executable. */
	{
		size_t cuts[] = { 0, 1, 4, 15, 16, 52, 63, 64, 65, 100, 200, 511, 4096, 8191,
				  len / 8, len / 4, len / 3, len / 2, len - 4096, len - 64,
				  len - 1, (size_t)eh->e_shoff, (size_t)eh->e_shoff + 10,
				  (size_t)eh->e_phoff + 20 };

		for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
			if (cuts[i] > len)
				continue;
			snprintf(path, sizeof(path), "%s/trunc-%d", tmpdir, k++);
			write_file(path, img, cuts[i]);
			exercise(module_cache_get(c, path, path, 0, 0));
		}
	}

	/* Garbage section headers, garbage program headers. */
	for (i = 0; i < 8; i++) {
		size_t sh_bytes = (size_t)eh->e_shnum * eh->e_shentsize;
		size_t ph_bytes = (size_t)eh->e_phnum * eh->e_phentsize;

		memcpy(copy, img, len);
		if (i < 4 && eh->e_shoff + sh_bytes <= len)
			fill_random(copy + eh->e_shoff, sh_bytes);
		else if (eh->e_phoff + ph_bytes <= len)
			fill_random(copy + eh->e_phoff, ph_bytes);
		snprintf(path, sizeof(path), "%s/garbage-hdr-%d", tmpdir, k++);
		write_file(path, copy, len);
		exercise(module_cache_get(c, path, path, 0, 0));
	}

	/* Header fields pointing far outside the file. */
	{
		Elf64_Ehdr *w = (void *)copy;

		memcpy(copy, img, len);
		w->e_shoff = UINT64_MAX - 100;
		w->e_phoff = len - 8;
		w->e_shnum = 0xffff;
		snprintf(path, sizeof(path), "%s/bad-offsets-%d", tmpdir, k++);
		write_file(path, copy, len);
		exercise(module_cache_get(c, path, path, 0, 0));

		memcpy(copy, img, len);
		w->e_shstrndx = 0xfffe;
		w->e_shentsize = 3;
		w->e_phentsize = 7;
		snprintf(path, sizeof(path), "%s/bad-sizes-%d", tmpdir, k++);
		write_file(path, copy, len);
		exercise(module_cache_get(c, path, path, 0, 0));
	}
	free(copy);
	free(img);
	module_cache_free(c);
}

/*
 * Mutation fuzzing on in-memory images: each section header and program
 * header field, the symbol and string tables and the notes get random bytes.
 */
static void test_corrupt_images(void **state)
{
	unsigned char *img, *copy;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	size_t len, nregions = 0;
	struct { size_t off, len; } regions[64];
	struct module_cache *c = NULL;

	(void)state;
	img = read_file("/proc/self/exe", &len);
	copy = malloc(len);
	assert_non_null(copy);
	eh = (const void *)img;
	sh = (const void *)(img + eh->e_shoff);

	regions[nregions].off = 0;
	regions[nregions++].len = sizeof(*eh);
	regions[nregions].off = eh->e_phoff;
	regions[nregions++].len = (size_t)eh->e_phnum * eh->e_phentsize;
	regions[nregions].off = eh->e_shoff;
	regions[nregions++].len = (size_t)eh->e_shnum * eh->e_shentsize;
	for (unsigned i = 0; i < eh->e_shnum && nregions < 64; i++) {
		if (sh[i].sh_type == SHT_SYMTAB || sh[i].sh_type == SHT_DYNSYM ||
		    sh[i].sh_type == SHT_STRTAB || sh[i].sh_type == SHT_NOTE) {
			regions[nregions].off = sh[i].sh_offset;
			regions[nregions++].len = sh[i].sh_size;
		}
	}

	for (int iter = 0; iter < 600; iter++) {
		int flips = 1 + (int)(rng() % 16);
		char name[32];

		if (iter % 50 == 0) {
			module_cache_free(c);
			c = module_cache_new();
		}
		memcpy(copy, img, len);
		for (int f = 0; f < flips; f++) {
			size_t r = rng() % nregions;
			size_t off;

			if (regions[r].len == 0)
				continue;
			off = regions[r].off + rng() % regions[r].len;
			if (off >= len)
				continue;
			switch (rng() % 4) {
			case 0: copy[off] = (unsigned char)rng(); break;
			case 1: copy[off] = 0xff; break;
			case 2: copy[off] = 0; break;
			default: copy[off] ^= (unsigned char)(1u << (rng() % 8)); break;
			}
		}
		snprintf(name, sizeof(name), "fuzz-%d", iter);
		exercise(module_cache_get_image(c, name, copy,
						rng() % 8 ? len : (size_t)(rng() % len)));
	}
	module_cache_free(c);
	free(copy);
	free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exe_symbolize),
		cmocka_unit_test(test_exe_matches_loader),
		cmocka_unit_test(test_exe_read),
		cmocka_unit_test(test_asm_symbol_bounds),
		cmocka_unit_test(test_fde_range_whole_function),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_image),
		cmocka_unit_test(test_evict),
		cmocka_unit_test(test_parse_hook),
		cmocka_unit_test(test_libc_getpid),
		cmocka_unit_test(test_corrupt_files),
		cmocka_unit_test(test_corrupt_images),
	};

	return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
