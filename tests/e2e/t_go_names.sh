#!/usr/bin/env bash
# t_go_names.sh - a Go frame has one name in every output (issue 33): Go's
# own (.gopclntab: runtime.goexit), not the linker's ABI wrapper symbol
# (runtime.goexit.abi0) that --stacks used to print while profiles, named
# from the same table, said runtime.goexit. go_stacks (with .symtab, whose
# assembly functions have .abi0 symbols) is looked at with --stacks, then
# profiled to folded stacks: no frame of either ends in .abi0, and both
# name the goroutines' root runtime.goexit.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl go_stacks
nabi=$(nm "$W/go_stacks" 2>/dev/null | grep -c '\.abi0$')
(( nabi > 0 )) || skip "go_stacks has no .abi0 symbols (Go too old?)"

start_bg "$W/go_stacks" 60
sleep 1
run_pmutop st --stacks -p "$BG_PID"
(( RC == 0 )) || { show st.err; fail "--stacks exited with status $RC"; }
run_pmutop prof -e task-clock -d 1 -o g.folded -p "$BG_PID"
(( RC == 0 )) || { show prof.err; fail "profiling go_stacks exited with status $RC"; }
abi_st=$(grep -oE '[A-Za-z0-9_./*()]+\.abi0' st.out | sort -u | tr '\n' ' ')
abi_pf=$(tr ';' '\n' <g.folded | grep -oE '[^ ]+\.abi0' | sort -u | tr '\n' ' ')
info "--stacks: $(grep -c . st.out) lines; .abi0 names: ${abi_st:-none}; in the profile: ${abi_pf:-none}"
[[ -z $abi_st ]] || fail "--stacks prints ABI wrapper names: $abi_st"
[[ -z $abi_pf ]] || fail "the profile has ABI wrapper names: $abi_pf"
grep -q 'runtime\.goexit\b' st.out || fail "--stacks does not name runtime.goexit"
grep -q 'runtime\.goexit' g.folded || fail "the profile does not name runtime.goexit"
pass "Go frames named by Go's table in --stacks and profiles (runtime.goexit)"
