/*
 * fuzz_pprof_read.c - fuzz target: arbitrary bytes as a profile for --load.
 *
 * The input goes to pprof_read_buf() (gzip or raw protobuf, as
 * `pmutop --load` reads a file). When it is accepted, the aggregate it
 * built is written back out with pprof_encode(), so that everything the
 * reader let in (ids, string indexes, stacks, labels) must also be
 * consistent enough for the writer - a round trip on hostile input.
 * Inputs are capped at 1 MiB so a gzip bomb costs time, not the run.
 */
#include <stdlib.h>

#include "fuzz.h"
#include "pmutop/profile/aggregate.h"
#include "pmutop/profile/pprof.h"
#include "pmutop/profile/pprof_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aggregate *a = NULL;
	unsigned char *out = NULL;
	size_t outlen = 0;
	char err[512];

	if (size > (1u << 20))
		return 0;
	if (pprof_read_buf(data, size, &a, err, sizeof(err)) == 0 && a) {
		if (pprof_encode(a, &out, &outlen) == 0)
			free(out);
		aggregate_free(a);
	}
	return 0;
}
