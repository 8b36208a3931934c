#!/usr/bin/env bash
# t_unwind_root.sh - "reached root" only for stacks whose outermost frame is
# where a thread starts (issue 31 item 4).
#
# The kernel's frame-pointer chain (--unwind fp) through code built without
# frame pointers stops wherever RBP's last value leads: every such stack
# used to be counted as "reached root" (Python under --unwind fp: 100.0%,
# with outermost frames "[heap]+0xc3a5f" and "0x5"). Checked, from the
# summary line and the profile's comments (what pprof users read):
#   - deep_nofp (no frame pointers) under --unwind fp: at most 10% reach
#     the root; the rest are "bad frame" (the chain left the code) or
#     "ended before root" (it stopped in code where no thread starts);
#   - deep_fp under the default CFI unwinder: at least 90% reach the root
#     (_start and clone3 are roots by their CFI, whatever their names).
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl deep_fp deep_nofp

DUR=$(quick_or 2 1)

# comment_count FILE NAME: the "unwind NAME: N" comment of a profile.
comment_count() {
	pprof -raw "$1" 2>/dev/null | awk -v k="unwind $2:" \
		'index($0, k) { v = $NF } END { print v + 0 }'
}

info "== deep_nofp under --unwind fp"
run_pmutop nofp --unwind fp --dump nofp.pb.gz -- "$W/deep_nofp" "$DUR" 20
show nofp.err 8
(( RC == 0 )) || fail "deep_nofp --unwind fp: exit status $RC"
root=$(comment_count nofp.pb.gz "reached root")
bad=$(comment_count nofp.pb.gz "bad frame")
short=$(comment_count nofp.pb.gz "ended before root")
depth=$(comment_count nofp.pb.gz "max depth")
total=$((root + bad + short + depth))
info "reached root $root, bad frame $bad, ended before root $short, max depth $depth"
(( total >= 100 )) || fail "only $total samples with an unwind outcome in nofp.pb.gz"
(( root * 10 <= total )) ||
	fail "$root of $total frame-pointer chains through code without frame pointers counted as reaching the root"
grep -qE 'unwind: .*(bad frame|ended before root)' nofp.err ||
	fail "the summary does not say how the chains ended: $(grep 'unwind:' nofp.err)"

info "== deep_fp under the default unwinder"
run_pmutop fp --dump fp.pb.gz -- "$W/deep_fp" "$DUR" 20
show fp.err 8
(( RC == 0 )) || fail "deep_fp: exit status $RC"
root=$(comment_count fp.pb.gz "reached root")
short=$(comment_count fp.pb.gz "ended before root")
total=0
for k in "reached root" "cut by stack copy" "no unwind info" "bad frame" "max depth" \
	"no user registers" "ended before root"; do
	total=$((total + $(comment_count fp.pb.gz "$k")))
done
info "reached root $root of $total (ended before root $short)"
(( total >= 100 )) || fail "only $total samples with an unwind outcome in fp.pb.gz"
(( root * 10 >= total * 9 )) || fail "only $root of $total CFI walks of deep_fp reached the root"

pass "frame-pointer chains that end in garbage are not counted as reaching the root; CFI walks still are"
