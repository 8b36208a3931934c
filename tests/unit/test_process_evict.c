/*
 * test_process_evict.c - the cap on files no live process maps (issue 21
 * item 5), as the process table enforces it: distinct programs run one
 * after another (fork, exec, mmap, exit), each a copy of this test binary.
 *
 * The cap must hold at every parse, with no maintenance round in between
 * (process_table_evict() is never called here): the bound may not depend on
 * how many files are parsed between two rounds. And it must never take a
 * file a live process maps, an exited one not yet collected maps (its
 * samples may still be in the buffers), or one whose lines are pending
 * until they are looked up.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmutop/frontend/process.h"
#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"

#define NCOPIES 24
#define KEEP 4
#define BASE 0x400000ULL
#define FAKE_PID 3000000 /* above pid_max's ceiling (4194304 is the limit; none here) */

static char tmpdir[] = "/tmp/pmutop-test-evict-XXXXXX";
static char paths[NCOPIES][512];
static uint64_t devs[NCOPIES], inos[NCOPIES];
static size_t file_len;

static int setup(void **state)
{
	FILE *in, *out;
	char buf[65536];
	size_t n;

	(void)state;
	if (!mkdtemp(tmpdir))
		return -1;
	for (int i = 0; i < NCOPIES; i++) {
		struct stat st;

		snprintf(paths[i], sizeof(paths[i]), "%s/prog%02d", tmpdir, i);
		in = fopen("/proc/self/exe", "rbe");
		out = fopen(paths[i], "wbe");
		if (!in || !out)
			return -1;
		while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
			if (fwrite(buf, 1, n, out) != n)
				return -1;
		fclose(in);
		if (fclose(out) || stat(paths[i], &st))
			return -1;
		devs[i] = st.st_dev;
		inos[i] = st.st_ino;
		file_len = (size_t)st.st_size;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < NCOPIES; i++)
		unlink(paths[i]);
	rmdir(tmpdir);
	return 0;
}

/* Map copy i into p as a program's image (an MMAP2 record); its mapping. */
static const struct mapping *map_copy(struct process *p, int i)
{
	struct maps *m = process_maps(p);

	assert_int_equal(maps_add(m, BASE, (file_len + 4095) & ~4095ULL, 0, devs[i], inos[i],
				  true, paths[i]), 0);
	return maps_find(m, BASE);
}

static size_t resident(struct module_cache *c)
{
	struct module_cache_stats st;

	module_cache_get_stats(c, &st);
	return st.resident;
}

/* The parent: a shell with copy 0 mapped for the whole run. */
static struct process *start_shell(struct process_table *t, const struct mapping **map)
{
	char err[256];
	struct process *sh;

	assert_int_equal(process_table_add_root(t, getpid(), true, err, sizeof(err)), 0);
	sh = process_table_get(t, getpid());
	assert_non_null(sh);
	*map = map_copy(sh, 0);
	assert_non_null(*map);
	assert_non_null((*map)->mod);
	return sh;
}

/*
 * fork + exec of copy i: the child's mapping of it. The child has samples,
 * so its maps (and the mapping returned) outlive its collection.
 */
static const struct mapping *run_copy(struct process_table *t, struct process **child, int i)
{
	const struct mapping *map;

	*child = process_table_spawn(t, FAKE_PID + i, getpid());
	assert_non_null(*child);
	process_note_sample(*child);
	process_exec(t, *child, "prog");
	map = map_copy(*child, i);
	assert_non_null(map);
	assert_non_null(map->mod);
	return map;
}

static void end_copy(struct process_table *t, struct process *child)
{
	process_table_exit(t, child);
	process_table_collect(t, NULL, NULL);
}

/*
 * Programs one after another, no maintenance round: after each parse, the
 * parsed files are at most the cap plus what live processes map (the
 * shell's copy 0 and the running child's); those are never evicted.
 */
static void test_cap_at_every_parse(void **state)
{
	struct module_cache *c = module_cache_new();
	struct process_table *t = process_table_new(c, 1000);
	const struct mapping *sh_map, *map;
	struct process_stats st;
	struct process *child;

	(void)state;
	assert_non_null(t);
	process_table_set_module_keep(t, KEEP);
	start_shell(t, &sh_map);
	for (int i = 1; i < NCOPIES; i++) {
		map = run_copy(t, &child, i);
		assert_false(module_evicted(map->mod));
		assert_false(module_evicted(sh_map->mod));
		assert_true(resident(c) <= KEEP + 2);
		end_copy(t, child);
	}
	process_table_stats(t, &st);
	/* Copies 1..NCOPIES-1 parsed; the last one and KEEP before it stay. */
	assert_int_equal(st.modules.evicted, NCOPIES - 2 - KEEP);
	assert_true(st.modules.resident_max <= KEEP + 2);
	process_table_free(t);
	module_cache_free(c);
}

/*
 * A child that exited but is not collected yet (its samples may still be
 * in another CPU's buffer): its file is kept even with a cap of 0, and goes
 * at the first parse after it is collected.
 */
static void test_uncollected_kept(void **state)
{
	struct module_cache *c = module_cache_new();
	struct process_table *t = process_table_new(c, 1000);
	const struct mapping *sh_map, *a, *b;
	struct process *pa, *pb, *pc;

	(void)state;
	assert_non_null(t);
	process_table_set_module_keep(t, 0);
	start_shell(t, &sh_map);
	a = run_copy(t, &pa, 1);
	process_table_exit(t, pa); /* not collected */
	b = run_copy(t, &pb, 2);
	assert_false(module_evicted(a->mod));
	assert_false(module_evicted(b->mod));
	end_copy(t, pb); /* collects both */
	run_copy(t, &pc, 3);
	assert_true(module_evicted(a->mod));
	assert_true(module_evicted(b->mod));
	assert_false(module_evicted(sh_map->mod));
	process_table_free(t);
	module_cache_free(c);
}

/* Pending line lookups: the mappings they need; resolve() drops them unless stuck. */
struct lines {
	const struct mapping *v[NCOPIES];
	size_t n;
	bool stuck;            /* like a debug file still on its way: stays pending */
	unsigned resolves;     /* calls */
	unsigned of_doomed;    /* pending lookups of doomed modules seen by those calls */
};

static const struct mapping *lines_pending(void *arg, size_t i)
{
	struct lines *l = arg;

	return i < l->n ? l->v[i] : NULL;
}

static int lines_resolve(void *arg)
{
	struct lines *l = arg;
	size_t kept = 0;

	l->resolves++;
	for (size_t i = 0; i < l->n; i++) {
		bool doomed = module_doomed(l->v[i]->mod);

		/* Looked up while the module is still parsed. */
		assert_false(module_evicted(l->v[i]->mod));
		l->of_doomed += doomed;
		if (!doomed || l->stuck)
			l->v[kept++] = l->v[i];
	}
	l->n = kept;
	return 0;
}

/*
 * A file whose lines are pending is looked up before it is evicted; while
 * the lookup cannot be done (stuck) it is kept, past the cap.
 */
static void test_pending_lines(void **state)
{
	struct module_cache *c = module_cache_new();
	struct process_table *t = process_table_new(c, 1000);
	struct lines l = { .stuck = true };
	const struct mapping *sh_map, *a;
	struct process *child;

	(void)state;
	assert_non_null(t);
	process_table_set_module_keep(t, 1);
	process_table_set_lines(t, lines_pending, lines_resolve, &l);
	start_shell(t, &sh_map);
	a = run_copy(t, &child, 1);
	l.v[l.n++] = a; /* a sample in copy 1 waits for its lines */
	end_copy(t, child);
	/*
	 * Copy 1 is the least recently used at copy 3's parse: doomed, its
	 * lines asked for, stuck: kept, then and at every round after.
	 */
	for (int i = 2; i < 6; i++) {
		run_copy(t, &child, i);
		end_copy(t, child);
	}
	assert_true(l.resolves > 0);
	assert_true(l.of_doomed > 0);
	assert_false(module_evicted(a->mod));
	assert_int_equal(l.n, 1);
	/*
	 * Looked up now: it goes once doomed again - at the next parse, or the
	 * one after when another file was last used in the same round (a tie).
	 */
	l.stuck = false;
	for (int i = 6; i < 8 && l.n; i++) {
		run_copy(t, &child, i);
		end_copy(t, child);
	}
	assert_int_equal(l.n, 0);
	assert_true(module_evicted(a->mod));
	process_table_free(t);
	module_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cap_at_every_parse),
		cmocka_unit_test(test_uncollected_kept),
		cmocka_unit_test(test_pending_lines),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
