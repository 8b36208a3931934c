/*
 * fuzz_unwind_elf.c - fuzz target: the unwinder on a hostile ELF file.
 *
 * fuzz_unwind feeds arbitrary registers and stacks to the unwinder over
 * this process's real modules; here the module itself is the input: the
 * code a sample lands in belongs to an ELF image the fuzzer wrote, so its
 * .eh_frame / .debug_frame (read by libdw for the fast unwinder's rules),
 * its section and program headers and its .gopclntab, if any, are all
 * hostile - the case of a target that ships a crafted binary to a root
 * pmutop (SECURITY.md). The image is copied into an anonymous mapping of
 * this process and announced as the "[vdso]" mapping, the one kind of
 * module read from the target's memory rather than from a file, so it
 * goes through the same parser as every file. Input layout:
 *
 *   byte 0       flags: bit 0 = SP points at the stack's live twin (else
 *                the raw register value)
 *   bytes 1-2    max depth (1..256)
 *   bytes 3-6    IP: offset into the image's mapping
 *   bytes 7-8    stack copy length N (at most 4096)
 *   17 x 8       registers in perf's packed order
 *   N bytes      the stack copy; a word whose top 16 bits are 0xfffe
 *                becomes the mapping's start + its low 32 bits (modulo
 *                the mapping's size): return addresses into the image
 *   the rest     the ELF image (at most 1 MiB)
 *
 * Invariants: the frame count is within max and not 0, the outcome is a
 * known one, frame 0 is the sample's IP; ASan/UBSan catch the rest. A
 * fresh module cache, maps and unwinder per input keep runs independent.
 */
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "pmutop/sample/perf_record.h"
#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"
#include "pmutop/unwind/unwind.h"

#define FUZZ_UE_HEAD 9
#define FUZZ_UE_REGS (PMUTOP_NREGS * 8)
#define FUZZ_UE_MAX_STACK 4096
#define FUZZ_UE_MAX_IMAGE (1u << 20)
#define FUZZ_UE_SP 7
#define FUZZ_UE_IP 8

static uint64_t fuzz_ue_u(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t live[FUZZ_UE_MAX_STACK + 64];
	struct module_cache *mc = NULL;
	struct maps *maps = NULL;
	struct unwinder *uw = NULL;
	enum unwind_outcome outcome = UNWIND_NOUTCOMES;
	struct perf_sample s;
	uint64_t ips[258], start, span;
	size_t nstack, nimage, page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *stack = NULL, *image;
	unsigned max, n;
	uint8_t flags;

	if (size < FUZZ_UE_HEAD + FUZZ_UE_REGS)
		return 0;
	flags = data[0];
	max = (unsigned)fuzz_ue_u(data + 1, 2) % 256 + 1;
	memset(&s, 0, sizeof(s));
	nstack = (size_t)fuzz_ue_u(data + 7, 2) % (FUZZ_UE_MAX_STACK + 1);
	memcpy(s.regs, data + FUZZ_UE_HEAD, FUZZ_UE_REGS);
	s.regs[FUZZ_UE_IP] = fuzz_ue_u(data + 3, 4); /* the offset, not the register bytes */
	data += FUZZ_UE_HEAD + FUZZ_UE_REGS;
	size -= FUZZ_UE_HEAD + FUZZ_UE_REGS;
	if (nstack > size)
		nstack = size;
	nimage = size - nstack;
	if (nimage > FUZZ_UE_MAX_IMAGE)
		nimage = FUZZ_UE_MAX_IMAGE;
	span = nimage ? (nimage + page - 1) / page * page : page;

	/* The image at a page-aligned address of ours, where "[vdso]" is read from. */
	image = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (image == MAP_FAILED)
		return 0;
	memcpy(image, data + nstack, nimage);
	start = (uint64_t)(uintptr_t)image;

	stack = malloc(nstack ? nstack : 1); /* exact size: ASan sees overreads */
	if (!stack)
		goto out;
	memcpy(stack, data, nstack);
	for (size_t i = 0; i + 8 <= nstack; i += 8) {
		uint64_t w;

		memcpy(&w, stack + i, 8);
		if (w >> 48 == 0xfffe) {
			w = start + (w & 0xffffffffu) % span;
			memcpy(stack + i, &w, 8);
		}
	}
	memcpy(live, stack, nstack);

	mc = module_cache_new();
	maps = mc ? maps_new(getpid(), mc) : NULL;
	if (!maps || maps_add(maps, start, span, 0, 0, 0, true, "[vdso]"))
		goto out;
	uw = unwinder_new(maps);
	if (!uw)
		goto out;

	s.regs[FUZZ_UE_IP] = start + s.regs[FUZZ_UE_IP] % span;
	if (flags & 1)
		s.regs[FUZZ_UE_SP] = (uint64_t)(uintptr_t)live;
	s.ip = s.regs[FUZZ_UE_IP];
	s.pid = s.tid = (uint32_t)getpid();
	s.abi = PERF_SAMPLE_REGS_ABI_64;
	s.misc = PERF_RECORD_MISC_USER;
	s.stack = stack;
	s.stack_size = nstack;

	n = unwinder_unwind(uw, &s, ips, max, &outcome);
	if (n == 0 || n > max || (unsigned)outcome >= UNWIND_NOUTCOMES || ips[0] != s.ip)
		__builtin_trap();
out:
	unwinder_free(uw);
	maps_free(maps);
	module_cache_free(mc);
	free(stack);
	munmap(image, span);
	return 0;
}
