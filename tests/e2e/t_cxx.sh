#!/usr/bin/env bash
# t_cxx.sh - C++ names are demangled (pprof Function.name), the raw symbol
# is kept (Function.system_name).
#
# cxx_names runs three C++ functions with work 1:2:3. Profiled twice: as
# built (-g: names from DWARF and the symbol table) and as a copy with the
# debug info stripped (names from .symtab only). Both times the flat
# functions must be the demangled names with their parameter types, in
# shares 1/6, 2/6, 3/6 (within 3 pp), and `go tool pprof -raw` must show
# the mangled system names next to them.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl cxx_names
command -v objcopy >/dev/null || skip "objcopy (binutils) not installed"

DUR=$(quick_or 3 2)
objcopy --strip-debug "$W/cxx_names" ./cxx_nodebug || fail "objcopy --strip-debug failed"

check() { # NAME PROFILE
	top_flat "$2" >"$1.flat" || fail "go tool pprof cannot read $2"
	show "$T/top.txt" 12
	awk -F'\t' '
	{ flat[$1] += $2 }
	END {
		n[1] = "shapes::Circle::area_hot(int) const"
		n[2] = "long shapes::accumulate_hot<long>(long, long)"
		n[3] = "(anonymous namespace)::Spinner::operator()(unsigned long)"
		for (k = 1; k <= 3; k++) sum += flat[n[k]]
		if (sum <= 0) { print "  no demangled names with samples"; exit 1 }
		for (k = 1; k <= 3; k++) {
			got = 100 * flat[n[k]] / sum; want = 100 * k / 6; e = got - want
			printf "  %-58s %6.2f%% (want %5.2f%%)\n", n[k], got, want
			if (e < -3 || e > 3) bad = 1
		}
		exit bad
	}' "$1.flat" || fail "$1: demangled names missing or shares off by more than 3 pp"
	pprof -raw "$2" >"$1.raw" 2>&1 || fail "go tool pprof -raw failed"
	grep -q 'shapes::Circle::area_hot(int) const .*(_ZNK6shapes6Circle8area_hotEi)' "$1.raw" ||
		fail "$1: -raw does not show the system name _ZNK6shapes6Circle8area_hotEi"
	grep -q '(_ZN6shapes14accumulate_hotIlEET_S1_l)' "$1.raw" ||
		fail "$1: -raw does not show the system name of accumulate_hot<long>"
}

run_pmutop dbg -e task-clock --duration "$DUR" --dump dbg.pb.gz -- "$W/cxx_names" $((DUR + 5))
(( RC == 0 )) || { show dbg.err; fail "pmutop exited with status $RC"; }
check dbg dbg.pb.gz

run_pmutop nodbg -e task-clock --duration "$DUR" --dump nodbg.pb.gz -- ./cxx_nodebug $((DUR + 5))
(( RC == 0 )) || { show nodbg.err; fail "pmutop (stripped copy) exited with status $RC"; }
check nodbg nodbg.pb.gz
pass "C++ names demangled with and without debug info; raw names kept as system_name"
