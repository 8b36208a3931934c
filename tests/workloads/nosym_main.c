/*
 * nosym_main.c - drives libnosym.so (found next to itself, rpath $ORIGIN).
 *
 * usage: nosym_main SECONDS fde|plt
 *   fde  call nosym_round() in a loop: the time is in the library's two
 *        unnamed functions, 25 % / 75 % (nosym_lib.c);
 *   plt  call plt_empty() through the PLT in a tight loop.
 */
#include <string.h>

#include "workload.h"

void nosym_round(void);
int plt_empty(int x);

int main(int argc, char **argv)
{
	double end = wl_now() + wl_arg_double(argc, argv, 1, 3.0);
	int plt = argc > 2 && strcmp(argv[2], "plt") == 0;
	int x = 0;

	while (wl_now() < end) {
		if (plt) {
			for (int i = 0; i < 1000000; i++)
				x = plt_empty(x);
		} else {
			for (int i = 0; i < 16; i++)
				nosym_round();
		}
	}
	wl_sink = (uint64_t)x;
	return 0;
}
