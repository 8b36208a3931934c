/*
 * nosym_lib.c - libnosym.so: hot code with no symbol once stripped, and a
 * function called through the PLT.
 *
 * Ground truth: nosym_round() runs two static (so, once the library is
 * stripped, unnamed) functions, lib_quarter with 1 unit of work and
 * lib_three_quarters with 3: of their time, 25 % and 75 %. Each has its own
 * .eh_frame FDE, which is all a profiler has left to tell them apart.
 * plt_empty() does nothing: nosym_main calls it in a tight loop through its
 * PLT, so samples land in the PLT stub "plt_empty@plt".
 */
#include "workload.h"

#define C 40000L

WL_NOINLINE static void lib_quarter(void)        { WL_SPIN(1 * C); }
WL_NOINLINE static void lib_three_quarters(void) { WL_SPIN(3 * C); }

void nosym_round(void);
int plt_empty(int x);

void nosym_round(void)
{
	lib_quarter();
	lib_three_quarters();
}

int plt_empty(int x)
{
	return x + 1;
}
