/*
 * disasm.h - a function's machine code as instructions, for the
 * instruction-level view (annotate.h).
 *
 * Decoding is capstone's (the field's library; pmutop writes no decoder).
 * Bytes come from the module's own file image (module_read), so the target
 * need not be running. Text follows objdump -d's AT&T conventions closely
 * enough to read side by side: mnemonic padded to a column, branch and call
 * targets written as the ELF address with <symbol+0xoff>.
 */
#ifndef PMUTOP_DISASM_H
#define PMUTOP_DISASM_H

#include <stddef.h>
#include <stdint.h>

struct module;

enum insn_kind {
	INSN_OTHER,
	INSN_JUMP,      /* unconditional jump */
	INSN_CJUMP,     /* conditional jump */
	INSN_CALL,
	INSN_RET,
};

struct insn {
	uint64_t addr;          /* ELF virtual address */
	uint8_t size;
	uint8_t bytes[16];
	enum insn_kind kind;
	uint64_t target;        /* direct branch/call target (ELF vaddr), 0 if none */
	char mnemonic[32];
	char operands[160];     /* as capstone prints them; see disasm_format() */
};

/*
 * Decode [start, start + size) of m's image into *out (*n entries, freed by
 * the caller with free()). Decoding stops early at bytes that are not an
 * instruction (data in text, a truncated file); *n says how far it got.
 * Returns 0, -ENOTSUP (a machine capstone or pmutop does not handle, with
 * its number in err), -EFAULT (the range is not in the file) or -ENOMEM.
 */
int disasm_range(const struct module *m, uint64_t start, uint64_t size,
		 struct insn **out, size_t *n, char *err, size_t errlen);

/*
 * The instruction as one line of text: "mnemonic  operands", and for a
 * direct branch or call "jne    1150 <round_once+0x17>" (objdump's form),
 * the symbol from m. Returns buf.
 */
char *disasm_format(const struct module *m, const struct insn *in, char *buf, size_t len);

#endif
