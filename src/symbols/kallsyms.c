/*
 * kallsyms.c - kernel code names from /proc/kallsyms (see kallsyms.h).
 *
 * The file is a few MB of "ADDR TYPE NAME[\t[MODULE]]" lines. Only text
 * symbols (t, T, w, W) are kept: one sorted array of (address, name,
 * module index), names in one growing buffer referenced by offset, so the
 * whole table is three allocations. A symbol runs to the next one; the
 * kernel image ends at _etext, a module at its last symbol plus a page.
 *
 * Each module (and the image) gets a struct mapping of its own, with an
 * id far above the ones maps.c hands out, so the aggregate interns them as
 * distinct pprof mappings.
 */
#include "pmutop/symbols/kallsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmutop/target/maps.h"
#include "pmutop/symbols/symbolize.h"

#define KERNEL_MAP_ID 0xfff00000u  /* mapping ids: maps.c counts up from 1 */
#define KERNEL_RESTRICTED_NAME "[kernel]"
#define IMAGE_NAME "[kernel.kallsyms]"
#define MODULE_TAIL 4096           /* a module's last function: assume a page */

struct ksym {
	uint64_t addr;
	uint32_t name;   /* offset into names */
	uint32_t mod;    /* index into maps: 0 = the kernel image */
};

struct kallsyms {
	struct ksym *syms;
	size_t nsyms, cap;
	char *names;
	size_t names_len, names_cap;
	struct mapping *maps;  /* [0] the image, then one per module */
	size_t nmaps;
	bool restricted;
	char build_id[41 * 2];
};

static int names_add(struct kallsyms *ks, const char *s, size_t len, uint32_t *off)
{
	if (ks->names_len + len + 1 > ks->names_cap) {
		size_t cap = ks->names_cap ? ks->names_cap * 2 : 1 << 20;
		char *n;

		while (cap < ks->names_len + len + 1)
			cap *= 2;
		if (cap > UINT32_MAX || !(n = realloc(ks->names, cap)))
			return -ENOMEM;
		ks->names = n;
		ks->names_cap = cap;
	}
	memcpy(ks->names + ks->names_len, s, len);
	ks->names[ks->names_len + len] = '\0';
	*off = (uint32_t)ks->names_len;
	ks->names_len += len + 1;
	return 0;
}

/* The mapping index of a module named name (added on first sight), or -ENOMEM. */
static long module_index(struct kallsyms *ks, const char *name, size_t len)
{
	struct mapping *n;
	char *path;

	for (size_t i = 1; i < ks->nmaps; i++)
		if (strlen(ks->maps[i].path) == len + 2 &&
		    memcmp(ks->maps[i].path + 1, name, len) == 0)
			return (long)i;
	n = realloc(ks->maps, (ks->nmaps + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	ks->maps = n;
	path = malloc(len + 3);
	if (!path)
		return -ENOMEM;
	path[0] = '[';
	memcpy(path + 1, name, len);
	path[len + 1] = ']';
	path[len + 2] = '\0';
	memset(&ks->maps[ks->nmaps], 0, sizeof(*n));
	ks->maps[ks->nmaps].path = path;
	ks->maps[ks->nmaps].id = KERNEL_MAP_ID + (uint32_t)ks->nmaps;
	ks->maps[ks->nmaps].exec = true;
	return (long)ks->nmaps++;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/*
 * One line "ffffffff81000000 T _stext" or "... t name\t[module]". Returns
 * 0 (kept or skipped), -ENOMEM. *zero says the address was 0.
 */
static int parse_line(struct kallsyms *ks, char *line, bool *zero, uint64_t *etext)
{
	char *p = line, *name, *end, *mod = NULL;
	unsigned long long addr;
	size_t len, modlen = 0;
	long mi = 0;
	char type;

	errno = 0;
	addr = strtoull(p, &end, 16);
	if (end == p || *end != ' ' || errno)
		return 0;
	*zero = addr == 0;
	p = end + 1;
	type = *p;
	if (!type || p[1] != ' ')
		return 0;
	name = p + 2;
	len = strcspn(name, "\t\n");
	if (name[len] == '\t' && name[len + 1] == '[') {
		mod = name + len + 2;
		modlen = strcspn(mod, "]\n");
		if (mod[modlen] != ']')
			mod = NULL;
	}
	if (!mod && len == 6 && memcmp(name, "_etext", 6) == 0)
		*etext = addr;
	if (addr == 0 || len == 0 || !strchr("tTwW", type))
		return 0;
	if (mod && (mi = module_index(ks, mod, modlen)) < 0)
		return -ENOMEM;
	if (ks->nsyms == ks->cap) {
		size_t cap = ks->cap ? ks->cap * 2 : 65536;
		struct ksym *s = realloc(ks->syms, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		ks->syms = s;
		ks->cap = cap;
	}
	ks->syms[ks->nsyms].addr = addr;
	ks->syms[ks->nsyms].mod = (uint32_t)mi;
	if (names_add(ks, name, len, &ks->syms[ks->nsyms].name))
		return -ENOMEM;
	ks->nsyms++;
	return 0;
}

/* GNU build-id of the running kernel from /sys/kernel/notes (raw ELF notes). */
static void read_build_id(struct kallsyms *ks)
{
	unsigned char buf[4096];
	size_t off = 0;
	ssize_t n;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	while (n > 0 && off + 12 <= (size_t)n) {
		uint32_t namesz, descsz, type;
		size_t name_off = off + 12, desc_off;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		desc_off = name_off + ((namesz + 3u) & ~3u);
		if (namesz > 256 || descsz > 256 || desc_off + descsz > (size_t)n)
			return;
		if (type == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 &&
		    memcmp(buf + name_off, "GNU", 4) == 0 && descsz > 0 && descsz <= 40) {
			for (uint32_t i = 0; i < descsz; i++)
				snprintf(ks->build_id + 2 * i, 3, "%02x", buf[desc_off + i]);
			return;
		}
		off = desc_off + ((descsz + 3u) & ~3u);
	}
}

/* Sort, drop aliases (same address), and give every mapping its range. */
static void finish(struct kallsyms *ks, uint64_t etext)
{
	size_t out = 0;

	if (ks->nsyms) /* syms is NULL when there are none (qsort's argument must not be) */
		qsort(ks->syms, ks->nsyms, sizeof(*ks->syms), ksym_cmp);
	for (size_t i = 0; i < ks->nsyms; i++) {
		if (out && ks->syms[out - 1].addr == ks->syms[i].addr &&
		    ks->syms[out - 1].mod == ks->syms[i].mod)
			continue;
		ks->syms[out++] = ks->syms[i];
	}
	ks->nsyms = out;
	for (size_t i = 0; i < ks->nsyms; i++) {
		struct mapping *m = &ks->maps[ks->syms[i].mod];
		uint64_t end = ks->syms[i].addr + 1;

		if (!m->start || ks->syms[i].addr < m->start)
			m->start = ks->syms[i].addr;
		if (end > m->end)
			m->end = end;
	}
	for (size_t i = 1; i < ks->nmaps; i++)
		ks->maps[i].end += MODULE_TAIL;
	if (etext > ks->maps[0].end)
		ks->maps[0].end = etext;
	if (ks->restricted || !ks->maps[0].start) {
		/* No addresses: the image mapping covers the kernel half. */
		ks->maps[0].start = 0xffff800000000000ULL;
		ks->maps[0].end = UINT64_MAX;
	}
	/* No slack from doubling: the table lives as long as the run (1-2 MB). */
	if (ks->nsyms && ks->nsyms < ks->cap) {
		struct ksym *v = realloc(ks->syms, ks->nsyms * sizeof(*v));

		if (v) {
			ks->syms = v;
			ks->cap = ks->nsyms;
		}
	}
	if (ks->names_len && ks->names_len < ks->names_cap) {
		char *v = realloc(ks->names, ks->names_len);

		if (v) {
			ks->names = v;
			ks->names_cap = ks->names_len;
		}
	}
}

struct kallsyms *kallsyms_load(const char *path, char *err, size_t errlen)
{
	struct kallsyms *ks = calloc(1, sizeof(*ks));
	const char *p = path ? path : "/proc/kallsyms";
	char *line = NULL;
	size_t cap = 0, lines = 0, zeros = 0;
	uint64_t etext = 0;
	FILE *f = NULL;
	int r = 0;

	if (!ks || !(ks->maps = calloc(1, sizeof(*ks->maps))) ||
	    !(ks->maps[0].path = strdup(IMAGE_NAME))) {
		snprintf(err, errlen, "out of memory reading %s", p);
		goto fail;
	}
	ks->nmaps = 1;
	ks->maps[0].id = KERNEL_MAP_ID;
	ks->maps[0].exec = true;
	f = fopen(p, "re");
	if (!f) {
		snprintf(err, errlen, "cannot read %s: %s", p, strerror(errno));
		goto fail;
	}
	while (getline(&line, &cap, f) > 0) {
		bool zero = false;

		lines++;
		if ((r = parse_line(ks, line, &zero, &etext)) != 0)
			break;
		zeros += zero;
	}
	free(line);
	if (r || ferror(f)) {
		snprintf(err, errlen, "cannot read %s: %s", p, strerror(r ? -r : EIO));
		goto fail;
	}
	fclose(f);
	f = NULL;
	/* Hidden addresses: every line reads 0 (a stray 0 is not enough), or none. */
	ks->restricted = zeros == lines;
	if (ks->restricted)
		ks->nsyms = 0;
	if (!path)
		read_build_id(ks);
	ks->maps[0].build_id = ks->build_id[0] ? ks->build_id : NULL;
	finish(ks, etext);
	return ks;
fail:
	if (f)
		fclose(f);
	kallsyms_free(ks);
	return NULL;
}

void kallsyms_free(struct kallsyms *ks)
{
	if (!ks)
		return;
	for (size_t i = 0; i < ks->nmaps; i++)
		free(ks->maps[i].path);
	free(ks->maps);
	free(ks->syms);
	free(ks->names);
	free(ks);
}

bool kallsyms_restricted(const struct kallsyms *ks)
{
	return ks && ks->restricted;
}

size_t kallsyms_count(const struct kallsyms *ks)
{
	return ks ? ks->nsyms : 0;
}

/* Index of the last symbol at or below addr, or -1. */
static long find(const struct kallsyms *ks, uint64_t addr)
{
	size_t lo = 0, hi = ks->nsyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

const char *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr, uint64_t *off,
			    const char **module)
{
	const struct ksym *s;
	const struct mapping *m;
	long i;

	if (!ks || ks->restricted || (i = find(ks, addr)) < 0)
		return NULL;
	s = &ks->syms[i];
	m = &ks->maps[s->mod];
	if (addr >= m->end)
		return NULL; /* past the image's _etext or a module's end */
	if (off)
		*off = addr - s->addr;
	if (module)
		*module = s->mod ? m->path : NULL;
	return ks->names + s->name;
}

/* The mapping holding addr: a module's or the image's (the default). */
static const struct mapping *mapping_of(const struct kallsyms *ks, uint64_t addr)
{
	for (size_t i = 1; i < ks->nmaps; i++)
		if (addr >= ks->maps[i].start && addr < ks->maps[i].end)
			return &ks->maps[i];
	return &ks->maps[0];
}

void kallsyms_symbolize(const struct kallsyms *ks, const uint64_t *ips, unsigned n,
			struct frame *out)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t addr = i > 0 && ips[i] ? ips[i] - 1 : ips[i];
		struct frame *f = &out[i];

		memset(f, 0, sizeof(*f));
		f->addr = addr;
		if (!ks)
			continue;
		f->map = mapping_of(ks, addr);
		if (ks->restricted)
			f->func = KERNEL_RESTRICTED_NAME;
		else
			f->func = kallsyms_lookup(ks, addr, &f->func_off, NULL);
	}
}
