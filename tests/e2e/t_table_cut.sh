#!/usr/bin/env bash
# t_table_cut.sh - the table fits a terminal by default (issue 33): as
# `go tool pprof -top` does, functions whose cum is under 0.5% of the total
# are left out, with a "Dropped N nodes" line; --rows all prints every row.
#
# A python3 run (a few thousand functions with samples, most of them tiny)
# is recorded once and read back with --load, so both tables are of one
# profile: the default table's rows plus its dropped count equal --rows
# all's rows, every row it prints has cum >= 0.5%, it is shorter, and
# launch mode (the table on stderr) drops rows the same way.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
command -v python3 >/dev/null || skip "python3 not installed"

PY='import json, re
for _ in range(3):
    [json.dumps(list(range(1000))) for _ in range(300)]
    [re.sub("a", "b", "abc" * 1000) for _ in range(100)]'
run_pmutop launch -e task-clock -o py.pb.gz -- python3 -c "$PY"
(( RC == 0 )) || { show launch.err; fail "recording python3 failed ($RC)"; }
run_pmutop def --load py.pb.gz --no-tui
run_pmutop all --load py.pb.gz --no-tui --rows all
(( RC == 0 )) || fail "--rows all exited with status $RC"
rows() { grep -cE '^ *[0-9.]+[a-zµ]*s? +[0-9.]+% +[0-9.]+% ' "$1"; }
ndef=$(rows def.out) nall=$(rows all.out)
dropped=$(grep -oE '^Dropped [0-9]+ nodes' def.out | grep -oE '[0-9]+')
info "default: $ndef rows, dropped ${dropped:-none}; --rows all: $nall rows"
grep '^Dropped' def.out | sed 's/^/    | /'
[[ -n $dropped ]] || fail "the default table has no 'Dropped N nodes' line"
! grep -q '^Dropped' all.out || fail "--rows all still drops rows"
(( ndef + dropped == nall )) || fail "$ndef rows + $dropped dropped != $nall rows of --rows all"
(( ndef < nall )) || fail "the default table is not shorter"
low=$(awk '/^ *[0-9.]+[a-zµ]*s? +[0-9.]+% +[0-9.]+% / { c = $5; sub("%", "", c); if (c + 0 < 0.495) n++ } END { print n + 0 }' def.out)
(( low == 0 )) || fail "$low rows of the default table have cum under 0.5%"
# Launch mode: the same rule on stderr.
run_pmutop live -e task-clock -- python3 -c "$PY"
grep -q '^Dropped [0-9]* nodes (cum <' live.err || fail "launch mode's table drops nothing"
run_pmutop n10 --load py.pb.gz --no-tui --rows 10
(( $(rows n10.out) == 10 )) || fail "--rows 10 printed $(rows n10.out) rows"
pass "default table drops rows under 0.5% ($dropped of $nall), --rows all and --rows N lift it"
