# tests/fuzz/fuzz.mk - libFuzzer targets (included by the top-level Makefile).
#
# Only meaningful with CC=clang and -fsanitize=fuzzer-no-link in CFLAGS for
# the library; tests/fuzz/run.sh (`make fuzz`) builds everything that way in
# build-fuzz/ and runs the targets. The same sources are replayed without
# libFuzzer by tests/unit/test_fuzz_replay.c in every `make test`.

FUZZ_SRC  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN  := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))

.PHONY: fuzz-bins
fuzz-bins: $(FUZZ_BIN)

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(LIB)
	@mkdir -p $(dir $@)
	@echo "  FUZZ    $@"
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/fuzz -fsanitize=fuzzer -o $@ $< $(LIB) $(LDLIBS_ALL)
