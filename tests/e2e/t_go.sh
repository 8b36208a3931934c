#!/usr/bin/env bash
# t_go.sh - a Go binary (built by Debian's golang-go): no .eh_frame, Go's
# frame pointers, Go symbol names and Go's DWARF (no .debug_aranges).
#
# go_shares runs main.hotOne and main.hotThree with work 1:3. Profiled with
# -e cycles (task-clock where there is no PMU): both show as flat functions
# with 25% / 75% of their sum (within 4 pp), their stacks unwind through
# main.main to runtime.main (Go's leaves have no frame: only its
# .debug_frame knows main.main is the caller), and -lines puts them in
# go_shares.go.
source "$(dirname "$0")/lib.sh"
e2e_init
[[ -x $WORKLOAD_DIR/go_shares ]] ||
	skip "go_shares not built (golang-go missing when the workloads were built?)"
W=$WORKLOAD_DIR
readelf -S "$W/go_shares" 2>/dev/null | grep -q '\.eh_frame ' &&
	info "note: this Go binary has an .eh_frame"

DUR=$(quick_or 4 2)
pick_event
run_pmutop go -e "$EV" --duration "$DUR" --dump go.pb.gz -- "$W/go_shares" $((DUR + 5))
show go.err 5
(( RC == 0 )) || fail "pmutop exited with status $RC"
top_flat go.pb.gz >flat.txt || fail "go tool pprof cannot read the profile"
show "$T/top.txt" 12
awk -F'\t' '
{ flat[$1] += $2 }
END {
	a = flat["main.hotOne"]; b = flat["main.hotThree"]
	if (a <= 0 || b <= 0) { print "  main.hotOne / main.hotThree missing"; exit 1 }
	got = 100 * a / (a + b)
	printf "  main.hotOne %.2f%% of the two (want 25%%), main.hotThree %.2f%%\n", got, 100 - got
	exit (got < 21 || got > 29)
}' flat.txt || fail "main.hotOne/main.hotThree shares are not 1:3 (within 4 pp)"

pprof -traces go.pb.gz >traces.txt 2>&1 || fail "go tool pprof -traces failed"
# Of the samples with a main.hot* leaf, the share whose next frames are
# main.main then runtime.main, weighted by samples (a few one-sample stacks
# through Go's async preemption, whose goroutine state is gone by the time
# pmutop reads it, lose the frameless leaf's caller).
awk 'function ns(v) { if (v ~ /ms$/) return v * 1e6; if (v ~ /us$/) return v * 1e3;
                      if (v ~ /ns$/) return v + 0; if (v ~ /s$/) return v * 1e9; return v }
     /main\.hot(One|Three)$/ && NF >= 2 { leaf = 1; step = 0; w = ns($1); n += w; next }
     leaf && step == 0 { step = ($NF == "main.main") ? 1 : -1; next }
     leaf && step == 1 { if ($NF == "runtime.main") ok += w; leaf = 0; next }
     /^-+\+-+/ { leaf = 0 }
     END { printf "  %.1f%% of main.hot* samples go main.main -> runtime.main\n", n ? 100 * ok / n : 0
           exit !(n > 0 && ok * 100 >= n * 98) }' traces.txt ||
	{ show traces.txt 20; fail "main.hot* stacks do not unwind through main.main to runtime.main"; }
pprof -lines -top go.pb.gz >lines.txt 2>&1
grep -qE 'main\.hotThree .*go_shares\.go:[0-9]+' lines.txt ||
	{ show lines.txt 12; fail "no file:line for main.hotThree from Go's DWARF"; }
pass "Go program: main.hotOne/main.hotThree 1:3, stacks through main.main to runtime.main, file:line ($EV)"
