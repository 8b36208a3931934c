/*
 * fuzz_unwind.c - fuzz target: the unwinder on arbitrary registers and stack.
 *
 * The "target" is this process itself: its maps are loaded once from
 * /proc/self/maps (real modules: the fuzzer, libc, libunwind, ld.so, the
 * vDSO), and the unwinder's live reads go to our own memory with
 * process_vm_readv, which fails with EFAULT on a bad address rather than
 * faulting. A perf_sample is built from the input:
 *
 *   byte 0       flags: bit 0 = IP is an offset into an executable mapping
 *                (else the raw value), bit 1 = SP points at the stack copy's
 *                live twin below (else the raw value), bit 2 = kernel-mode
 *                sample, bit 3 = no user registers (abi 0)
 *   byte 1       which executable mapping (for bit 0 and for fixups)
 *   bytes 2-3    max depth (1..256)
 *   17 x 8       registers in perf's packed order (missing bytes are zero)
 *   the rest     the stack copy (at most 64 KiB)
 *
 * To reach past the first frame, a stack word whose top 16 bits are 0xfffe
 * is rewritten to a code address: mapping (bits 32-47) + offset (low 32
 * bits). The same bytes are also laid out in a live buffer, so reads above
 * the copy find plausible data too. Invariants checked: the frame count is
 * within max (and not 0, unless a kernel-mode sample has no user
 * registers), the outcome is a known one, and frame 0 is the sample's IP.
 */
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"
#include "pmutop/sample/perf_record.h"
#include "pmutop/unwind/unwind.h"

#define FUZZ_UW_MAX_STACK 65536
#define FUZZ_UW_MAX_EXEC 64
#define FUZZ_UW_SP 7
#define FUZZ_UW_IP 8

static struct module_cache *fuzz_uw_cache;
static struct maps *fuzz_uw_maps;
static struct unwinder *fuzz_uw;
static uint64_t fuzz_uw_exec[FUZZ_UW_MAX_EXEC][2]; /* [start, end) */
static unsigned fuzz_uw_nexec;

static bool fuzz_uw_init(void)
{
	char line[4096];
	FILE *f;

	if (fuzz_uw)
		return true;
	fuzz_uw_cache = module_cache_new();
	fuzz_uw_maps = fuzz_uw_cache ? maps_new(getpid(), fuzz_uw_cache) : NULL;
	if (!fuzz_uw_maps || maps_load_proc(fuzz_uw_maps))
		return false;
	fuzz_uw = unwinder_new(fuzz_uw_maps);
	f = fopen("/proc/self/maps", "re");
	while (f && fgets(line, sizeof(line), f) && fuzz_uw_nexec < FUZZ_UW_MAX_EXEC) {
		unsigned long long s, e;
		char perms[8];

		if (sscanf(line, "%llx-%llx %7s", &s, &e, perms) == 3 && perms[2] == 'x') {
			fuzz_uw_exec[fuzz_uw_nexec][0] = s;
			fuzz_uw_exec[fuzz_uw_nexec][1] = e;
			fuzz_uw_nexec++;
		}
	}
	if (f)
		fclose(f);
	return fuzz_uw != NULL && fuzz_uw_nexec > 0;
}

static uint64_t fuzz_uw_code(unsigned which, uint64_t off)
{
	const uint64_t *r = fuzz_uw_exec[which % fuzz_uw_nexec];

	return r[0] + off % (r[1] - r[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t live[FUZZ_UW_MAX_STACK + 64];
	struct perf_sample s;
	uint64_t ips[258];
	enum unwind_outcome outcome = UNWIND_NOUTCOMES;
	unsigned max, n;
	uint8_t flags, which;
	uint8_t *stack;
	size_t nstack;

	if (size < 4 || !fuzz_uw_init())
		return 0;
	flags = data[0];
	which = data[1];
	max = (unsigned)(data[2] | data[3] << 8) % 256 + 1;
	data += 4;
	size -= 4;

	memset(&s, 0, sizeof(s));
	{
		size_t n_reg = size < sizeof(s.regs) ? size : sizeof(s.regs);

		memcpy(s.regs, data, n_reg);
		data += n_reg;
		size -= n_reg;
	}
	nstack = size < FUZZ_UW_MAX_STACK ? size : FUZZ_UW_MAX_STACK;
	stack = malloc(nstack ? nstack : 1); /* exact size: ASan sees overreads */
	if (!stack)
		return 0;
	memcpy(stack, data, nstack);
	for (size_t i = 0; i + 8 <= nstack; i += 8) {
		uint64_t w;

		memcpy(&w, stack + i, 8);
		if (w >> 48 == 0xfffe) {
			w = fuzz_uw_code((unsigned)(w >> 32) & 0xffff, w & 0xffffffffu);
			memcpy(stack + i, &w, 8);
		}
	}
	memcpy(live, stack, nstack);

	if (flags & 1)
		s.regs[FUZZ_UW_IP] = fuzz_uw_code(which, s.regs[FUZZ_UW_IP]);
	if (flags & 2)
		s.regs[FUZZ_UW_SP] = (uint64_t)(uintptr_t)live;
	s.ip = s.regs[FUZZ_UW_IP];
	s.pid = s.tid = (uint32_t)getpid();
	s.abi = (flags & 8) ? 0 : PERF_SAMPLE_REGS_ABI_64;
	s.misc = (flags & 4) ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
	if (flags & 4)
		s.ip ^= 0xffffffff00000000ULL;
	s.stack = stack;
	s.stack_size = nstack;

	n = unwinder_unwind(fuzz_uw, &s, ips, max, &outcome);
	/* No frame only for a kernel-mode sample without user registers
	 * (nothing of user space to show; the kernel part is the session's). */
	if (n > max || (unsigned)outcome >= UNWIND_NOUTCOMES ||
	    (n == 0 && (s.abi || (s.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER)))
		__builtin_trap();
	if (s.abi && (s.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER &&
	    ips[0] != s.regs[FUZZ_UW_IP])
		__builtin_trap();
	free(stack);
	return 0;
}
