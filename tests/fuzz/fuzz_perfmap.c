/*
 * fuzz_perfmap.c - fuzz target: arbitrary bytes as a JIT perf map.
 *
 * A target writes /tmp/perf-PID.map itself. The input becomes this
 * process's own map (/tmp/perf-<our pid>.map, read through
 * /proc/<pid>/root like any target's), a fresh perfmap reads it, and
 * addresses from the input and around every parsed line are looked up;
 * then the file is appended to (the incremental path) and looked up again.
 * Each line is also given to perfmap_parse_line() on its own.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "pmutop/symbols/perfmap.h"

static void write_file(const char *path, const uint8_t *data, size_t size, int flags)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0600);

	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size) {
		/* a short write is a shorter input: fine */
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], *copy = malloc(size + 1), *line, *save = NULL;
	volatile size_t sink = 0;
	struct perfmap *pm;
	uint64_t off;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	write_file(path, data, size, O_TRUNC);
	pm = perfmap_new(getpid(), true);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		uint64_t start, len;
		const char *name;
		size_t nl;

		if (perfmap_parse_line(line, &start, &len, &name, &nl) == 0) {
			sink += nl;
			sink += perfmap_lookup(pm, start, &off) != NULL;
			sink += perfmap_lookup(pm, start + len - 1, &off) != NULL;
			sink += perfmap_lookup(pm, start + len, NULL) != NULL;
			sink += perfmap_lookup(pm, start - 1, NULL) != NULL;
		}
	}
	sink += perfmap_lookup(pm, 0, &off) != NULL;
	sink += perfmap_lookup(pm, UINT64_MAX, &off) != NULL;
	/* Append the input again: the incremental re-read. */
	write_file(path, data, size, O_APPEND);
	if (size >= 8) {
		uint64_t a;

		memcpy(&a, data, 8);
		sink += perfmap_lookup(pm, a, &off) != NULL;
	}
	sink += perfmap_count(pm);
	(void)sink;
	perfmap_free(pm);
	unlink(path);
	free(copy);
	return 0;
}
