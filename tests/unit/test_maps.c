/*
 * test_maps.c - the memory map of this very process: /proc/self/maps
 * loading, module attachment (executable, vDSO, a deleted file), and the
 * bookkeeping of maps_add over synthetic ranges (overlap trimming and
 * splitting, stable pointers, ids, reset, generation).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"
#include "pmutop/symbols/symbolize.h"

static volatile int sink;

__attribute__((noinline, noclone, used))
static int maps_test_target(int x)
{
	int i, acc = 0;

	for (i = 0; i < x; i++)
		acc += sink ^ i;
	return acc;
}

struct fixture {
	struct module_cache *cache;
	struct maps *maps;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->cache = module_cache_new();
	f->maps = maps_new(getpid(), f->cache);
	if (!f->cache || !f->maps)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	maps_free(f->maps);
	module_cache_free(f->cache);
	free(f);
	return 0;
}

static void self_exe_path(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);

	assert_true(n > 0);
	buf[n] = '\0';
}

static void test_load_self(void **state)
{
	struct fixture *f = *state;
	const struct mapping *map;
	char exe[PATH_MAX];
	uint64_t ip = (uintptr_t)&maps_test_target;
	struct frame fr;

	self_exe_path(exe, sizeof(exe));
	assert_int_equal(maps_pid(f->maps), getpid());
	assert_int_equal(maps_load_proc(f->maps), 0);

	map = maps_find(f->maps, ip);
	assert_non_null(map);
	assert_true(map->exec);
	assert_string_equal(map->path, exe);
	assert_non_null(map->mod);
	assert_true(map->id >= 1);
	assert_true(map->start <= ip && ip < map->end);
	assert_true(map->ino != 0);

	/* Edges: [start, end). */
	assert_ptr_equal(maps_find(f->maps, map->start), map);
	assert_ptr_equal(maps_find(f->maps, map->end - 1), map);
	assert_ptr_not_equal(maps_find(f->maps, map->end), map);

	symbolize_stack(f->maps, &ip, 1, &fr);
	assert_ptr_equal(fr.map, map);
	assert_non_null(fr.func);
	assert_string_equal(fr.func, "maps_test_target");
	assert_int_equal(fr.func_off, 0);

	/* Non-exec mappings are kept too: the stack, the heap of this test. */
	map = maps_find(f->maps, (uintptr_t)&map);
	assert_non_null(map);
	assert_false(map->exec);
	assert_null(maps_find(f->maps, 0));
	assert_null(maps_find(f->maps, UINT64_MAX));
}

static void test_reload_reuses_unchanged(void **state)
{
	struct fixture *f = *state;
	const struct mapping *a, *b;
	uint64_t gen;

	assert_int_equal(maps_load_proc(f->maps), 0);
	a = maps_find(f->maps, (uintptr_t)&maps_test_target);
	gen = maps_generation(f->maps);
	assert_int_equal(maps_load_proc(f->maps), 0);
	b = maps_find(f->maps, (uintptr_t)&maps_test_target);
	assert_ptr_equal(a, b);
	assert_true(maps_generation(f->maps) != gen);
}

static void test_vdso(void **state)
{
	struct fixture *f = *state;
	uint64_t base = getauxval(AT_SYSINFO_EHDR), lo, hi, v;
	const struct mapping *map;
	int named = 0;

	if (!base)
		skip();
	assert_int_equal(maps_load_proc(f->maps), 0);
	map = maps_find(f->maps, base);
	assert_non_null(map);
	assert_string_equal(map->path, "[vdso]");
	assert_true(map->exec);
	assert_non_null(map->mod);
	assert_true(module_nsyms(map->mod) > 0);
	assert_string_equal(module_path(map->mod), "[vdso]");

	module_text_range(map->mod, &lo, &hi);
	assert_true(hi > lo);
	for (v = lo; v < hi; v++) {
		uint64_t ip = v + map->bias;
		struct frame fr;

		symbolize_stack(f->maps, &ip, 1, &fr);
		assert_ptr_equal(fr.map, map);
		if (fr.func && (strncmp(fr.func, "__vdso_", 7) == 0 ||
				strncmp(fr.func, "clock_", 6) == 0))
			named++;
	}
	assert_true(named > 0);

	/* The module's bytes are the vDSO's bytes. */
	{
		unsigned char buf[64];

		assert_int_equal(module_read(map->mod, lo, buf, sizeof(buf)), 0);
		assert_memory_equal(buf, (const void *)(uintptr_t)(lo + map->bias), sizeof(buf));
	}
}

static void test_add_overlap(void **state)
{
	struct fixture *f = *state;
	struct maps *m = maps_new(getpid(), f->cache);
	const struct mapping *a, *l, *b, *r, *c, *x;
	uint64_t gen;

	assert_non_null(m);
	gen = maps_generation(m);

	assert_int_equal(maps_add(m, 0x10000, 0x40000, 0x1000, 0, 0, true, "/nonexistent/a.so"), 0);
	assert_true(maps_generation(m) != gen);
	a = maps_find(m, 0x10000);
	assert_non_null(a);
	assert_null(a->mod);
	assert_int_equal(a->end, 0x50000);
	assert_null(maps_find(m, 0xffff));
	assert_null(maps_find(m, 0x50000));

	/* B in the middle of A splits it into two visible pieces. */
	gen = maps_generation(m);
	assert_int_equal(maps_add(m, 0x20000, 0x10000, 0, 0, 0, false, ""), 0);
	assert_true(maps_generation(m) != gen);
	l = maps_find(m, 0x1ffff);
	b = maps_find(m, 0x20000);
	r = maps_find(m, 0x30000);
	assert_non_null(l);
	assert_non_null(b);
	assert_non_null(r);
	assert_ptr_equal(maps_find(m, 0x10000), l);
	assert_ptr_equal(maps_find(m, 0x2ffff), b);
	assert_ptr_equal(maps_find(m, 0x4ffff), r);
	assert_int_equal(l->start, 0x10000);
	assert_int_equal(l->end, 0x20000);
	assert_int_equal(l->pgoff, 0x1000);
	assert_int_equal(r->start, 0x30000);
	assert_int_equal(r->end, 0x50000);
	assert_int_equal(r->pgoff, 0x1000 + 0x20000);
	assert_string_equal(l->path, "/nonexistent/a.so");
	assert_string_equal(r->path, "/nonexistent/a.so");
	assert_true(l->exec && r->exec && !b->exec);

	/* The old object is unchanged and still valid; ids are unique and increasing. */
	assert_int_equal(a->start, 0x10000);
	assert_int_equal(a->end, 0x50000);
	assert_true(a->id < b->id);
	assert_true(l->id != a->id && r->id != a->id && l->id != r->id);
	assert_true(l->id != b->id && r->id != b->id);

	/* C over the end of L and the start of B trims both. */
	assert_int_equal(maps_add(m, 0x18000, 0x10000, 0, 0, 0, false, "[heap]"), 0);
	c = maps_find(m, 0x18000);
	assert_string_equal(c->path, "[heap]");
	x = maps_find(m, 0x17fff);
	assert_int_equal(x->start, 0x10000);
	assert_int_equal(x->end, 0x18000);
	x = maps_find(m, 0x28000);
	assert_int_equal(x->start, 0x28000);
	assert_int_equal(x->end, 0x30000);
	assert_ptr_equal(maps_find(m, 0x30000), r);

	/* Exactly covering one mapping replaces it; adjacency is not overlap. */
	assert_int_equal(maps_add(m, 0x30000, 0x20000, 0, 0, 0, false, "[stack]"), 0);
	assert_string_equal(maps_find(m, 0x30000)->path, "[stack]");
	assert_string_equal(maps_find(m, 0x4ffff)->path, "[stack]");
	assert_int_equal(maps_find(m, 0x2ffff)->end, 0x30000);
	assert_int_equal(maps_add(m, 0x50000, 0x1000, 0, 0, 0, false, "after"), 0);
	assert_int_equal(maps_add(m, 0x8000, 0x1000, 0, 0, 0, false, "before"), 0);
	assert_string_equal(maps_find(m, 0x8000)->path, "before");
	assert_string_equal(maps_find(m, 0x50fff)->path, "after");
	assert_string_equal(maps_find(m, 0x4ffff)->path, "[stack]");
	assert_null(maps_find(m, 0x9000));

	/* One mapping over everything hides all of it. */
	assert_int_equal(maps_add(m, 0x0, 0x100000, 0, 0, 0, true, "big"), 0);
	for (uint64_t addr = 0; addr < 0x100000; addr += 0x800)
		assert_string_equal(maps_find(m, addr)->path, "big");
	assert_null(maps_find(m, 0x100000));

	/* Zero length: nothing. */
	gen = maps_generation(m);
	assert_int_equal(maps_add(m, 0x200000, 0, 0, 0, 0, false, "zero"), 0);
	assert_null(maps_find(m, 0x200000));

	/* Old pointers still readable after all that. */
	assert_string_equal(b->path, "");
	assert_string_equal(l->path, "/nonexistent/a.so");
	maps_free(m);
	maps_free(NULL);
}

static void test_add_many_random(void **state)
{
	struct fixture *f = *state;
	struct maps *m = maps_new(getpid(), f->cache);
	/* Reference model: owner label per 4 KiB page of a 1 MiB space. */
	static int owner[256];
	uint64_t s = 12345;

	assert_non_null(m);
	for (int i = 0; i < 256; i++)
		owner[i] = -1;
	for (int iter = 0; iter < 2000; iter++) {
		char label[16];
		uint64_t start, len;

		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		start = (s >> 33) % 256;
		len = 1 + (s >> 20) % 16;
		if (start + len > 256)
			len = 256 - start;
		snprintf(label, sizeof(label), "%d", iter);
		assert_int_equal(maps_add(m, start * 4096, len * 4096, 0, 0, 0, false, label), 0);
		for (uint64_t p = start; p < start + len; p++)
			owner[p] = iter;
		if (iter % 97 == 0) {
			for (int p = 0; p < 256; p++) {
				const struct mapping *map = maps_find(m, (uint64_t)p * 4096 + 7);

				if (owner[p] < 0) {
					assert_null(map);
				} else {
					assert_non_null(map);
					assert_int_equal(atoi(map->path), owner[p]);
				}
			}
		}
	}
	maps_free(m);
}

static void test_reset(void **state)
{
	struct fixture *f = *state;
	const struct mapping *map;
	uint64_t gen;
	uint32_t id;

	assert_int_equal(maps_load_proc(f->maps), 0);
	map = maps_find(f->maps, (uintptr_t)&maps_test_target);
	assert_non_null(map);
	id = map->id;
	gen = maps_generation(f->maps);
	maps_reset(f->maps);
	assert_true(maps_generation(f->maps) != gen);
	assert_null(maps_find(f->maps, (uintptr_t)&maps_test_target));
	/* History survives: the pointer is still good. */
	assert_int_equal(map->id, id);
	assert_non_null(map->path);

	assert_int_equal(maps_load_proc(f->maps), 0);
	assert_non_null(maps_find(f->maps, (uintptr_t)&maps_test_target));
}

/* maps_add of the real executable mapping attaches the module and bias. */
static void test_add_file(void **state)
{
	struct fixture *f = *state;
	struct maps *m = maps_new(getpid(), f->cache);
	const struct mapping *ref, *map;
	uint64_t ip = (uintptr_t)&maps_test_target;
	struct frame fr;

	assert_int_equal(maps_load_proc(f->maps), 0);
	ref = maps_find(f->maps, ip);
	assert_non_null(ref);
	assert_int_equal(maps_add(m, ref->start, ref->end - ref->start, ref->pgoff, ref->dev,
				  ref->ino, true, ref->path), 0);
	map = maps_find(m, ip);
	assert_non_null(map);
	assert_ptr_equal(map->mod, ref->mod);
	assert_int_equal(map->bias, ref->bias);
	symbolize_stack(m, &ip, 1, &fr);
	assert_string_equal(fr.func, "maps_test_target");
	maps_free(m);
}

/*
 * A mapped file that was deleted: only /proc/PID/map_files can open it,
 * which needs privileges. Without them the mapping has no module.
 */
static void test_deleted_file(void **state)
{
	struct fixture *f = *state;
	char path[] = "/tmp/pmutop-test-maps-XXXXXX";
	char mf[128];
	const struct mapping *map;
	unsigned char buf[4096];
	struct stat st;
	ssize_t n;
	void *p;
	int in, out;

	out = mkstemp(path);
	assert_true(out >= 0);
	in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(in >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	assert_int_equal(fstat(out, &st), 0);
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, out, 0);
	assert_true(p != MAP_FAILED);
	close(out);
	assert_int_equal(unlink(path), 0);

	assert_int_equal(maps_load_proc(f->maps), 0);
	map = maps_find(f->maps, (uintptr_t)p);
	assert_non_null(map);
	assert_non_null(strstr(map->path, " (deleted)"));
	assert_false(map->exec);
	snprintf(mf, sizeof(mf), "/proc/self/map_files/%lx-%lx", (unsigned long)map->start,
		 (unsigned long)map->end);
	in = open(mf, O_RDONLY | O_CLOEXEC);
	if (in >= 0) {
		const struct mapping *exe = maps_find(f->maps, (uintptr_t)&maps_test_target);

		close(in);
		assert_non_null(map->mod);
		assert_string_equal(module_build_id(map->mod), module_build_id(exe->mod));
		assert_int_equal(module_nsyms(map->mod), module_nsyms(exe->mod));
	} else {
		assert_null(map->mod);
	}
	munmap(p, (size_t)st.st_size);
}

/* Another process (a forked child): paths go through /proc/CHILD/... */
static void test_other_process(void **state)
{
	struct fixture *f = *state;
	uint64_t ips[2] = { (uintptr_t)&maps_test_target, getauxval(AT_SYSINFO_EHDR) };
	const struct mapping *map;
	struct frame fr[2];
	struct maps *m;
	int pipefd[2], status;
	char c;
	pid_t pid;

	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pipefd[0]);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	assert_int_equal(read(pipefd[0], &c, 1), 1);
	close(pipefd[0]);

	m = maps_new(pid, f->cache);
	assert_non_null(m);
	assert_int_equal(maps_pid(m), pid);
	assert_int_equal(maps_load_proc(m), 0);
	/* A forked child has our layout. */
	map = maps_find(m, ips[0]);
	assert_non_null(map);
	assert_true(map->exec);
	assert_non_null(map->mod);
	symbolize_stack(m, ips, 1, fr);
	assert_string_equal(fr[0].func, "maps_test_target");
	if (ips[1]) {
		map = maps_find(m, ips[1]);
		assert_non_null(map);
		assert_string_equal(map->path, "[vdso]");
		assert_non_null(map->mod);
	}
	maps_free(m);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
}

static void test_load_gone_process(void **state)
{
	struct fixture *f = *state;
	struct maps *m = maps_new(INT_MAX, f->cache);

	assert_non_null(m);
	assert_true(maps_load_proc(m) < 0);
	assert_null(maps_find(m, (uintptr_t)&maps_test_target));
	maps_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_load_self, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload_reuses_unchanged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vdso, setup, teardown),
		cmocka_unit_test_setup_teardown(test_add_overlap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_add_many_random, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_add_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deleted_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_gone_process, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
