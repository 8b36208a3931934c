/*
 * shares.c - ten functions with known shares of CPU time (serial).
 *
 * Ground truth: function k (A=1 ... J=10) runs k*C iterations of identical,
 * serially dependent work per round, so of the time spent in the ten
 * functions, function k gets k/55 (1+2+...+10 = 55). Each name encodes its
 * expected flat percentage: A_expect_1_82 = 1/55 = 1.82%, ..., J_expect_18_18.
 * This is the "serial.go" test of the Go PMU profiling proposal, in C.
 *
 * Single-threaded. main() calls A..J in rounds of ~10-20 ms (so periodic
 * sampling sees many rounds) forever, or for argv[1] seconds when given; the
 * clock is read only between rounds so it does not disturb the shares.
 *
 * With WL_GATE set it waits at the gate first (workload.h: wl_gate).
 *
 * usage: shares [SECONDS]
 */
#include "workload.h"

/* Iterations per unit; one round is 55*C iterations (~10-20 ms). */
#define C 130000L

WL_NOINLINE static void A_expect_1_82(void)   { WL_SPIN(1 * C); }
WL_NOINLINE static void B_expect_3_64(void)   { WL_SPIN(2 * C); }
WL_NOINLINE static void C_expect_5_45(void)   { WL_SPIN(3 * C); }
WL_NOINLINE static void D_expect_7_27(void)   { WL_SPIN(4 * C); }
WL_NOINLINE static void E_expect_9_09(void)   { WL_SPIN(5 * C); }
WL_NOINLINE static void F_expect_10_91(void)  { WL_SPIN(6 * C); }
WL_NOINLINE static void G_expect_12_73(void)  { WL_SPIN(7 * C); }
WL_NOINLINE static void H_expect_14_55(void)  { WL_SPIN(8 * C); }
WL_NOINLINE static void I_expect_16_36(void)  { WL_SPIN(9 * C); }
WL_NOINLINE static void J_expect_18_18(void)  { WL_SPIN(10 * C); }

WL_NOINLINE static void round_once(void)
{
	A_expect_1_82();
	B_expect_3_64();
	C_expect_5_45();
	D_expect_7_27();
	E_expect_9_09();
	F_expect_10_91();
	G_expect_12_73();
	H_expect_14_55();
	I_expect_16_36();
	J_expect_18_18();
}

int main(int argc, char **argv)
{
	double secs = wl_arg_double(argc, argv, 1, -1.0);
	double end;

	wl_gate();
	end = wl_now() + secs;

	for (;;) {
		round_once();
		if (secs >= 0 && wl_now() >= end)
			break;
	}
	return 0;
}
