/*
 * gopclntab.h - Go's own function table (.gopclntab): what the Go runtime
 * uses for its tracebacks, kept even in binaries built with
 * -ldflags='-s -w' (no .symtab, no DWARF).
 *
 * For a code address it gives the function (name, entry, flags), the SP
 * offset at that address (pcsp: how the unwinder finds the caller without
 * CFI), the file:line, and the chain of functions inlined there. Layouts
 * of Go 1.16/1.17, 1.18/1.19 and 1.20+ (pcHeader magics 0xfffffffa,
 * 0xfffffff0, 0xfffffff1) are read; anything else is refused with a
 * message. Every read is bounds-checked: a corrupt or truncated table gives
 * errors, never a read outside it. It lives in the target stage because
 * the unwinder (SP tables, top-of-stack functions) and the symbolizer
 * (names, lines) both use it.
 */
#ifndef PMUTOP_GOPCLNTAB_H
#define PMUTOP_GOPCLNTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gopclntab;

/* Where the table and the bytes it refers to are. */
struct gopclntab_src {
	const uint8_t *data;      /* the .gopclntab bytes */
	size_t len;
	uint64_t vaddr;           /* its ELF vaddr */
	uint64_t text_vaddr;      /* .text's ELF vaddr (when the header's textStart is 0: PIE) */
	uint64_t gofunc_vaddr;    /* go:func.* (funcdata base, Go 1.18+), 0 = find it */
	const uint8_t *mdata;     /* .noptrdata, where runtime.firstmoduledata is (may be NULL) */
	size_t mdata_len;
	/* Reads other bytes of the object by ELF vaddr (inline trees); 0 or -errno. */
	int (*read)(const void *arg, uint64_t vaddr, void *buf, size_t len);
	const void *arg;
};

/*
 * Parse the header. Returns NULL and a one-line reason in err (unknown
 * layout: "Go pclntab magic 0x... (Go 1.2-1.15?) not supported"; truncated
 * or inconsistent header) when the table cannot be used.
 */
struct gopclntab *gopclntab_new(const struct gopclntab_src *src, char *err, size_t errlen);
void gopclntab_free(struct gopclntab *t);

/* The layout: 116 (Go 1.16/1.17), 118 (1.18/1.19) or 120 (1.20+). */
int gopclntab_version(const struct gopclntab *t);

/* Number of functions in the table. */
uint64_t gopclntab_nfunc(const struct gopclntab *t);

struct gofunc {
	uint64_t entry, end;      /* [entry, end) ELF vaddrs */
	const char *name;         /* points into the table; "" when its offset is bad */
	uint32_t off;             /* the _func record's offset (for the other lookups) */
	uint8_t funcid, flag;
};

/* Go's funcFlag_TOPFRAME: the function is the outermost frame of its stack. */
#define GOFUNC_FLAG_TOPFRAME 1

/*
 * The function containing ELF vaddr pc. 0, -ENOENT (outside the table),
 * -EINVAL (corrupt entry).
 */
int gopclntab_func(const struct gopclntab *t, uint64_t pc, struct gofunc *f);

/*
 * Whether f is where a stack starts (goexit, mstart, rt0_go, or flagged
 * TOPFRAME by its Go version).
 */
bool gopclntab_is_top(const struct gofunc *f);

/* SP offset (bytes below the return address) at pc in f; 0 or -EINVAL. */
int gopclntab_spdelta(const struct gopclntab *t, const struct gofunc *f, uint64_t pc,
		      int32_t *sp);

/* One source position of an address: innermost inlined call first. */
struct goline {
	const char *func;         /* points into the table */
	const char *file;         /* points into the table; NULL when unknown */
	int32_t line;             /* 0 when unknown */
};

/*
 * The frames at pc in f: the functions inlined there (innermost first) and
 * f itself last, each with its file:line; at most max. Returns the count
 * (>= 1 when f is valid: at least f's own name).
 */
unsigned gopclntab_lines(const struct gopclntab *t, const struct gofunc *f, uint64_t pc,
			 struct goline *out, unsigned max);

#endif
