/*
 * libfat.c - a shared library whose symbol table lies far past its code.
 *
 * Ground truth: like libhot.so, once dl_main dlopen()s it all time is in
 * libhot_spin() (same name and signature, so dl_main loads either). It
 * also defines 1024 small exported padding functions, so .symtab and
 * .strtab - which no PT_LOAD segment covers - span several pages beyond
 * the last loaded page. Truncating the file there, or overwriting those
 * pages, leaves a running process that loaded it unharmed (it never reads
 * them) while a profiler that reads the file sees an ELF file whose
 * section headers and symbol names are gone or garbage
 * (tests/e2e/t_fault_corrupt_elf.sh).
 */
#include "workload.h"

double libhot_spin(double seconds);

__attribute__((noinline, visibility("default"))) double libhot_spin(double seconds)
{
	double start = wl_now();
	double t;

	do {
		WL_SPIN(100000L);
		t = wl_now();
	} while (t - start < seconds);
	return t - start;
}

#define PAD1(n) int libfat_padding_function_##n(int x); \
	int libfat_padding_function_##n(int x) { return x + (n); }
#define PAD4(n) PAD1(n##0) PAD1(n##1) PAD1(n##2) PAD1(n##3)
#define PAD16(n) PAD4(n##0) PAD4(n##1) PAD4(n##2) PAD4(n##3)
#define PAD64(n) PAD16(n##0) PAD16(n##1) PAD16(n##2) PAD16(n##3)
#define PAD256(n) PAD64(n##0) PAD64(n##1) PAD64(n##2) PAD64(n##3)
#define PAD1024(n) PAD256(n##0) PAD256(n##1) PAD256(n##2) PAD256(n##3)
PAD1024(1)

