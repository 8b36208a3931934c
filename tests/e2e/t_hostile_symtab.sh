#!/usr/bin/env bash
# t_hostile_symtab.sh - a module's own symbol table is the target's to
# write: reading it is bounded (issue 32).
#
# The shares workload with 200,000 more function symbols appended to its
# .symtab, all at main's address, size and binding - ties in the sort - and
# all naming one 8 MiB string ("shared"), or alternately two ("alternate").
# read_symbols() read them all and the sort broke each tie with strcmp(): up
# to 8 MiB per comparison, the session's thread gone for minutes (9 min on
# the 2-CPU VM) with SIGINT and --duration unanswered, no profile meanwhile.
# Now ties compare at most 128 bytes of a name (a name shared by pointer
# not at all), at most 64 MiB of distinct names are measured (the rest of
# the table is left out) and a name over 64 KiB is not taken, with a note.
#   1. shared: `pmutop -p PID --duration 1` ends within 30 s (minutes
#      before), the profile names the workload's functions (main, not the
#      8 MiB name), the summary notes what was left out;
#   2. alternate: `--duration 30`, SIGINT after 1.5 s: pmutop ends within
#      15 s of it, the summary notes the table as too large, the profile is
#      written with the workload's names;
# and the target is left running and untraced.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares

# craft SRC DST MODE COUNT: SRC with COUNT function symbols at main added.
craft() {
	python3 - "$@" <<-'PY' || fail "cannot craft the ELF file"
	import struct, sys
	src, dst, mode, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
	b = bytearray(open(src, 'rb').read())
	assert b[:4] == b'\x7fELF' and b[4] == 2 and b[5] == 1, "not ELF64 LE"
	shoff, = struct.unpack_from('<Q', b, 0x28)
	shentsize, shnum = struct.unpack_from('<HH', b, 0x3a)
	def sh(i):
	    return list(struct.unpack_from('<IIQQQQIIQQ', b, shoff + i * shentsize))
	symtab = next(i for i in range(shnum) if sh(i)[1] == 2)
	st = sh(symtab); strtab = st[6]; ss = sh(strtab)
	old_syms = bytes(b[st[4]:st[4] + st[5]]); old_str = bytes(b[ss[4]:ss[4] + ss[5]])
	main = None
	for k in range(0, len(old_syms), 24):
	    name, info, other, shndx, value, size = struct.unpack_from('<IBBHQQ', old_syms, k)
	    if old_str[name:old_str.index(b'\0', name)] == b'main':
	        main = (shndx, value, size)
	assert main, "no main in .symtab"
	big = 8 << 20
	names = [len(old_str)]
	new_str = old_str + b'A' * big + b'\0'
	if mode == 'alternate':
	    names.append(len(new_str))
	    new_str += b'A' * big + b'\0'
	new_syms = bytearray(old_syms)
	for i in range(count):
	    new_syms += struct.pack('<IBBHQQ', names[i % len(names)], 0x12, 0, *main)
	def append(data):
	    while len(b) % 8:
	        b.append(0)
	    off = len(b); b.extend(data); return off
	soff = append(new_str); yoff = append(bytes(new_syms))
	for idx, off, size in ((strtab, soff, len(new_str)), (symtab, yoff, len(new_syms))):
	    h = sh(idx); h[4] = off; h[5] = size
	    struct.pack_into('<IIQQQQIIQQ', b, shoff + idx * shentsize, *h)
	open(dst, 'wb').write(b)
	PY
	chmod +x "$2"
}

craft "$W/shares" shared shared 200000
craft "$W/shares" alternate alternate 200000

errs=0
common() { # NAME TARGET_PID
	if [[ ! -s $1.pb.gz ]] || ! top_flat "$1.pb.gz" >"$1.flat"; then
		show "$1.err"
		info "FAILED ($1): no readable profile"
		errs=$((errs + 1))
	elif ! grep -q '_expect_' "$1.flat"; then
		show "$T/top.txt" 8
		info "FAILED ($1): the workload's functions are not named"
		errs=$((errs + 1))
	fi
	if ! kill -0 "$2" 2>/dev/null; then
		info "FAILED ($1): the target is gone"
		errs=$((errs + 1))
	elif [[ $(awk '/^State:/ { print $2 }' "/proc/$2/status") == [tT] ]] ||
		[[ $(awk '/^TracerPid:/ { print $2 }' "/proc/$2/status") != 0 ]]; then
		info "FAILED ($1): the target is left stopped or traced"
		errs=$((errs + 1))
	fi
}

# 1. shared, --duration 1.
start_bg ./shared 120
TP=$BG_PID
wait_started "$TP"
info "\$ pmutop -p $TP -e task-clock --duration 1 --dump shared.pb.gz  (200k symbols, one 8 MiB name)"
t0=$(now)
timeout -k 5 90 "$PMUTOP" -p "$TP" -e task-clock --duration 1 --dump shared.pb.gz >shared.out 2>shared.err &
pm=$!
E2E_BG_PIDS+=("$pm")
if ! wait_gone "$pm" 30; then
	info "FAILED (shared): pmutop still running 30 s into a 1 s run"
	errs=$((errs + 1))
	kill -KILL "$pm" 2>/dev/null
fi
wait "$pm"
rc=$?
took=$(elapsed "$t0")
show shared.err
info "shared: exit status $rc after $took s"
(( rc == 0 )) || { info "FAILED (shared): exit status $rc"; errs=$((errs + 1)); }
if ! grep -q 'skipped .*symbol table is over pmutop.s bounds' shared.err; then
	info "FAILED (shared): no note that the 8 MiB name was left out"
	errs=$((errs + 1))
fi
common shared "$TP"
if grep -q 'AAAAAAAAAAAAAAAA' shared.flat 2>/dev/null; then
	info "FAILED (shared): the 8 MiB name named a function"
	errs=$((errs + 1))
fi
kill "$TP"

# 2. alternate, SIGINT after 1.5 s.
start_bg ./alternate 120
TP=$BG_PID
wait_started "$TP"
info "\$ pmutop -p $TP -e task-clock --duration 30 --dump alternate.pb.gz  (two 8 MiB names; SIGINT after 1.5 s)"
set -m
timeout -k 5 90 "$PMUTOP" -p "$TP" -e task-clock --duration 30 --dump alternate.pb.gz \
	>alternate.out 2>alternate.err &
pm=$!
E2E_BG_PIDS+=("$pm")
set +m
sleep 1.5
t0=$(now)
# timeout(1) passes SIGINT on to pmutop.
kill -INT "$pm"
if ! wait_gone "$pm" 15; then
	info "FAILED (alternate): pmutop still running 15 s after SIGINT"
	errs=$((errs + 1))
	kill -KILL "$pm" 2>/dev/null
fi
wait "$pm"
rc=$?
took=$(elapsed "$t0")
show alternate.err
info "alternate: exit status $rc $took s after SIGINT"
(( rc == 0 )) || { info "FAILED (alternate): exit status $rc"; errs=$((errs + 1)); }
if ! grep -q 'skipped .*symbol table is over pmutop.s bounds' alternate.err; then
	info "FAILED (alternate): no note that the symbol table was over the bounds"
	errs=$((errs + 1))
fi
common alternate "$TP"

(( errs == 0 )) || fail "$errs problem(s) with a hostile .symtab"
pass "200k tied symbols with 8 MiB names: --duration and SIGINT answered in seconds, profile named, table capped with a note"
