/*
 * mkseeds.c - write the synthesized seed inputs of the fuzz targets.
 *
 * usage: mkseeds CORPUS_DIR      (normally tests/fuzz/corpus)
 *
 * Writes CORPUS_DIR/fuzz_perf_record/seed-* (one well-formed record of each
 * kind pmutop decodes, in the target's input layout, plus a few near
 * misses) and CORPUS_DIR/fuzz_unwind/seed-* (register sets and stacks whose
 * words point into the fuzzer's own code) and CORPUS_DIR/fuzz_module/seed-vdso
 * (this process's vDSO image). tests/fuzz/mkseeds.sh builds and runs it and
 * adds small compiled ELF files; run it by hand when the input layouts
 * change; the outputs are committed.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>

#include "pmutop/sample/perf_record.h"

struct buf {
	unsigned char b[70000];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put64(struct buf *b, uint64_t v) { put(b, &v, 8); }
static void put32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void put16(struct buf *b, uint16_t v) { put(b, &v, 2); }
static void put8(struct buf *b, uint8_t v) { put(b, &v, 1); }

static int write_file(const char *dir, const char *name, const struct buf *b)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(b->b, 1, b->n, f) != b->n || fclose(f)) {
		fprintf(stderr, "mkseeds: %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

/* fuzz_perf_record layout: flags, sample_type, regs_mask, record. */
static void pr_start(struct buf *b, uint8_t flags, uint64_t st, uint64_t mask,
		     uint32_t type, uint16_t misc)
{
	b->n = 0;
	put8(b, flags);
	put64(b, st);
	put64(b, mask);
	put32(b, type);
	put16(b, misc);
	put16(b, 0); /* size: patched by the target unless flags & 2 */
}

static void pr_fix_size(struct buf *b)
{
	uint16_t sz = (uint16_t)(b->n - 17);

	memcpy(b->b + 17 + 6, &sz, 2);
}

static void sample_body(struct buf *b, uint64_t stack_size, uint64_t dyn)
{
	put64(b, 0x401136);            /* ip */
	put32(b, 1234); put32(b, 1235); /* pid, tid */
	put64(b, 123456789);           /* time */
	put32(b, 1); put32(b, 0);      /* cpu, res */
	put64(b, 250000);              /* period */
	put64(b, PERF_SAMPLE_REGS_ABI_64);
	for (int i = 0; i < PMUTOP_NREGS; i++)
		put64(b, i == 7 ? 0x7ffc0000f000ULL : i == 8 ? 0x401136 : (uint64_t)i);
	put64(b, stack_size);
	for (uint64_t i = 0; i < stack_size; i += 8)
		put64(b, i % 16 ? 0x401200 + i : 0x7ffc0000f000ULL + i);
	if (stack_size)
		put64(b, dyn);
}

static int perf_record_seeds(const char *dir)
{
	static struct buf b;
	int err = 0;
	const uint64_t st = PMUTOP_SAMPLE_TYPE_BASE, mask = PMUTOP_REGS_MASK;

	pr_start(&b, 2, st, mask, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	sample_body(&b, 256, 256);
	pr_fix_size(&b);
	err |= write_file(dir, "seed-sample", &b);

	pr_start(&b, 0, st, mask, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	sample_body(&b, 512, 100); /* dyn_size smaller than size */
	err |= write_file(dir, "seed-sample-dyn", &b);

	pr_start(&b, 0, st, mask, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	sample_body(&b, 0, 0);
	err |= write_file(dir, "seed-sample-nostack", &b);

	/* Every optional field pmutop can skip, with a callchain. */
	pr_start(&b, 1, st | PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
		 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CALLCHAIN, mask,
		 PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	put64(&b, 7);                                  /* identifier */
	put64(&b, 0x401136);                           /* ip */
	put32(&b, 1); put32(&b, 1);                    /* pid tid */
	put64(&b, 5);                                  /* time */
	put64(&b, 0xdead);                             /* addr */
	put64(&b, 7);                                  /* id */
	put64(&b, 8);                                  /* stream id */
	put32(&b, 0); put32(&b, 0);                    /* cpu */
	put64(&b, 1);                                  /* period */
	put64(&b, 3);                                  /* callchain nr */
	put64(&b, 1); put64(&b, 2); put64(&b, 3);
	put64(&b, PERF_SAMPLE_REGS_ABI_NONE);          /* no regs */
	put64(&b, 16); put64(&b, 1); put64(&b, 2); put64(&b, 16);
	err |= write_file(dir, "seed-sample-all", &b);

	pr_start(&b, 0, st, mask, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	put32(&b, 1234); put32(&b, 1234);
	put64(&b, 0x7f0000000000ULL); put64(&b, 0x21000); put64(&b, 0x1000);
	put32(&b, 8); put32(&b, 1); put64(&b, 123456); put64(&b, 0);
	put32(&b, 5); put32(&b, 2);
	put(&b, "/usr/lib/x86_64-linux-gnu/libc.so.6\0\0\0\0\0", 40);
	err |= write_file(dir, "seed-mmap2", &b);

	pr_start(&b, 0, st, mask, PERF_RECORD_MMAP2,
		 PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	put32(&b, 1234); put32(&b, 1234);
	put64(&b, 0x7f0000000000ULL); put64(&b, 0x21000); put64(&b, 0);
	put8(&b, 20); put8(&b, 0); put16(&b, 0);
	for (int i = 0; i < 20; i++)
		put8(&b, (uint8_t)(i * 13));
	put32(&b, 5); put32(&b, 2);
	put(&b, "/tmp/x.so\0\0\0\0\0\0\0", 16);
	err |= write_file(dir, "seed-mmap2-buildid", &b);

	pr_start(&b, 0, st, mask, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER);
	put32(&b, 1234); put32(&b, 1234);
	put64(&b, 0x400000); put64(&b, 0x1000); put64(&b, 0);
	put(&b, "/bin/true\0\0\0\0\0\0\0", 16);
	err |= write_file(dir, "seed-mmap", &b);

	pr_start(&b, 0, st, mask, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	put32(&b, 1234); put32(&b, 1234);
	put(&b, "exiter\0\0", 8);
	err |= write_file(dir, "seed-comm-exec", &b);

	pr_start(&b, 0, st, mask, PERF_RECORD_FORK, 0);
	put32(&b, 1234); put32(&b, 1234); put32(&b, 1240); put32(&b, 1234); put64(&b, 99);
	err |= write_file(dir, "seed-fork", &b);

	pr_start(&b, 0, st, mask, PERF_RECORD_EXIT, 0);
	put32(&b, 1234); put32(&b, 1234); put32(&b, 1240); put32(&b, 1240); put64(&b, 100);
	err |= write_file(dir, "seed-exit", &b);

	pr_start(&b, 0, st, mask, PERF_RECORD_LOST, 0);
	put64(&b, 1); put64(&b, 42);
	err |= write_file(dir, "seed-lost", &b);

	pr_start(&b, 0, st, mask, PERF_RECORD_LOST_SAMPLES, 0);
	put64(&b, 17);
	err |= write_file(dir, "seed-lost-samples", &b);

	pr_start(&b, 0, st, mask, PERF_RECORD_THROTTLE, 0);
	put64(&b, 1000); put64(&b, 1); put64(&b, 2);
	err |= write_file(dir, "seed-throttle", &b);

	pr_start(&b, 0, st, mask, PERF_RECORD_UNTHROTTLE, 0);
	put64(&b, 1000); put64(&b, 1); put64(&b, 2);
	err |= write_file(dir, "seed-unthrottle", &b);

	/* Near misses: header size disagreeing with the length, truncated sample. */
	pr_start(&b, 2, st, mask, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	sample_body(&b, 64, 64);
	err |= write_file(dir, "seed-badsize", &b);
	pr_start(&b, 0, st, mask, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	sample_body(&b, 64, 64);
	b.n -= 40;
	err |= write_file(dir, "seed-truncated", &b);
	return err;
}

/* fuzz_unwind layout: flags, mapping, max depth (u16), 17 regs, stack. */
static void uw_start(struct buf *b, uint8_t flags, uint8_t which, uint16_t max)
{
	b->n = 0;
	put8(b, flags);
	put8(b, which);
	put16(b, max);
}

static uint64_t code(unsigned which, uint32_t off)
{
	return 0xfffe000000000000ULL | (uint64_t)which << 32 | off;
}

static int unwind_seeds(const char *dir)
{
	static struct buf b;
	int err = 0;
	char name[64];

	for (unsigned which = 0; which < 4; which++) {
		/* IP in a mapping, SP at the live twin, a chain of frames. */
		uw_start(&b, 3, (uint8_t)which, 128);
		for (int i = 0; i < PMUTOP_NREGS; i++)
			put64(&b, i == 8 ? 0x1000 + which * 0x321 : i == 6 ? 0x40 : 0);
		for (unsigned i = 0; i < 128; i++)
			put64(&b, i % 4 == 3 ? code(which + i / 4, 0x800 + i * 0x40) : i * 8);
		snprintf(name, sizeof(name), "seed-chain-%u", which);
		err |= write_file(dir, name, &b);
	}
	/* No registers; kernel mode; raw garbage registers. */
	uw_start(&b, 8, 0, 16);
	for (int i = 0; i < PMUTOP_NREGS; i++)
		put64(&b, 0);
	err |= write_file(dir, "seed-noregs", &b);
	uw_start(&b, 7, 1, 64);
	for (int i = 0; i < PMUTOP_NREGS; i++)
		put64(&b, 0x1000 + (uint64_t)i);
	for (unsigned i = 0; i < 64; i++)
		put64(&b, code(i, i * 0x111));
	err |= write_file(dir, "seed-kernel", &b);
	uw_start(&b, 0, 0, 256);
	for (int i = 0; i < PMUTOP_NREGS; i++)
		put64(&b, 0x4141414141414141ULL * (uint64_t)(i + 1));
	for (unsigned i = 0; i < 32; i++)
		put64(&b, 0xdeadbeefULL << (i % 32));
	err |= write_file(dir, "seed-garbage", &b);
	/* A frame-pointer chain inside the copy: BP -> [saved BP, return]. */
	uw_start(&b, 3, 2, 200);
	for (int i = 0; i < PMUTOP_NREGS; i++)
		put64(&b, i == 8 ? 0x2000 : 0);
	for (unsigned i = 0; i < 256; i++)
		put64(&b, i % 2 ? code(i % 8, 0x100 * i) : 0);
	err |= write_file(dir, "seed-fpchain", &b);
	return err;
}

/* Our own vDSO: a real, small ELF image as the target would hand it over. */
static int vdso_seed(const char *dir)
{
	static struct buf b;
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int err = 1;

	while (f && base && fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s == base && e - s <= sizeof(b.b)) {
			b.n = 0;
			put(&b, (const void *)s, e - s);
			err = write_file(dir, "seed-vdso", &b);
			break;
		}
	}
	if (f)
		fclose(f);
	return err;
}

int main(int argc, char **argv)
{
	char dir[4096];
	int err = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: mkseeds CORPUS_DIR\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/fuzz_perf_record", argv[1]);
	mkdir(dir, 0755);
	err |= perf_record_seeds(dir);
	snprintf(dir, sizeof(dir), "%s/fuzz_unwind", argv[1]);
	mkdir(dir, 0755);
	err |= unwind_seeds(dir);
	snprintf(dir, sizeof(dir), "%s/fuzz_module", argv[1]);
	mkdir(dir, 0755);
	err |= vdso_seed(dir);
	return err;
}
