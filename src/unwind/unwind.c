/*
 * unwind.c - remote DWARF unwinding of perf samples with libunwind.
 *
 * libunwind drives the CFI interpretation; pmutop supplies its accessors:
 *  - registers from the sample (perf's register order mapped to DWARF's),
 *  - memory from the kernel's stack copy, then from the module's own file
 *    image (code, .eh_frame, .eh_frame_hdr), then from the live target with
 *    process_vm_readv (stack above the copy, JIT/anonymous memory),
 *  - procedure info from each module's .eh_frame_hdr binary-search table,
 *    looked up by libunwind's own dwarf_search_unwind_table.
 * The address space uses UNW_CACHE_GLOBAL: after warm-up nearly every step
 * is a cache hit and no table is parsed again (see shared/notes). Where a
 * frame has no CFI, libunwind falls back to the RBP chain by itself.
 */
#include "pmutop/unwind/unwind.h"

#include <errno.h>
#include <libunwind.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"
#include "pmutop/sample/perf_record.h"
#include "pmutop/unwind/gostack.h"
#include "pmutop/unwind/root.h"
#include "pmutop/unwind/unwind_fast.h"

/* Exported by libunwind but not declared in its headers. */
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip,
					       unw_dyn_info_t *di, unw_proc_info_t *pi,
					       int need_unwind_info, void *arg);

struct unwinder {
	unw_addr_space_t as;
	struct maps *maps;
	struct fast_unwinder *fast; /* NULL: libunwind only (PMUTOP_UNWIND=libunwind) */
	bool verify;                /* PMUTOP_UNWIND_VERIFY=1: run both, compare */
	bool verbose;               /* =2: and print each difference */
	unsigned max_stack;         /* kernel.perf_event_max_stack */
	struct unwind_stats stats;
};

/* Per-walk state handed to the accessors as their `arg`. */
struct walk {
	struct unwinder *u;
	const struct perf_sample *s;
	uint64_t sp;          /* stack copy covers [sp, sp + s->stack_size) */
	/*
	 * The mapping of the code whose unwind table libunwind is reading
	 * (find_proc_info): the table and its FDEs are in the same file, often
	 * in a read-only segment that the kernel's MMAP records (exec mappings
	 * only) never told us about, for a child that was followed from its
	 * exec. Read from the file, not byte by byte from the target.
	 */
	const struct mapping *pi_map;
	unsigned live_reads;  /* reads that had to go to the target */
	bool live_failed;     /* a live read of the stack failed */
};

/*
 * Packed sample register index (PMUTOP_REGS_MASK order: AX BX CX DX SI DI
 * BP SP IP, then R8..R15) for each libunwind x86_64 register number
 * (DWARF order: RAX RDX RCX RBX RSI RDI RBP RSP R8..R15 RIP).
 */
static const int8_t unw_to_sample[17] = {
	[UNW_X86_64_RAX] = 0, [UNW_X86_64_RDX] = 3, [UNW_X86_64_RCX] = 2,
	[UNW_X86_64_RBX] = 1, [UNW_X86_64_RSI] = 4, [UNW_X86_64_RDI] = 5,
	[UNW_X86_64_RBP] = 6, [UNW_X86_64_RSP] = 7, [UNW_X86_64_R8] = 9,
	[UNW_X86_64_R9] = 10, [UNW_X86_64_R10] = 11, [UNW_X86_64_R11] = 12,
	[UNW_X86_64_R12] = 13, [UNW_X86_64_R13] = 14, [UNW_X86_64_R14] = 15,
	[UNW_X86_64_R15] = 16, [UNW_X86_64_RIP] = 8,
};

#define SAMPLE_SP 7

/* How far above SP a read still counts as "the stack" (glibc's default size). */
#define STACK_REACH (8ULL << 20)
#define SAMPLE_IP 8

const char *unwind_outcome_name(enum unwind_outcome o)
{
	switch (o) {
	case UNWIND_ROOT: return "reached root";
	case UNWIND_STACK_CUT: return "cut by stack copy";
	case UNWIND_NO_INFO: return "no unwind info";
	case UNWIND_BAD_FRAME: return "bad frame";
	case UNWIND_MAX_DEPTH: return "max depth";
	case UNWIND_NO_REGS: return "no user registers";
	case UNWIND_NO_ROOT: return "ended before root";
	case UNWIND_NOUTCOMES: break;
	}
	return "?";
}

static int read_live(struct walk *w, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	w->live_reads++;
	if (process_vm_readv(maps_pid(w->u->maps), &local, 1, &remote, 1, 0) != (ssize_t)len)
		return -EFAULT;
	return 0;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct walk *w = arg;
	const struct mapping *m = maps_find(w->u->maps, ip);
	uint64_t hdr, hdr_size, lo, hi;
	uint8_t h[12];
	int32_t fde_count;
	unw_dyn_info_t di;

	if (!m || !m->mod || module_eh_frame_hdr(m->mod, &hdr, &hdr_size) || hdr_size < 12)
		return -UNW_ENOINFO;
	w->pi_map = m;
	if (module_read(m->mod, hdr, h, sizeof(h)))
		return -UNW_ENOINFO;
	/*
	 * version 1; eh_frame_ptr pcrel|sdata4 (any); fde_count udata4;
	 * table datarel|sdata4 — the only table layout libunwind searches.
	 */
	if (h[0] != 1 || h[2] != 0x03 || h[3] != 0x3b)
		return -UNW_ENOINFO;
	memcpy(&fde_count, h + 8, 4);
	if (fde_count <= 0 || (uint64_t)fde_count * 8 > hdr_size - 12)
		return -UNW_ENOINFO;
	module_text_range(m->mod, &lo, &hi);

	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = lo + m->bias;
	di.end_ip = hi + m->bias;
	if (ip < di.start_ip || ip >= di.end_ip) {
		di.start_ip = m->start;
		di.end_ip = m->end;
	}
	di.u.rti.segbase = hdr + m->bias;
	di.u.rti.table_data = hdr + m->bias + 12;
	di.u.rti.table_len = (unw_word_t)fde_count * 8 / sizeof(unw_word_t);
	return _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	/* Table-format info is released by libunwind itself. */
	(void)as, (void)pi, (void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	(void)as, (void)addr, (void)arg;
	return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp,
		      int write, void *arg)
{
	struct walk *w = arg;
	const struct mapping *m;

	(void)as;
	if (write)
		return -UNW_EINVAL;
	/*
	 * 1. The kernel's copy of the stack, taken at the sample. (The offset
	 * is compared without adding to it: with SP near 0 and addr near
	 * 2^64, addr - sp + 8 wraps around to a small number.)
	 */
	if (addr >= w->sp && w->s->stack_size >= sizeof(*valp) &&
	    addr - w->sp <= w->s->stack_size - sizeof(*valp)) {
		memcpy(valp, w->s->stack + (addr - w->sp), sizeof(*valp));
		return 0;
	}
	/* 2. The module's file image: code and unwind tables never change. */
	m = maps_find(w->u->maps, addr);
	if (m && m->mod && !module_read(m->mod, addr - m->bias, valp, sizeof(*valp)))
		return 0;
	/* 2b. Unmapped as far as we know: the unwind table's file, if it is in its image. */
	if (!m && w->pi_map && w->pi_map->mod &&
	    !module_read(w->pi_map->mod, addr - w->pi_map->bias, valp, sizeof(*valp)))
		return 0;
	/* 3. The live target: stack above the copy, anonymous memory. */
	if (read_live(w, addr, valp, sizeof(*valp)) == 0)
		return 0;
	/*
	 * A failed read just above the copy means the stack went away (the
	 * thread exited); anywhere else it is a garbage pointer: a bad frame.
	 */
	if (addr >= w->sp && addr - w->sp < STACK_REACH)
		w->live_failed = true;
	return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp,
		      int write, void *arg)
{
	struct walk *w = arg;

	(void)as;
	if (reg < 0 || reg > UNW_X86_64_RIP || write)
		return -UNW_EBADREG;
	*valp = w->s->regs[unw_to_sample[reg]];
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val,
			int write, void *arg)
{
	(void)as, (void)reg, (void)val, (void)write, (void)arg;
	return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	(void)as, (void)c, (void)arg;
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			 unw_word_t *off, void *arg)
{
	(void)as, (void)addr, (void)buf, (void)len, (void)off, (void)arg;
	return -UNW_ENOINFO;
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

struct unwinder *unwinder_new(struct maps *maps)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->maps = maps;
	u->as = unw_create_addr_space(&accessors, 0);
	if (!u->as) {
		free(u);
		return NULL;
	}
	unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL);
	u->max_stack = gostack_kernel_max_stack();
	{
		const char *mode = getenv("PMUTOP_UNWIND");
		const char *verify = getenv("PMUTOP_UNWIND_VERIFY");
		if (!mode || strcmp(mode, "libunwind"))
			u->fast = fast_unwinder_new(maps);
		u->verify = verify && (*verify == '1' || *verify == '2') && u->fast;
		u->verbose = u->verify && *verify == '2';
	}
	return u;
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	unw_destroy_addr_space(u->as);
	fast_unwinder_free(u->fast);
	free(u);
}

void unwinder_flush(struct unwinder *u)
{
	unw_flush_cache(u->as, 0, 0);
	if (u->fast)
		fast_unwinder_flush(u->fast);
}

void unwinder_forget_module(struct unwinder *u, const struct module *mod)
{
	if (u && u->fast)
		fast_unwinder_forget_module(u->fast, mod);
}

void unwinder_get_stats(const struct unwinder *u, struct unwind_stats *st)
{
	*st = u->stats;
}

static unsigned libunwind_walk(struct unwinder *u, const struct perf_sample *s,
			       uint64_t *ips, unsigned max, enum unwind_outcome *outcome);

/* What the outermost frame of a walk that ended by itself is (root.h). */
static enum unwind_outcome root_outcome(struct unwinder *u, uint64_t addr)
{
	return unwind_root_classify(u->maps, addr, u->fast ? fast_unwind_is_root : NULL, u->fast);
}

static unsigned cfi_unwind(struct unwinder *u, const struct perf_sample *s,
			   uint64_t *ips, unsigned max, enum unwind_outcome *outcome);

unsigned unwinder_unwind(struct unwinder *u, const struct perf_sample *s,
			 uint64_t *ips, unsigned max, enum unwind_outcome *outcome)
{
	unsigned n = cfi_unwind(u, s, ips, max, outcome);
	bool spliced = false;

	if (u->fast)
		n = gostack_splice(u->maps, s, u->max_stack, ips, n, max, outcome, &spliced,
				   fast_unwind_is_root, u->fast);
	u->stats.go_spliced += spliced;
	/* The walk's own word that it reached the root, checked against its last frame. */
	if (*outcome == UNWIND_ROOT && n)
		*outcome = root_outcome(u, n > 1 ? ips[n - 1] - 1 : ips[0]);
	return n;
}

enum unwind_outcome unwinder_callchain_outcome(struct unwinder *u, const struct perf_sample *s,
					       const uint64_t *ips, unsigned n)
{
	const uint64_t *chain;
	int truncated;
	unsigned k = 0;

	if (!n)
		return UNWIND_NO_REGS;
	if (!u)
		return UNWIND_ROOT; /* nothing to judge it by: the chain's word */
	(void)gostack_user_chain(s, u->max_stack, &chain, &truncated);
	if (truncated)
		return UNWIND_MAX_DEPTH;
	/* Kernel addresses first; the user IP itself when it is the only user frame. */
	while (k < n && ips[k] >> 63)
		k++;
	return root_outcome(u, n - 1 > k ? ips[n - 1] - 1 : ips[n - 1]);
}

/* The DWARF CFI walk: the fast path, else (or to verify it) libunwind. */
static unsigned cfi_unwind(struct unwinder *u, const struct perf_sample *s,
			   uint64_t *ips, unsigned max, enum unwind_outcome *outcome)
{
	unsigned n = 0;

	if (u->fast)
		n = fast_unwind(u->fast, s, ips, max, outcome);
	if (n && (!u->verify || fast_unwind_used_debug_frame(u->fast))) {
		u->stats.fast++;
		return n;
	}
	if (!n) {
		u->stats.slow++;
		return libunwind_walk(u, s, ips, max, outcome);
	}
	/* Verification: libunwind is the reference; count any difference. */
	{
		uint64_t ref[1024];
		enum unwind_outcome ref_outcome;
		unsigned rn = libunwind_walk(u, s, ref, max < 1024 ? max : 1024, &ref_outcome);

		/* Both judged by their last frame (root.h), as unwinder_unwind() does. */
		if (ref_outcome == UNWIND_ROOT && rn)
			ref_outcome = root_outcome(u, rn > 1 ? ref[rn - 1] - 1 : ref[0]);
		if (*outcome == UNWIND_ROOT)
			*outcome = root_outcome(u, n > 1 ? ips[n - 1] - 1 : ips[0]);
		u->stats.fast++;
		u->stats.verified++;
		if (ref_outcome != UNWIND_ROOT && *outcome == UNWIND_ROOT && rn < n &&
		    !memcmp(ref, ips, rn * sizeof(*ips))) {
			/*
			 * libunwind gave up part-way where the fast path found the
			 * root (seen at process exit): not a disagreement on any
			 * frame both produced. Keep the fast path's longer stack.
			 */
			u->stats.ref_short++;
			return n;
		}
		if (rn != n || ref_outcome != *outcome || memcmp(ref, ips, n * sizeof(*ips))) {
			u->stats.mismatches++;
			if (u->verbose) {
				fprintf(stderr, "unwind mismatch tid %u: fast %u frames (%s), libunwind %u (%s)\n",
					s->tid, n, unwind_outcome_name(*outcome), rn,
					unwind_outcome_name(ref_outcome));
				for (unsigned i = 0; i < (n > rn ? n : rn); i++)
					fprintf(stderr, "  #%u fast %#llx libunwind %#llx\n", i,
						i < n ? (unsigned long long)ips[i] : 0ULL,
						i < rn ? (unsigned long long)ref[i] : 0ULL);
			}
		}
		memcpy(ips, ref, rn * sizeof(*ips));
		*outcome = ref_outcome;
		return rn;
	}
}

static unsigned libunwind_walk(struct unwinder *u, const struct perf_sample *s,
			       uint64_t *ips, unsigned max, enum unwind_outcome *outcome)
{
	struct walk w = { .u = u, .s = s };
	unw_cursor_t cur;
	unw_word_t ip, sp, prev_sp;
	unsigned n = 0;

	if (!max)
		return 0;
	if (s->abi == 0) {
		/*
		 * No user registers (a kernel thread, or a sample in exit): the
		 * IP only when it is a user one (a kernel IP is the kernel part's).
		 */
		if ((s->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER)
			ips[n++] = s->ip;
		*outcome = UNWIND_NO_REGS;
		return n;
	}
	/*
	 * A sample in kernel mode carries the user registers of the syscall
	 * or interrupt it came from: this is the user stack under it (the
	 * session stacks the kernel part, callchain_kernel_ips(), on top).
	 */
	w.sp = s->regs[SAMPLE_SP];
	ips[n++] = s->regs[SAMPLE_IP];
	if (unw_init_remote(&cur, u->as, &w) < 0) {
		*outcome = UNWIND_BAD_FRAME;
		return n;
	}
	prev_sp = w.sp;
	*outcome = UNWIND_MAX_DEPTH;
	while (n < max) {
		int r = unw_step(&cur);

		if (r == 0) {
			*outcome = UNWIND_ROOT;
			break;
		}
		if (r < 0) {
			*outcome = w.live_failed ? UNWIND_STACK_CUT
				 : r == -UNW_ENOINFO ? UNWIND_NO_INFO : UNWIND_BAD_FRAME;
			break;
		}
		if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 ||
		    unw_get_reg(&cur, UNW_REG_SP, &sp) < 0) {
			*outcome = UNWIND_BAD_FRAME;
			break;
		}
		if (ip == 0) {
			*outcome = UNWIND_ROOT;
			break;
		}
		/*
		 * Stacks grow down: a caller's frame is never below its callee's.
		 * And a return address is in mapped code: libunwind's guesses
		 * past a frame without CFI (a new thread's first instant, garbage
		 * on the stack) once gave 100 copies of one unmapped address.
		 */
		if (sp < prev_sp || (sp == prev_sp && ip == ips[n - 1]) ||
		    !maps_find(u->maps, ip)) {
			*outcome = UNWIND_BAD_FRAME;
			break;
		}
		prev_sp = sp;
		ips[n++] = ip;
	}
	return n;
}
