#!/usr/bin/env bash
# t_unwind_fast.sh - the fast unwinding path agrees with libunwind frame for frame.
#
# With PMUTOP_UNWIND_VERIFY=1 every sample the fast path (cached CFI rules
# applied to the stack copy) unwinds is unwound again by libunwind, and the
# summary says how many differ. Run it on deep stacks with and without frame
# pointers, on threads, and across a dlopen'ed library: nothing may differ,
# and the fast path must have handled most samples (otherwise it is not
# being tested at all).
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl deep_nofp deep_fp shares threads dl_main libhot.so

DUR=$(quick_or 3 2)
for wl in "deep_nofp $DUR 120" "deep_fp $DUR 120" "shares $DUR" "threads $DUR" "dl_main $DUR 1"; do
	set -- $wl
	name=$1
	PMUTOP_UNWIND_VERIFY=1 run_pmutop "$name" -e task-clock --period 250000 --dump "$name.pb.gz" \
		-- "$W/$name" "${@:2}"
	(( RC == 0 )) || { show "$name.err"; fail "pmutop failed on $name"; }
	line=$(grep "unwind check:" "$name.err") || { show "$name.err"; fail "no unwind check line for $name"; }
	total=$(grep -o '^pmutop: [0-9]* samples' "$name.err" | grep -o '[0-9]*')
	checked=$(sed -E 's/.*check: ([0-9]+) samples.*/\1/' <<<"$line")
	differ=$(sed -E 's/.*, ([0-9]+) differ.*/\1/' <<<"$line")
	info "$name: $checked of $total samples unwound by both paths, $differ differ"
	(( differ == 0 )) || fail "$name: the fast path and libunwind disagree on $differ samples"
	(( total > 0 && checked * 100 >= total * 90 )) ||
		fail "$name: the fast path handled only $checked of $total samples"
done
pass "fast path and libunwind agree on every sample"
