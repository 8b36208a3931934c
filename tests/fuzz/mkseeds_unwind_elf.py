#!/usr/bin/env python3
"""mkseeds_unwind_elf.py - seeds for fuzz_unwind_elf from fuzz_module's ELF seeds.

usage: mkseeds_unwind_elf.py CORPUS_DIR

Each seed is fuzz_unwind_elf's header (flags, depth, IP offset, stack
length), registers, a short stack whose words point back into the image
(0xfffe marker: the fuzzer turns them into addresses in the image's
mapping) and one of the real ELF files: the IP lands inside a function
that has CFI, so the seed reaches libdw's .eh_frame reader from the start.
"""
import os
import struct
import sys

# (fuzz_module seed, IP offset into the file-as-mapped, return addresses)
CASES = [
    ("seed-tiny.so", 0x51A, [0x525, 0x530]),            # tiny_add, tiny_mul, tiny_weak
    ("seed-vdso", 0xAF4, [0xE84, 0xF04]),               # __vdso_clock_gettime ...
    ("seed-start-ehframe", 0x1005, [0x1008]),           # _start
    ("seed-tiny-stripped.so", 0x51A, [0x525]),          # no .symtab: FDE ranges only
]


def main():
    corpus = sys.argv[1]
    src = os.path.join(corpus, "fuzz_module")
    out = os.path.join(corpus, "fuzz_unwind_elf")
    os.makedirs(out, exist_ok=True)
    for name, ip, ras in CASES:
        with open(os.path.join(src, name), "rb") as f:
            image = f.read()
        stack = b"".join(struct.pack("<Q", (0xFFFE << 48) | ra) for ra in ras)
        stack += b"\0" * 16
        regs = [0] * 17
        head = struct.pack("<BHIH", 1, 64, ip, len(stack))
        seed = head + b"".join(struct.pack("<Q", r) for r in regs) + stack + image
        with open(os.path.join(out, name.replace("seed-", "seed-elf-")), "wb") as f:
            f.write(seed)


if __name__ == "__main__":
    main()
