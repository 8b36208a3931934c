# pmutop - PMU-driven sampling profiler.
#
#   make demo       build, profile a bundled workload, print the table
#   make            build ./pmutop, its man page and bash completion (as root:
#                   installs missing build packages first; else names the command)
#   make test       install missing Debian packages (as root), build, run all tests
#   make check-asan the whole suite under ASan + UBSan
#   make bench      benchmarks (not part of make test)
#
# Objects go to $(BUILD) (build/ by default); V=1 shows full commands.

BUILD    ?= build
PMUTOP_OUT ?= pmutop
PREFIX   ?= /usr/local
CC       ?= cc
PKGS     := libunwind-generic libunwind-ptrace libelf libprotobuf-c zlib ncursesw \
            libdw libmicrohttpd capstone libdebuginfod libcurl
WERROR   ?= -Werror
VERSION  := 0.1.0

ifeq ($(V),1)
Q :=
else
Q := @
endif

# A fresh machine: the build's Debian packages come first. As root, `make`
# installs them (tests/install-deps.sh build; `make test` installs the test
# tools too); as another user it stops at once with the command to run. This
# runs before pkg-config is asked for flags below.
ifneq ($(filter-out clean clean-hardening deps,$(or $(MAKECMDGOALS),all)),)
BUILD_DEPS := $(shell command -v protoc-c >/dev/null 2>&1 && \
	pkg-config --exists $(PKGS) 2>/dev/null && \
	test -e /usr/include/perfmon/pfmlib.h -a -e /usr/include/libiberty/demangle.h && echo ok)
ifneq ($(BUILD_DEPS),ok)
ifeq ($(shell id -u),0)
ifneq ($(shell bash tests/install-deps.sh build >&2; echo $$?),0)
$(error installing the build packages failed (see above))
endif
else
$(error $(shell bash tests/install-deps.sh build 2>&1))
endif
endif
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wformat=2 -Wno-format-nonliteral $(WERROR)
CFLAGS   ?= -O2 -g
ALL_CFLAGS := -std=gnu11 $(CFLAGS) $(WARN) -D_GNU_SOURCE -DPMUTOP_VERSION=\"$(VERSION)\" -Iinclude -Iui -I$(BUILD)/proto \
              $(PKG_CFLAGS) $(EXTRA_CFLAGS)
# libiberty (the demangler) is a static library without a .pc file.
LDLIBS_ALL := $(PKG_LIBS) -lpfm -liberty -lpthread $(EXTRA_LDFLAGS)

PROTO_C  := $(BUILD)/proto/profile.pb-c.c
PROTO_H  := $(BUILD)/proto/profile.pb-c.h

# One folder per pipeline stage (ARCHITECTURE.md); src/main.c is the entry point.
STAGES   := target sample unwind symbols profile frontend
LIB_SRC  := $(foreach s,$(STAGES),$(wildcard src/$(s)/*.c)) $(wildcard ui/*.c)
# Assembly sources embed files with .incbin (the flame graph page, ui/web/).
LIB_ASM  := $(foreach s,$(STAGES),$(wildcard src/$(s)/*.S))
LIB_OBJ  := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRC)) $(patsubst %.S,$(BUILD)/%.o,$(LIB_ASM)) \
            $(BUILD)/proto/profile.pb-c.o
WEB_FILES := $(wildcard ui/web/*)
LIB      := $(BUILD)/libpmutop.a

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))

# The man page and bash completion are printed by pmutop itself from its
# option table (src/frontend/cli.c), so they always match --help.
DOCS     := $(BUILD)/pmutop.1 $(BUILD)/pmutop.bash

.PHONY: all test unit e2e check-asan demo bench install clean deps
all: $(PMUTOP_OUT) $(DOCS)

$(PMUTOP_OUT): $(BUILD)/src/main.o $(LIB)
	@echo "  LINK    $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/pmutop.1: $(PMUTOP_OUT)
	@echo "  GEN     $@"
	$(Q)./$(PMUTOP_OUT) --print-man > $@.tmp && mv $@.tmp $@

$(BUILD)/pmutop.bash: $(PMUTOP_OUT)
	@echo "  GEN     $@"
	$(Q)./$(PMUTOP_OUT) --print-completion > $@.tmp && mv $@.tmp $@

$(LIB): $(LIB_OBJ)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

# One protoc-c run makes both files: a grouped target (&:), else make -j
# runs it twice at once, each writing the files the other's compiles read.
$(PROTO_C) $(PROTO_H) &: proto/profile.proto
	@mkdir -p $(BUILD)/proto
	@echo "  PROTOC  $<"
	$(Q)protoc-c --c_out=$(BUILD)/proto --proto_path=proto $<

$(BUILD)/proto/profile.pb-c.o: $(PROTO_C)
	@echo "  CC      $@"
	$(Q)$(CC) -std=gnu11 $(CFLAGS) $(PKG_CFLAGS) $(EXTRA_CFLAGS) -I$(BUILD)/proto -c -o $@ $<

# Every object may include the generated header; depend on it for ordering.
$(BUILD)/%.o: %.c $(PROTO_H)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# .incbin'd files are not in -MMD's list: name them here.
$(BUILD)/src/profile/flame_assets.o: $(WEB_FILES)
$(BUILD)/%.o: %.S
	@mkdir -p $(dir $@)
	@echo "  AS      $@"
	$(Q)$(CC) $(CFLAGS) $(EXTRA_CFLAGS) -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(LIB)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(LIB) $(LDLIBS_ALL) -lcmocka

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# Test workloads, end-to-end tests and their rules.
-include tests/tests.mk

deps:
	$(Q)bash tests/install-deps.sh

unit: $(UNIT_BIN)
	$(Q)bash tests/run-unit.sh $(UNIT_BIN)

e2e: $(PMUTOP_OUT) workloads
	$(Q)bash tests/e2e/run.sh

# The builds use every CPU (the tests themselves run one at a time).
NPROC := $(shell nproc 2>/dev/null || echo 1)

test: deps
	$(Q)bash tests/check-layers.sh
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) all workloads $(UNIT_BIN)
	$(Q)bash tests/run-unit.sh $(UNIT_BIN)
	$(Q)bash tests/e2e/run.sh

check-asan: deps
	$(Q)$(MAKE) --no-print-directory BUILD=build-asan PMUTOP_OUT=build-asan/pmutop \
		CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		EXTRA_LDFLAGS="-fsanitize=address,undefined" asan-unit asan-e2e

asan-unit: $(UNIT_BIN)
	$(Q)ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		bash tests/run-unit.sh $(UNIT_BIN)

asan-e2e: $(PMUTOP_OUT) workloads
	$(Q)ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		PMUTOP=$(PMUTOP_OUT) PMUTOP_QUICK=1 bash tests/e2e/run.sh

# The first command of the README: build, then profile the bundled workload
# (ten functions with known shares, 1.82 % ... 18.18 %) and print the table.
# One compile per CPU: a newcomer's first command should not wait on a serial build.
demo:
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) $(PMUTOP_OUT) $(WORKLOAD_DIR)/shares
	$(Q)./$(PMUTOP_OUT) --no-tui --rows 15 -- $(WORKLOAD_DIR)/shares 3

bench: $(PMUTOP_OUT) workloads
	$(Q)bash bench/run.sh

install: $(PMUTOP_OUT) $(DOCS)
	install -D -m 0755 $(PMUTOP_OUT) $(DESTDIR)$(PREFIX)/bin/pmutop
	install -D -m 0644 $(BUILD)/pmutop.1 $(DESTDIR)$(PREFIX)/share/man/man1/pmutop.1
	install -D -m 0644 $(BUILD)/pmutop.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/pmutop

clean:
	rm -rf build build-asan pmutop

# ---- hardening: fuzzing and valgrind (issue 7) ------------------------------
#   make fuzz           build the libFuzzer targets with clang (installed on
#                       demand) in build-fuzz/ and run each for FUZZ_SECONDS
#   make check-valgrind pmutop under valgrind memcheck on a short workload
FUZZ_SECONDS ?= 30

-include tests/fuzz/fuzz.mk

.PHONY: fuzz check-valgrind
fuzz:
	$(Q)FUZZ_SECONDS=$(FUZZ_SECONDS) bash tests/fuzz/run.sh

check-valgrind: deps
	$(Q)$(MAKE) --no-print-directory BUILD=build-vg PMUTOP_OUT=build-vg/pmutop \
		CFLAGS="-O1 -g" build-vg/pmutop workloads
	$(Q)PMUTOP=build-vg/pmutop WORKLOAD_DIR=build-vg/workloads bash tests/valgrind/run.sh

clean: clean-hardening
.PHONY: clean-hardening
clean-hardening:
	rm -rf build-fuzz build-vg
