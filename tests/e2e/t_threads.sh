#!/usr/bin/env bash
# t_threads.sh - per-thread shares from the `thread` and `tid` sample labels.
#
# The threads workload runs ten identical, never-blocking threads named
# worker0..worker9. On a quiet machine each gets ~10% of the CPU time, but
# ten threads on two CPUs shared with other work get what the scheduler
# gives them (the nominal 10% was off by up to 3.5 pp for the fp engine at
# load 17), so the truth is measured, not assumed: pmutop launches the
# workload and records until it exits, and each worker counts the sampled
# event on itself over its whole life (and reads its CPU clock), written to
# a file (THREADS_CPU_FILE). Each worker's share of the workers' samples
# must be within 4 sigma of sampling noise of its share of their counts
# (thread_shares in lib.sh); every sample must carry `thread` and `tid`
# labels and each worker's tid its own name. The CPU-time shares and the
# spread around 10% are printed.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl threads

DUR=$(quick_or 5 3)
# A moderate rate: ten always-running threads keep every CPU's ring buffer
# busy, and samples the kernel drops when a buffer is full come in bursts
# (4 kHz per CPU still gives > 10^4 samples).
# And small samples in large buffers: what is checked is whose samples
# they are, not the stacks (which still reach the root on >= 99.9% with 2
# KiB of stack here). With the default 16 KiB stack copy and 512 pages an
# ASan pmutop at load 25 lost 50-64% of the samples, with 2 KiB and 2048
# pages none (lost samples widen the bound, see thread_shares). 2048 pages
# (8 MiB per CPU) are more than a non-root user may lock: root only.
pick_event
if [[ $EV == cycles ]]; then PERIOD=1000000; else PERIOD=250000; fi
BUF=(--stack-size 2048)
(( EUID == 0 )) && BUF+=(-m 2048)
info "event $EV, period $PERIOD, ${BUF[*]}, the workload's whole run (${DUR} s)"

THREADS_CPU_FILE=$T/threads.cpu THREADS_COUNT_EVENT=$EV run_pmutop threads -e "$EV" --period "$PERIOD" "${BUF[@]}" \
	--dump threads.pb.gz -- "$W/threads" "$DUR"
show threads.err
(( RC == 0 )) || fail "pmutop exited with status $RC"
[[ -s threads.pb.gz ]] || fail "no profile written"
[[ -s threads.cpu ]] || fail "the workload wrote no counts (THREADS_CPU_FILE)"

raw_samples threads.pb.gz >samples.txt || fail "go tool pprof -raw cannot read the profile"
pprof -tags threads.pb.gz 2>/dev/null | sed -n '1,14p' | sed 's/^/    | /'

lost=$(sed -n 's/.*; lost \([0-9]*\),.*/\1/p' threads.err | head -n 1)
thread_shares samples.txt threads.cpu "$EV" "${lost:-0}" "$PERIOD" || fail "per-thread shares or labels wrong ($EV)"
pass "ten worker threads each within 4 sigma of the $EV it ran"
