/*
 * annotate.h - where inside a function: the instruction-level view (the
 * idea of DCPI's "where have all the cycles gone").
 *
 * Built from any aggregate (a live session's or a loaded profile's): every
 * sample's exact leaf address is already there. The function's code is
 * read from its binary, found by path and checked by build-id (a binary
 * that changed since the profile was taken is refused, never listed), and
 * decoded by capstone (disasm.h); each instruction gets the share of the
 * function's samples of every recorded event, its source file:line from
 * DWARF where there is any, and its basic block, for which a cycles per
 * instruction estimate is given when both cycles and instructions were
 * recorded. Samples land where the interrupt found the program, which for
 * most events is a few instructions after the one that caused it (skid):
 * the model says so in its notes.
 */
#ifndef PMUTOP_ANNOTATE_H
#define PMUTOP_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pmutop/sample/events.h"
#include "pmutop/target/disasm.h"

struct aggregate;

struct annotate_opts {
	/*
	 * Prefix for the profile's binary paths tried first, e.g.
	 * "/proc/PID/root" for a live target in another mount namespace; the
	 * path as written is tried after it. NULL for none.
	 */
	const char *root;
	/*
	 * Never ask debuginfod (debuginfod.h), which can take seconds: for the
	 * live view, whose keys must stay responsive. Otherwise a binary or
	 * debug file found nowhere here is fetched by build-id when
	 * DEBUGINFOD_URLS is set.
	 */
	bool offline;
	/*
	 * Whose source files the code's DWARF names (any path: a hostile
	 * target's DWARF can name /root/secret or a device). > 0: the live
	 * process whose files they are - read only inside its root and with
	 * its rights (safe_open_as), never with root's on the host; taken
	 * when annotate_build runs, so the listing can be read after the
	 * process is gone. 0: host paths with pmutop's own rights under
	 * safe_open's rules (a saved profile, a command pmutop itself
	 * launched). < 0: no source is read (a live session of several
	 * processes with no one chosen).
	 */
	int sources_of;
};

struct ann_insn {
	struct insn in;
	char text[224];             /* disasm_format() */
	uint64_t w[PMUTOP_MAX_EVENTS]; /* event counts of the samples at this address */
	uint64_t samples;
	const char *file;           /* source file (DWARF), NULL when unknown */
	uint32_t line;              /* 0 when unknown */
	uint32_t block;             /* basic block number, from 0 */
	bool jump_target;           /* a branch inside the function lands here */
};

struct ann_block {
	size_t first, n;            /* insns[first .. first + n) */
	uint64_t w[PMUTOP_MAX_EVENTS];
	double cpi;                 /* cycles / instructions, when has_cpi */
	bool has_cpi;
};

/* An address with samples when there is no code to list (JIT, anonymous memory). */
struct ann_addr {
	uint64_t addr;              /* runtime address */
	uint64_t w[PMUTOP_MAX_EVENTS];
	uint64_t samples;
};

#define ANN_MAX_NOTES 6

struct annotation {
	char *func;                 /* the name asked for, as the profile has it */
	char *symbol;               /* the code's own symbol (differs when func was inlined) */
	char *path;                 /* binary listed ("" for JIT / anonymous code) */
	char *build_id;             /* hex, "" when unknown */
	uint64_t start, size;       /* ELF vaddr extent of the listed code */
	size_t nev;                 /* events (at least 1) */
	const char *ev_name[PMUTOP_MAX_EVENTS], *ev_unit[PMUTOP_MAX_EVENTS]; /* into ev_text */
	char ev_text[PMUTOP_MAX_EVENTS][2][64]; /* the annotation outlives its aggregate */
	uint64_t total[PMUTOP_MAX_EVENTS]; /* per event, samples in this code */
	uint64_t samples;
	uint64_t profile_total[PMUTOP_MAX_EVENTS]; /* per event, the whole profile */
	uint64_t unplaced;          /* samples at addresses that start no instruction */
	size_t n;
	struct ann_insn *insns;
	size_t nblocks;
	struct ann_block *blocks;
	int cycles_ev, instr_ev;    /* event indices for CPI, -1 if absent */
	size_t naddrs;              /* no code: the sampled addresses instead */
	struct ann_addr *addrs;
	size_t nnotes;
	char notes[ANN_MAX_NOTES][256];
	/* Source text by file, for interleaving (loaded on demand). */
	struct ann_src *src;
	size_t nsrc;
	/* How they are read (annotate_opts.sources_of): */
	int src_policy;             /* 1 inside src_root as src_cred, 0 host, -1 none */
	int src_root;               /* O_PATH fd of the target's root, or -1 */
	struct safe_open_cred *src_cred;
};

/*
 * Annotate the function named func (exactly as a row shows it; a unique
 * substring also matches) in aggregate a. Returns 0 and *out (free with
 * annotation_free); -ENOENT when no function in the profile matches (err
 * names the closest names), -EEXIST when several do (err lists them), or
 * -ENODEV / -ESTALE / -ENOTSUP / -EFAULT when its code cannot be listed
 * (binary missing, changed since the profile - build-id mismatch -, an
 * unknown machine, bytes not in the file), each with the reason in err.
 */
int annotate_build(const struct aggregate *a, const char *func, const struct annotate_opts *o,
		   struct annotation **out, char *err, size_t errlen);

void annotation_free(struct annotation *an);

/* Index of the instruction with the most samples of event ev, or -1. */
long annotation_hottest(const struct annotation *an, size_t ev);

/*
 * Source text of file:line when the file is readable here (a regular file,
 * at most a few MiB, opened as annotate_opts.sources_of says), else NULL.
 * Owned by an; cached.
 */
const char *annotation_source_line(struct annotation *an, const char *file, uint32_t line);

/* The whole listing as text on f (pmutop --annotate). */
void annotation_print(struct annotation *an, FILE *f);

/*
 * annotate_build + annotation_print for `pmutop --annotate FUNC`: the
 * listing on out, or "pmutop: --annotate FUNC: why" on errf. Returns 0 or
 * annotate_build's error.
 */
int annotate_print_function(const struct aggregate *a, const char *func,
			    const struct annotate_opts *o, FILE *out, FILE *errf);

#endif
