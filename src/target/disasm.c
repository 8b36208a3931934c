/*
 * disasm.c - decode a module's code with capstone (see disasm.h).
 *
 * Why capstone and AT&T syntax: it is the disassembler library Debian
 * ships and other profilers embed, and AT&T is what objdump -d and perf
 * annotate show on Linux by default, so a user can put pmutop's listing
 * beside theirs. Only what the view needs is kept per instruction: bytes,
 * text, the kind of control transfer and a direct target, which is what
 * basic blocks and "jump targets named" are built from.
 */
#include "pmutop/target/disasm.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmutop/target/module.h"

/* A function larger than this is decoded up to here (a corrupt symbol size). */
#define DISASM_MAX_BYTES (4u << 20)

static int open_handle(const struct module *m, csh *h, char *err, size_t errlen)
{
	struct Elf *elf = module_elf(m);
	GElf_Ehdr eh;
	cs_arch arch;
	cs_mode mode;

	if (!elf || !gelf_getehdr(elf, &eh)) {
		snprintf(err, errlen, "%s: no ELF header", module_path(m));
		return -ENOTSUP;
	}
	switch (eh.e_machine) {
	case EM_X86_64:
		arch = CS_ARCH_X86, mode = CS_MODE_64;
		break;
	case EM_386:
		arch = CS_ARCH_X86, mode = CS_MODE_32;
		break;
	case EM_AARCH64:
		arch = CS_ARCH_ARM64, mode = CS_MODE_ARM;
		break;
	default:
		snprintf(err, errlen, "%s: machine %u is not one pmutop disassembles "
			 "(x86-64, i386, aarch64)", module_path(m), (unsigned)eh.e_machine);
		return -ENOTSUP;
	}
	if (cs_open(arch, mode, h) != CS_ERR_OK) {
		snprintf(err, errlen, "capstone cannot open this machine's decoder");
		return -ENOTSUP;
	}
	if (arch == CS_ARCH_X86)
		cs_option(*h, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	cs_option(*h, CS_OPT_DETAIL, CS_OPT_ON);
	return 0;
}

static bool is_arm64(const struct module *m)
{
	struct Elf *elf = module_elf(m);
	GElf_Ehdr eh;

	return elf && gelf_getehdr(elf, &eh) && eh.e_machine == EM_AARCH64;
}

static bool in_group(const cs_insn *ci, uint8_t group)
{
	for (uint8_t i = 0; ci->detail && i < ci->detail->groups_count; i++)
		if (ci->detail->groups[i] == group)
			return true;
	return false;
}

/* The direct target of a branch or call (an immediate operand), or 0. */
static uint64_t direct_target_x86(const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;

	if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM)
		return (uint64_t)x->operands[0].imm;
	return 0;
}

static uint64_t direct_target_arm64(const cs_insn *ci)
{
	const cs_arm64 *a = &ci->detail->arm64;

	for (uint8_t i = 0; i < a->op_count; i++)
		if (a->operands[i].type == ARM64_OP_IMM)
			return (uint64_t)a->operands[i].imm;
	return 0;
}

int disasm_range(const struct module *m, uint64_t start, uint64_t size,
		 struct insn **out, size_t *n, char *err, size_t errlen)
{
	unsigned char *code = NULL;
	struct insn *v = NULL;
	cs_insn *ci = NULL;
	size_t count = 0, i;
	bool arm;
	csh h;
	int rc;

	*out = NULL;
	*n = 0;
	if (size > DISASM_MAX_BYTES)
		size = DISASM_MAX_BYTES;
	rc = open_handle(m, &h, err, errlen);
	if (rc)
		return rc;
	arm = is_arm64(m);
	code = malloc(size ? size : 1);
	rc = -ENOMEM;
	if (!code)
		goto out;
	if (module_read(m, start, code, size)) {
		snprintf(err, errlen, "%s: bytes at 0x%" PRIx64 "..0x%" PRIx64
			 " are not in the file", module_path(m), start, start + size);
		rc = -EFAULT;
		goto out;
	}
	count = cs_disasm(h, code, size, start, 0, &ci);
	v = calloc(count ? count : 1, sizeof(*v));
	if (!v)
		goto out;
	for (i = 0; i < count; i++) {
		struct insn *in = &v[i];

		in->addr = ci[i].address;
		in->size = (uint8_t)(ci[i].size <= sizeof(in->bytes) ? ci[i].size : sizeof(in->bytes));
		memcpy(in->bytes, ci[i].bytes, in->size);
		snprintf(in->mnemonic, sizeof(in->mnemonic), "%s", ci[i].mnemonic);
		snprintf(in->operands, sizeof(in->operands), "%s", ci[i].op_str);
		if (in_group(&ci[i], CS_GRP_RET)) {
			in->kind = INSN_RET;
		} else if (in_group(&ci[i], CS_GRP_CALL)) {
			in->kind = INSN_CALL;
		} else if (in_group(&ci[i], CS_GRP_JUMP)) {
			bool uncond = arm ? ci[i].id == ARM64_INS_B && ci[i].detail->arm64.cc == ARM64_CC_INVALID
					  : ci[i].id == X86_INS_JMP || ci[i].id == X86_INS_LJMP;
			in->kind = uncond ? INSN_JUMP : INSN_CJUMP;
		}
		if (ci[i].detail && in->kind != INSN_OTHER && in->kind != INSN_RET)
			in->target = arm ? direct_target_arm64(&ci[i]) : direct_target_x86(&ci[i]);
	}
	*out = v;
	*n = count;
	v = NULL;
	rc = 0;
out:
	if (ci)
		cs_free(ci, count);
	cs_close(&h);
	free(code);
	free(v);
	return rc;
}

char *disasm_format(const struct module *m, const struct insn *in, char *buf, size_t len)
{
	uint64_t off = 0;
	const char *sym;

	if (!in->target) {
		snprintf(buf, len, "%-6s %s", in->mnemonic, in->operands);
		return buf;
	}
	sym = module_symbolize(m, in->target, &off);
	if (sym && off)
		snprintf(buf, len, "%-6s %" PRIx64 " <%s+0x%" PRIx64 ">", in->mnemonic, in->target,
			 sym, off);
	else if (sym)
		snprintf(buf, len, "%-6s %" PRIx64 " <%s>", in->mnemonic, in->target, sym);
	else
		snprintf(buf, len, "%-6s %" PRIx64, in->mnemonic, in->target);
	return buf;
}
