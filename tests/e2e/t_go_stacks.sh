#!/usr/bin/env bash
# t_go_stacks.sh - Go stacks across Go's stack switches, a stripped Go
# binary, and cgo (issue 12).
#
# go_stacks (GOMAXPROCS=2) allocates (GC work on the system stack through
# runtime.systemstack), parks goroutines (runtime.mcall), grows goroutine
# stacks (runtime.morestack) and spins in main.spinLeaf. Every sample's
# stack must end where a thread or goroutine starts (runtime.goexit,
# runtime.mstart, runtime.rt0_go; runtime.clone / __clone3 for a thread
# caught at its creation): at least 99.5% of the samples, weighted.
# Samples on the system stack must continue on the goroutine's stack:
# stacks through runtime.systemstack reach runtime.goexit, stacks through
# runtime.newstack (stack growth) reach main.deepRecurse.
# go_stacks_stripped is the same program built with -ldflags='-s -w' (no
# .symtab, no DWARF): names come from .gopclntab, at least 95% of the
# samples with a leaf in the program (not the vDSO) have a named leaf, and
# main.spinLeaf <- main.spinLoop <- ... <- runtime.goexit is there.
# go_cgo calls C, which calls back into Go: stacks in the C function c_spin
# go through c_middle and main.goOuter to the root; stacks in the callback's
# main.goInner go through main.goOuter too.
# Names are read with `go tool pprof -symbolize=none`: only what pmutop wrote.
source "$(dirname "$0")/lib.sh"
e2e_init
command -v go >/dev/null || skip "golang-go not installed"
need_wl go_stacks go_stacks_stripped go_cgo
export GOMAXPROCS=2

DUR=$(quick_or 4 2)
PERIOD=250000 # task-clock: ~4,000 samples/s per busy thread
problems=0
problem() { echo "  FAILED: $*"; problems=$((problems + 1)); }

# analyse NAME: per-stack facts from NAME.pb.gz's traces, as "key value" lines.
analyse() {
	pprof -traces "$1.pb.gz" >"$1.traces" 2>&1 || { echo "error pprof"; return; }
	python3 - "$1.traces" "$E2E_DIR" <<'EOF'
import re, sys
sys.path.insert(0, sys.argv[2])
import pprof_traces
roots = {"runtime.goexit", "runtime.mstart", "runtime.rt0_go", "_rt0_amd64_linux",
         "_rt0_amd64", "runtime.clone", "__clone3", "clone3", "__clone", "clone", "_start"}
stacks = pprof_traces.stacks(sys.argv[1])
tot = sum(w for w, _ in stacks) or 1
def share(pred):
    return 100 * sum(w for w, f in stacks if pred(f)) / tot
def has(f, name):
    return name in f
unnamed = lambda f: f[0].startswith("0x") or "+0x" in f[0]
print("samples %.6g" % tot)
print("root %.3f" % share(lambda f: f[-1] in roots))
own = [(w, f) for w, f in stacks if not f[0].startswith("[vdso]")]
print("named %.3f" % (100 * sum(w for w, f in own if not unnamed(f)) / (sum(w for w, _ in own) or 1)))
sysstk = [f for _, f in stacks if has(f, "runtime.systemstack")]
print("systemstack_stacks %d" % len(sysstk))
print("systemstack_to_goexit %d" % sum(1 for f in sysstk if f[-1] == "runtime.goexit"))
grow = [f for _, f in stacks if has(f, "runtime.newstack")]
print("newstack_stacks %d" % len(grow))
print("newstack_to_deep %d" % sum(1 for f in grow if has(f, "main.deepRecurse")))
spin = [f for _, f in stacks if f[0] == "main.spinLeaf"]
print("spin_stacks %d" % len(spin))
print("spin_whole %d" % sum(1 for f in spin if f[1] == "main.spinLoop" and f[-1] == "runtime.goexit"))
# Weighted by samples, not distinct stacks: a one-sample stack cut short
# (preemption mid-prologue, a vDSO call) must not count like the thousands
# of samples on the hot path.
cs = [(w, f) for w, f in stacks if f[0] == "c_spin"]
print("cspin_samples %.6g" % sum(w for w, _ in cs))
print("cspin_whole_pct %.3f" % (100 * sum(w for w, f in cs if len(f) > 2 and f[1] == "c_middle" and
                             has(f, "main.goOuter") and f[-1] in roots) / (sum(w for w, _ in cs) or 1)))
gi = [(w, f) for w, f in stacks if f[0] == "main.goInner"]
print("goinner_samples %.6g" % sum(w for w, _ in gi))
print("goinner_whole_pct %.3f" % (100 * sum(w for w, f in gi if has(f, "main.goOuter") and f[-1] in roots) /
                                  (sum(w for w, _ in gi) or 1)))
for w, f in sorted(stacks, key=lambda x: -x[0]):
    if f[-1] not in roots:
        print("notroot %.3f%% %s" % (100 * w / tot, " <- ".join(f[:6])))
EOF
}

val() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }
# ge A B: A >= B as numbers.
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }

for wl in go_stacks go_stacks_stripped go_cgo; do
	info "== $wl"
	# Attached after start-up, as a user would (the dynamic loader's first
	# instructions are no Go stack).
	start_bg "$W/$wl" $((DUR + 10))
	sleep 0.5
	run_pmutop "$wl" -e task-clock --period $PERIOD --duration "$DUR" --dump "$wl.pb.gz" -p "$BG_PID"
	kill "$BG_PID" 2>/dev/null
	show "$wl.err" 6
	if (( RC != 0 )) || [[ ! -s $wl.pb.gz ]]; then
		problem "$wl: pmutop exited with status $RC"
		continue
	fi
	analyse "$wl" >"$wl.facts"
	grep -v '^notroot' "$wl.facts" | tr '\n' ' ' | sed 's/^/  /'
	echo
	root=$(val root "$wl.facts")
	if ! ge "$root" 99.5; then
		grep '^notroot' "$wl.facts" | head -8 | sed 's/^/    /'
		problem "$wl: ${root:-?}% of samples reach a thread's root (want >= 99.5%)"
	fi
	case $wl in
	go_stacks)
		(( $(val systemstack_stacks "$wl.facts") > 0 )) || problem "$wl: no sample through runtime.systemstack"
		(( $(val systemstack_to_goexit "$wl.facts") > 0 )) ||
			problem "$wl: no stack through runtime.systemstack reaches runtime.goexit"
		(( $(val newstack_stacks "$wl.facts") == 0 || $(val newstack_to_deep "$wl.facts") > 0 )) ||
			problem "$wl: stacks in runtime.newstack never reach main.deepRecurse"
		;;
	go_stacks_stripped)
		named=$(val named "$wl.facts")
		ge "$named" 95 || problem "$wl: only ${named:-?}% of samples have a named leaf (want >= 95%)"
		(( $(val spin_stacks "$wl.facts") > 0 && $(val spin_whole "$wl.facts") * 10 >= $(val spin_stacks "$wl.facts") * 9 )) ||
			problem "$wl: main.spinLeaf stacks are not main.spinLeaf <- main.spinLoop <- ... <- runtime.goexit"
		;;
	go_cgo)
		# Shares of samples: nearly all of c_spin's and goInner's samples
		# must carry the whole mixed stack (C <- cgo <- Go <- root).
		csw=$(val cspin_whole_pct "$wl.facts")
		ge "$(val cspin_samples "$wl.facts")" 0.05 && ge "$csw" 95 ||
			problem "$wl: only ${csw:-?}% of c_spin samples go c_middle ... main.goOuter ... root (want >= 95%)"
		giw=$(val goinner_whole_pct "$wl.facts")
		ge "$(val goinner_samples "$wl.facts")" 0.05 && ge "$giw" 95 ||
			problem "$wl: only ${giw:-?}% of main.goInner samples reach main.goOuter and the root (want >= 95%)"
		;;
	esac
done
(( problems == 0 )) || fail "$problems problem(s) with Go stacks"
pass "Go stacks reach their roots across systemstack/mcall/morestack and cgo; stripped binary named from .gopclntab"
