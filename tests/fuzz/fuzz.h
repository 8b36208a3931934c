/*
 * fuzz.h - what every fuzz target in tests/fuzz/ exports.
 *
 * Each fuzz_*.c defines LLVMFuzzerTestOneInput() and nothing else that is
 * visible, so the same file links into two programs:
 *  - a libFuzzer binary (clang -fsanitize=fuzzer; `make fuzz`), and
 *  - tests/unit/test_fuzz_replay.c, which includes the targets with their
 *    entry point renamed and replays the seed corpora and every input a
 *    fuzzer ever found (tests/fuzz/corpus/<target>/) under plain gcc, in
 *    `make test` and `make check-asan`.
 * A target must be deterministic enough to replay, must not leak across
 * calls, and must return 0.
 */
#ifndef PMUTOP_FUZZ_H
#define PMUTOP_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
