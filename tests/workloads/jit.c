/*
 * jit.c - generated machine code named only by a perf map (x86-64).
 *
 * Ground truth: the process writes two copies of a hot loop into anonymous
 * memory, the way a JIT does (mmap RW, write the code, mprotect RX), and
 * names each in /tmp/perf-PID.map ("START SIZE name", hex), the perf map
 * convention of Node, Java agents and LuaJIT. Nothing else names that
 * memory: no file, no symbol, no unwind info.
 *
 *   first half of the run:   jit_hot_first   (mapped and named at start)
 *   second half:             jit_hot_second  (mapped and appended to the
 *                                             map file only then, so a
 *                                             profiler must re-read it)
 *
 * Almost all CPU time is in the generated code. PID in the file name is the
 * process's own (namespace) pid, as getpid() returns it. The file is
 * removed at exit, including on SIGTERM/SIGINT.
 *
 * usage: jit [SECONDS [NAME]]   (default 6 s; NAME replaces jit_hot_first:
 *                               the flame graph test gives a hostile one)
 */
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "workload.h"

/*
 * uint64_t f(uint64_t n): n rounds of xorshift64 on (n | 1), returned.
 *   mov rax,rdi; or rax,1
 * L: mov rdx,rax; shl rdx,13; xor rax,rdx; mov rdx,rax; shr rdx,7; xor rax,rdx
 *    mov rdx,rax; shl rdx,17; xor rax,rdx; dec rdi; jnz L
 *    ret
 */
static const unsigned char code[] = {
	0x48, 0x89, 0xf8, 0x48, 0x83, 0xc8, 0x01,
	0x48, 0x89, 0xc2, 0x48, 0xc1, 0xe2, 0x0d, 0x48, 0x31, 0xd0,
	0x48, 0x89, 0xc2, 0x48, 0xc1, 0xea, 0x07, 0x48, 0x31, 0xd0,
	0x48, 0x89, 0xc2, 0x48, 0xc1, 0xe2, 0x11, 0x48, 0x31, 0xd0,
	0x48, 0xff, 0xcf, 0x75, 0xdd,
	0xc3,
};

typedef uint64_t (*jit_fn)(uint64_t);

static char map_path[64];

static void cleanup(void)
{
	if (map_path[0])
		unlink(map_path);
}

static void on_signal(int sig)
{
	(void)sig;
	cleanup();
	_exit(0);
}

/* Generate the loop into a fresh RX page and append its perf map line. */
static jit_fn generate(const char *name)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	FILE *f;

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	/* Some padding first, so the code does not start at the page start. */
	memset(p, 0xcc, (size_t)page);
	memcpy(p + 64, code, sizeof(code));
	if (mprotect(p, (size_t)page, PROT_READ | PROT_EXEC)) {
		perror("mprotect");
		exit(1);
	}
	f = fopen(map_path, "a");
	if (!f) {
		perror(map_path);
		exit(1);
	}
	fprintf(f, "%lx %zx %s\n", (unsigned long)(uintptr_t)(p + 64), sizeof(code), name);
	fclose(f);
	return (jit_fn)(void *)(p + 64);
}

WL_NOINLINE static void run_for(jit_fn fn, double until)
{
	while (wl_now() < until)
		wl_sink += fn(200000);
}

int main(int argc, char **argv)
{
	double secs = wl_arg_double(argc, argv, 1, 6.0), start = wl_now();
	jit_fn first, second;

#if !defined(__x86_64__)
	fprintf(stderr, "jit: x86-64 only\n");
	return 77;
#endif
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", (int)getpid());
	unlink(map_path);
	atexit(cleanup);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	first = generate(argc > 2 ? argv[2] : "jit_hot_first");
	run_for(first, start + secs / 2);
	second = generate("jit_hot_second");
	run_for(second, start + secs);
	return 0;
}
