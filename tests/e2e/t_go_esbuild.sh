#!/usr/bin/env bash
# t_go_esbuild.sh - a real Go program built with a Go newer than Debian's
# (issue 12): esbuild's Linux binary from the npm registry (pinned in
# tests/programs/package-lock.json, installed by tests/install-deps.sh), a
# static, stripped Go program - no .symtab, no DWARF, only .gopclntab - with
# many goroutines. pmutop launches it bundling and minifying a generated
# JavaScript project (GOMAXPROCS=2) and must give:
#  - the command's own result: exit status 0 and the same bundle as an
#    unprofiled run;
#  - names from .gopclntab: >= 95% of the samples whose leaf is esbuild's
#    code have a named leaf, with file:line; the parser's functions are there
#    (js_parser.(*parser).parseStmt) with a real share;
#  - whole stacks: >= 99.5% of the samples outside stack growth end where a
#    goroutine or thread starts (runtime.goexit, runtime.mstart,
#    runtime.rt0_go). Stack growth is the documented exception: newer Go's
#    runtime.morestack clears the frame pointer before it calls newstack on
#    g0, and the goroutine's saved state is gone by the time any reader
#    outside the process looks (perf's frame-pointer chain ends there too,
#    README "Go programs"); those samples must end exactly at
#    runtime.morestack, through runtime.newstack, and their share is shown.
source "$(dirname "$0")/lib.sh"
e2e_init

ESBUILD=$E2E_REPO/tests/programs/node_modules/@esbuild/linux-x64/bin/esbuild
[[ $(uname -m) == x86_64 ]] || skip "esbuild's pinned binary is the x86_64 one"
[[ -x $ESBUILD ]] || skip "$ESBUILD not installed (tests/install-deps.sh: npm ci in tests/programs)"
command -v python3 >/dev/null || skip "python3 not installed"
GOVER=$(grep -aoE -m1 'go1\.[0-9]+(\.[0-9]+)?' "$ESBUILD" | head -n 1)
info "esbuild $("$ESBUILD" --version), built with ${GOVER:-an unknown Go}"
readelf -S "$ESBUILD" | grep -q '\.gopclntab' || fail "the esbuild binary has no .gopclntab"
! readelf -S "$ESBUILD" | grep -qE '\.symtab|\.debug_info' || info "note: this esbuild build has .symtab or DWARF"
export GOMAXPROCS=2

mkdir proj && python3 "$E2E_REPO/tests/workloads/gen_js_project.py" proj "$(quick_or 400 250)" 60 ||
	fail "cannot generate the JavaScript project"
(cd proj && "$ESBUILD" entry.js --bundle --minify --outfile=../plain.js --log-level=error) ||
	fail "esbuild itself fails on the generated project"

cd proj || fail "cd proj"
run_pmutop ../esb -e task-clock --period 250000 --dump ../esb.pb.gz -- \
	"$ESBUILD" entry.js --bundle --minify --outfile=../prof.js --log-level=error
cd .. || fail "cd .."
show esb.err 6
(( RC == 0 )) || fail "pmutop -- esbuild exited with status $RC"
cmp -s plain.js prof.js || fail "the bundle written under pmutop differs from an unprofiled run's"

pprof -traces esb.pb.gz >esb.traces 2>&1 || fail "go tool pprof cannot read the profile"
pprof -raw esb.pb.gz >esb.raw 2>&1 || fail "go tool pprof -raw cannot read the profile"
python3 - esb.traces esb.raw "$E2E_DIR" >facts.txt <<'EOF' || fail "cannot analyse the profile"
import re, sys
sys.path.insert(0, sys.argv[3])
import pprof_traces
roots = {"runtime.goexit", "runtime.mstart", "runtime.rt0_go", "_rt0_amd64_linux", "_rt0_amd64", "runtime.clone"}
stacks = pprof_traces.stacks(sys.argv[1])
tot = sum(w for w, _ in stacks) or 1
kernel = lambda f: f in ("[kernel]",) or f.startswith(("__x64_", "do_", "entry_SYSCALL"))
def pct(part, whole):
    return 100 * part / (whole or 1)
grow = [(w, f) for w, f in stacks if f[-1] == "runtime.morestack"]
other = [(w, f) for w, f in stacks if f[-1] != "runtime.morestack"]
print("samples_s %.3f" % tot)
print("growth_pct %.2f" % pct(sum(w for w, _ in grow), tot))
print("growth_via_newstack_pct %.2f" % pct(sum(w for w, f in grow if "runtime.newstack" in f),
                                        sum(w for w, _ in grow)))
print("root_other_pct %.3f" % pct(sum(w for w, f in other if f[-1] in roots), sum(w for w, _ in other)))
print("parse_stmt_cum_pct %.2f" % pct(sum(w for w, f in stacks
                                          if "github.com/evanw/esbuild/internal/js_parser.(*parser).parseStmt" in f), tot))
# Leaves in esbuild's own code: the first user frame (kernel frames above it
# are named from kallsyms). Unnamed code shows as esbuild+0x...
user_leaf = []
for w, f in stacks:
    leaf = next((x for x in f if not x.startswith("[") and "kallsyms" not in x and not re.match(r"^[a-z_0-9]+$", x)), f[0])
    user_leaf.append((w, leaf))
own = [(w, l) for w, l in user_leaf if not l.startswith("[vdso]")]
print("named_pct %.2f" % pct(sum(w for w, l in own if "+0x" not in l), sum(w for w, _ in own)))
for w, f in sorted(other, key=lambda x: -x[0])[:400]:
    if f[-1] not in roots:
        print("notroot %.3f%% %s" % (pct(w, tot), " <- ".join(f[:5] + ["..."] + f[-2:])))
        break
# file:line on Go functions: locations in -raw with a .go file.
golines = sum(1 for l in open(sys.argv[2]) if re.search(r"\.go:[0-9]+", l))
print("go_lines %d" % golines)
EOF
grep -v '^notroot' facts.txt | tr '\n' ' ' | sed 's/^/  /'
echo
val() { awk -v k="$1" '$1 == k { print $2 }' facts.txt; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }

problems=0
problem() { echo "  FAILED: $*"; problems=$((problems + 1)); }
ge "$(val named_pct)" 95 || problem "only $(val named_pct)% of esbuild's leaf samples are named (want >= 95%)"
ge "$(val go_lines)" 100 || problem "only $(val go_lines) locations with a .go file:line"
ge "$(val parse_stmt_cum_pct)" 5 ||
	problem "js_parser.(*parser).parseStmt has $(val parse_stmt_cum_pct)% cumulative (want >= 5%: bundling parses)"
if ! ge "$(val root_other_pct)" 99.5; then
	grep '^notroot' facts.txt | sed 's/^/    /'
	problem "$(val root_other_pct)% of the samples outside stack growth reach a root (want >= 99.5%)"
fi
ge "$(val growth_via_newstack_pct)" 99 ||
	problem "stacks ending at runtime.morestack do not all come through runtime.newstack ($(val growth_via_newstack_pct)%)"
info "stack growth (ends at runtime.morestack): $(val growth_pct)% of the samples"
(( problems == 0 )) || fail "$problems check(s) failed"
pass "esbuild (${GOVER:-Go}): named from .gopclntab, whole stacks outside stack growth, output unchanged"
