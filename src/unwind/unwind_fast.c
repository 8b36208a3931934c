/*
 * unwind_fast.c - cached CFI rules applied directly to the stack copy.
 *
 * For each code address the walk needs, libdw's CFI reader (the .eh_frame
 * of the module's own image, already mmap'd by module.c) says how to find
 * the caller: where the CFA is, where the return address and the caller's
 * RBP are. The answer is reduced to a small rule and cached by address, so
 * after warm-up a frame costs a hash probe and two 8-byte loads from the
 * kernel's stack copy. Rules this path does not model are cached too, as
 * "ask libunwind", and such a sample is unwound by libunwind from scratch:
 * the two never mix within one stack.
 */
#include "pmutop/unwind/unwind_fast.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "pmutop/target/gopclntab.h"
#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"
#include "pmutop/sample/perf_record.h"

/* Packed sample register slots (PMUTOP_REGS_MASK order). */
#define SAMPLE_BX 1
#define SAMPLE_BP 6
#define SAMPLE_SP 7
#define SAMPLE_IP 8

/* DWARF register numbers on x86_64. */
#define DW_RBX 3
#define DW_RBP 6
#define DW_RSP 7

#define RULES_MAX (1u << 16) /* cached addresses before the cache starts over */
#define LIVE_PAGE 4096u      /* bytes of the live target read at once past the stack copy */
/*
 * The table starts small and doubles up to 2 * RULES_MAX: a session has one
 * unwinder per process, and most processes (a shell, a short child) run
 * little code; flushing (exec, new code) then clears only what was used.
 */
#define RULES_FIRST_CAP 1024u

enum rule_kind {
	RULE_EMPTY = 0,
	RULE_STEP,  /* a normal frame: use cfa/bp fields */
	RULE_ROOT,  /* the return address is undefined: outermost frame */
	RULE_NONE,  /* not modelled here: let libunwind do this sample */
	RULE_SIGNAL, /* addr + 1 is a signal return trampoline: a ucontext follows */
	RULE_CGOCALL, /* in runtime.asmcgocall on the system stack: back to the goroutine's */
	RULE_MCALL, /* in runtime.mcall on the system stack: the goroutine's saved state */
	RULE_SWITCH, /* in runtime.systemstack/morestack on g0: CFI ends, the kernel's chain goes on */
};

enum bp_rule { BP_SAME, BP_AT_CFA, BP_UNDEF };

struct rule {
	uint64_t addr;     /* lookup address (runtime) */
	int32_t cfa_off;   /* CFA = cfa_reg + cfa_off */
	int32_t bp_off;    /* caller's RBP at CFA + bp_off (BP_AT_CFA) */
	int16_t bx_off;    /* caller's RBX at CFA + bx_off (bx == BP_AT_CFA) */
	uint8_t kind;
	/*
	 * DW_RSP, DW_RBP or DW_RBX: code that realigns its stack keeps the
	 * CFA in RBX (glibc's _dl_runtime_resolve, run at every lazily bound
	 * call - 4% of a parallel build's samples, which libunwind gave up on).
	 */
	uint8_t cfa_reg;
	uint8_t bp;        /* enum bp_rule */
	uint8_t bx;        /* enum bp_rule, for RBX */
	uint8_t debug_frame; /* derived from .debug_frame (libunwind cannot check it) */
	uint8_t go;        /* in Go code (module_is_go) */
};

struct cfi_entry {
	const struct module *mod;
	Dwarf_CFI *cfi;    /* .eh_frame; NULL: none */
	Dwarf *dwarf;      /* for .debug_frame, opened on the first .eh_frame miss */
	Dwarf_CFI *dcfi;   /* .debug_frame (Go binaries have only this); NULL: none */
	bool dtried;
};

struct fast_unwinder {
	struct maps *maps;
	struct rule *rules;
	size_t rule_cap, nrules;
	struct cfi_entry *cfis;
	size_t ncfis, cfi_cap;
	uint64_t fallbacks;
	bool last_debug_frame; /* the last walk used a .debug_frame rule */
	/* One page of the live target read during the current walk (read_word). */
	bool live_valid;
	uint64_t live_base;
	uint8_t live[LIVE_PAGE];
};

struct fast_unwinder *fast_unwinder_new(struct maps *maps)
{
	struct fast_unwinder *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->maps = maps;
	f->rule_cap = RULES_FIRST_CAP;
	f->rules = calloc(f->rule_cap, sizeof(*f->rules));
	if (!f->rules) {
		free(f);
		return NULL;
	}
	return f;
}

void fast_unwinder_free(struct fast_unwinder *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->ncfis; i++) {
		if (f->cfis[i].cfi)
			dwarf_cfi_end(f->cfis[i].cfi);
		if (f->cfis[i].dwarf)
			dwarf_end(f->cfis[i].dwarf); /* also frees dcfi */
	}
	free(f->cfis);
	free(f->rules);
	free(f);
}

void fast_unwinder_forget_module(struct fast_unwinder *f, const struct module *mod)
{
	for (size_t i = 0; f && i < f->ncfis; i++) {
		struct cfi_entry *c = &f->cfis[i];

		if (c->mod != mod)
			continue;
		if (c->cfi)
			dwarf_cfi_end(c->cfi);
		if (c->dwarf)
			dwarf_end(c->dwarf); /* also frees dcfi */
		f->cfis[i] = f->cfis[--f->ncfis];
		return;
	}
}

void fast_unwinder_flush(struct fast_unwinder *f)
{
	memset(f->rules, 0, f->rule_cap * sizeof(*f->rules));
	f->nrules = 0;
	/*
	 * CFI handles stay: a module's tables never change while it is
	 * mapped (an evicted one's are closed: fast_unwinder_forget_module).
	 */
}

void fast_unwinder_stats(const struct fast_unwinder *f, uint64_t *rules, uint64_t *fallbacks)
{
	*rules = f->nrules;
	*fallbacks = f->fallbacks;
}

/* libdw's CFI readers for a module, opened once (a handful of modules per target). */
static struct cfi_entry *cfi_for(struct fast_unwinder *f, const struct module *mod)
{
	struct Elf *elf;

	for (size_t i = 0; i < f->ncfis; i++)
		if (f->cfis[i].mod == mod)
			return &f->cfis[i];
	if (f->ncfis == f->cfi_cap) {
		size_t cap = f->cfi_cap ? f->cfi_cap * 2 : 16;
		struct cfi_entry *n = realloc(f->cfis, cap * sizeof(*n));
		if (!n)
			return NULL;
		f->cfis = n;
		f->cfi_cap = cap;
	}
	elf = module_elf(mod);
	f->cfis[f->ncfis] = (struct cfi_entry){ .mod = mod, .cfi = elf ? dwarf_getcfi_elf(elf) : NULL };
	return &f->cfis[f->ncfis++];
}

/*
 * The frame description for addr: .eh_frame first (every C/C++ object has
 * it), then .debug_frame, which is all some toolchains emit (Go).
 */
static int addrframe(struct cfi_entry *c, uint64_t vaddr, Dwarf_Frame **frame,
		     bool *debug_frame)
{
	*debug_frame = false;
	if (c->cfi && dwarf_cfi_addrframe(c->cfi, vaddr, frame) == 0)
		return 0;
	*debug_frame = true;
	/*
	 * Not in a Go binary: its .debug_frame is the Go code's, which the SP
	 * tables cover (derive_rule), and is compressed: the first look would
	 * inflate all of it on the sampling path (25-30 ms, the ring buffers
	 * overflowing at 10k samples/s), for an address no table knows -
	 * usually a bad return address. cgo's C code has .eh_frame.
	 */
	if (module_is_go(c->mod))
		return -1;
	if (!c->dtried) {
		struct Elf *elf = module_elf(c->mod);

		c->dtried = true;
		c->dwarf = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
		c->dcfi = c->dwarf ? dwarf_getcfi(c->dwarf) : NULL;
	}
	if (c->dcfi && dwarf_cfi_addrframe(c->dcfi, vaddr, frame) == 0)
		return 0;
	return -1;
}

/* "The value is at CFA + off": the shapes libdw uses for offset(N) rules. */
static bool cfa_plus(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (nops < 1 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (nops == 1) {
		*off = 0;
		return true;
	}
	if (nops == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	if (nops == 3 && ops[2].atom == DW_OP_plus &&
	    (ops[1].atom == DW_OP_consts || ops[1].atom == DW_OP_constu)) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/*
 * Whether the code at addr is an rt_sigreturn trampoline (`mov $15, %rax;
 * syscall`: glibc's __restore_rt, Go's runtime.sigreturn__sigaction), the
 * return address the kernel gives a signal handler. As libunwind and gdb
 * recognise a signal frame on x86_64.
 */
static bool is_sigreturn(const struct mapping *m, uint64_t addr)
{
	static const uint8_t code[9] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };
	uint8_t b[9];

	return module_read(m->mod, addr - m->bias, b, sizeof(b)) == 0 && !memcmp(b, code, sizeof(b));
}

/* runtime.g: sched.sp and sched.pc (gobuf) after stack, stackguard0/1, _panic, _defer, m. */
#define G_SCHED_SP 56
#define G_SCHED_PC 64

/* Offsets in the kernel's rt_sigframe after the return address (struct ucontext, x86_64). */
#define UC_RBP (40 + 10 * 8)
#define UC_RBX (40 + 11 * 8)
#define UC_RSP (40 + 15 * 8)
#define UC_RIP (40 + 16 * 8)

/*
 * The return into runtime.asmcgocall from C code, read off the code that
 * follows it, which restores the goroutine's SP (the way Go does it since
 * 1.x; the slots moved between versions):
 *   mov G(%rsp),%rdi; mov 8(%rdi),%rsi; sub D(%rsp),%rsi   (g at SP+G,
 *     its SP as a depth below g.stack.hi at SP+D), or
 *   mov S(%rsp),%rsi                                       (no g: the SP at SP+S).
 * cfa_off = G or -1, bp_off = D or S. Anything else: not modelled.
 */
static bool cgocall_rule(const struct mapping *m, uint64_t ra, struct rule *r)
{
	uint8_t b[14];

	if (module_read(m->mod, ra - m->bias, b, sizeof(b)))
		return false;
	if (b[0] == 0x48 && b[1] == 0x8b && b[2] == 0x7c && b[3] == 0x24 && b[5] == 0x48 &&
	    b[6] == 0x8b && b[7] == 0x77 && b[8] == 0x08 && b[9] == 0x48 && b[10] == 0x2b &&
	    b[11] == 0x74 && b[12] == 0x24) {
		r->cfa_off = b[4];
		r->bp_off = b[13];
	} else if (b[0] == 0x48 && b[1] == 0x8b && b[2] == 0x74 && b[3] == 0x24) {
		r->cfa_off = -1;
		r->bp_off = b[4];
	} else {
		return false;
	}
	r->kind = RULE_CGOCALL;
	r->debug_frame = 1;
	return true;
}

/*
 * Go code, from Go's own tables (.gopclntab): with only_top, just whether
 * vaddr is in a function that starts a stack (goexit, mstart: the root,
 * as Go's traceback sees it); else the frame from the SP table, for code
 * without CFI (stripped binaries, assembly): CFA = RSP + spdelta + 8, the
 * return address below it, and a function with a frame has saved the
 * caller's RBP right under the return address (Go's amd64 frame layout).
 * Returns whether it set the rule.
 */
static bool go_rule(const struct mapping *m, uint64_t vaddr, struct rule *r, bool only_top)
{
	const char *err;
	const struct gopclntab *t = module_gopclntab(m->mod, &err);
	struct gofunc fn;
	int32_t sp;

	if (!t || gopclntab_func(t, vaddr, &fn) != 0)
		return false;
	/*
	 * vaddr is a return address minus one. Go code never returns to a
	 * function's first byte (its assembler pads a final CALL), except
	 * to the PC it saves for a goroutine that switched stacks
	 * (runtime.systemstack_switch): that frame is the function at vaddr + 1.
	 */
	if (fn.end == vaddr + 1 && gopclntab_func(t, vaddr + 1, &fn) != 0)
		return false;
	/*
	 * A signal handler's entry is the top of the signal stack for Go's
	 * traceback; here the walk goes on through the signal frame into the
	 * interrupted code.
	 */
	if (gopclntab_is_top(&fn) && strcmp(fn.name, "runtime.sigtramp") &&
	    strcmp(fn.name, "runtime.cgoSigtramp")) {
		r->kind = RULE_ROOT;
		return true;
	}
	if (only_top)
		return false;
	if (!strcmp(fn.name, "runtime.asmcgocall"))
		return cgocall_rule(m, vaddr + 1, r);
	if (!strcmp(fn.name, "runtime.systemstack") || !strcmp(fn.name, "runtime.morestack")) {
		r->kind = RULE_SWITCH;
		r->debug_frame = 1;
		return true;
	}
	if (!strcmp(fn.name, "runtime.mcall")) {
		r->kind = RULE_MCALL;
		r->debug_frame = 1;
		return true;
	}
	/* The PC Go saves for a goroutine that switched stacks: a frameless stand-in. */
	if (!strcmp(fn.name, "runtime.systemstack_switch"))
		sp = 0;
	else if (gopclntab_spdelta(t, &fn, vaddr, &sp) != 0 || sp < 0 || sp > (1 << 30))
		return false;
	r->kind = RULE_STEP;
	r->cfa_reg = DW_RSP;
	r->cfa_off = sp + 8;
	r->bp = sp > 0 ? BP_AT_CFA : BP_SAME;
	r->bp_off = -16;
	r->debug_frame = 1; /* libunwind cannot check it */
	return true;
}

/* Derive the rule for code address `addr` (already adjusted for callers). */
static void derive_rule(struct fast_unwinder *f, uint64_t addr, struct rule *r)
{
	const struct mapping *m = maps_find(f->maps, addr);
	struct cfi_entry *cfi;
	Dwarf_Frame *frame = NULL;
	Dwarf_Op mem[3], *ops;
	size_t nops;
	bool signal = false, debug = false;
	int ra_reg;
	int64_t off;
	uint64_t reg;

	r->kind = RULE_NONE;
	if (!m || !m->mod || !(cfi = cfi_for(f, m->mod)))
		return;
	r->go = module_is_go(m->mod);
	if (is_sigreturn(m, addr + 1)) {
		r->kind = RULE_SIGNAL;
		return;
	}
	/*
	 * Go code: Go's own tables (.gopclntab), which its linker also derives
	 * .debug_frame from. Asking .debug_frame instead would make libdw
	 * inflate the binary's compressed DWARF at the first Go frame: 25 ms
	 * with the ring buffers filling (issue 12), and megabytes kept. CFI
	 * stays for what the tables do not cover (cgo's C code in the binary).
	 */
	if (r->go && go_rule(m, addr - m->bias, r, false))
		return;
	if (addrframe(cfi, addr - m->bias, &frame, &debug) != 0 || !frame)
		return;
	r->debug_frame = debug;
	ra_reg = dwarf_frame_info(frame, NULL, NULL, &signal);
	if (ra_reg < 0 || signal)
		goto out;

	/* CFA = RSP/RBP + n: one DW_OP_bregx (libdw's form) or DW_OP_bregN. */
	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops != 1)
		goto out;
	if (ops[0].atom == DW_OP_bregx) {
		reg = ops[0].number;
		off = (int64_t)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		reg = (uint64_t)(ops[0].atom - DW_OP_breg0);
		off = (int64_t)ops[0].number;
	} else {
		goto out;
	}
	if ((reg != DW_RSP && reg != DW_RBP && reg != DW_RBX) || off < INT32_MIN || off > INT32_MAX)
		goto out;
	r->cfa_reg = (uint8_t)reg;
	r->cfa_off = (int32_t)off;

	/* Return address: undefined marks the outermost frame; else at CFA-8. */
	if (dwarf_frame_register(frame, ra_reg, mem, &ops, &nops) != 0)
		goto out;
	if (nops == 0 && ops == mem) {
		r->kind = RULE_ROOT;
		goto out;
	}
	if (!cfa_plus(ops, nops, &off) || off != -8)
		goto out;

	/* The caller's RBP: untouched, saved in the frame, or lost. */
	if (dwarf_frame_register(frame, DW_RBP, mem, &ops, &nops) != 0)
		goto out;
	if (nops == 0 && !ops) {
		r->bp = BP_SAME;
	} else if (nops == 0) {
		r->bp = BP_UNDEF;
	} else if (cfa_plus(ops, nops, &off) && off >= INT32_MIN && off <= INT32_MAX) {
		r->bp = BP_AT_CFA;
		r->bp_off = (int32_t)off;
	} else {
		goto out;
	}
	/* The caller's RBX likewise; a rule not modelled only makes it unknown. */
	r->bx = BP_UNDEF;
	if (dwarf_frame_register(frame, DW_RBX, mem, &ops, &nops) == 0) {
		if (nops == 0 && !ops) {
			r->bx = BP_SAME;
		} else if (nops && cfa_plus(ops, nops, &off) && off >= INT16_MIN && off <= INT16_MAX) {
			r->bx = BP_AT_CFA;
			r->bx_off = (int16_t)off;
		}
	}
	r->kind = RULE_STEP;
out:
	free(frame);
}

/* Double the table (at half load); 0, or -ENOMEM and the table is as it was. */
static int rules_grow(struct fast_unwinder *f)
{
	size_t cap = f->rule_cap * 2, mask = cap - 1;
	struct rule *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t k = 0; k < f->rule_cap; k++) {
		const struct rule *r = &f->rules[k];
		size_t i;

		if (r->kind == RULE_EMPTY)
			continue;
		i = (size_t)((r->addr * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
		while (t[i].kind != RULE_EMPTY)
			i = (i + 1) & mask;
		t[i] = *r;
	}
	free(f->rules);
	f->rules = t;
	f->rule_cap = cap;
	return 0;
}

static const struct rule *rule_get(struct fast_unwinder *f, uint64_t addr)
{
	size_t mask = f->rule_cap - 1;
	size_t i = (size_t)((addr * 0x9E3779B97F4A7C15ULL) >> 32) & mask;

	for (;;) {
		struct rule *r = &f->rules[i];
		if (r->kind == RULE_EMPTY)
			break;
		if (r->addr == addr)
			return r;
		i = (i + 1) & mask;
	}
	/* A miss: bounded cache, started over when full (code is finite anyway). */
	if (f->nrules >= RULES_MAX || ((f->nrules + 1) * 2 > f->rule_cap && rules_grow(f)))
		fast_unwinder_flush(f);
	mask = f->rule_cap - 1;
	i = (size_t)((addr * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
	while (f->rules[i].kind != RULE_EMPTY)
		i = (i + 1) & mask;
	struct rule *r = &f->rules[i];
	memset(r, 0, sizeof(*r));
	r->addr = addr;
	derive_rule(f, addr, r);
	f->nrules++;
	return r;
}

/* Whether the 8 bytes at addr are in the sample's stack copy. */
static bool in_copy(const struct perf_sample *s, uint64_t sp0, uint64_t addr)
{
	return addr >= sp0 && s->stack_size >= 8 && addr - sp0 <= s->stack_size - 8;
}

/* An 8-byte word of the target: the stack copy first, else the live process. */
static int read_word(struct fast_unwinder *f, const struct perf_sample *s, uint64_t sp0,
		     uint64_t addr, uint64_t *val)
{
	uint64_t page = addr & ~(uint64_t)(LIVE_PAGE - 1);

	if (in_copy(s, sp0, addr)) {
		memcpy(val, s->stack + (addr - sp0), 8);
		return 0;
	}
	/*
	 * Past the copy (a deeper stack, another goroutine's stack, a g):
	 * the live target, a page at a time, so that the frames of one
	 * stack cost one system call rather than one per word.
	 */
	if (addr - page <= LIVE_PAGE - 8) {
		if (!f->live_valid || f->live_base != page) {
			struct iovec lp = { f->live, LIVE_PAGE }, rp = { (void *)(uintptr_t)page, LIVE_PAGE };

			f->live_valid = process_vm_readv(maps_pid(f->maps), &lp, 1, &rp, 1, 0) == LIVE_PAGE;
			f->live_base = page;
		}
		if (f->live_valid) {
			memcpy(val, f->live + (addr - page), 8);
			return 0;
		}
	}
	struct iovec local = { val, 8 }, remote = { (void *)(uintptr_t)addr, 8 };
	if (process_vm_readv(maps_pid(f->maps), &local, 1, &remote, 1, 0) != 8)
		return -EFAULT;
	return 0;
}

/* As unwind.c: a failed read just above SP is a vanished stack, else garbage. */
static enum unwind_outcome stack_read_outcome(uint64_t sp0, uint64_t addr)
{
	return addr >= sp0 && addr - sp0 < (8ULL << 20) ? UNWIND_STACK_CUT : UNWIND_BAD_FRAME;
}

unsigned fast_unwind(struct fast_unwinder *f, const struct perf_sample *s, uint64_t *ips,
		     unsigned max, enum unwind_outcome *outcome)
{
	static const struct rule frameless = { .kind = RULE_STEP, .cfa_reg = DW_RSP, .cfa_off = 8,
					       .bp = BP_SAME, .debug_frame = 1, .go = 1 };
	uint64_t sp0, ip, sp, bp, bx;
	bool bp_known = true, exact = true; /* exact: ip is not a return address */
	bool bx_known = true;
	bool on_sampled_stack = true;       /* not yet switched to another stack (mcall, cgo) */
	unsigned n = 0;

	/*
	 * Samples with user registers (in kernel mode too: they are the user
	 * state at kernel entry, and the user stack is what is walked here).
	 */
	if (!max || s->abi == 0)
		return 0;
	f->last_debug_frame = false;
	f->live_valid = false; /* the target ran on since the last sample */
	sp0 = sp = s->regs[SAMPLE_SP];
	bp = s->regs[SAMPLE_BP];
	bx = s->regs[SAMPLE_BX];
	ip = s->regs[SAMPLE_IP];
	ips[n++] = ip;
	for (;;) {
		const struct rule *r;
		uint64_t cfa, ra, new_bp = bp, new_bx = bx;

		/* As the libunwind walk: a full array ends it before another step. */
		if (n == max) {
			*outcome = UNWIND_MAX_DEPTH;
			return n;
		}
		/* Callers are looked up at the call instruction, not the return address. */
		r = rule_get(f, exact ? ip : ip - 1);
		exact = false;
		if (r->kind == RULE_CGOCALL && !exact) {
			/*
			 * C code called from Go returns into asmcgocall on the
			 * system stack; the slots cgocall_rule() found hold the
			 * goroutine's g and its SP (as a depth below g.stack.hi,
			 * g's second word), where the return address into
			 * runtime.cgocall is.
			 */
			uint64_t depth, g = 0, hi, base;

			if (read_word(f, s, sp0, sp + (uint64_t)r->bp_off, &depth) ||
			    (r->cfa_off >= 0 && read_word(f, s, sp0, sp + (uint64_t)r->cfa_off, &g))) {
				*outcome = stack_read_outcome(sp0, sp);
				return n;
			}
			if (g && read_word(f, s, sp0, g + 8, &hi)) {
				*outcome = UNWIND_BAD_FRAME;
				return n;
			}
			base = g ? hi - depth : depth;
			if (read_word(f, s, sp0, base, &ra) || !ra) {
				*outcome = UNWIND_BAD_FRAME;
				return n;
			}
			ips[n++] = ip = ra;
			sp = base + 8;
			bx_known = false;
			on_sampled_stack = false;
			continue;
		}
		if (r->kind == RULE_MCALL && !exact) {
			/*
			 * mcall pushed the goroutine's g on the system stack
			 * before calling fn, and saved the goroutine's SP and PC
			 * (the return into mcall's caller) in g.sched, at the
			 * same offsets in every Go release since 1.4 (after
			 * g.stack, the two stack guards, _panic, _defer and m).
			 */
			uint64_t g, gsp, gpc;

			if (read_word(f, s, sp0, sp, &g)) {
				*outcome = stack_read_outcome(sp0, sp);
				return n;
			}
			if (!g || read_word(f, s, sp0, g + G_SCHED_SP, &gsp) ||
			    read_word(f, s, sp0, g + G_SCHED_PC, &gpc) || !gpc || !gsp) {
				*outcome = UNWIND_BAD_FRAME;
				return n;
			}
			ips[n++] = ip = gpc;
			sp = gsp;
			bp_known = bx_known = false;
			on_sampled_stack = false;
			continue;
		}
		if (r->kind == RULE_SWITCH && !exact) {
			/*
			 * On the system stack, called from a goroutine's: the
			 * frame-pointer chain the kernel took goes on from here
			 * (gostack.h), the CFI does not.
			 */
			*outcome = UNWIND_NO_INFO;
			return n;
		}
		if (r->kind == RULE_CGOCALL || r->kind == RULE_MCALL || r->kind == RULE_SWITCH)
			r = &frameless; /* the leaf: not yet switched, as any frameless code */
		if (r->kind == RULE_SIGNAL) {
			/* ip is the trampoline; sp the kernel's ucontext: the interrupted registers. */
			uint64_t uip, usp;

			if (read_word(f, s, sp0, sp + UC_RIP, &uip) ||
			    read_word(f, s, sp0, sp + UC_RSP, &usp) ||
			    read_word(f, s, sp0, sp + UC_RBP, &bp) ||
			    read_word(f, s, sp0, sp + UC_RBX, &bx)) {
				*outcome = stack_read_outcome(sp0, sp);
				return n;
			}
			if (!uip) {
				*outcome = UNWIND_BAD_FRAME;
				return n;
			}
			ips[n++] = ip = uip;
			sp = usp;
			bp_known = bx_known = exact = true;
			continue;
		}
		/*
		 * Go code without CFI (stripped, or assembly): the kernel's
		 * frame-pointer chain continues the stack (gostack.h), no need
		 * for libunwind's guess at the same frame pointers.
		 */
		if (r->kind == RULE_NONE && r->go && s->callchain) {
			*outcome = UNWIND_NO_INFO;
			return n;
		}
		if (r->kind == RULE_NONE)
			goto fallback;
		f->last_debug_frame |= r->debug_frame;
		if (r->kind == RULE_ROOT) {
			*outcome = UNWIND_ROOT;
			return n;
		}
		if ((r->cfa_reg == DW_RBP && !bp_known) || (r->cfa_reg == DW_RBX && !bx_known))
			goto fallback;
		cfa = (r->cfa_reg == DW_RSP ? sp : r->cfa_reg == DW_RBP ? bp : bx) +
		      (uint64_t)(int64_t)r->cfa_off;
		/*
		 * A Go frame past the stack copy, on the stack the sample was
		 * taken on (not one the walk switched to, such as a parked
		 * goroutine's, which stands still): that goroutine has run on
		 * since the interrupt, and its live stack no longer holds
		 * these frames (deep recursion with big frames gave garbage
		 * return addresses, then a useless libunwind walk: 11% of
		 * pmutop's CPU on esbuild). The kernel's frame-pointer chain,
		 * taken at the interrupt, goes on from here (gostack_splice).
		 */
		if (r->go && s->callchain && on_sampled_stack && !in_copy(s, sp0, cfa - 8)) {
			*outcome = UNWIND_STACK_CUT;
			return n;
		}
		if (read_word(f, s, sp0, cfa - 8, &ra)) {
			*outcome = stack_read_outcome(sp0, cfa - 8);
			return n;
		}
		if (r->bp == BP_AT_CFA) {
			if (read_word(f, s, sp0, cfa + (uint64_t)(int64_t)r->bp_off, &new_bp)) {
				*outcome = stack_read_outcome(sp0, cfa + (uint64_t)(int64_t)r->bp_off);
				return n;
			}
		} else if (r->bp == BP_UNDEF) {
			bp_known = false;
		}
		/* Go code keeps no register for its caller but RBP: RBX is lost there. */
		if (r->go || r->bx == BP_UNDEF) {
			bx_known = false;
		} else if (r->bx == BP_AT_CFA) {
			/* Saved in this frame: the caller's, whatever we knew before. */
			if (read_word(f, s, sp0, cfa + (uint64_t)(int64_t)r->bx_off, &new_bx)) {
				*outcome = stack_read_outcome(sp0, cfa + (uint64_t)(int64_t)r->bx_off);
				return n;
			}
			bx_known = true;
		}
		if (ra == 0) {
			*outcome = UNWIND_ROOT;
			return n;
		}
		/* Stacks grow down: a caller's frame is never below its callee's. */
		if (cfa < sp || (cfa == sp && ra == ip)) {
			*outcome = UNWIND_BAD_FRAME;
			return n;
		}
		ips[n++] = ra;
		ip = ra;
		sp = cfa;
		bp = new_bp;
		bx = new_bx;
	}
fallback:
	f->fallbacks++;
	return 0;
}

bool fast_unwind_is_root(void *arg, uint64_t addr)
{
	return rule_get(arg, addr)->kind == RULE_ROOT;
}

bool fast_unwind_used_debug_frame(const struct fast_unwinder *f)
{
	return f->last_debug_frame;
}
