/*
 * module.c - ELF objects (executables, shared libraries, the vDSO) and the
 * cache that opens each of them once.
 *
 * A file is mmap'd whole and handed to libelf with elf_memory(); an in-memory
 * image (the vDSO copied out of a target) is handed over the same way, so
 * both go through one parser, module_parse(). Parsing extracts everything the
 * hot path needs into flat arrays (PT_LOAD segments, a sorted function
 * table, .eh_frame_hdr location, build-id), so module_symbolize(),
 * module_read() and module_bias() never allocate and never call libelf.
 *
 * Why the mapping is PROT_READ|PROT_WRITE + MAP_PRIVATE: elf_memory() opens
 * the image in ELF_C_READ_MMAP_PRIVATE mode, in which libelf may convert data
 * in place (e.g. a foreign-endian or deliberately corrupt file). A private
 * writable mapping turns such writes into copy-on-write pages that never
 * reach the file; a read-only one would turn them into SIGSEGV.
 *
 * A mapped file can shrink under us (the target rewrites its own library in
 * place): touching a page past the new end raises SIGBUS even through a
 * private mapping. See sigbus_install() for how that is survived.
 *
 * Robustness: input is untrusted (it is fuzzed). libelf bounds-checks the
 * headers, sections, notes and strings it hands out; every offset and size
 * we use ourselves (segment file ranges) is clamped to the image size here.
 * Corrupt input yields a module with fewer symbols, or no module at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmutop/target/fde.h"
#include "pmutop/target/module.h"
#include "pmutop/target/safe_open.h"

#include "pmutop/target/gopclntab.h"

#define MAX_BUILD_ID 64 /* bytes; real ones are 8..20 */
/*
 * What module_add_debug_symbols() reads of a separate debug file's
 * .symtab, on the session's thread: at most this many entries (libc's
 * debug file has 10k; 2M took 1.8-2.6 s and 261 MB there, 256k is about
 * a tenth of that), and this many bytes of names scanned and copied - a
 * hostile .strtab whose names all run for a gigabyte would otherwise make
 * each strlen() and each tie in the sort read it all again. A larger
 * program's functions are still named by DWARF once their lines are read.
 */
#define DEBUG_SYMS_MAX (256u << 10)
#define DEBUG_NAMES_MAX (64u << 20)
/*
 * What read_symbols() takes of a module's own .symtab/.dynsym (issue 32):
 * the same kind of bound, since the target writes those too. 200k function
 * symbols sharing one 8 MiB name made the sort's strcmp() read 8 MiB per
 * comparison (~10^13 bytes: the session's thread never came back, Ctrl-C
 * and --duration went unanswered). At most this many entries are looked at
 * (24 bytes each: a 96 MiB table; the biggest unstripped programs have a
 * few hundred thousand functions) and this many bytes of distinct names
 * measured, and ties in the sort compare at most SYMBOL_CMP_BYTES of a
 * name. What is left out is noted (module_cache_skipped); a function past
 * the cap gets its name from DWARF once its lines are read, if it has any.
 */
#define OWN_SYMS_MAX (4u << 20)
#define OWN_NAMES_MAX (64u << 20)
#define SYMBOL_CMP_BYTES 128
/*
 * A longer name is not taken at all: each sampled address in the function
 * would have it hashed and copied by the aggregate and written to the
 * profile (the longest real C++ names are tens of KiB).
 */
#define OWN_NAME_MAX (64u << 10)

struct segment {
	uint64_t vaddr;
	uint64_t memsz;
	uint64_t offset;
	uint64_t filesz;   /* as the header says (for module_bias) */
	uint64_t avail;    /* filesz clamped to the bytes the image has */
	uint32_t flags;
};

struct symbol {
	uint64_t addr;
	uint64_t size;
	const char *name;  /* into the image via libelf (module->elf kept open),
	                      or into module->plt_names or ->debug_names */
	unsigned rank;     /* alias preference: lower wins */
	uint32_t idx;      /* its index in its table: the last tie-break */
	uint64_t sec_end;  /* end of its section (bounds a size-0 symbol); 0: unknown */
};

struct module {
	/*
	 * Kept when the module is evicted (module_cache_evict): what outputs
	 * and holders of the pointer still ask (path, build-id) and what tells
	 * whether a file found again is the same one (size, ctime).
	 */
	char *path;
	char build_id[2 * MAX_BUILD_ID + 1];
	uint64_t file_size;
	struct timespec file_ctime;
	uint64_t last_used;  /* cache epoch it was last marked or handed out in */
	bool evicted;        /* everything below is released (module_release) */
	bool doomed;         /* chosen by module_cache_doom(), not marked since */
	struct module *retired_next; /* replaced by another file (cache's retired list) */

	/* From here to the end: parsed state, zero while evicted. */
	void *image;
	size_t size;
	bool mapped;       /* image is mmap'd (munmap) rather than malloc'd */
	Elf *elf;

	struct segment *segs;
	size_t nsegs;
	struct symbol *syms;
	size_t nsyms;

	char *plt_names;   /* "name@plt\0..." of the synthesized PLT symbols */
	bool has_symtab;   /* a .symtab of its own, or one taken from its debug file */
	char *debug_names; /* names of the symbols taken from a separate debug file */
	bool syms_capped;  /* its own table was over OWN_SYMS_MAX / OWN_NAMES_MAX */

	/*
	 * Unwind tables as function ranges (module_fde_range, fde.h), set up
	 * on first use: .eh_frame_hdr's table searched in place (eh_seg: the
	 * bytes of the segment its FDE pointers point into), else an index of
	 * .eh_frame built once; .debug_frame always through an index.
	 */
	bool fde_tried;
	struct fde_span ehf_span;   /* data NULL: no usable .eh_frame_hdr */
	struct fde_span eh_seg;
	struct fde_index *fdes;     /* NULL: nothing walked */
	const uint8_t *ehframe;     /* the .eh_frame section in the image */
	size_t ehframe_len;
	uint64_t ehframe_vaddr;
	size_t dframe_ndx;          /* .debug_frame's section index; 0: none */

	bool has_ehf;
	uint64_t ehf_vaddr, ehf_size;
	bool is_go;        /* built by the Go toolchain (.gopclntab / .go.buildinfo) */
	bool has_gopcln;
	struct gopclntab_src gosrc; /* where .gopclntab and its companions are */
	struct gopclntab *gopcln;   /* NULL: none, or unusable (gopcln_err says why) */
	char gopcln_err[160];
	uint64_t text_lo, text_hi;
	uint64_t entry;    /* e_entry: where the kernel or the loader starts it; 0: none */
	uint64_t page_size;
};

enum cache_kind { KEY_INODE, KEY_PATH, KEY_IMAGE };

struct cache_entry {
	struct cache_entry *next;
	enum cache_kind kind;
	uint64_t dev, ino;     /* KEY_INODE */
	char *name;            /* KEY_PATH, KEY_IMAGE */
	size_t img_len;        /* KEY_IMAGE */
	uint64_t img_hash;     /* KEY_IMAGE */
	uint64_t hash;
	struct module *mod;    /* NULL: negative entry */
};

struct module_cache {
	struct cache_entry **buckets;
	size_t nbuckets;       /* power of two */
	size_t count;
	uint64_t epoch;        /* module_cache_mark_begin() rounds, from 1 */
	struct module *retired; /* evicted modules whose file was replaced (kept: see evict) */
	struct module_cache_stats st;
	void (*before_parse)(void *arg); /* module_cache_set_parse_hook */
	void *parse_arg;
	bool in_parse_hook;
	unsigned nskipped;     /* files refused as unsafe (module_cache_skipped) */
	char skipped[512];
};

/* ---- files that shrink under us ------------------------------------------ */

static struct sigaction sigbus_old;
static uintptr_t sigbus_page_size;

/*
 * pmutop maps files only to read them (module images here, libelf's and
 * libdw's own mappings), so a SIGBUS for an address past the end of a file
 * (BUS_ADRERR) means one was truncated after we mapped it. Put a zero page
 * over the faulting page and return: the read is retried and sees zeros,
 * which the parsers treat as a corrupt file (no symbol, no unwind info).
 * Any other SIGBUS, or a failed mmap, gets the previous disposition back
 * and faults again into it.
 */
bool module_sigbus_recover(const siginfo_t *si)
{
	if (sigbus_page_size && si && si->si_code == BUS_ADRERR && si->si_addr) {
		void *page = (void *)((uintptr_t)si->si_addr & ~(sigbus_page_size - 1));

		if (mmap(page, sigbus_page_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == page)
			return true;
	}
	return false;
}

static void sigbus_handler(int sig, siginfo_t *si, void *uctx)
{
	(void)sig, (void)uctx;
	if (module_sigbus_recover(si))
		return;
	sigaction(SIGBUS, &sigbus_old, NULL);
}

/* Once per process, before the first file is mapped. */
static void sigbus_install(void)
{
	static bool done;
	struct sigaction sa;
	long ps = sysconf(_SC_PAGESIZE);

	if (done)
		return;
	done = true;
	sigbus_page_size = ps > 0 ? (uintptr_t)ps : 4096;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sigbus_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &sigbus_old);
}

/* ---- module lifetime ---------------------------------------------------- */

/*
 * Free what parsing built (image, libelf and libdw handles, symbols, Go
 * table) and zero it: the module is then a shell that keeps its path,
 * build-id and file identity, and answers every query with "nothing".
 */
static void module_release(struct module *m)
{
	fde_index_free(m->fdes);
	free(m->plt_names);
	free(m->debug_names);
	if (m->elf)
		elf_end(m->elf);
	if (m->image) {
		if (m->mapped)
			munmap(m->image, m->size);
		else
			free(m->image);
	}
	gopclntab_free(m->gopcln);
	free(m->syms);
	free(m->segs);
	memset((char *)m + offsetof(struct module, image), 0,
	       sizeof(*m) - offsetof(struct module, image));
}

static void module_free(struct module *m)
{
	if (!m)
		return;
	module_release(m);
	free(m->path);
	free(m);
}

/* ---- parsing ------------------------------------------------------------ */

void module_hex_encode(char *out, const unsigned char *in, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 0xf];
	}
	out[2 * n] = '\0';
}

/* Look for NT_GNU_BUILD_ID in a block of notes libelf has bounds-checked. */
static void parse_notes(struct module *m, Elf_Data *data)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	if (!data || !data->d_buf)
		return;
	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *base = data->d_buf;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(base + name_off, "GNU", 4) == 0 &&
		    nh.n_descsz > 0 && nh.n_descsz <= MAX_BUILD_ID) {
			module_hex_encode(m->build_id, (const unsigned char *)base + desc_off,
				   nh.n_descsz);
			return;
		}
		if (next <= off)
			break;
		off = next;
	}
}

static int parse_phdrs(struct module *m)
{
	size_t n, i;

	if (elf_getphdrnum(m->elf, &n) != 0)
		return 0;
	m->segs = calloc(n ? n : 1, sizeof(*m->segs));
	if (!m->segs)
		return -ENOMEM;

	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (i > INT_MAX || !gelf_getphdr(m->elf, (int)i, &ph))
			continue;
		switch (ph.p_type) {
		case PT_LOAD: {
			struct segment *s = &m->segs[m->nsegs];

			if (ph.p_memsz == 0 ||
			    ph.p_vaddr + ph.p_memsz < ph.p_vaddr ||
			    ph.p_offset + ph.p_filesz < ph.p_offset)
				break;
			s->vaddr = ph.p_vaddr;
			s->memsz = ph.p_memsz;
			s->offset = ph.p_offset;
			s->filesz = ph.p_filesz < ph.p_memsz ? ph.p_filesz : ph.p_memsz;
			s->flags = ph.p_flags;
			if (s->offset >= m->size)
				s->avail = 0;
			else if (s->filesz > m->size - s->offset)
				s->avail = m->size - s->offset;
			else
				s->avail = s->filesz;
			if (s->flags & PF_X) {
				if (m->text_lo == m->text_hi || s->vaddr < m->text_lo)
					m->text_lo = s->vaddr;
				if (s->vaddr + s->memsz > m->text_hi)
					m->text_hi = s->vaddr + s->memsz;
			}
			m->nsegs++;
			break;
		}
		case PT_GNU_EH_FRAME:
			if (!m->has_ehf && ph.p_memsz > 0) {
				m->has_ehf = true;
				m->ehf_vaddr = ph.p_vaddr;
				m->ehf_size = ph.p_memsz;
			}
			break;
		case PT_NOTE:
			if (!m->build_id[0] && ph.p_filesz > 0)
				parse_notes(m, elf_getdata_rawchunk(
					m->elf, (int64_t)ph.p_offset, ph.p_filesz,
					ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR));
			break;
		default:
			break;
		}
	}
	return 0;
}

static unsigned bind_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL: return 0;
	case STB_WEAK:   return 1;
	case STB_LOCAL:  return 2;
	default:         return 3;
	}
}

static size_t leading_underscores(const char *s)
{
	return strspn(s, "_");
}

/*
 * Aliases at one address sort best first, as perf picks among them
 * (choose_best_symbol): global before weak before local, then the fewest
 * leading underscores - malloc, not __libc_malloc or __GI___libc_malloc -
 * then the shorter name (free, not cfree), then the larger size, then by
 * name so the choice never depends on the order symbols were read in (a
 * debug file's .symtab added later).
 */
static int symbol_cmp(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;
	size_t ux, uy;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	ux = leading_underscores(x->name);
	uy = leading_underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	/* free, not the compat alias cfree (perf would take the longer; gdb the public one) */
	ux = strlen(x->name);
	uy = strlen(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	/* Bounded: names are the target's, and may be megabytes that differ late. */
	if (x->name != y->name) {
		int c = strncmp(x->name, y->name, SYMBOL_CMP_BYTES);

		if (c)
			return c;
	}
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* End of the PT_LOAD segment containing vaddr, or 0. */
static uint64_t segment_end(const struct module *m, uint64_t vaddr)
{
	for (size_t i = 0; i < m->nsegs; i++) {
		const struct segment *s = &m->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->memsz)
			return s->vaddr + s->memsz;
	}
	return 0;
}

/* Sort, keep one name per address, give size-0 symbols the gap to the next. */
static void finish_symbols(struct module *m)
{
	size_t i, out = 0;

	if (m->nsyms == 0)
		return;
	qsort(m->syms, m->nsyms, sizeof(*m->syms), symbol_cmp);
	for (i = 0; i < m->nsyms; i++) {
		if (out > 0 && m->syms[out - 1].addr == m->syms[i].addr)
			continue;  /* alias: the preferred one sorted first */
		m->syms[out++] = m->syms[i];
	}
	m->nsyms = out;

	for (i = 0; i < m->nsyms; i++) {
		struct symbol *s = &m->syms[i];
		uint64_t end;

		if (s->size != 0)
			continue;
		if (i + 1 < m->nsyms) {
			s->size = m->syms[i + 1].addr - s->addr;
		} else {
			end = segment_end(m, s->addr);
			s->size = end > s->addr ? end - s->addr : 1;
		}
		/* Not past its own section (_init must not swallow the PLT after it). */
		if (s->sec_end > s->addr && s->addr + s->size > s->sec_end)
			s->size = s->sec_end - s->addr;
	}
}

/* End address of section ndx of elf when it is an allocated one, else 0. */
static uint64_t section_end(Elf *elf, size_t ndx)
{
	Elf_Scn *scn = ndx && ndx < SHN_LORESERVE ? elf_getscn(elf, ndx) : NULL;
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
	    sh.sh_addr + sh.sh_size < sh.sh_addr)
		return 0;
	return sh.sh_addr + sh.sh_size;
}

/*
 * The function symbols of symbol table scn of elf into a new array
 * (*out, *nout); names point into elf. With capped non-NULL (a module's own
 * table), at most OWN_SYMS_MAX entries are read and OWN_NAMES_MAX bytes of
 * distinct names measured; *capped says whether some were left out. 0 or
 * -ENOMEM.
 */
static int read_symbols(Elf *elf, Elf_Scn *scn, struct symbol **out, size_t *nout, bool *capped)
{
	GElf_Shdr sh;
	Elf_Data *data;
	size_t entsz, n, i, k = 0, names = 0, last_len = 0;
	const char *last = NULL;
	struct symbol *syms;

	*out = NULL;
	*nout = 0;
	if (!gelf_getshdr(scn, &sh))
		return 0;
	data = elf_getdata(scn, NULL);
	entsz = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!data || !data->d_buf || entsz == 0)
		return 0;
	{
		/* Names are C strings: a table not ending in one is corrupt. */
		Elf_Scn *str = elf_getscn(elf, sh.sh_link);
		Elf_Data *sd = str ? elf_getdata(str, NULL) : NULL;

		if (!sd || !sd->d_buf || sd->d_size == 0 ||
		    ((const char *)sd->d_buf)[sd->d_size - 1] != '\0')
			return 0;
	}
	n = data->d_size / entsz;
	if (n == 0)
		return 0;
	if (capped && n > OWN_SYMS_MAX) {
		n = OWN_SYMS_MAX;
		*capped = true;
	}
	syms = calloc(n, sizeof(*syms));
	if (!syms)
		return -ENOMEM;

	for (i = 0; i < n; i++) {
		GElf_Sym s;
		unsigned char type;
		const char *name;

		if (i > INT_MAX || !gelf_getsym(data, (int)i, &s))
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		if (s.st_value == 0 || s.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(elf, sh.sh_link, s.st_name);
		if (!name || !name[0])
			continue;
		/* A name shared with the symbol before is measured once. */
		if (capped && name != last) {
			size_t l = strnlen(name, OWN_NAMES_MAX - names);

			if (l == OWN_NAMES_MAX - names) {
				*capped = true;
				break;
			}
			names += l + 1;
			last = name;
			last_len = l;
		}
		if (capped && last_len > OWN_NAME_MAX) {
			*capped = true;
			continue;
		}
		syms[k].addr = s.st_value;
		syms[k].idx = (uint32_t)i;
		/* A size running past the address space is garbage. */
		syms[k].size = s.st_value + s.st_size < s.st_value ? 0 : s.st_size;
		syms[k].name = name;
		syms[k].rank = bind_rank(GELF_ST_BIND(s.st_info));
		syms[k].sec_end = s.st_size ? 0 : section_end(elf, s.st_shndx);
		k++;
	}
	*out = syms;
	*nout = k;
	return 0;
}

static int load_symbols(struct module *m, Elf_Scn *scn)
{
	struct symbol *syms;
	size_t n;
	int err = read_symbols(m->elf, scn, &syms, &n, &m->syms_capped);

	if (err)
		return err;
	free(m->syms);
	m->syms = syms;
	m->nsyms = n;
	finish_symbols(m);
	return 0;
}

/* The first section of type type in elf, or NULL. */
static Elf_Scn *section_of_type(Elf *elf, GElf_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return scn;
	return NULL;
}

int module_add_debug_symbols(struct module *m, int fd)
{
	Elf *elf;
	Elf_Scn *scn;
	GElf_Shdr sh;
	struct symbol *syms = NULL, *all;
	size_t n = 0, len = 0, k = 0, i, entsz;
	char *names;
	int err = 0;

	if (!m || m->has_symtab || m->debug_names)
		return 0;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return 0;
	scn = elf_kind(elf) == ELF_K_ELF ? section_of_type(elf, SHT_SYMTAB) : NULL;
	entsz = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	if (scn && gelf_getshdr(scn, &sh) && entsz && sh.sh_size / entsz > DEBUG_SYMS_MAX) {
		elf_end(elf);
		return -E2BIG;
	}
	if (scn)
		err = read_symbols(elf, scn, &syms, &n, NULL);
	for (i = 0; i < n; i++) {
		size_t l = strnlen(syms[i].name, DEBUG_NAMES_MAX - len);

		if (l == DEBUG_NAMES_MAX - len) {
			n = i; /* the names so far; the rest are skipped */
			err = -E2BIG;
			break;
		}
		len += l + 1;
	}
	names = n ? malloc(len) : NULL;
	all = n ? realloc(m->syms, (m->nsyms + n) * sizeof(*all)) : NULL;
	if (n && (!names || !all)) {
		free(names);
		if (all)
			m->syms = all;
		err = -ENOMEM;
		n = 0;
	}
	/* Names are copied (n of them in len bytes): the debug file is not kept open for them. */
	for (i = 0; i < n; i++) {
		size_t l = strlen(syms[i].name) + 1;

		memcpy(names + k, syms[i].name, l);
		all[m->nsyms + i] = syms[i];
		all[m->nsyms + i].name = names + k;
		k += l;
	}
	if (n) {
		m->syms = all;
		m->nsyms += n;
		m->debug_names = names;
		m->has_symtab = true;
		finish_symbols(m);
	}
	free(syms);
	elf_end(elf);
	return err;
}

/*
 * Name the PLT stubs "sym@plt", as binutils and perf do: the n-th entry of
 * .rela.plt is the n-th stub, after the header in .plt, or without one in
 * .plt.sec (x86_64 with IBT). Only x86_64 and aarch64 layouts are known.
 */
static int add_plt_symbols(struct module *m, Elf_Scn *plt, Elf_Scn *plt_sec, Elf_Scn *rela)
{
	GElf_Ehdr eh;
	GElf_Shdr psh, rsh, dsh;
	Elf_Data *rd, *dd;
	Elf_Scn *dynsym;
	uint64_t base, header, entsz, nslots;
	size_t nrel, len = 0, i, k = 0;
	struct symbol *syms;
	char *names;

	if (!plt || !rela || !gelf_getehdr(m->elf, &eh) || !gelf_getshdr(rela, &rsh) ||
	    !gelf_getshdr(plt_sec ? plt_sec : plt, &psh) ||
	    !(dynsym = elf_getscn(m->elf, rsh.sh_link)) || !gelf_getshdr(dynsym, &dsh) ||
	    !(rd = elf_getdata(rela, NULL)) || !(dd = elf_getdata(dynsym, NULL)) ||
	    rsh.sh_entsize == 0)
		return 0;
	if (eh.e_machine == EM_X86_64)
		header = plt_sec ? 0 : 16, entsz = 16;
	else if (eh.e_machine == EM_AARCH64)
		header = 32, entsz = 16;
	else
		return 0;
	base = psh.sh_addr + header;
	nslots = psh.sh_size > header ? (psh.sh_size - header) / entsz : 0;
	nrel = rd->d_size / rsh.sh_entsize;
	if (nrel > nslots)
		nrel = (size_t)nslots;
	if (nrel == 0)
		return 0;
	/*
	 * Names first, to size one buffer for all of them: at most
	 * OWN_NAMES_MAX bytes of them (every entry may name one huge string).
	 */
	if (nrel > OWN_SYMS_MAX) {
		nrel = OWN_SYMS_MAX;
		m->syms_capped = true;
	}
	for (i = 0; i < nrel; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *name;
		size_t l;

		if (i > INT_MAX || !gelf_getrela(rd, (int)i, &r) ||
		    !gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &sym) ||
		    !(name = elf_strptr(m->elf, dsh.sh_link, sym.st_name)) || !*name)
			continue;
		l = strnlen(name, OWN_NAMES_MAX - len);
		if (l == OWN_NAMES_MAX - len || OWN_NAMES_MAX - len - l < sizeof("@plt")) {
			nrel = i;
			m->syms_capped = true;
			break;
		}
		len += l + sizeof("@plt");
	}
	if (!len)
		return 0;
	names = malloc(len);
	syms = realloc(m->syms, (m->nsyms + nrel) * sizeof(*syms));
	if (!names || !syms) {
		free(names);
		if (syms)
			m->syms = syms;
		return -ENOMEM;
	}
	m->syms = syms;
	m->plt_names = names;
	for (i = 0; i < nrel; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *name;
		int w;

		if (i > INT_MAX || !gelf_getrela(rd, (int)i, &r) ||
		    !gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &sym) ||
		    !(name = elf_strptr(m->elf, dsh.sh_link, sym.st_name)) || !*name)
			continue;
		w = snprintf(names + k, len - k, "%s@plt", name);
		if (w < 0 || (size_t)w >= len - k)
			break;
		syms[m->nsyms++] = (struct symbol){ .addr = base + i * entsz, .size = entsz,
						    .name = names + k, .rank = 3,
						    .idx = (uint32_t)i };
		k += (size_t)w + 1;
	}
	finish_symbols(m);
	return 0;
}

static int parse_sections(struct module *m)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	Elf_Scn *plt = NULL, *plt_sec = NULL, *rela_plt = NULL;
	size_t shstrndx;
	bool have_names = elf_getshdrstrndx(m->elf, &shstrndx) == 0;
	int err;

	while ((scn = elf_nextscn(m->elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && !symtab)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM && !dynsym)
			dynsym = scn;
		else if (sh.sh_type == SHT_NOTE && !m->build_id[0])
			parse_notes(m, elf_getdata(scn, NULL));
		else if (have_names && sh.sh_type == SHT_PROGBITS && !(sh.sh_flags & SHF_ALLOC) &&
			 !m->dframe_ndx && (name = elf_strptr(m->elf, shstrndx, sh.sh_name)) &&
			 strcmp(name, ".debug_frame") == 0)
			m->dframe_ndx = elf_ndxscn(scn);
		else if (have_names && sh.sh_type == SHT_RELA && !rela_plt &&
			 (name = elf_strptr(m->elf, shstrndx, sh.sh_name)) &&
			 strcmp(name, ".rela.plt") == 0)
			rela_plt = scn;
		if (have_names && sh.sh_type == SHT_PROGBITS &&
		    (sh.sh_flags & SHF_ALLOC) && sh.sh_size > 0) {
			name = elf_strptr(m->elf, shstrndx, sh.sh_name);
			if (!name)
				continue;
			if (!m->ehframe && strcmp(name, ".eh_frame") == 0 && sh.sh_offset < m->size) {
				m->ehframe = (const uint8_t *)m->image + sh.sh_offset;
				m->ehframe_len = m->size - sh.sh_offset < sh.sh_size
					? m->size - sh.sh_offset : sh.sh_size;
				m->ehframe_vaddr = sh.sh_addr;
			} else if (!m->has_ehf && strcmp(name, ".eh_frame_hdr") == 0) {
				m->has_ehf = true;
				m->ehf_vaddr = sh.sh_addr;
				m->ehf_size = sh.sh_size;
			} else if (!m->has_gopcln && strcmp(name, ".gopclntab") == 0) {
				m->is_go = m->has_gopcln = true;
				m->gosrc.vaddr = sh.sh_addr;
				/* Cut to what the file holds: a truncated file is an input too. */
				if (sh.sh_offset < m->size) {
					m->gosrc.data = (const uint8_t *)m->image + sh.sh_offset;
					m->gosrc.len = m->size - sh.sh_offset < sh.sh_size
						? m->size - sh.sh_offset : sh.sh_size;
				}
			} else if (strcmp(name, ".go.buildinfo") == 0) {
				m->is_go = true;
			} else if (strcmp(name, ".text") == 0) {
				m->gosrc.text_vaddr = sh.sh_addr;
			} else if (strcmp(name, ".plt") == 0) {
				plt = scn;
			} else if (strcmp(name, ".plt.sec") == 0) {
				plt_sec = scn;
			} else if (strcmp(name, ".noptrdata") == 0 && sh.sh_offset < m->size) {
				m->gosrc.mdata = (const uint8_t *)m->image + sh.sh_offset;
				m->gosrc.mdata_len = m->size - sh.sh_offset < sh.sh_size
					? m->size - sh.sh_offset : sh.sh_size;
			}
		}
	}

	m->has_symtab = symtab != NULL;
	if (symtab) {
		err = load_symbols(m, symtab);
		if (err)
			return err;
	}
	if (m->nsyms == 0 && dynsym) {
		err = load_symbols(m, dynsym);
		if (err)
			return err;
	}
	return add_plt_symbols(m, plt, plt_sec, rela_plt);
}

static int gopcln_read(const void *arg, uint64_t vaddr, void *buf, size_t len)
{
	return module_read(arg, vaddr, buf, len);
}

/* Go's function table, when the object has one; a failure is kept as a message. */
static void open_gopclntab(struct module *m)
{
	m->gosrc.read = gopcln_read;
	m->gosrc.arg = m;
	m->gopcln = gopclntab_new(&m->gosrc, m->gopcln_err, sizeof(m->gopcln_err));
}

/*
 * The one parser: m->image/m->size hold the whole object. Returns 0,
 * -ENOEXEC when it is not ELF, -ENOMEM.
 */
static int module_parse(struct module *m)
{
	GElf_Ehdr eh;
	long ps = sysconf(_SC_PAGESIZE);
	int err;

	m->page_size = ps > 0 ? (uint64_t)ps : 4096;
	if (m->size < EI_NIDENT || memcmp(m->image, ELFMAG, SELFMAG) != 0)
		return -ENOEXEC;
	m->elf = elf_memory(m->image, m->size);
	if (!m->elf || elf_kind(m->elf) != ELF_K_ELF || !gelf_getehdr(m->elf, &eh))
		return -ENOEXEC;
	m->entry = eh.e_entry;
	err = parse_phdrs(m);
	if (err)
		return err;
	err = parse_sections(m);
	if (!err && m->has_gopcln)
		open_gopclntab(m);
	return err;
}

static struct module *module_alloc(const char *path)
{
	struct module *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->path = strdup(path ? path : "");
	if (!m->path) {
		free(m);
		return NULL;
	}
	return m;
}

/* Whether path is a /proc/PID/map_files/ entry: the mapped file itself. */
static bool is_map_files(const char *path)
{
	const char *p = strncmp(path, "/proc/", 6) == 0 ? strchr(path + 6, '/') : NULL;

	return p && strncmp(p, "/map_files/", 11) == 0;
}

/*
 * Open, map and parse a regular file into m (a new module, or an evicted
 * one, build-id cleared). 0; -ENOENT when it is not a readable ELF file, or
 * (dev/ino non-zero, open_path not a map_files entry) not the file with
 * that device and inode: a path a target can swap after mmap; -ENOMEM.
 * On failure m holds nothing parsed.
 */
static int module_load_file(struct module_cache *c, struct module *m, const char *open_path,
			    uint64_t dev, uint64_t ino)
{
	struct safe_open_want want = { 0 };
	struct stat st;
	char magic[SELFMAG];
	void *image;
	int fd, err = -ENOENT;

	/* Never open devices or FIFOs; never follow a container's symlinks out of it. */
	if (!is_map_files(open_path)) {
		want.dev = dev;
		want.ino = ino;
	}
	want.max_size = SIZE_MAX < SAFE_OPEN_MAX_SIZE ? SIZE_MAX : SAFE_OPEN_MAX_SIZE;
	fd = safe_open(open_path, &want, &st);
	if (fd < 0) {
		/*
		 * Not there, not ours to read, or the process gone (ESRCH from its
		 * /proc/PID/root) is normal; anything else is noted.
		 */
		if (fd != -ENOENT && fd != -ENOTDIR && fd != -EACCES && fd != -EPERM &&
		    fd != -ESRCH && c->nskipped++ == 0)
			snprintf(c->skipped, sizeof(c->skipped), "%.400s: %s", open_path,
				 safe_open_strerror(fd));
		return -ENOENT;
	}
	if (st.st_size < EI_NIDENT)
		goto out_close;
	/* Cheap rejection of data files before mapping anything. */
	if (pread(fd, magic, sizeof(magic), 0) != (ssize_t)sizeof(magic) ||
	    memcmp(magic, ELFMAG, SELFMAG) != 0)
		goto out_close;
	image = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (image == MAP_FAILED)
		goto out_close;
	m->image = image;
	m->size = (size_t)st.st_size;
	m->mapped = true;
	m->file_size = (uint64_t)st.st_size;
	m->file_ctime = st.st_ctim;
	err = module_parse(m);
	if (err) {
		module_release(m);
		err = err == -ENOMEM ? -ENOMEM : -ENOENT;
	} else if (m->syms_capped && c->nskipped++ == 0) {
		snprintf(c->skipped, sizeof(c->skipped), "%.300s: its symbol table is over "
			 "pmutop's bounds (%u Mi entries, %u MiB of names, %u KiB a name): the "
			 "symbols past them are not read", m->path, OWN_SYMS_MAX >> 20,
			 OWN_NAMES_MAX >> 20, OWN_NAME_MAX >> 10);
	}
out_close:
	close(fd);
	return err;
}

/* A new module for a regular file (module_load_file), or NULL. */
static struct module *module_open_file(struct module_cache *c, const char *open_path,
				       const char *display_path, uint64_t dev, uint64_t ino)
{
	struct module *m = module_alloc(display_path ? display_path : open_path);

	if (m && module_load_file(c, m, open_path, dev, ino) != 0) {
		module_free(m);
		m = NULL;
	}
	return m;
}

static struct module *module_from_image(const char *name, const void *image, size_t len)
{
	struct module *m;

	if (!image || len < EI_NIDENT)
		return NULL;
	m = module_alloc(name);
	if (!m)
		return NULL;
	m->image = malloc(len);
	if (!m->image) {
		module_free(m);
		return NULL;
	}
	memcpy(m->image, image, len);
	m->size = len;
	if (module_parse(m) != 0) {
		module_free(m);
		return NULL;
	}
	return m;
}

/* ---- queries (hot path: no allocation, no libelf) ----------------------- */

const char *module_path(const struct module *m)
{
	return m ? m->path : "";
}

const char *module_build_id(const struct module *m)
{
	return m ? m->build_id : "";
}

struct Elf *module_elf(const struct module *m)
{
	return m ? m->elf : NULL;
}

bool module_has_symtab(const struct module *m)
{
	return m && m->has_symtab;
}

size_t module_nsyms(const struct module *m)
{
	return m ? m->nsyms : 0;
}

int module_bias(const struct module *m, uint64_t map_start, uint64_t map_pgoff,
		uint64_t *bias)
{
	const struct segment *best = NULL;

	if (!m)
		return -ENOENT;
	for (size_t i = 0; i < m->nsegs; i++) {
		const struct segment *s = &m->segs[i];
		uint64_t first_page = s->offset & ~(m->page_size - 1);

		if (s->filesz == 0 || map_pgoff < first_page ||
		    map_pgoff >= s->offset + s->filesz)
			continue;
		/* A page shared by two segments: the one starting there is mapped there. */
		if (!best || first_page == map_pgoff)
			best = s;
		if (first_page == map_pgoff)
			break;
	}
	if (!best)
		return -ENOENT;
	*bias = map_start - map_pgoff - (best->vaddr - best->offset);
	return 0;
}

/* The function symbol containing vaddr, or NULL. */
static const struct symbol *symbol_at(const struct module *m, uint64_t vaddr)
{
	size_t lo = 0, hi;
	const struct symbol *s;

	if (!m)
		return NULL;
	hi = m->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	s = &m->syms[lo - 1];
	return vaddr - s->addr < s->size ? s : NULL;
}

const char *module_symbolize(const struct module *m, uint64_t vaddr, uint64_t *offset)
{
	const struct symbol *s = symbol_at(m, vaddr);

	if (s && offset)
		*offset = vaddr - s->addr;
	return s ? s->name : NULL;
}

const char *module_symbol_extent(const struct module *m, uint64_t vaddr, uint64_t *start,
				 uint64_t *size)
{
	const struct symbol *s = symbol_at(m, vaddr);

	if (!s)
		return NULL;
	*start = s->addr;
	*size = s->size;
	return s->name;
}

int module_read(const struct module *m, uint64_t vaddr, void *buf, size_t len)
{
	unsigned char *out = buf;

	if (!m)
		return -EFAULT;
	while (len > 0) {
		const struct segment *s = NULL;
		uint64_t off, n;

		for (size_t i = 0; i < m->nsegs; i++) {
			if (vaddr >= m->segs[i].vaddr &&
			    vaddr - m->segs[i].vaddr < m->segs[i].memsz) {
				s = &m->segs[i];
				break;
			}
		}
		if (!s)
			return -EFAULT;
		off = vaddr - s->vaddr;
		n = s->memsz - off;
		if (n > len)
			n = len;
		if (off < s->avail) {
			if (n > s->avail - off)
				n = s->avail - off;
			memcpy(out, (const unsigned char *)m->image + s->offset + off, n);
		} else if (off < s->filesz) {
			return -EFAULT;  /* the file is shorter than its headers say */
		} else {
			memset(out, 0, n);
		}
		out += n;
		vaddr += n;
		len -= n;
	}
	return 0;
}

/* The file-backed bytes of the PT_LOAD segment holding vaddr; false when none. */
static bool segment_span(const struct module *m, uint64_t vaddr, struct fde_span *out)
{
	for (size_t i = 0; i < m->nsegs; i++) {
		const struct segment *s = &m->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->avail) {
			*out = (struct fde_span){ .data = (const uint8_t *)m->image + s->offset,
						  .len = s->avail, .vaddr = s->vaddr, .eh = true };
			return true;
		}
	}
	return false;
}

/*
 * .debug_frame's bytes (inflated by libelf when compressed, as Go's
 * linker writes it, up to DFRAME_MAX), or an empty span.
 */
#define DFRAME_MAX (256u << 20)

static struct fde_span debug_frame_span(struct module *m)
{
	Elf_Scn *scn = m->dframe_ndx ? elf_getscn(m->elf, m->dframe_ndx) : NULL;
	struct fde_span sp = { 0 };
	GElf_Shdr sh;
	Elf_Data *d;

	if (!scn || !gelf_getshdr(scn, &sh))
		return sp;
	if (sh.sh_flags & SHF_COMPRESSED) {
		GElf_Chdr ch;

		if (!gelf_getchdr(scn, &ch) || ch.ch_size > DFRAME_MAX || elf_compress(scn, 0, 0) < 0)
			return sp;
	}
	d = elf_getdata(scn, NULL);
	if (d && d->d_buf && d->d_size)
		sp = (struct fde_span){ .data = d->d_buf, .len = d->d_size };
	return sp;
}

/* Once per module: find the tables, build the index of what has no search table. */
static void fde_setup(struct module *m)
{
	struct fde_span secs[2], hdr, seg;
	unsigned n = 0;
	uint64_t eh_frame;

	m->fde_tried = true;
	if (m->has_ehf && segment_span(m, m->ehf_vaddr, &seg)) {
		uint64_t at = m->ehf_vaddr - seg.vaddr;

		hdr = (struct fde_span){ .data = seg.data + at, .vaddr = m->ehf_vaddr, .eh = true,
					 .len = seg.len - at < m->ehf_size ? seg.len - at : m->ehf_size };
		if (fde_hdr_usable(&hdr, &eh_frame) && segment_span(m, eh_frame, &m->eh_seg))
			m->ehf_span = hdr;
	}
	if (!m->ehf_span.data && m->ehframe)
		secs[n++] = (struct fde_span){ .data = m->ehframe, .len = m->ehframe_len,
					       .vaddr = m->ehframe_vaddr, .eh = true };
	secs[n] = debug_frame_span(m);
	n += secs[n].data != NULL;
	if (n)
		m->fdes = fde_index_build(secs, n);
}

int module_fde_range(const struct module *m, uint64_t vaddr, uint64_t *start, uint64_t *end)
{
	struct module *mm = (struct module *)m; /* the tables, set up on first use */
	uint64_t first, fde, lo, hi;

	if (!m || !m->elf)
		return -ENOENT;
	if (!m->fde_tried)
		fde_setup(mm);
	if (m->ehf_span.data && fde_hdr_lookup(&m->ehf_span, vaddr, &first, &fde) == 0 &&
	    fde >= m->eh_seg.vaddr &&
	    fde_decode(&m->eh_seg, fde - m->eh_seg.vaddr, &lo, &hi, NULL) == 0 &&
	    lo <= vaddr && vaddr < hi) {
		*start = lo;
		*end = hi;
		return 0;
	}
	return fde_index_find(m->fdes, vaddr, start, end);
}

int module_eh_frame_hdr(const struct module *m, uint64_t *vaddr, uint64_t *size)
{
	if (!m || !m->has_ehf)
		return -ENOENT;
	*vaddr = m->ehf_vaddr;
	*size = m->ehf_size;
	return 0;
}

bool module_is_go(const struct module *m)
{
	return m && m->is_go;
}

const struct gopclntab *module_gopclntab(const struct module *m, const char **err)
{
	*err = m && m->has_gopcln && !m->gopcln ? m->gopcln_err : NULL;
	return m ? m->gopcln : NULL;
}

uint64_t module_entry(const struct module *m)
{
	return m ? m->entry : 0;
}

void module_text_range(const struct module *m, uint64_t *lo, uint64_t *hi)
{
	*lo = m ? m->text_lo : 0;
	*hi = m ? m->text_hi : 0;
}

/* ---- cache -------------------------------------------------------------- */

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t hash_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#define HASH_SEED 0xcbf29ce484222325ULL

struct module_cache *module_cache_new(void)
{
	struct module_cache *c;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	sigbus_install();
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->nbuckets = 64;
	c->epoch = 1;
	c->buckets = calloc(c->nbuckets, sizeof(*c->buckets));
	if (!c->buckets) {
		free(c);
		return NULL;
	}
	return c;
}

void module_cache_free(struct module_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nbuckets; i++) {
		struct cache_entry *e = c->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			module_free(e->mod);
			free(e->name);
			free(e);
		}
	}
	while (c->retired) {
		struct module *m = c->retired;

		c->retired = m->retired_next;
		module_free(m);
	}
	free(c->buckets);
	free(c);
}

static bool entry_matches(const struct cache_entry *e, const struct cache_entry *key,
			  const void *image)
{
	if (e->kind != key->kind || e->hash != key->hash)
		return false;
	switch (e->kind) {
	case KEY_INODE:
		return e->dev == key->dev && e->ino == key->ino;
	case KEY_PATH:
		return strcmp(e->name, key->name) == 0;
	case KEY_IMAGE:
		if (e->img_len != key->img_len || e->img_hash != key->img_hash ||
		    strcmp(e->name, key->name) != 0)
			return false;
		/* Same hash: compare the bytes when we kept them. */
		return !e->mod || memcmp(e->mod->image, image, key->img_len) == 0;
	}
	return false;
}

static struct cache_entry *cache_lookup(const struct module_cache *c,
					const struct cache_entry *key, const void *image)
{
	struct cache_entry *e = c->buckets[key->hash & (c->nbuckets - 1)];

	for (; e; e = e->next)
		if (entry_matches(e, key, image))
			return e;
	return NULL;
}

static void cache_grow(struct module_cache *c)
{
	size_t n = c->nbuckets * 2;
	struct cache_entry **b = calloc(n, sizeof(*b));

	if (!b)
		return;  /* keep working with longer chains */
	for (size_t i = 0; i < c->nbuckets; i++) {
		struct cache_entry *e = c->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			e->next = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
		}
	}
	free(c->buckets);
	c->buckets = b;
	c->nbuckets = n;
}

/*
 * Store a copy of key with mod (NULL for a negative entry). On ENOMEM the
 * module is freed and NULL returned, so nothing leaks.
 */
static struct module *cache_insert(struct module_cache *c, const struct cache_entry *key,
				   struct module *mod)
{
	struct cache_entry *e = calloc(1, sizeof(*e));

	if (!e)
		goto fail;
	*e = *key;
	e->mod = mod;
	e->name = NULL;
	if (mod)
		mod->last_used = c->epoch;
	if (key->name) {
		e->name = strdup(key->name);
		if (!e->name)
			goto fail;
	}
	if (c->count + 1 > c->nbuckets)
		cache_grow(c);
	e->next = c->buckets[e->hash & (c->nbuckets - 1)];
	c->buckets[e->hash & (c->nbuckets - 1)] = e;
	c->count++;
	return mod;
fail:
	free(e);
	module_free(mod);
	return NULL;
}

/* One more module parsed from a file. */
static void resident_inc(struct module_cache *c)
{
	if (++c->st.resident > c->st.resident_max)
		c->st.resident_max = c->st.resident;
}

/*
 * A file is about to be parsed: the hook may evict modules first
 * (module_cache_set_parse_hook), never from within itself.
 */
static void run_parse_hook(struct module_cache *c)
{
	if (!c->before_parse || c->in_parse_hook)
		return;
	c->in_parse_hook = true;
	c->before_parse(c->parse_arg);
	c->in_parse_hook = false;
}

/*
 * An evicted module's file is mapped again: parse it back into the same
 * module when it is the same file (build-id, size, ctime); else the entry
 * gets a new module and the shell is retired (module_cache_evict). NULL
 * when no path opens (the shell stays, to be tried again).
 */
static struct module *cache_reload(struct module_cache *c, struct cache_entry *e,
				   const char *const *open_paths, unsigned n,
				   const char *display_path, uint64_t dev, uint64_t ino)
{
	struct module *m = e->mod, *fresh;
	char bid[sizeof(m->build_id)];
	uint64_t size = m->file_size;
	struct timespec ctime = m->file_ctime;
	int err = -ENOENT;

	memcpy(bid, m->build_id, sizeof(bid));
	for (unsigned i = 0; i < n && err; i++) {
		m->build_id[0] = '\0'; /* parsing fills it from the file */
		if (open_paths[i])
			err = module_load_file(c, m, open_paths[i], dev, ino);
	}
	if (!err && !strcmp(bid, m->build_id) && m->file_size == size &&
	    m->file_ctime.tv_sec == ctime.tv_sec && m->file_ctime.tv_nsec == ctime.tv_nsec) {
		m->evicted = false;
		m->last_used = c->epoch;
		c->st.reopened++;
		resident_inc(c);
		return m;
	}
	if (err) {
		memcpy(m->build_id, bid, sizeof(bid));
		m->file_size = size;
		m->file_ctime = ctime;
		return NULL;
	}
	/* Another file under the same key: the shell keeps the old identity. */
	module_release(m);
	memcpy(m->build_id, bid, sizeof(bid));
	m->file_size = size;
	m->file_ctime = ctime;
	fresh = NULL;
	for (unsigned i = 0; i < n && !fresh; i++)
		if (open_paths[i])
			fresh = module_open_file(c, open_paths[i], display_path, dev, ino);
	if (!fresh)
		return NULL;
	m->retired_next = c->retired;
	c->retired = m;
	e->mod = fresh;
	fresh->last_used = c->epoch;
	c->st.replaced++;
	resident_inc(c);
	return fresh;
}

struct module *module_cache_get_any(struct module_cache *c, const char *const *open_paths,
				    unsigned n, const char *display_path,
				    uint64_t dev, uint64_t ino)
{
	struct cache_entry key = { 0 };
	struct cache_entry *e;
	struct module *mod = NULL;

	if (!c)
		return NULL;
	if (!display_path)
		display_path = n > 0 && open_paths[0] ? open_paths[0] : "";
	if (dev != 0 || ino != 0) {
		key.kind = KEY_INODE;
		key.dev = dev;
		key.ino = ino;
		key.hash = hash_mix(hash_mix(dev) ^ ino);
	} else {
		key.kind = KEY_PATH;
		key.name = (char *)display_path;
		key.hash = hash_mix(hash_bytes(HASH_SEED, display_path, strlen(display_path)));
	}
	e = cache_lookup(c, &key, NULL);
	if (e && e->mod && e->mod->evicted) {
		run_parse_hook(c); /* entries stay where they are: e is still valid */
		return cache_reload(c, e, open_paths, n, display_path, dev, ino);
	}
	if (e) {
		if (e->mod)
			e->mod->last_used = c->epoch;
		return e->mod;
	}

	run_parse_hook(c);
	for (unsigned i = 0; i < n && !mod; i++)
		if (open_paths[i])
			mod = module_open_file(c, open_paths[i], display_path, dev, ino);
	mod = cache_insert(c, &key, mod);
	if (mod)
		resident_inc(c);
	return mod;
}

struct module *module_cache_get(struct module_cache *c, const char *open_path,
				const char *display_path, uint64_t dev, uint64_t ino)
{
	const char *paths[1] = { open_path };

	return module_cache_get_any(c, paths, 1, display_path ? display_path : open_path,
				    dev, ino);
}

struct module *module_cache_get_image(struct module_cache *c, const char *name,
				      const void *image, size_t len)
{
	struct cache_entry key = { 0 };
	struct cache_entry *e;

	if (!c || (!image && len))
		return NULL;
	if (!name)
		name = "";
	key.kind = KEY_IMAGE;
	key.name = (char *)name;
	key.img_len = len;
	key.img_hash = hash_bytes(HASH_SEED, image, len);
	key.hash = hash_mix(hash_bytes(key.img_hash, name, strlen(name)));
	e = cache_lookup(c, &key, image);
	if (e)
		return e->mod; /* images are never evicted: no last_used to keep */
	return cache_insert(c, &key, module_from_image(name, image, len));
}

unsigned module_cache_skipped(const struct module_cache *c, const char **first)
{
	if (first)
		*first = c && c->nskipped ? c->skipped : "";
	return c ? c->nskipped : 0;
}

/* ---- eviction (module_cache_evict) --------------------------------------- */

void module_cache_mark_begin(struct module_cache *c)
{
	if (c)
		c->epoch++;
}

void module_cache_mark(struct module_cache *c, struct module *m)
{
	if (c && m) {
		m->last_used = c->epoch;
		m->doomed = false;
	}
}

static int lru_cmp(const void *a, const void *b)
{
	const struct module *x = *(struct module *const *)a, *y = *(struct module *const *)b;

	return x->last_used < y->last_used ? -1 : x->last_used > y->last_used;
}

/* Parsed from a file (an image, the vDSO, cannot be read again): may be evicted. */
static bool evictable(const struct module *m)
{
	return m && !m->evicted && m->mapped;
}

size_t module_cache_doom(struct module_cache *c, size_t keep)
{
	struct module **cand = NULL;
	size_t n = 0, out = 0;

	if (!c)
		return 0;
	if (c->st.resident > keep) {
		cand = malloc(c->st.resident * sizeof(*cand));
		if (!cand)
			keep = SIZE_MAX; /* nothing doomed: the next round tries again */
	}
	for (size_t i = 0; i < c->nbuckets; i++)
		for (struct cache_entry *e = c->buckets[i]; e; e = e->next) {
			struct module *m = e->mod;

			if (!m)
				continue;
			m->doomed = false;
			if (cand && evictable(m) && m->last_used < c->epoch && n < c->st.resident)
				cand[n++] = m;
		}
	if (cand && n > keep) {
		qsort(cand, n, sizeof(*cand), lru_cmp);
		for (out = 0; out < n - keep; out++)
			cand[out]->doomed = true;
	}
	free(cand);
	return out;
}

bool module_doomed(const struct module *m)
{
	return m && m->doomed;
}

size_t module_cache_evict_doomed(struct module_cache *c,
				 void (*on_evict)(void *arg, const struct module *m), void *arg)
{
	size_t out = 0;

	if (!c)
		return 0;
	for (size_t i = 0; i < c->nbuckets; i++)
		for (struct cache_entry *e = c->buckets[i]; e; e = e->next) {
			struct module *m = e->mod;

			if (!m || !m->doomed)
				continue;
			m->doomed = false;
			if (!evictable(m) || m->last_used >= c->epoch)
				continue;
			if (on_evict)
				on_evict(arg, m);
			module_release(m);
			m->evicted = true;
			c->st.resident--;
			c->st.evicted++;
			out++;
		}
	return out;
}

size_t module_cache_evict(struct module_cache *c, size_t keep,
			  void (*on_evict)(void *arg, const struct module *m), void *arg)
{
	if (!module_cache_doom(c, keep))
		return 0;
	return module_cache_evict_doomed(c, on_evict, arg);
}

size_t module_cache_marked(const struct module_cache *c)
{
	size_t n = 0;

	for (size_t i = 0; c && i < c->nbuckets; i++)
		for (const struct cache_entry *e = c->buckets[i]; e; e = e->next)
			if (evictable(e->mod) && e->mod->last_used >= c->epoch)
				n++;
	return n;
}

void module_cache_set_parse_hook(struct module_cache *c, void (*fn)(void *arg), void *arg)
{
	if (!c)
		return;
	c->before_parse = fn;
	c->parse_arg = arg;
}

void module_cache_get_stats(const struct module_cache *c, struct module_cache_stats *st)
{
	if (c)
		*st = c->st;
	else
		memset(st, 0, sizeof(*st));
}

bool module_evicted(const struct module *m)
{
	return m && m->evicted;
}
