#!/usr/bin/env bash
# t_hostile_dwarf.sh - a debug file that takes seconds to load, or whose
# lookups take seconds each, does not hold up the end of a run (issue 17).
#
# inline_hot, stripped, gets a separate debug file found by build-id under
# a PMUTOP_DEBUGINFO_PATH directory: its own DWARF plus two million
# generated compile units, each a DW_TAG_compile_unit over 16 bytes with its
# .debug_aranges entry (valid DWARF 4, 144 MB, made here in a few seconds).
# Loading it - libdwfl's address index over every CU - takes libdw 17 s of
# CPU on this 2-CPU VM and cannot be interrupted: before the loader thread,
# `--duration 1` here ended 75-84 s after it started (load 8-26). pmutop
# attaches with -p as root. Cases:
#   duration  --duration 1
#   term      SIGTERM 1 s into sampling, --debuginfo-wait 2
#   twice     SIGTERM, then SIGTERM again once pmutop has taken the first:
#             the second cuts the wait for the load short
# Then a second debug file for the same build, which loads at once (one CU,
# its .debug_aranges entry, a small line table) but whose CU holds 40
# million childless DIEs before the functions' DW_TAG_subprograms: each
# address's dwarf_getscopes, and the walk back up from its scope, reads all
# of them inside libdw (2-3 s of CPU per address; ~10 addresses sampled
# here, 27 s when the lookups ran on the session's thread):
#   lookup       --duration 1 --debuginfo-wait 2
#   lookup_term  --duration 1, then one SIGTERM once pmutop says it waits
#                for debug info: it cuts the wait short
#   stacks       --stacks --debuginfo-wait 2: the target runs while its
#                lookups are read, and the frames wait 2 s at most
# and a third whose CU nests 300,000 lexical blocks around the functions
# (5 MB): libdw's scope walk recursed once per level and overflowed the
# stack, killing pmutop (SIGSEGV, no profile):
#   deep         --duration 1: status 0, file:line from the line table,
#                and the summary names the file skipped for inlined frames
# Each time pmutop ends with status 0, writes a profile `go tool pprof`
# reads with the target's function names, leaves the target running and
# untraced, and says that locations were written without file:line - the
# DWARF still being read after the 10 s pmutop waits at the end ("still
# being read"), or cut short ("interrupted"): which also shows that the
# file was slow to read in this run, so the time bound tested something;
# for the second file, as many as the profile has without a line.
# The bound: 18 s after the stop (10 s of waiting, the rest for a loaded VM
# and ASan: 3.4 s measured at load 8, 7.4 s for ASan at load 24), where the
# load alone needs 17 s of CPU; 5 s from the SIGTERM that cuts the wait.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl inline_hot
command -v objcopy >/dev/null || skip "objcopy (binutils) not installed"
command -v readelf >/dev/null || skip "readelf (binutils) not installed"
(( EUID == 0 )) || skip "needs root (pmutop as root against a hostile target is the point)"

NCU=2000000
WAIT=10 # session.c FINAL_LOAD_WAIT_MS
BOUND=$((WAIT + 8))
# term and lookup wait --debuginfo-wait 2 s instead: the option's bound, and
# 16 s less of make test's time (duration keeps the default's 10).
SHORT=2
SHORT_BOUND=$((SHORT + 8))

mkdir -p split dbg
cp "$W/inline_hot" split/inline_hot
objcopy --only-keep-debug split/inline_hot own.debug || fail "objcopy --only-keep-debug failed"
objcopy --strip-debug split/inline_hot || fail "objcopy --strip-debug failed"
BID=$(readelf -n split/inline_hot | awk '/Build ID:/ { print $3 }')
[[ -n $BID ]] || skip "inline_hot has no GNU build-id"
mkdir -p "dbg/.build-id/${BID:0:2}"
BIG=dbg/.build-id/${BID:0:2}/${BID:2}.debug

# own.debug's DWARF with NCU compile units appended to .debug_info, their
# abbreviation after .debug_abbrev's, their entries after .debug_aranges'.
t0=$(now)
for s in info abbrev aranges; do
	objcopy --dump-section ".debug_$s=$s.bin" own.debug scratch.o ||
		fail "cannot read .debug_$s of inline_hot"
done
python3 - "$NCU" <<-'EOF' || fail "cannot generate the compile units"
import struct, sys
m = int(sys.argv[1])
info, abbrev, ar = (open(n + ".bin", "rb").read() for n in ("info", "abbrev", "aranges"))
aoff, base = len(abbrev), len(info)
# abbreviation 1: DW_TAG_compile_unit, no children, DW_AT_low_pc addr, DW_AT_high_pc data4
abbrev += bytes([1, 0x11, 0, 0x11, 0x01, 0x12, 0x06, 0, 0, 0])
cu = struct.Struct("<IHIBBQI")       # unit_length, version 4, abbrev offset, address size, code, low_pc, high_pc
ars = struct.Struct("<IHIBB4xQQQQ")  # unit_length, version 2, CU offset, 8, 0, padding, one range, terminator
ib, ab = bytearray(cu.size * m), bytearray(ars.size * m)
for k in range(m):
    lo = 0x10000000 + 16 * k        # above the program's code: nothing samples there
    cu.pack_into(ib, k * cu.size, cu.size - 4, 4, aoff, 8, 1, lo, 16)
    ars.pack_into(ab, k * ars.size, ars.size - 4, 2, base + k * cu.size, 8, 0, lo, 16, 0, 0)
open("info.bin", "wb").write(info + ib)
open("abbrev.bin", "wb").write(abbrev)
open("aranges.bin", "wb").write(ar + ab)
EOF
objcopy --update-section .debug_info=info.bin --update-section .debug_abbrev=abbrev.bin \
	--update-section .debug_aranges=aranges.bin own.debug "$BIG" || fail "objcopy --update-section failed"
rm -f info.bin abbrev.bin aranges.bin scratch.o
info "debug file: $NCU compile units added, $(( $(stat -c %s "$BIG") / 1000000 )) MB, made in $(elapsed "$t0") s"
export PMUTOP_DEBUGINFO_PATH=:.debug:$T/dbg

# target_ok NAME PID: running, not stopped, not traced.
target_ok() {
	kill -0 "$2" 2>/dev/null || fail "$1: the target is gone"
	[[ $(awk '/^State:/ { print $2 }' "/proc/$2/status") != [tT] ]] ||
		fail "$1: the target is left stopped"
	[[ $(awk '/^TracerPid:/ { print $2 }' "/proc/$2/status") == 0 ]] ||
		fail "$1: the target is left traced"
}

# profile_ok NAME RC WHY: status 0, a profile with the target's names, and
# the end said why locations lack file:line (WHY: a pattern).
profile_ok() {
	(( $2 == 0 )) || { show "$1.err"; fail "$1: pmutop exited with status $2"; }
	pprof -top "$1.pb.gz" >"$1.top" 2>&1 || { show "$1.top"; fail "$1: pprof cannot read the profile"; }
	grep -q outer_caller "$1.top" || { show "$1.top"; fail "$1: function names missing"; }
	grep -qE "$3.*written without file:line" "$1.err" ||
		{ show "$1.err"; fail "$1: no '$3 ... written without file:line' note (did the load end in time?)"; }
	info "$1: $(grep 'written without file:line' "$1.err")"
}

# within NAME T0 SECS: pmutop ended within SECS of T0 (the stop; its start for --duration).
within() {
	local el
	el=$(elapsed "$2")
	info "$1: ended $el s after the stop"
	awk -v e="$el" -v b="$3" 'BEGIN { exit !(e < b) }' ||
		{ show "$1.err"; fail "$1: ended $el s after the stop (bound $3 s)"; }
}

# wait_sampling PID: until PID has its perf events open (at most 30 s), then 1 s more.
wait_sampling() {
	local _
	for _ in $(seq 300); do
		ls -l "/proc/$1/fd" 2>/dev/null | grep -q 'perf_event' && break
		sleep 0.1
	done
	sleep 1
}

# term_taken PID: until PID has taken its pending SIGTERM (ShdPnd bit 15; at most 30 s).
term_taken() {
	local _ p
	for _ in $(seq 300); do
		p=$(awk '/^ShdPnd:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || return 0
		[[ -z $p ]] && return 0
		(( (16#$p & 0x4000) == 0 )) && return 0
		sleep 0.1
	done
}

# 1. --duration 1.
start_bg ./split/inline_hot 120
TP=$BG_PID
wait_started "$TP"
t0=$(now)
PM_TIMEOUT=100 run_pmutop duration -p "$TP" -e task-clock --duration 1 --dump duration.pb.gz
within duration "$t0" $((1 + BOUND))
profile_ok duration "$RC" "still being read after"
target_ok duration "$TP"

# 2. SIGTERM 1 s into sampling (no --duration).
# 3. SIGTERM twice: the second once pmutop has taken the first.
for name in term twice; do
	info "\$ pmutop -p $TP -e task-clock --dump $name.pb.gz   (SIGTERM 1 s into sampling$([[ $name == twice ]] && echo ', again once it is taken'))"
	# Not under timeout(1): it would pass each signal on twice (to pmutop and its group).
	short=()
	[[ $name == term ]] && short=(--debuginfo-wait "$SHORT")
	env --default-signal=TERM "$PMUTOP" -p "$TP" -e task-clock "${short[@]}" \
		--dump "$name.pb.gz" >"$name.out" 2>"$name.err" &
	PM=$!
	E2E_BG_PIDS+=("$PM")
	wait_sampling "$PM"
	t0=$(now)
	kill -TERM "$PM"
	if [[ $name == twice ]]; then
		# Only once the first is taken: two pending SIGTERMs are one.
		term_taken "$PM"
		sleep 0.2
		kill -TERM "$PM" 2>/dev/null
	fi
	wait "$PM"
	RC=$?
	if [[ $name == term ]]; then
		within "$name" "$t0" "$SHORT_BOUND"
		profile_ok "$name" "$RC" "still being read after $SHORT.0 s"
	else
		within "$name" "$t0" "$BOUND"
		profile_ok "$name" "$RC" "interrupted while reading debug info"
	fi
	target_ok "$name" "$TP"
done

# The other files: own.debug's sections but for the DWARF, one CU made here.
NFILL=40000000
NDEEP=300000
CUT=5 # seconds from the SIGTERM that cuts the final wait to the end
nm --defined-only -S split/inline_hot | awk '$3 ~ /^[tT]$/ && NF >= 4' >syms.txt
[[ -s syms.txt ]] || fail "no function symbols in inline_hot"

# one_cu DIR MODE N: DIR/.build-id/xx/rest.debug with one CU over inline_hot's
# functions, before them N childless DIEs (MODE wide) or N nested lexical
# blocks around them (MODE deep).
one_cu() {
	local t0 out=$1/.build-id/${BID:0:2}/${BID:2}.debug
	mkdir -p "$(dirname "$out")"
	t0=$(now)
	python3 - "$2" "$3" <<-'EOF' || fail "cannot generate the $2 CU"
import struct, sys
mode, nfill = sys.argv[1], int(sys.argv[2])
syms = sorted((int(a, 16), int(sz, 16), name)
              for a, sz, _, name in (l.split()[:4] for l in open("syms.txt")))
lo, hi = syms[0][0], max(a + s for a, s, _ in syms)
def sleb(v):
    out = bytearray()
    while True:
        b, v = v & 0x7f, v >> 7
        if (v == 0 and not b & 0x40) or (v == -1 and b & 0x40):
            return bytes(out + bytes([b]))
        out.append(b | 0x80)
# abbreviations: 1 DW_TAG_compile_unit with children (name string, language data1,
# low_pc addr, high_pc data8, stmt_list sec_offset); 2 DW_TAG_variable, no children,
# no attributes (one byte per DIE); 3 DW_TAG_subprogram (name, low_pc, high_pc);
# 4 DW_TAG_lexical_block with children (low_pc, high_pc)
abbrev = bytes([1, 0x11, 1, 0x03, 0x08, 0x13, 0x0b, 0x11, 0x01, 0x12, 0x07, 0x10, 0x17, 0, 0,
                2, 0x34, 0, 0, 0,
                3, 0x2e, 0, 0x03, 0x08, 0x11, 0x01, 0x12, 0x07, 0, 0,
                4, 0x0b, 1, 0x11, 0x01, 0x12, 0x07, 0, 0, 0])
body = bytearray([1]) + b"hot.c\0" + bytes([0x0c]) + struct.pack("<QQI", lo, hi - lo, 0)
if mode == "wide":
    body += b"\x02" * nfill
else:
    body += (bytes([4]) + struct.pack("<QQ", lo, hi - lo)) * nfill
for a, s, name in syms:
    body += bytes([3]) + name.encode() + b"\0" + struct.pack("<QQ", a, max(s, 1))
body += b"\0" * (1 if mode == "wide" else nfill + 1)
info = struct.pack("<IHIB", 7 + len(body), 4, 0, 8) + body                 # DWARF 4 CU header
aranges = struct.pack("<IHIBB4xQQQQ", 44, 2, 0, 8, 0, lo, hi - lo, 0, 0)
# line table v4: min_inst 1, max_ops 1, default_is_stmt, line_base -5, line_range 14,
# opcode_base 13; no include directory; one file; a row at each function's start
hdr = bytes([1, 1, 1, 0xfb, 14, 13, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1]) + b"\0hot.c\0\0\0\0\0"
prog, line = bytearray(), 1
for k, (a, s, name) in enumerate(syms):
    prog += bytes([0, 9, 2]) + struct.pack("<Q", a) + bytes([3]) + sleb(10 * (k + 1) - line) + bytes([1])
    line = 10 * (k + 1)
prog += bytes([0, 9, 2]) + struct.pack("<Q", hi) + bytes([0, 1, 1])
lp = struct.pack("<HI", 4, len(hdr)) + hdr + prog
for n, b in (("info", info), ("abbrev", abbrev), ("aranges", aranges),
             ("line", struct.pack("<I", len(lp)) + lp)):
    open(n + ".bin", "wb").write(b)
EOF
	objcopy --update-section .debug_info=info.bin --update-section .debug_abbrev=abbrev.bin \
		--update-section .debug_aranges=aranges.bin --update-section .debug_line=line.bin \
		own.debug "$out" || fail "objcopy --update-section failed ($2 CU)"
	rm -f info.bin abbrev.bin aranges.bin line.bin
	info "debug file: one CU, $3 DIEs $2, $(( $(stat -c %s "$out") / 1000000 )) MB, made in $(elapsed "$t0") s"
}
one_cu dbg2 wide "$NFILL"
one_cu dbg3 deep "$NDEEP"
export PMUTOP_DEBUGINFO_PATH=:.debug:$T/dbg2

# lines_counted NAME: the summary's count of locations without file:line is
# the profile's: inline_hot's locations with line 0 (nothing else has DWARF here).
lines_counted() {
	local said got
	said=$(grep -oE '[0-9]+ locations written without file:line' "$1.err" | awk '{ print $1 }')
	pprof -raw "$1.pb.gz" >"$1.raw" 2>&1 || { show "$1.raw"; fail "$1: pprof -raw failed"; }
	grep -qE '^1: .*/inline_hot ' "$1.raw" || { show "$1.raw"; fail "$1: mapping 1 is not inline_hot"; }
	got=$(awk '/^Locations/ { f = 1; next } /^Mappings/ { f = 0 } f && / M=1 / && /:0 s=/' \
		"$1.raw" | wc -l)
	(( ${said:-0} > 0 && said == got )) ||
		{ show "$1.raw"; fail "$1: the summary says '$said' locations lack file:line, the profile has $got"; }
	info "$1: $got of inline_hot's locations without file:line, as the summary says"
}

# 4. --duration 1: the lookups run past the final wait.
t0=$(now)
PM_TIMEOUT=200 run_pmutop lookup -p "$TP" -e task-clock --duration 1 --debuginfo-wait "$SHORT" \
	--dump lookup.pb.gz
within lookup "$t0" $((1 + SHORT_BOUND))
profile_ok lookup "$RC" "still being read after $SHORT.0 s"
lines_counted lookup
target_ok lookup "$TP"

# 5. --duration 1, then one SIGTERM once pmutop says it waits for the lookups.
info "\$ pmutop -p $TP -e task-clock --duration 1 --dump lookup_term.pb.gz   (one SIGTERM once it waits for debug info)"
env --default-signal=TERM "$PMUTOP" -p "$TP" -e task-clock --duration 1 --dump lookup_term.pb.gz \
	>lookup_term.out 2>lookup_term.err &
PM=$!
E2E_BG_PIDS+=("$PM")
for _ in $(seq 300); do
	grep -qs 'waiting up to' lookup_term.err && break
	kill -0 "$PM" 2>/dev/null || break
	sleep 0.1
done
grep -q 'waiting up to' lookup_term.err ||
	{ show lookup_term.err; fail "lookup_term: pmutop did not say it waits for debug info"; }
t0=$(now)
kill -TERM "$PM"
wait "$PM"
RC=$?
within lookup_term "$t0" "$CUT"
profile_ok lookup_term "$RC" "interrupted while reading debug info"
lines_counted lookup_term
target_ok lookup_term "$TP"

# 6. --stacks asks the same lookups. Each thread is stopped only for its
# registers and stack, and the lines wait --debuginfo-wait at most: before,
# the target stayed stopped while libdw read (34 s, 0.14 s of its CPU
# meanwhile) and --stacks took as long as the lookups (34-52 s).
cpu_of() { awk '{ printf "%.2f", ($14 + $15) / 100 }' "/proc/$1/stat"; }
c0=$(cpu_of "$TP")
t0=$(now)
PM_TIMEOUT=100 run_pmutop stacks --stacks --debuginfo-wait "$SHORT" -p "$TP"
took=$(elapsed "$t0")
c1=$(cpu_of "$TP")
(( RC == 0 )) || { show stacks.err; fail "stacks: pmutop exited with status $RC"; }
grep -q outer_caller stacks.out || { show stacks.out; fail "stacks: no outer_caller in the stacks"; }
grep -qE "still being read after $SHORT.0 s: [0-9]+ frames? shown without file:line" stacks.err ||
	{ show stacks.err; fail "stacks: no note of the frames shown without file:line"; }
within stacks "$t0" "$SHORT_BOUND"
ran=$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.2f", b - a }')
info "stacks: --stacks took $took s; the target ran $ran s of CPU meanwhile"
awk -v r="$ran" -v t="$took" 'BEGIN { exit !(r >= t / 10) }' ||
	fail "stacks: the target ran $ran s of CPU in the $took s of --stacks (stopped while pmutop read debug info?)"
target_ok stacks "$TP"

# 7. --duration 1 with the deep CU: libdw's scope walk recursed once per
# level and overflowed the stack (pmutop died of SIGSEGV, no profile);
# now that CU's scopes are not walked, its lines still read, and it is said.
export PMUTOP_DEBUGINFO_PATH=:.debug:$T/dbg3
t0=$(now)
PM_TIMEOUT=100 run_pmutop deep -p "$TP" -e task-clock --duration 1 --dump deep.pb.gz
within deep "$t0" $((1 + BOUND))
(( RC == 0 )) || { show deep.err; fail "deep: pmutop exited with status $RC"; }
pprof -raw deep.pb.gz >deep.raw 2>&1 || { show deep.raw; fail "deep: pprof -raw failed"; }
grep -qE ' M=1 outer_caller hot\.c:[1-9]' deep.raw ||
	{ show deep.raw; fail "deep: outer_caller has no file:line from the line table"; }
grep -q 'nests DIEs deeper than' deep.err || { show deep.err; fail "deep: the summary does not say what it skipped"; }
info "deep: $(grep -o 'skipped [0-9]* unsafe target file.*' deep.err)"
target_ok deep "$TP"
kill "$TP"
pass "debug files of $NCU compile units, of one CU of $NFILL DIEs, of $NDEEP nested: --duration 1 and SIGTERM end on time with a profile, target untouched"
