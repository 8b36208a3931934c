#!/usr/bin/env bash
# t_fault_overflow.sh - ring-buffer overflow forced: lost samples reported.
#
# `--mmap-pages 1 --period 10000` (task-clock: 100,000 samples/s per
# thread) on ten busy threads fills the one-page buffers far faster than
# pmutop drains them. Two runs:
#   small - --stack-size 512: some samples fit, most are dropped;
#   big   - the default 16 KiB stack copy: a sample record is larger than
#           the whole buffer, so every sample is dropped.
# Each: no crash, exit 0, the summary reports "lost N" with N > 0 and the
# WARNING, and the profile (written even with 0 samples) is readable by go
# tool pprof with the same lost count in its comments.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
e2e_init
need_wl threads

DUR=$(quick_or 1.5 1)

# check NAME MIN_SAMPLES
check() {
	local lost samples clost
	show "$1.err" 4
	(( RC == 0 )) || problem "$1: exit status $RC, want 0"
	lost=$(sed -n 's/.*; lost \([0-9]*\),.*/\1/p' "$1.err")
	samples=$(sed -n 's/^pmutop: \([0-9]*\) samples of.*/\1/p' "$1.err")
	info "$1: summary: ${samples:-?} samples, lost ${lost:-?}"
	(( ${lost:-0} > 0 )) || problem "$1: the summary reports no lost samples"
	grep -q 'WARNING: the kernel dropped' "$1.err" || problem "$1: no WARNING about dropped samples"
	(( ${samples:-0} >= $2 )) || problem "$1: ${samples:-0} samples, want >= $2"
	if [[ ! -s $1.pb.gz ]]; then
		problem "$1: no profile written"
	elif ! pprof -comments "$1.pb.gz" >"$1.comments" 2>&1; then
		problem "$1: go tool pprof cannot read the profile"
		show "$1.comments"
	else
		clost=$(sed -n 's/.* lost=\([0-9]*\).*/\1/p' "$1.comments")
		info "$1: profile comment: lost=${clost:-?}"
		[[ ${clost:-x} == "${lost:-y}" ]] || problem "$1: the profile says lost=${clost:-none}, the summary ${lost:-none}"
		(( $2 == 0 )) || top_flat "$1.pb.gz" >/dev/null || problem "$1: pprof -top cannot read it"
	fi
}

run_pmutop small -e task-clock --mmap-pages 1 --period 10000 --stack-size 512 \
	--duration "$DUR" --dump small.pb.gz -- "$W/threads" 30
check small 1
run_pmutop big -e task-clock --mmap-pages 1 --period 10000 \
	--duration "$DUR" --dump big.pb.gz -- "$W/threads" 30
check big 0

(( ERRS == 0 )) || fail "$ERRS problem(s) with an overflowing ring buffer"
pass "ring-buffer overflow: lost samples counted in the summary and the profile"
