/*
 * test_annotate.c - the instruction-level model on a function whose bytes
 * are known (written in assembly below, inside this test binary): capstone's
 * decoding and branch kinds, samples placed by address, basic blocks, CPI
 * from a cycles/instructions pair, and the errors for names the profile
 * does not have or has several of.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/annotate.h"

/*
 * 0: xor %eax,%eax      2 bytes
 * 2: add $1,%eax        3 bytes  <- the loop (a jump target)
 * 5: cmp $10,%eax       3 bytes
 * 8: jne 2              2 bytes
 * a: ret                1 byte
 */
__asm__(".pushsection .text\n"
	".p2align 4\n"
	".globl tann_loop\n"
	".type tann_loop, @function\n"
	"tann_loop:\n"
	"  xorl %eax, %eax\n"
	"1: addl $1, %eax\n"
	"  cmpl $10, %eax\n"
	"  jne 1b\n"
	"  ret\n"
	".size tann_loop, .-tann_loop\n"
	".popsection\n");
void tann_loop(void);

/* The mapping of this binary that holds addr, from /proc/self/maps. */
static void self_mapping(uintptr_t addr, uint64_t *start, uint64_t *end, uint64_t *off,
			 char *path, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, o;
		char perms[8], p[512] = "";

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %511s", &s, &e, perms, &o, p) >= 4 &&
		    addr >= s && addr < e) {
			*start = s, *end = e, *off = o;
			snprintf(path, len, "%s", p);
			fclose(f);
			return;
		}
	}
	fclose(f);
	fail_msg("no mapping holds %#lx", (unsigned long)addr);
}

/*
 * A profile with events (cycles, instructions) whose samples sit on
 * tann_loop's instructions: at +2 (add) cycles 600 / instructions 200, at
 * +8 (jne) cycles 200 / instructions 200, at +0xa (ret) cycles 100 /
 * instructions 0; plus a second function "tann_loop_other" elsewhere so a
 * substring is ambiguous.
 */
static struct aggregate *profile(void)
{
	struct aggregate *a = aggregate_new();
	uintptr_t fn = (uintptr_t)&tann_loop;
	uint64_t start = 0, end = 0, off = 0;
	char path[512];
	uint32_t map, f1, f2, l_add, l_jne, l_ret, l_other;
	const uint64_t w_add[2] = { 600, 200 }, w_jne[2] = { 200, 200 }, w_ret[2] = { 100, 0 };
	const uint64_t w_other[2] = { 50, 50 };

	assert_non_null(a);
	self_mapping(fn, &start, &end, &off, path, sizeof(path));
	assert_int_equal(aggregate_import_mapping(a, start, end, off, path, "", true, &map), 0);
	assert_int_equal(aggregate_import_function(a, "tann_loop", path, &f1), 0);
	assert_int_equal(aggregate_import_function(a, "tann_loop_other", path, &f2), 0);
	assert_int_equal(aggregate_import_location(a, map, fn + 2, f1, &l_add), 0);
	assert_int_equal(aggregate_import_location(a, map, fn + 8, f1, &l_jne), 0);
	assert_int_equal(aggregate_import_location(a, map, fn + 0xa, f1, &l_ret), 0);
	assert_int_equal(aggregate_import_location(a, map, (uintptr_t)&profile, f2, &l_other), 0);
	assert_int_equal(aggregate_import_stack(a, 1, &l_add, 1, 6, w_add, 2), 0);
	assert_int_equal(aggregate_import_stack(a, 1, &l_jne, 1, 2, w_jne, 2), 0);
	assert_int_equal(aggregate_import_stack(a, 1, &l_ret, 1, 1, w_ret, 2), 0);
	assert_int_equal(aggregate_import_stack(a, 1, &l_other, 1, 1, w_other, 2), 0);
	assert_int_equal(aggregate_set_event_k(a, 0, "cycles", "count", 100), 0);
	assert_int_equal(aggregate_set_event_k(a, 1, "instructions", "count", 100), 0);
	return a;
}

static void listing_of_known_bytes(void **state)
{
	struct aggregate *a = profile();
	struct annotation *an = NULL;
	char err[512];

	(void)state;
	assert_int_equal(annotate_build(a, "tann_loop", NULL, &an, err, sizeof(err)), 0);
	assert_int_equal(an->n, 5);
	assert_int_equal(an->size, 11);
	assert_string_equal(an->insns[0].in.mnemonic, "xorl");
	assert_int_equal(an->insns[3].in.kind, INSN_CJUMP);
	assert_int_equal(an->insns[3].in.target, an->start + 2);
	assert_int_equal(an->insns[4].in.kind, INSN_RET);
	assert_true(an->insns[1].jump_target);
	assert_non_null(strstr(an->insns[3].text, "<tann_loop+0x2>"));

	/* Samples by address, per event; the other function's are not here. */
	assert_int_equal(an->insns[1].w[0], 600);
	assert_int_equal(an->insns[3].w[1], 200);
	assert_int_equal(an->insns[4].w[0], 100);
	assert_int_equal(an->total[0], 900);
	assert_int_equal(an->total[1], 400);
	assert_int_equal(an->profile_total[0], 950);
	assert_int_equal(an->samples, 9);
	assert_int_equal(an->unplaced, 0);
	assert_int_equal(annotation_hottest(an, 0), 1);

	/* Blocks: [xor] [add cmp jne] [ret]; CPI = cycles / instructions. */
	assert_int_equal(an->nblocks, 3);
	assert_int_equal(an->insns[2].block, 1);
	assert_int_equal(an->blocks[1].n, 3);
	assert_true(an->blocks[1].has_cpi);
	assert_true(an->blocks[1].cpi > 1.99 && an->blocks[1].cpi < 2.01);
	assert_false(an->blocks[2].has_cpi); /* no instructions counted there */
	assert_int_equal(an->cycles_ev, 0);
	assert_int_equal(an->instr_ev, 1);
	annotation_free(an);
	aggregate_free(a);
}

static void names_not_there_or_ambiguous(void **state)
{
	struct aggregate *a = profile();
	struct annotation *an = NULL;
	char err[512];

	(void)state;
	assert_int_equal(annotate_build(a, "no_such", NULL, &an, err, sizeof(err)), -ENOENT);
	assert_null(an);
	assert_non_null(strstr(err, "no function \"no_such\""));
	/* "tann" is in both names: listed, not guessed. */
	assert_int_equal(annotate_build(a, "tann", NULL, &an, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "tann_loop_other"));
	/* A unique substring is enough. */
	assert_int_equal(annotate_build(a, "_other", NULL, &an, err, sizeof(err)), 0);
	assert_string_equal(an->func, "tann_loop_other");
	annotation_free(an);
	aggregate_free(a);
}

static void printed_listing(void **state)
{
	struct aggregate *a = profile();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_int_equal(annotate_print_function(a, "tann_loop", NULL, f, stderr), 0);
	fclose(f);
	/* Event columns, CPI~ on the loop block's first line, 600/900 = 66.67%. */
	assert_non_null(strstr(buf, "cycles instructions"));
	assert_non_null(strstr(buf, "CPI~"));
	assert_non_null(strstr(buf, "66.67%"));
	assert_non_null(strstr(buf, "2.00"));
	free(buf);
	aggregate_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(listing_of_known_bytes),
		cmocka_unit_test(names_not_there_or_ambiguous),
		cmocka_unit_test(printed_listing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
