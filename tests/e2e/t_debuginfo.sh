#!/usr/bin/env bash
# t_debuginfo.sh - file:line and inlined frames from DWARF, also from
# separate debug files.
#
# inline_hot (-O2 -g) spends its time in spin_leaf, inlined into spin_mid,
# inlined into outer_caller (see the workload's header). Checked with
# `go tool pprof`:
#   1. as built: -traces shows spin_leaf (inline) / spin_mid (inline) /
#      outer_caller / main, innermost first; -lines -top puts each at its
#      marked source line; the mapping says [FN] and, for libc when its
#      debug file is installed, [FL][LN][IN].
#   2. debug info split off with objcopy (--only-keep-debug, --strip-debug,
#      --add-gnu-debuglink): found next to the binary by .gnu_debuglink.
#   3. the same debug file only under DIR/.build-id/xx/rest.debug, DIR
#      given in PMUTOP_DEBUGINFO_PATH, the binary without a debuglink:
#      found by build-id; and without PMUTOP_DEBUGINFO_PATH there are no
#      lines (so it really was the build-id lookup).
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl inline_hot
command -v objcopy >/dev/null || skip "objcopy (binutils) not installed"
command -v readelf >/dev/null || skip "readelf (binutils) not installed"

DUR=$(quick_or 3 2)
SRC=$E2E_REPO/tests/workloads/inline_hot.c
line_of() { grep -n "$1" "$SRC" | head -1 | cut -d: -f1; }
L_LEAF=$(line_of '/\* LINE_LEAF')
L_MID=$(line_of '/\* LINE_MID')
L_OUTER=$(line_of '/\* LINE_OUTER')
info "source lines: spin_leaf $L_LEAF, spin_mid $L_MID, outer_caller $L_OUTER"

# check_chain NAME PROFILE: the inline chain and the lines.
check_chain() {
	pprof -traces "$2" >"$1.traces" 2>&1 || fail "$1: go tool pprof -traces failed"
	awk '
	/^ +[0-9.]+[a-z]*s +spin_leaf \(inline\)$/ { want = 1; next }
	want == 1 { want = ($1 == "spin_mid" && $2 == "(inline)") ? 2 : 0; next }
	want == 2 { want = ($1 == "outer_caller" && NF == 1) ? 3 : 0; next }
	want == 3 { if ($1 == "main") found = 1; want = 0; next }
	END { exit !found }' "$1.traces" || {
		show "$1.traces" 30
		fail "$1: no trace spin_leaf (inline) / spin_mid (inline) / outer_caller / main"
	}
	pprof -lines -top -nodecount=50 "$2" >"$1.lines" 2>&1 || fail "$1: -lines failed"
	grep -qE "spin_leaf .*inline_hot\.c:$L_LEAF \(inline\)" "$1.lines" ||
		{ show "$1.lines" 20; fail "$1: spin_leaf not at inline_hot.c:$L_LEAF"; }
	grep -qE "spin_mid .*inline_hot\.c:$L_MID \(inline\)" "$1.lines" ||
		fail "$1: spin_mid not at inline_hot.c:$L_MID"
	grep -qE "outer_caller .*inline_hot\.c:$L_OUTER\$" "$1.lines" ||
		fail "$1: outer_caller not at inline_hot.c:$L_OUTER"
	info "$1: inline chain and lines $L_LEAF/$L_MID/$L_OUTER found"
}

# 1. Debug info in the binary.
run_pmutop built -e task-clock --duration "$DUR" --dump built.pb.gz -- "$W/inline_hot" $((DUR + 5))
(( RC == 0 )) || { show built.err; fail "pmutop exited with status $RC"; }
check_chain built built.pb.gz
pprof -raw built.pb.gz >built.raw 2>&1
show "$T/built.raw" 0
if ! grep -E '^[0-9]+: .*inline_hot ' built.raw | grep -q '\[FN\]'; then
	# Say which locations made it so (for a failure that does not repeat).
	sed -n '/^Mappings/,$p' built.raw | head -n 5 | sed 's/^/    | /'
	grep -E '^ +[0-9]+: 0x[0-9a-f]+ M=1 ' built.raw | grep -vE 'M=1 [A-Za-z_]' | head -n 5 | sed 's/^/    | unnamed: /'
	show built.err 8
	fail "the inline_hot mapping lacks [FN] (has_functions)"
fi
if grep -E '^[0-9]+: .*libc\.so' built.raw | grep -q '\[FL\]\[LN\]\[IN\]'; then
	info "libc mapping: [FL][LN][IN] (libc6-dbg found by build-id)"
fi

# 2. Separate debug file by .gnu_debuglink.
mkdir -p split && cp "$W/inline_hot" split/inline_hot
objcopy --only-keep-debug split/inline_hot split/inline_hot.debug &&
	objcopy --strip-debug --add-gnu-debuglink=split/inline_hot.debug split/inline_hot ||
	fail "objcopy could not split the debug info"
readelf -S split/inline_hot | grep -q '\.debug_info' && fail "split/inline_hot still has .debug_info"
run_pmutop link -e task-clock --duration "$DUR" --dump link.pb.gz -- ./split/inline_hot $((DUR + 5))
(( RC == 0 )) || { show link.err; fail "pmutop (debuglink) exited with status $RC"; }
check_chain debuglink link.pb.gz

# 3. By build-id only.
mkdir -p bid
cp split/inline_hot bid/inline_hot
objcopy --remove-section=.gnu_debuglink bid/inline_hot || fail "cannot remove .gnu_debuglink"
BID=$(readelf -n bid/inline_hot | awk '/Build ID:/ { print $3 }')
[[ ${#BID} -ge 8 ]] || fail "inline_hot has no GNU build-id"
mkdir -p "dbg/.build-id/${BID:0:2}"
cp split/inline_hot.debug "dbg/.build-id/${BID:0:2}/${BID:2}.debug"
PMUTOP_DEBUGINFO_PATH=$T/dbg run_pmutop bid -e task-clock --duration "$DUR" --dump bid.pb.gz \
	-- ./bid/inline_hot $((DUR + 5))
(( RC == 0 )) || { show bid.err; fail "pmutop (build-id) exited with status $RC"; }
check_chain build-id bid.pb.gz

run_pmutop nodbg -e task-clock --duration 1 --dump nodbg.pb.gz -- ./bid/inline_hot 6
pprof -lines -top nodbg.pb.gz >nodbg.lines 2>&1
! grep -q 'inline_hot\.c:' nodbg.lines ||
	fail "lines found without the debug file's directory: the build-id test proves nothing"
pprof -top nodbg.pb.gz | grep -q outer_caller || fail "without debug info outer_caller (symbol) missing"
pass "inline chain and file:line from DWARF in the binary, by debuglink and by build-id"
