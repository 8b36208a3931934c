/*
 * fuzz_debuginfo.c - fuzz target: arbitrary bytes as a target's ELF file,
 * read for DWARF (file:line, inlined frames) through debuginfo.c and libdw.
 *
 * The input is written to a file and mapped into a maps view of this
 * process the way a PERF_RECORD_MMAP2 would add it (with the file's device
 * and inode, so pmutop opens it through /proc/self/root with its checks).
 * If it parses as ELF, the module's text range is walked with
 * debuginfo_prepare()/debuginfo_lookup(), every returned string touched:
 * DWARF units, line programs, inline chains and .gnu_debuglink names (a
 * debuglink in the input is looked up next to the file and must stay
 * there) all come from the input.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "pmutop/target/maps.h"
#include "pmutop/target/module.h"
#include "pmutop/symbols/debuginfo.h"

#define BASE 0x10000000ULL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	struct module_cache *c;
	struct maps *m;
	struct stat st;
	volatile size_t sink = 0;
	int fd;

	snprintf(path, sizeof(path), "/tmp/pmutop-fuzz-dbg-%d.elf", (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size || fstat(fd, &st) != 0) {
		close(fd);
		unlink(path);
		return 0;
	}
	close(fd);
	c = module_cache_new();
	m = c ? maps_new(getpid(), c) : NULL;
	if (m && maps_add(m, BASE, (size + 4095) & ~4095ULL, 0, (uint64_t)st.st_dev,
			  (uint64_t)st.st_ino, true, path) == 0) {
		const struct mapping *map = maps_find(m, BASE);

		if (map && map->mod && map->dbg && debuginfo_prepare(map->dbg, map)) {
			uint64_t lo, hi;

			module_text_range(map->mod, &lo, &hi);
			for (unsigned k = 0; k <= 64; k++) {
				uint64_t span = hi > lo ? hi - lo : 0;
				uint64_t a = lo + span / 64 * k + map->bias;
				const struct src_line *l;
				unsigned n = debuginfo_lookup(map->dbg, map, a, &l);

				for (unsigned j = 0; j < n; j++)
					sink += (l[j].func ? strlen(l[j].func) : 0) +
						(l[j].file ? strlen(l[j].file) : 0) + l[j].line;
			}
		}
	}
	(void)sink;
	maps_free(m);
	module_cache_free(c);
	unlink(path);
	return 0;
}
