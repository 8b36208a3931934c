#!/usr/bin/env bash
# t_deep.sh - full unwinding of a 120-deep recursion, with and without
# frame pointers.
#
# The deep workload spends its time in deep_leaf() at the bottom of
# recurse(120) -> ... -> recurse(0) called from main, so every sample whose
# leaf is deep_leaf should read: deep_leaf, recurse x 121, main (then libc's
# start-up frames). Using `go tool pprof -traces`, at least 95% of those
# samples must have deep_leaf, then >= 120 consecutive recurse frames, then
# main. deep_nofp has no frame pointers, so only CFI unwinding gets there.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl deep_fp deep_nofp

DUR=$(quick_or 4 2)
DEPTH=120
MIN_RATIO=0.95
failed=()

# traces_check PROFILE: summarise the deep_leaf stacks; exit status 0 when
# at least MIN_RATIO of them are complete.
traces_check() {
	pprof -traces -sample_index=0 "$1" >traces.txt 2>traces.err || {
		show traces.err
		echo "  go tool pprof -traces cannot read the profile"
		return 1
	}
	awk -v depth="$DEPTH" -v min="$MIN_RATIO" '
	function done_block() {
		if (nf == 0) return
		total += val
		if (fr[1] != "deep_leaf") { other += val; nf = 0; return }
		leaf += val
		j = 2; n = 0
		while (j <= nf && fr[j] == "recurse") { n++; j++ }
		if (n > maxrec) maxrec = n
		hist[n >= depth ? "ge" : "lt"] += val
		if (n >= depth && j <= nf && fr[j] == "main") ok += val
		else if (bad_shown < 2) {
			bad_shown++
			printf "  incomplete stack (%d recurse frames): %s", n, fr[1]
			for (k = 2; k <= nf && k <= 6; k++) printf " <- %s", fr[k]
			if (nf > 8) printf " ... <- %s <- %s", fr[nf - 1], fr[nf]
			printf "\n"
		}
		nf = 0
	}
	/^-+\+-+$/ { done_block(); inblock = 1; next }
	!inblock { next }
	# A label line has the key right-aligned in 10 columns, then ":".
	substr($0, 11, 1) == ":" { next }
	{
		v = substr($0, 1, 10); name = substr($0, 14)
		sub(/ \(inline\)$/, "", name); gsub(/^ +| +$/, "", name)
		if (v ~ /[0-9]/) { gsub(/ /, "", v); val = v + 0 }
		fr[++nf] = name
	}
	END {
		done_block()
		printf "  %d samples, %d with leaf deep_leaf, %d of them complete (deep_leaf, >= %d recurse, main); max recurse frames %d\n",
			total, leaf, ok, depth, maxrec
		if (leaf < 20) { print "  too few deep_leaf samples"; exit 1 }
		if (leaf < 0.5 * total) { printf "  deep_leaf is the leaf of only %.1f%% of the samples\n", 100 * leaf / total; exit 1 }
		printf "  complete: %.2f%% (need %.0f%%)\n", 100 * ok / leaf, 100 * min
		exit !(ok >= min * leaf)
	}' traces.txt
}

for variant in deep_nofp deep_fp; do
	info "== $variant (recursion depth $DEPTH)"
	run_pmutop "$variant" -e task-clock --period 1000000 --duration "$DUR" \
		--dump "$variant.pb.gz" -- "$W/$variant" $((DUR + 5)) "$DEPTH"
	show "$variant.err"
	if (( RC != 0 )); then
		info "pmutop exited with status $RC"
		failed+=("$variant")
		continue
	fi
	if [[ ! -s $variant.pb.gz ]]; then
		info "no profile written"
		failed+=("$variant")
		continue
	fi
	traces_check "$variant.pb.gz" || failed+=("$variant")
done

(( ${#failed[@]} == 0 )) || fail "deep stacks not unwound fully: ${failed[*]}"
pass "deep_leaf <- recurse x >= $DEPTH <- main in >= 95% of samples, with and without frame pointers"
