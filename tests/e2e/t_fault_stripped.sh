#!/usr/bin/env bash
# t_fault_stripped.sh - stripped binaries: .dynsym, else module+offset.
#
#   exe  - `strip --strip-all` copy of the exiter: no .symtab, and its
#          static exiter_spin is not in .dynsym, so its samples must be named
#          "exiter_stripped+0xOFF" (the module and the file offset) - and
#          pmutop must not crash or misname them after some other symbol;
#   lib  - dl_main with a stripped copy of libhot.so next to it: no .symtab,
#          but libhot_spin is exported, so .dynsym still names it.
# Each: exit 0, profile readable.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
e2e_init
need_wl exiter dl_main libhot.so

DUR=$(quick_or 1.5 1)

info "== stripped executable"
strip --strip-all -o "$T/exiter_stripped" "$W/exiter"
readelf -SW "$T/exiter_stripped" | grep -q '\.symtab' && fail "strip left a .symtab"
run_pmutop exe -e task-clock --period 500000 --duration "$DUR" --dump exe.pb.gz -- "$T/exiter_stripped" 30
show exe.err 4
(( RC == 0 )) || problem "exe: exit status $RC, want 0"
if readable exe.pb.gz 12; then
	leaf=$(sort -t$'\t' -k2,2nr flat.txt | head -n 1 | cut -f1)
	info "exe: hottest leaf: $leaf"
	[[ $leaf == exiter_stripped+0x* ]] ||
		problem "exe: the hottest leaf is \"$leaf\", want exiter_stripped+0xOFF"
	# The offset must be inside exiter_spin of the unstripped file.
	if [[ $leaf == exiter_stripped+0x* ]]; then
		off=$((${leaf#exiter_stripped+}))
		read -r lo size < <(nm -S "$W/exiter" | awk '$4 == "exiter_spin" { print "0x" $1, "0x" $2 }')
		# Non-PIE or PIE alike: file offset = vaddr - (p_vaddr - p_offset) of the text segment.
		read -r pv po < <(readelf -lW "$W/exiter" | awk '$1 == "LOAD" && $7 ~ /E/ { print $3, $2; exit }')
		foff=$(( lo - (pv - po) ))
		if (( off >= foff && off < foff + size )); then
			info "exe: offset $(printf 0x%x "$off") is inside exiter_spin (file offset $(printf 0x%x "$foff"), size $((size)))"
		else
			problem "exe: offset $(printf 0x%x "$off") is not inside exiter_spin ($(printf 0x%x "$foff") +$((size)))"
		fi
	fi
fi

info "== stripped shared library (.dynsym only)"
mkdir -p "$T/lib"
cp "$W/dl_main" "$T/lib/"
strip --strip-all -o "$T/lib/libhot.so" "$W/libhot.so"
run_pmutop lib -e task-clock --period 500000 --duration 20 --dump lib.pb.gz -- "$T/lib/dl_main" "$DUR" 0.2
show lib.err 4
(( RC == 0 )) || problem "lib: exit status $RC, want 0"
if readable lib.pb.gz 12; then
	(( $(flat_of libhot_spin) > 0 )) || problem "lib: libhot_spin not named from .dynsym"
fi

(( ERRS == 0 )) || fail "$ERRS problem(s) with stripped binaries"
pass "stripped binaries: module+offset for the executable, .dynsym for the library"
