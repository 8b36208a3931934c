#!/usr/bin/env bash
# t_annotate.sh - the instruction-level view (--annotate) on real runs.
#
# two_loops() runs loop A 3x as many iterations as loop B, same body, each
# on its own source line (LOOP_A / LOOP_B in two_loops.c): of the samples in
# two_loops, loop A's instructions must hold 75% and loop B's 25% (within 6
# points). Then:
#   - the listing's addresses are exactly objdump -d's for the function,
#     and each mnemonic is objdump's (capstone adds AT&T size suffixes);
#   - two events recorded: one share column each;
#   - a stripped copy (no .symtab, no DWARF): the function's extent comes
#     from its .eh_frame FDE, the loops' shares are the same;
#   - at the end of a recording (--annotate without --load);
#   - JIT code (perf map names, no file): the sampled addresses and a note;
#   - bad input: a function not in the profile, a binary rebuilt since the
#     profile (build-id mismatch), a binary that is gone, a FIFO in its
#     place: each a clear error and a non-zero exit, never a listing.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl two_loops jit
command -v objdump >/dev/null || skip "objdump not installed (binutils)"

DUR=$(quick_or 3 2)
cp "$W/two_loops" ./two_loops
run_pmutop rec -e task-clock --period 100000 --duration "$DUR" --dump tl.pb.gz -- ./two_loops $((DUR + 5))
show rec.err 3
(( RC == 0 )) || fail "recording failed with status $RC"

# loop_shares FILE [COL]: "A B" - the summed share in event column COL
# (default 1; columns end where the header's event names end) of the
# instructions under the LOOP_A and LOOP_B source lines of a listing.
loop_shares() {
	awk -v col="${2:-1}" '
	/ address:/ && !ends {
		# Column k spans from the end of name k-1 to the end of name k.
		line = $0; pos = 0
		for (k = 1; k <= col; k++) {
			match(substr(line, pos + 1), /[^ ]+/)
			from = pos + 1; pos = pos + RSTART + RLENGTH - 1
		}
		ends = 1; next
	}
	/LOOP_A/ { cur = "A"; next }
	/LOOP_B/ { cur = "B"; next }
	/two_loops\.c:[0-9]+/ { cur = ""; next }
	ends && / [0-9a-f]+:  [a-z]/ {
		v = substr($0, from, pos - from + 1)
		if (v ~ /%/) { gsub(/[ %]/, "", v); s[cur] += v }
	}
	END { printf "%.2f %.2f\n", s["A"], s["B"] }' "$1"
}

# near_75_25 A B: within 6 points of the truth.
near_75_25() {
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > 69 && a < 81 && b > 19 && b < 31) }'
}

run_pmutop ann --load tl.pb.gz --annotate two_loops -q
show ann.out 40
(( RC == 0 )) || { show ann.err; fail "--annotate two_loops exited with status $RC"; }
read -r A B <<<"$(loop_shares ann.out)"
info "loop A $A%, loop B $B% (truth 75 / 25)"
near_75_25 "$A" "$B" || fail "loop shares $A / $B are not 75 / 25 within 6 points"

# hot_insns FILE: instructions of loop A with samples. The loop body is 12
# serially dependent instructions; a listing that puts a whole line's
# samples on one address has lost the instruction view.
hot_insns() {
	awk '/LOOP_A/ { on = 1; next } /LOOP_B/ { on = 0 } on && / [0-9a-f]+:  [a-z]/ && /%/ { n++ }
	     END { print n + 0 }' "$1"
}
n=$(hot_insns ann.out)
info "$n instructions of loop A have samples"
(( n >= 4 )) || fail "samples on only $n instruction(s) of loop A: the per-address detail was lost"

# Same instructions as objdump -d, address for address.
objdump -d --no-show-raw-insn ./two_loops |
	awk '/<two_loops>:$/ { on = 1; next } on && /^$/ { exit } on { a = $1; sub(/:/, "", a); print a, $2 }' >obj.txt
awk '/^ *[0-9.]*%? *[0-9a-f]+:  / { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9a-f]+:$/) { a = $i; sub(/:/, "", a); print a, $(i + 1); break } }' \
	ann.out >ours.txt
[[ -s obj.txt ]] || fail "objdump listed no two_loops"
if ! diff <(cut -d' ' -f1 obj.txt) <(cut -d' ' -f1 ours.txt) >addr.diff; then
	show addr.diff
	fail "instruction addresses differ from objdump -d"
fi
bad=$(paste -d' ' obj.txt ours.txt | awk '{ o = $2; c = $4; if (index(c, o) != 1 && index(o, c) != 1) n++ } END { print n + 0 }')
(( bad == 0 )) || { paste -d' ' obj.txt ours.txt | head; fail "$bad mnemonics differ from objdump's"; }
info "$(wc -l <obj.txt) instructions, the same addresses and mnemonics as objdump -d"
grep -q 'jne *[0-9a-f]* <two_loops+0x[0-9a-f]*>' ann.out || fail "jump targets are not named"

# Two events: a column each.
run_pmutop rec2 -e task-clock,cpu-clock --period 200000 --duration "$DUR" --dump two.pb.gz -- ./two_loops $((DUR + 5))
(( RC == 0 )) || { show rec2.err; fail "two-event recording failed"; }
run_pmutop ann2 --load two.pb.gz --annotate two_loops -q
(( RC == 0 )) || { show ann2.err; fail "--annotate on a two-event profile failed"; }
grep -qE '^ +task-clock +cpu-clock +address:' ann2.out || { show ann2.out 12; fail "no column per event"; }
for col in 1 2; do
	read -r A2 B2 <<<"$(loop_shares ann2.out $col)"
	info "two events, column $col: loop A $A2%, loop B $B2%"
	near_75_25 "$A2" "$B2" || fail "column $col: loop shares $A2 / $B2 are not 75 / 25"
done

# A stripped copy: extent from .eh_frame, same shares.
cp ./two_loops ./two_loops_s
strip --strip-all ./two_loops_s
run_pmutop recs -e task-clock --period 100000 --duration "$DUR" --dump s.pb.gz -- ./two_loops_s $((DUR + 5))
(( RC == 0 )) || { show recs.err; fail "recording the stripped copy failed"; }
run_pmutop tabs --load s.pb.gz --no-tui -q
name=$(awk '$NF ~ /two_loops_s\+0x/ { print $NF; exit }' tabs.out)
[[ -n $name ]] || { show tabs.out; fail "no two_loops_s+0x... row in the stripped profile"; }
run_pmutop anns --load s.pb.gz --annotate "$name" -q
show anns.out 8
(( RC == 0 )) || { show anns.err; fail "--annotate $name on a stripped binary failed"; }
# No source lines here: loop A is everything up to the first jne (its
# back edge), loop B the rest.
read -r SA SB <<<"$(awk '/ [0-9a-f]+:  [a-z]/ {
		v = $0; sub(/ +[0-9a-f]+:  .*$/, "", v); gsub(/[ %]/, "", v)
		s[b ? "B" : "A"] += v
		if ($0 ~ /:  jne /) b = 1
	}
	END { printf "%.2f %.2f\n", s["A"], s["B"] }' anns.out)"
info "stripped: loop A $SA%, loop B $SB%"
near_75_25 "$SA" "$SB" || fail "stripped: loop shares $SA / $SB are not 75 / 25"
n_s=$(grep -cE '^ *[0-9.]*%? *[0-9a-f]+:  ' anns.out)
(( n_s == $(wc -l <obj.txt) )) ||
	fail "stripped listing has $n_s instructions, the function has $(wc -l <obj.txt)"
grep -q 'no debug info' anns.out || fail "no note that the stripped binary has no debug info"

# At the end of a recording.
run_pmutop live -e task-clock --period 200000 --duration 1 --annotate two_loops -q -- ./two_loops 6
(( RC == 0 )) || { show live.err; fail "--annotate at the end of a recording failed ($RC)"; }
grep -q 'LOOP_A' live.out || { show live.out; fail "no listing after the recording"; }
n=$(hot_insns live.out)
(( n >= 4 )) || { show live.out 30; fail "at the end of a recording: samples on only $n instruction(s) of loop A"; }

# JIT code (named from the target's perf map): addresses only, with a note.
if [[ $(uname -m) == x86_64 ]]; then
	start_bg "$W/jit" 6
	wait_started "$BG_PID"
	run_pmutop jrec -e task-clock --duration 2 --dump jit.pb.gz -p "$BG_PID"
	(( RC == 0 )) || { show jrec.err; fail "recording the jit workload failed"; }
	run_pmutop jann --load jit.pb.gz --annotate jit_hot_first -q
	show jann.out 8
	(( RC == 0 )) || { show jann.err; fail "--annotate of JIT code failed ($RC)"; }
	grep -q 'no bytes to disassemble' jann.out || fail "no note that JIT code has no bytes to list"
	grep -qE '^ +[0-9.]+% +[0-9a-f]{8,}:$' jann.out || fail "no sampled JIT addresses listed"
fi

# Bad input: each a clear error, exit 1, no listing.
expect_error() {
	local name=$1 pattern=$2
	shift 2
	run_pmutop "$name" "$@"
	(( RC != 0 )) || { show "$name.out"; fail "$name: exit 0, expected an error"; }
	[[ ! -s $name.out ]] || { show "$name.out"; fail "$name: printed a listing anyway"; }
	grep -qE "$pattern" "$name.err" || { show "$name.err"; fail "$name: error does not say \"$pattern\""; }
	info "$name: $(head -n 1 "$name.err")"
}
expect_error notfound 'no function "no_such_fn"' --load tl.pb.gz --annotate no_such_fn -q
mv ./two_loops ./two_loops.orig
cp "$W/shares" ./two_loops
expect_error changed 'build-id .* the binary changed' --load tl.pb.gz --annotate two_loops -q
rm ./two_loops
expect_error gone 'not found' --load tl.pb.gz --annotate two_loops -q
mkfifo ./two_loops
PM_TIMEOUT=20 expect_error fifo 'not a regular file' --load tl.pb.gz --annotate two_loops -q
pass "loop shares $A/$B; objdump's addresses; per-event columns; stripped via FDE; errors"
