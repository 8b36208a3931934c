/*
 * syscalls.c - a syscall-heavy program: about half of its CPU time in the
 * kernel, in a known kernel function.
 *
 * Ground truth: each round reads from /dev/zero (the kernel clears
 * the user buffer in read_zero / clear_user: kernel time) and then sums the
 * buffer in user_sum() (user time). The kernel share is whatever this
 * machine's ratio of the two is, so tests compare it with perf's and with
 * the process's own user/system CPU time (getrusage), printed at exit as
 * "utime_s stime_s".
 *
 * The lengths vary: each read and each sum covers a pseudo-random 16-112
 * KiB (the same on average). With a fixed 64 KiB the loop was strictly
 * periodic and timer samples locked onto phases of it for stretches of a
 * run: perf and pmutop (even set up alike, cpu-clock at 4 kHz) sampling
 * the same process over the same 2 s disagreed on the kernel share by up
 * to 9 points, ~8x the sampling noise.
 *
 * With WL_GATE set it waits at the gate first (workload.h: wl_gate), so
 * its rusage covers exactly what profilers attached before the gate saw.
 *
 * usage: syscalls [SECONDS]   (default 3)
 */
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "workload.h"

#define BUF (112 * 1024)

static unsigned char buf[BUF];

WL_NOINLINE static uint64_t user_sum(const unsigned char *p, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i += 16) {
		s += p[i];
		__asm__ volatile("" : "+r"(s));
	}
	return s;
}

WL_NOINLINE static ssize_t kernel_read(int fd, size_t n)
{
	return read(fd, buf, n);
}

/* 16-112 KiB in 1 KiB steps, from a xorshift state. */
static size_t next_len(uint64_t *x)
{
	*x = wl_xorshift64(*x);
	return (16 + (size_t)(*x % 97)) * 1024;
}

int main(int argc, char **argv)
{
	double secs = wl_arg_double(argc, argv, 1, 3.0), end;
	int fd = open("/dev/zero", O_RDONLY);
	struct rusage ru;
	uint64_t s = 0, x = 0x9e3779b97f4a7c15ULL;

	if (fd < 0) {
		perror("/dev/zero");
		return 1;
	}
	wl_gate();
	end = wl_now() + secs;
	while (wl_now() < end) {
		for (int i = 0; i < 64; i++) {
			size_t rn = next_len(&x), sn = next_len(&x);

			if (kernel_read(fd, rn) != (ssize_t)rn)
				return 1;
			s += user_sum(buf, sn);
		}
	}
	wl_sink = s;
	getrusage(RUSAGE_SELF, &ru);
	printf("%.3f %.3f\n", (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	return 0;
}
