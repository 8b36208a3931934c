#!/usr/bin/env bash
# t_parallel_build.sh - a parallel build of a stripped compiler loses no
# samples at the default buffer size (issue 31 item 4).
#
# Debian's cc1 is stripped: its functions are named and grouped by the FDE
# around each address (.eh_frame), looked up on the sampling path. Finding
# an FDE's extent through libdw took one dwarf_cfi_addrframe() per CFI row
# of the function, each running the FDE's instructions from its start -
# quadratic in a function's size: `pmutop -- make -j2` of 13 C files lost
# 39% of its samples, perf none, and pmutop used more CPU than the build.
#
# The "compiler" here is generated: 64 functions of 1024 push/pop blocks
# each (2048 CFI rows per FDE, as cc1's big functions have), calling one
# another through a table, stripped to .eh_frame only - no symbol names
# any function. `make -j2` runs 8 of them. Checked:
#   - no LOST records beyond 1% of the samples (the code before the fix
#     lost 80-90% of them here: pmutop could not keep up; not bound for an
#     ASan build);
#   - every sample's function is one FDE: at most as many distinct
#     "fakecc+0x..." names as the file has FDEs (a range split per CFI row
#     would give hundreds).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
e2e_init
command -v make >/dev/null || skip "make not installed"

NFUNC=64 NBLOCK=1024
ITER=$(quick_or 3000 1500)

# fk.s: NFUNC local functions; function i runs NBLOCK blocks (push, a
# short multiply loop, pop: two CFI rows each), then calls a function
# chosen by its value through ftab while depth lasts.
awk -v N=$NFUNC -v K=$NBLOCK '
BEGIN {
	print "\t.text"
	for (i = 0; i < N; i++) {
		printf "f%d:\n\t.cfi_startproc\n", i
		print "\tpush %rbx\n\t.cfi_adjust_cfa_offset 8\n\t.cfi_offset %rbx, -16"
		print "\tpush %r12\n\t.cfi_adjust_cfa_offset 8\n\t.cfi_offset %r12, -24"
		print "\tpush %r13\n\t.cfi_adjust_cfa_offset 8\n\t.cfi_offset %r13, -32"
		print "\tmov %rdi, %rbx\n\tmov %rsi, %r12"
		for (k = 0; k < K; k++) {
			print "\tpush %rbx\n\t.cfi_adjust_cfa_offset 8"
			printf "\tmov $%d, %%ecx\n1:\timul $0x3779B1, %%rbx, %%rbx\n", 3 + (i * 7 + k) % 13
			print "\txor %rcx, %rbx\n\tdec %ecx\n\tjnz 1b"
			print "\tpop %rax\n\t.cfi_adjust_cfa_offset -8\n\txor %rax, %rbx"
		}
		print "\ttest %r12, %r12\n\tjz 2f"
		printf "\tmov %%rbx, %%rax\n\tshr $7, %%rax\n\tand $%d, %%eax\n", N - 1
		print "\tlea ftab(%rip), %rdx\n\tmov %rbx, %rdi\n\tlea -1(%r12), %rsi"
		print "\tcall *(%rdx,%rax,8)\n\tadd %rax, %rbx"
		print "2:\tmov %rbx, %rax"
		print "\tpop %r13\n\t.cfi_adjust_cfa_offset -8\n\t.cfi_restore %r13"
		print "\tpop %r12\n\t.cfi_adjust_cfa_offset -8\n\t.cfi_restore %r12"
		print "\tpop %rbx\n\t.cfi_adjust_cfa_offset -8\n\t.cfi_restore %rbx"
		print "\tret\n\t.cfi_endproc"
	}
	print "\t.globl fk_dispatch\nfk_dispatch:\n\t.cfi_startproc"
	printf "\tmov %%rdi, %%rax\n\tand $%d, %%eax\n\tlea ftab(%%rip), %%rdx\n", N - 1
	print "\tjmp *(%rdx,%rax,8)\n\t.cfi_endproc"
	print "\t.section .data.rel.ro,\"aw\"\n\t.p2align 3\nftab:"
	for (i = 0; i < N; i++)
		printf "\t.quad f%d\n", i
	print "\t.section .note.GNU-stack,\"\",@progbits"
}' >fk.s
cat >main.c <<'EOF'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
uint64_t fk_dispatch(uint64_t x, uint64_t depth);
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	uint64_t s = (argc > 2 ? strtoull(argv[2], 0, 0) : 0) * 2654435761u + 1, acc = 0;

	for (long i = 0; i < n; i++) {
		s ^= s << 13; s ^= s >> 7; s ^= s << 17;
		acc += fk_dispatch(s, 3);
	}
	printf("%llu\n", (unsigned long long)acc);
	return 0;
}
EOF
cc -O1 -o fakecc.full main.c fk.s || fail "cannot build the generated program"
strip --strip-all -o fakecc fakecc.full || fail "strip failed"
readelf -SW fakecc | grep -q '\.symtab' && fail "strip left a .symtab"
nfde=$(readelf -wf fakecc 2>/dev/null | grep -c ' FDE ')
info "fakecc: stripped, $nfde FDEs in .eh_frame, $(stat -c %s fakecc) bytes"

jobs=""
for i in 1 2 3 4 5 6 7 8; do jobs+=" out$i"; done
printf 'all:%s\nout%%:\n\t./fakecc %s $* > $@\n' "$jobs" "$ITER" >Makefile

run_pmutop build --dump build.pb.gz -- make -j2
show build.err 8
(( RC == 0 )) || fail "pmutop -- make -j2: exit status $RC"
read -r samples lost < <(awk '/ samples of .* lost [0-9]+/ {
	for (i = 1; i <= NF; i++) { if ($(i+1) == "samples") s = $i; if ($i == "lost") l = $(i+1) + 0 }
	print s, l }' build.err)
[[ -n ${samples:-} && -n ${lost:-} ]] || fail "no sample/lost counts in pmutop's summary"
info "pmutop: $samples samples, $lost lost"
(( samples >= 1000 )) || fail "only $samples samples of a build of 8 x $ITER dispatches"
# Lost records are what the kernel could not write because pmutop had not
# drained the buffer: pmutop busy. Nothing is lost in a quiet run; 1%
# leaves room for a machine shared with other builds. An ASan build spends
# several times the CPU per sample by design: its count is shown, not bound.
if is_asan; then
	info "(ASan build: $lost lost, not checked)"
elif (( lost * 100 > samples )); then
	problem "lost $lost samples of $((samples + lost)) ($((lost * 100 / (samples + lost)))%) at the default buffer size"
fi

if readable build.pb.gz 12; then
	nfn=$(grep -c '^fakecc+0x' flat.txt)
	fk=$(awk -F'\t' '$1 ~ /^fakecc\+0x/ { v += $2 } END { printf "%.0f", v }' flat.txt)
	info "fakecc: $nfn distinct functions named by FDE, $fk of $(flat_total) flat"
	(( nfn >= NFUNC / 2 )) || problem "only $nfn fakecc functions in the profile, want most of $NFUNC"
	# One name per FDE (the generated ones and the C runtime's): a range
	# split per CFI row would give hundreds.
	(( nfn <= nfde + 2 )) || problem "$nfn fakecc functions for $nfde FDEs: a function split by CFI row"
fi

(( ERRS == 0 )) || fail "$ERRS problem(s) profiling a parallel build of a stripped program"
pass "make -j2 of a stripped many-FDE program: $lost of $samples samples lost, functions grouped by FDE"
