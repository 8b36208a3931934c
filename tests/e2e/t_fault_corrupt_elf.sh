#!/usr/bin/env bash
# t_fault_corrupt_elf.sh - an ELF file truncated or corrupted on disk.
#
# What is tested, honestly: a process has dlopen()ed libfat.so (a copy in
# the test's directory) and runs libhot_spin() from it; the file is then
# damaged *in place* (same inode, so /proc/PID/maps still names it and
# pmutop opens exactly that file) but only beyond its last PT_LOAD page:
# the section headers, .symtab and .strtab, which the running process never
# reads, so it keeps running unharmed. (Damaging loaded pages would change
# or SIGBUS the target itself - not the case under test; replacing the file
# under a new inode would be the "(deleted)" case of t_fault_deleted.sh.)
#   truncated  - cut at the end of the last loaded page before pmutop
#                attaches: pmutop parses an ELF file without section
#                headers (no symbols: libfat.so+0xOFF names);
#   garbage    - random bytes over everything past that page before
#                pmutop attaches: section headers and symbols are garbage;
#   shrinks    - cut while pmutop runs, after it mapped and parsed the file
#                (reading the pages it kept raises SIGBUS: pmutop must not
#                die of it); pmutop runs until SIGINT, so that seeing it
#                attached cannot race against the end of its --duration.
# Each: pmutop exits 0, the target is alive, the profile is readable and its
# hot leaf is in libfat.so (named libhot_spin, or libfat.so+0xOFF).
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
e2e_init
need_wl dl_main libfat.so

DUR=$(quick_or 2 1.5)

# loaded_end FILE: end of the last PT_LOAD's file bytes, rounded up to a page.
loaded_end() {
	local m=0 off fsz e
	while read -r off fsz; do
		e=$((off + fsz))
		((e > m)) && m=$e
	done < <(readelf -lW "$1" | awk '$1 == "LOAD" { print $2, $5 }')
	echo $(((m + 4095) / 4096 * 4096))
}

# start_target DIR: dl_main running libhot_spin from DIR/libfat.so; $TGT.
start_target() {
	local i
	mkdir -p "$1"
	cp "$W/dl_main" "$W/libfat.so" "$1/"
	start_bg "$1/dl_main" 60 0.1 "$1/libfat.so"
	TGT=$BG_PID
	for i in $(seq 100); do
		grep -q "$1/libfat.so" "/proc/$TGT/maps" 2>/dev/null && break
		sleep 0.05
	done
	grep -q "$1/libfat.so" "/proc/$TGT/maps" || fail "the target did not load $1/libfat.so"
}

# check NAME: exit status, target, profile.
check() {
	local leaf
	show "$1.err" 6
	(( RC == 0 )) || problem "$1: exit status $RC, want 0"
	alive "$TGT" || problem "$1: the target did not survive"
	if readable "$1/$1.pb.gz" 12; then
		leaf=$(sort -t$'\t' -k2,2nr flat.txt | head -n 1 | cut -f1)
		info "$1: hottest leaf: $leaf"
		[[ $leaf == libhot_spin || $leaf == libfat.so+0x* ]] ||
			problem "$1: the hottest leaf is $leaf, not in libfat.so"
	fi
	kill -KILL "$TGT" 2>/dev/null
}

size=$(stat -c %s "$W/libfat.so")
cut=$(loaded_end "$W/libfat.so")
info "libfat.so: $size bytes, loaded pages end at $cut"
(( cut < size - 4096 )) || fail "libfat.so has too little past its loaded pages to damage"

info "== truncated before pmutop attaches"
start_target "$T/truncated"
truncate -s "$cut" "$T/truncated/libfat.so"
run_pmutop truncated -e task-clock --period 500000 --duration "$DUR" --dump "$T/truncated/truncated.pb.gz" -p "$TGT"
check truncated

info "== garbage past the loaded pages before pmutop attaches"
start_target "$T/garbage"
head -c $((size - cut)) /dev/urandom |
	dd of="$T/garbage/libfat.so" bs=4096 seek=$((cut / 4096)) conv=notrunc status=none
run_pmutop garbage -e task-clock --period 500000 --duration "$DUR" --dump "$T/garbage/garbage.pb.gz" -p "$TGT"
check garbage

info "== truncated while pmutop runs"
start_target "$T/shrinks"
# No --duration: pmutop samples until SIGINT, so seeing it attached does not
# race against its end (with --duration 1.5, a loaded ASan run could attach,
# sample and exit between two looks at its fds: "did not attach").
pm_start shrinks -e task-clock --period 500000 --dump "$T/shrinks/shrinks.pb.gz" -p "$TGT"
pm_wait_sampling 30 || problem "shrinks: pmutop did not attach"
sleep 0.3
truncate -s "$cut" "$T/shrinks/libfat.so"
info "truncated to $cut bytes while pmutop samples"
sleep "$DUR"
kill -INT "$PM" 2>/dev/null
pm_finish 20
check shrinks
[[ $RC != 135 ]] || info "(status 135 = SIGBUS: pmutop read a page of the file past its new end)"

(( ERRS == 0 )) || fail "$ERRS problem(s) with an ELF file damaged on disk"
pass "truncated and corrupted ELF files: no crash, target unharmed, profiles readable"
