#!/usr/bin/env bash
# t_fault_garbage.sh - unwinding through garbage stacks and corrupt frames.
#
# garbage_stack runs five threads, each spinning in corrupt_and_spin() on a
# frame whose saved RBP / return address it overwrote (random words, a
# frame that is its own caller, a fake chain into real code, zeros, a chain
# pointing the wrong way), above a stack area full of random words. pmutop
# must unwind every sample without crashing or looping, stop cleanly
# (counting "bad frame" among the unwind outcomes in the summary and in the
# profile's comments), exit 0, and write a profile go tool pprof reads with
# corrupt_and_spin as the leaf of nearly every sample.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
e2e_init
need_wl garbage_stack

DUR=$(quick_or 2 1)

run_pmutop garbage -e task-clock --period 250000 --duration "$DUR" --dump garbage.pb.gz \
	-- "$W/garbage_stack" 30
show garbage.err
(( RC == 0 )) || problem "exit status $RC, want 0"
grep -E '^pmutop: unwind:' garbage.err | grep -q 'bad frame' ||
	problem "the summary does not count bad frames"
if readable garbage.pb.gz; then
	s=$(share corrupt_and_spin)
	info "corrupt_and_spin: ${s}% of the samples as leaf"
	awk -v s="$s" 'BEGIN { exit !(s >= 90) }' || problem "corrupt_and_spin has only ${s}% (want >= 90)"
	pprof -comments garbage.pb.gz >comments.txt 2>/dev/null
	bad=$(awk -F': ' '/unwind bad frame/ { print $2 + 0 }' comments.txt)
	info "profile comment: unwind bad frame: ${bad:-none}"
	(( ${bad:-0} > 0 )) || problem "the profile's comments do not count bad frames"
	raw_samples garbage.pb.gz >samples.txt || problem "pprof -raw cannot read it"
	depth=$(awk -F'\t' '{ n = split($4, f, ";"); if (n > m) m = n } END { print m + 0 }' samples.txt)
	info "deepest stack: $depth frames"
	(( depth <= 514 )) || problem "a stack of $depth frames (more than --max-depth, 512)"
fi

(( ERRS == 0 )) || fail "$ERRS problem(s) with garbage stacks"
pass "garbage stacks: unwinding stops cleanly, bad frames counted, profile readable"
