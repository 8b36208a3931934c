/*
 * test_root.c - what "reached root" means (root.h, issue 31): the
 * outermost frame of a walk that ended by itself is classified from what
 * it is, in this very process - its entry point and libc's clone are
 * roots, an ordinary function is a stack cut on the way, and the heap or a
 * small number (what the frame-pointer chain of Python once ended on,
 * "[heap]+0xc3a5f" and "0x5", both counted as "reached root") is not code.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"
#include "pmutop/unwind/root.h"

struct fixture {
	struct module_cache *cache;
	struct maps *maps;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->cache = module_cache_new();
	f->maps = maps_new(getpid(), f->cache);
	assert_int_equal(maps_load_proc(f->maps), 0);
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

/* An ordinary function, somewhere in the middle of stacks. */
__attribute__((noinline)) static int middle(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}

static bool always(void *arg, uint64_t addr)
{
	(void)arg, (void)addr;
	return true;
}

static bool never(void *arg, uint64_t addr)
{
	(void)arg, (void)addr;
	return false;
}

static void test_cut_stack_is_not_root(void **state)
{
	struct fixture *f = *state;
	uint64_t a = (uintptr_t)&middle + 2;

	assert_int_equal(middle(1), 4);
	/* Code, but no thread starts there: a walk that stops here was cut. */
	assert_int_equal(unwind_root_classify(f->maps, a, NULL, NULL), UNWIND_NO_ROOT);
	assert_int_equal(unwind_root_classify(f->maps, a, never, NULL), UNWIND_NO_ROOT);
	/* Unless the CFI marks its return address undefined. */
	assert_int_equal(unwind_root_classify(f->maps, a, always, NULL), UNWIND_ROOT);
}

static void test_not_code_is_bad_frame(void **state)
{
	struct fixture *f = *state;
	char *heap = malloc(64);

	assert_int_equal(unwind_root_classify(f->maps, 0x5, NULL, NULL), UNWIND_BAD_FRAME);
	assert_int_equal(unwind_root_classify(f->maps, (uintptr_t)heap, NULL, NULL),
			 UNWIND_BAD_FRAME);
	/* Even a CFI answer does not make data a frame. */
	assert_int_equal(unwind_root_classify(f->maps, (uintptr_t)heap, always, NULL),
			 UNWIND_BAD_FRAME);
	assert_int_equal(unwind_root_classify(f->maps, (uintptr_t)&f, NULL, NULL),
			 UNWIND_BAD_FRAME); /* the stack */
	free(heap);
}

static void test_thread_entries_are_root(void **state)
{
	struct fixture *f = *state;
	uint64_t entry = getauxval(AT_ENTRY);
	void *clone_fn = dlsym(RTLD_DEFAULT, "clone");

	/* This program's entry point (_start), by position whatever its symbols. */
	assert_true(entry != 0);
	assert_int_equal(unwind_root_classify(f->maps, entry + 1, NULL, NULL), UNWIND_ROOT);
	/* libc's clone(), by name (.dynsym). */
	assert_non_null(clone_fn);
	assert_int_equal(unwind_root_classify(f->maps, (uintptr_t)clone_fn + 4, NULL, NULL),
			 UNWIND_ROOT);
	/* A kernel thread's stack ends in the kernel. */
	assert_int_equal(unwind_root_classify(f->maps, 0xffffffff81000000ull, NULL, NULL),
			 UNWIND_ROOT);
}

static void test_names(void **state)
{
	(void)state;
	assert_true(unwind_root_name("_start"));
	assert_true(unwind_root_name("__libc_start_call_main"));
	assert_true(unwind_root_name("start_thread"));
	assert_true(unwind_root_name("__GI___clone3"));
	assert_true(unwind_root_name("runtime.goexit.abi0"));
	assert_true(unwind_root_name("runtime.mstart"));
	assert_false(unwind_root_name("main"));
	assert_false(unwind_root_name("_start_thing"));
	assert_false(unwind_root_name("runtime.goexit1"));
	assert_false(unwind_root_name(".abi0"));
	assert_false(unwind_root_name(""));
	assert_false(unwind_root_name(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cut_stack_is_not_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_code_is_bad_frame, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_entries_are_root, setup, teardown),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
