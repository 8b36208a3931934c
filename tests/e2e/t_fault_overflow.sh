#!/usr/bin/env bash
# t_fault_overflow.sh - ring-buffer overflow forced: lost samples reported.
#
# `--mmap-pages 1 --period 10000` (task-clock: 100,000 samples/s per
# thread) on ten busy threads, pmutop SIGSTOPped for 0.5 s meanwhile: the
# one-page buffers overflow however loaded the machine is. Three runs:
#   small  - --stack-size 512: some samples fit, most are dropped;
#   big    - the default 16 KiB stack copy would make a sample record larger
#            than the whole buffer, and the kernel drops such records without
#            a LOST record (it writes one only in front of a record that
#            fits): pmutop lowers the stack copy to fit two samples and says
#            so, so samples arrive and the losses are counted;
#   refuse - --stack-size 16384 given too: pmutop refuses before starting
#            the command, naming the --mmap-pages and --stack-size that fit.
# small and big: no crash, exit 0, the summary reports "lost N" with N > 0
# and the WARNING, and the profile is readable by go tool pprof with the
# same lost count in its comments.
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

# A busy target pmutop attaches to; pmutop is SIGSTOPped for a while once it
# samples, so that its one-page buffers overflow whatever the machine's load
# (left running, it drained them fast enough on a loaded VM, where the
# target got little CPU, and nothing was lost: timing luck). It samples
# until SIGINT, so seeing it attached does not race against its end.
start_bg "$W/threads" 120
TGT=$BG_PID
wait_started "$TGT"

# overflow NAME ARGS...: sample TGT with one-page buffers, stop pmutop for
# 0.5 s while the target runs on, resume it, then stop it with SIGINT.
overflow() {
	local name=$1
	shift
	pm_start "$name" -e task-clock --mmap-pages 1 --period 10000 --dump "$name.pb.gz" \
		-p "$TGT" "$@"
	pm_wait_sampling 30 || problem "$name: pmutop did not attach"
	kill -STOP "$PM"
	sleep 0.5
	kill -CONT "$PM"
	sleep "$DUR"
	kill -INT "$PM"
	pm_finish 60
}

overflow small --stack-size 512
check small 1
overflow big
check big 1
grep -qE "copying [0-9]+ bytes of stack per sample" big.err ||
	problem "big: no note that the stack copy was lowered to fit the buffer"
alive "$TGT" || problem "the target did not survive"

marker=$T/refuse-ran
run_pmutop refuse -e task-clock --mmap-pages 1 --stack-size 16384 --period 10000 \
	--duration "$DUR" --dump refuse.pb.gz -- sh -c "touch $marker; exec $W/threads 30"
show refuse.err 3
(( RC != 0 )) || problem "refuse: exit status 0 with samples that can never fit"
grep -qE -- "--mmap-pages 1 .*cannot hold two samples.*use --mmap-pages [0-9]+ or more, or --stack-size [0-9]+ or less" refuse.err ||
	problem "refuse: the error does not say which --mmap-pages or --stack-size would fit"
[[ -e $marker ]] && problem "refuse: the command was started anyway"
[[ -e refuse.pb.gz ]] && problem "refuse: a profile was written"

(( ERRS == 0 )) || fail "$ERRS problem(s) with an overflowing ring buffer"
pass "ring-buffer overflow: lost samples counted in the summary and the profile"
