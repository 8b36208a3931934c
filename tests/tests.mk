# tests/tests.mk - test workloads (included by the top-level Makefile).
#
# The workloads are the known-answer programs the end-to-end tests profile
# (tests/workloads/*.c; each file's header says what truth it provides). They
# are built with their own flags, not $(CFLAGS): the profiled program must
# look the same in every build (a check-asan build sanitizes pmutop, not the
# targets), and -O1 keeps the hot loops tight but the functions real.
#
# Uses the parent's $(CC), $(BUILD), $(Q) and $(WARN) (so -Werror applies).

WORKLOAD_DIR := $(BUILD)/workloads
WL_SRC       := tests/workloads
WL_HDR       := $(WL_SRC)/workload.h
WL_CFLAGS    := -std=gnu11 -O1 -g -pthread -D_GNU_SOURCE $(WARN)
WL_FP        := -fno-omit-frame-pointer

# One program per source file, frame pointers on.
WL_PLAIN     := shares threads late_threads exiter two_loops vfork_stuck syscalls fanout offcpu
WORKLOADS    := $(addprefix $(WORKLOAD_DIR)/,$(WL_PLAIN) deep_fp deep_nofp \
                  dl_main libhot.so)

# The e2e scripts find the workloads through this (tests/e2e/run.sh).
export WORKLOAD_DIR

.PHONY: workloads
workloads: $(WORKLOADS)

$(addprefix $(WORKLOAD_DIR)/,$(WL_PLAIN)): $(WORKLOAD_DIR)/%: $(WL_SRC)/%.c $(WL_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -o $@ $<

# The same recursion with and without frame pointers; never turn the
# recursion into a loop or tail calls.
$(WORKLOAD_DIR)/deep_fp: $(WL_SRC)/deep.c $(WL_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(WL_CFLAGS) -fno-omit-frame-pointer -fno-optimize-sibling-calls -o $@ $<

$(WORKLOAD_DIR)/deep_nofp: $(WL_SRC)/deep.c $(WL_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(WL_CFLAGS) -fomit-frame-pointer -fno-optimize-sibling-calls -o $@ $<

# A PIE that dlopen()s libhot.so (found next to itself) mid-run.
$(WORKLOAD_DIR)/dl_main: $(WL_SRC)/dl_main.c $(WL_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -fPIE -pie -o $@ $< -ldl

$(WORKLOAD_DIR)/libhot.so: $(WL_SRC)/libhot.c $(WL_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -fPIC -shared -o $@ $<

# Benchmark workloads (bench/run.sh): a fixed amount of work for the overhead
# section and a process with N mostly sleeping threads for the scale section.
# Same flags as the other workloads, frame pointers on (perf -g needs them).
WL_BENCH     := $(addprefix $(WORKLOAD_DIR)/,fixed_work many_threads pingpong)
workloads: $(WL_BENCH)

$(WL_BENCH): $(WORKLOAD_DIR)/%: $(WL_SRC)/%.c $(WL_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -o $@ $<

# Event workloads (t_events.sh): branch mispredictions and cache misses with
# known homes. -O1 keeps the branches branches (no cmov at this level here).
WL_EVENTS    := $(addprefix $(WORKLOAD_DIR)/,branchy cachey short_threads)
workloads: $(WL_EVENTS)

$(WL_EVENTS): $(WORKLOAD_DIR)/%: $(WL_SRC)/%.c $(WL_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -o $@ $<

# Fault-matrix workloads (tests/e2e/t_fault_*.sh): a target that execs, one
# that forks, thread churn, and threads on corrupt frame chains. Same flags
# as the plain workloads, frame pointers on (garbage_stack corrupts its own
# frame through __builtin_frame_address).
WL_FAULT     := $(addprefix $(WORKLOAD_DIR)/,fault_exec fault_fork churn garbage_stack)
workloads: $(WL_FAULT)

# Issue 23: a churning service (thread renewal, deep random recursion,
# dlopen/dlclose of libhot.so, mmap churn) for t_rss_flat and make bench.
workloads: $(WORKLOAD_DIR)/longrun $(WORKLOAD_DIR)/libhot.so
$(WORKLOAD_DIR)/longrun: $(WL_SRC)/longrun.c $(WL_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -o $@ $< -ldl

$(WL_FAULT): $(WORKLOAD_DIR)/%: $(WL_SRC)/%.c $(WL_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -o $@ $<

# pmutop --stacks and the ptrace engine (t_stacks.sh, t_ptrace_safety.sh):
# threads parked in nanosleep, a busy function and a pipe read.
workloads: $(WORKLOAD_DIR)/stacks_target

$(WORKLOAD_DIR)/stacks_target: $(WL_SRC)/stacks_target.c $(WL_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -o $@ $<

# A libhot.so look-alike whose symbol table lies pages past its last loaded
# segment, for the on-disk corruption tests (t_fault_corrupt_elf.sh).
$(WORKLOAD_DIR)/libfat.so: $(WL_SRC)/libfat.c $(WL_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -fPIC -shared -o $@ $<
workloads: $(WORKLOAD_DIR)/libfat.so

# Issue 8 (ecosystem) workloads:
#   jit        generated code named by /tmp/perf-PID.map
#   cxx_names  C++ names to demangle (g++)
#   inline_hot / debuglink  DWARF file:line and inlined frames, the latter
#              with its debug info split off into a .debug file
#   go_shares  a Go program (only when Debian's golang-go is installed)
#   go_stacks, go_stacks_stripped, go_cgo  Go stack switches, -s -w, cgo (issue 12)
WL_ECO := $(addprefix $(WORKLOAD_DIR)/,jit cxx_names inline_hot)
workloads: $(WL_ECO)

# -O2 so that always_inline code really is inlined; -g for the DWARF chain.
$(WORKLOAD_DIR)/inline_hot: $(WL_SRC)/inline_hot.c $(WL_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(filter-out -O1,$(WL_CFLAGS)) -O2 $(WL_FP) -o $@ $<

# C++ with its own flags: the C-only warnings of $(WARN) do not apply.
WL_CXXFLAGS := -O1 -g -pthread -D_GNU_SOURCE -Wall -Wextra $(WERROR)

$(WORKLOAD_DIR)/cxx_names: $(WL_SRC)/cxx_names.cpp $(WL_HDR)
	@mkdir -p $(dir $@)
	@echo "  CXX     $@"
	$(Q)$(CXX) $(WL_CXXFLAGS) $(WL_FP) -o $@ $<

$(WORKLOAD_DIR)/jit: $(WL_SRC)/jit.c $(WL_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -o $@ $<

# The Go workload, when Debian's golang-go is there (t_go skips otherwise):
# a single-file main package, standard library only, so it builds offline.
ifneq ($(shell command -v go 2>/dev/null),)
workloads: $(WORKLOAD_DIR)/go_shares

$(WORKLOAD_DIR)/go_shares: $(WL_SRC)/go_shares.go
	@mkdir -p $(dir $@)
	@echo "  GO      $@"
	$(Q)HOME=$${HOME:-/tmp} GOCACHE=$(abspath $(BUILD))/gocache CGO_ENABLED=0 GOFLAGS=-mod=mod \
		GOPROXY=off go build -o $@ $<

# Issue 12: stacks across Go's stack switches (go_stacks, and the same built
# with -ldflags='-s -w': no .symtab, no DWARF, only .gopclntab), and a cgo
# program (Go -> C -> Go; needs gcc, which the C workloads need anyway).
GO_ENV := HOME=$${HOME:-/tmp} GOCACHE=$(abspath $(BUILD))/gocache GOFLAGS=-mod=mod GOPROXY=off
workloads: $(addprefix $(WORKLOAD_DIR)/,go_stacks go_stacks_stripped go_cgo)

$(WORKLOAD_DIR)/go_stacks: $(WL_SRC)/go_stacks.go
	@mkdir -p $(dir $@)
	@echo "  GO      $@"
	$(Q)$(GO_ENV) CGO_ENABLED=0 go build -o $@ $<

$(WORKLOAD_DIR)/go_stacks_stripped: $(WL_SRC)/go_stacks.go
	@mkdir -p $(dir $@)
	@echo "  GO      $@"
	$(Q)$(GO_ENV) CGO_ENABLED=0 go build -ldflags='-s -w' -o $@ $<

$(WORKLOAD_DIR)/go_cgo: $(WL_SRC)/go_cgo.go
	@mkdir -p $(dir $@)
	@echo "  GO      $@"
	$(Q)$(GO_ENV) CGO_ENABLED=1 go build -o $@ $<
endif

# Issue 13 (symbols): a library whose hot functions are static (unnamed once
# stripped; the e2e tests strip a copy) and a PLT-heavy caller.
workloads: $(WORKLOAD_DIR)/libnosym.so $(WORKLOAD_DIR)/nosym_main

$(WORKLOAD_DIR)/libnosym.so: $(WL_SRC)/nosym_lib.c $(WL_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(WL_CFLAGS) -fPIC -shared -Wl,--build-id -o $@ $<

$(WORKLOAD_DIR)/nosym_main: $(WL_SRC)/nosym_main.c $(WL_HDR) $(WORKLOAD_DIR)/libnosym.so
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -o $@ $< -L$(WORKLOAD_DIR) -lnosym -Wl,-rpath,'$$ORIGIN'

# Issue 31 (t_pprof_open.sh): 4,000 functions in one compile unit (a large
# DWARF of the program's own) and hot code with no symbol, CFI or line rows.
# -O0: the same DIEs for a third of -O1's compile time.
workloads: $(WORKLOAD_DIR)/bigdwarf
$(WORKLOAD_DIR)/bigdwarf: $(WL_SRC)/bigdwarf.c $(WL_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(filter-out -O1,$(WL_CFLAGS)) -O0 $(WL_FP) -o $@ $<
