#!/usr/bin/env bash
# t_pprof_open.sh - the profile opens at once in `go tool pprof -top` with
# its DEFAULT flags, and in `pmutop --load` (issue 31).
#
# bigdwarf has 4,000 functions in one compile unit with DWARF and spends
# half its time in code with no symbol, CFI or line rows, which pmutop
# names "bigdwarf+0xOFF". pprof symbolizes locally every mapping whose
# has_functions / has_filenames / has_line_numbers flags are all unset, each
# location through its own DWARF reader; a profile that left this mapping
# unmarked because one location had no name took 200-230 s to open on the
# shared 2-core VM (load ~10; 0.7 s with the flag). Checked:
#   - every mapping of the profile carries a has_* flag (pprof -raw's
#     Mappings lines end in [FN]...): deterministic, on any machine;
#   - `go tool pprof -top` (no -symbolize flag) finishes within OPEN_BOUND
#     seconds (20; not a timing test: a fast machine opens it in well under
#     a second, the unmarked profile not in minutes) and shows leaf;
#   - the unnamed code is still there with its address ("bigdwarf+0x...")
#     and the profile's comment names the file;
#   - `pmutop --load` reads it within the same bound.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl bigdwarf
command -v go >/dev/null 2>&1 || skip "go (golang-go) is not installed: no go tool pprof"

OPEN_BOUND=20
DUR=$(quick_or 3 2)
pick_event

# ~300 samples/s: each a new 100-frame path, so a few seconds name every
# function's call site (~4,000 locations) while the profile stays small
# enough for pprof's own reading to be quick (at 4,000 samples/s the file
# holds 10,000 distinct 100-frame stacks, which pprof -symbolize=none alone
# reads in 10 s on the loaded VM).
run_pmutop bd -e "$EV" -F 300 --duration "${DUR}s" --dump bd.pb.gz -- "$W/bigdwarf" $((DUR + 5))
show bd.err
(( RC == 0 )) || fail "pmutop exited with status $RC"
[[ -s bd.pb.gz ]] || fail "no profile written"

# The mappings as the file has them (-symbolize=none: nothing added).
pprof -raw bd.pb.gz >raw.txt 2>raw.err || { show raw.err; fail "go tool pprof -raw cannot read the profile"; }
sed -n '/^Mappings/,$p' raw.txt >maps.txt
show maps.txt
grep -q "/bigdwarf " maps.txt || fail "no mapping of bigdwarf in the profile"
nlocs=$(grep -c ' M=1 ' raw.txt)
info "$nlocs locations in the first mapping"
unmarked=$(grep -E '^ *[0-9]+: 0x' maps.txt | grep -vE '\[(FN|FL|LN)\]')
[[ -z $unmarked ]] ||
	fail "mappings without has_functions/has_filenames/has_line_numbers (pprof symbolizes them again): $unmarked"
grep -qE ' bigdwarf\+0x[0-9a-f]+ ' raw.txt ||
	fail "the code without a symbol is not in the profile as bigdwarf+0xOFF"

start=$(now)
HOME=${HOME:-/tmp} GOCACHE=${GOCACHE:-/tmp/gocache} \
	timeout -k 5 "$OPEN_BOUND" go tool pprof -top bd.pb.gz >top.txt 2>top.err
rc=$?
took=$(elapsed "$start")
info "go tool pprof -top (default flags): ${took} s, status $rc"
show top.txt 16
(( rc != 124 && rc != 137 )) ||
	fail "go tool pprof -top did not open the profile within $OPEN_BOUND s (it symbolizes again)"
(( rc == 0 )) || { show top.err; fail "go tool pprof -top exited with status $rc"; }
grep -qE ' leaf$' top.txt || fail "go tool pprof -top does not show leaf"
grep -q 'code without a name.*bigdwarf' top.txt ||
	fail "the profile's comments do not name bigdwarf as having code without a name"

start=$(now)
timeout -k 5 "$OPEN_BOUND" "$PMUTOP" --load bd.pb.gz --rows 5 >load.txt 2>load.err
rc=$?
took=$(elapsed "$start")
info "pmutop --load: ${took} s, status $rc"
(( rc == 0 )) || { show load.err; fail "pmutop --load exited with status $rc"; }
grep -q 'leaf' load.txt || { show load.txt; fail "pmutop --load does not show leaf"; }

pass "every mapping marked symbolized; go tool pprof -top and pmutop --load open it within $OPEN_BOUND s"
