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
WL_PLAIN     := shares threads late_threads exiter
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
WL_BENCH     := $(addprefix $(WORKLOAD_DIR)/,fixed_work many_threads)
workloads: $(WL_BENCH)

$(WL_BENCH): $(WORKLOAD_DIR)/%: $(WL_SRC)/%.c $(WL_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -o $@ $<

# Event workloads (t_events.sh): branch mispredictions and cache misses with
# known homes. -O1 keeps the branches branches (no cmov at this level here).
WL_EVENTS    := $(addprefix $(WORKLOAD_DIR)/,branchy cachey)
workloads: $(WL_EVENTS)

$(WL_EVENTS): $(WORKLOAD_DIR)/%: $(WL_SRC)/%.c $(WL_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(WL_CFLAGS) $(WL_FP) -o $@ $<
