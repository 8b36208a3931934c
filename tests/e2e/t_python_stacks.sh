#!/usr/bin/env bash
# t_python_stacks.sh - `pmutop --stacks` on Debian's python3.11: every
# thread's Python stack with file:line, innermost first, merged with the
# native frames (py-spy dump --native's view).
#
# The py_stacks workload parks three threads and its main thread in known
# functions at lines marked "# PARK name" (their callers at "# CALL name"):
# sleeper in time.sleep, locker in Lock.acquire, spinner busy in its loop,
# main in Event.wait. With the default --python=on each must show its
# function at the marked line, its caller just below at the caller's
# line, native frames above (the C the sleeping threads wait in) and no
# _PyEval_EvalFrameDefault left (Python frames take its place); with
# --python=only Python frames alone; with --python=off no Python frame and
# the interpreter loop back; each Python thread is marked so, the one that
# holds the GIL (the spinner) too; --json marks Python frames ("python": true,
# function, file, line). The target is left untraced and runs on. A copy
# of python3.11 without the _PyRuntime symbol is found by its .PyRuntime
# section; pyenv's 3.12/3.13, where installed, get one line saying pmutop
# has no layout for them, and their native frames.
# Needs /usr/bin/python3.11 (Debian's, stripped), not whatever python3 is
# first on PATH.
source "$(dirname "$0")/lib.sh"
e2e_init

PY=/usr/bin/python3.11
[[ -x $PY ]] || skip "$PY not installed (apt-get install python3.11)"
WL=$E2E_REPO/tests/workloads/py_stacks.py
errs=0
bad() { info "FAILED: $*"; errs=$((errs + 1)); }

mark() { grep -n "# $1 $2\$" "$WL" | cut -d: -f1; }

start_bg "$PY" "$WL" 60 >target.out 2>target.err
pid=$BG_PID
for _ in $(seq 200); do
	grep -q ready target.out 2>/dev/null && break
	sleep 0.05
done
grep -q ready target.out || fail "py_stacks did not start: $(head -c 300 target.err)"

# threads FILE: per thread "NAME|frames" with each frame as "fn@file:line"
# (Python) or "fn" (native), innermost first.
threads() {
	awk '
	/^Thread / { t++; next }
	/^ +#[0-9]+ +\(python\) / {
		fn = $3; loc = $NF; gsub(/[()]/, "", loc)
		n = split(loc, parts, "/"); loc = parts[n]
		fr[t] = fr[t] " " fn "@" loc; next
	}
	/^ +#[0-9]+ / { fr[t] = fr[t] " " $3 }
	END { for (i = 1; i <= t; i++) print fr[i] }' "$1"
}

run_pmutop on --stacks -p "$pid"
(( RC == 0 )) || { show on.err; fail "--stacks exited $RC"; }
show on.out 40
threads on.out >on.threads
grep -q "^Python 3\.11\." on.out || bad "no \"Python 3.11.x\" line"
grep -q "_PyEval_EvalFrameDefault" on.out && bad "an interpreter loop frame is left (Python frames should replace it)"
B=py_stacks.py
for spec in \
	"sleeper|Parker.sleep_here|Parker.run|(clock_nanosleep|__futex|pthread_cond)" \
	"locker|wait_on_lock|locker_main|(__futex|sem_wait|PyThread_acquire_lock)" \
	"spinner|spin_here|spinner_main|" \
	"main|main_wait|main|(__futex|sem_wait|PyThread_acquire_lock|Condition.wait)"; do
	IFS='|' read -r name fn caller native <<<"$spec"
	want="$fn@$B:$(mark PARK "$name") $caller@$B:$(mark CALL "$name")"
	line=$(grep -F -- " $want" on.threads | head -n 1)
	if [[ -z $line ]]; then
		bad "thread $name: no stack with \"$want\" (innermost first)"
		continue
	fi
	if [[ -n $native ]] && ! [[ ${line%%" $fn@"*} =~ $native ]]; then
		bad "thread $name: no native frame matching $native above $fn: ${line%%" $fn@"*}"
	fi
	[[ $line =~ Thread._bootstrap@threading.py:[0-9]+ || $name == main ]] ||
		bad "thread $name: its stack does not reach Thread._bootstrap: $line"
done
grep -q "<module>@$B:[0-9]" on.threads || bad "the main thread's <module> frame is missing"

# The GIL: the spinner is the one thread that wants it (the others wait in
# C without it, the sleeper wakes twice a second): in one of three looks at
# least it holds it, and never do two threads.
gil_spinner=0
for i in 1 2 3; do
	run_pmutop gil$i --stacks -p "$pid"
	(( RC == 0 )) || bad "--stacks exited $RC"
	held=$(grep -c '^Thread .*\[Python, holds the GIL\]$' gil$i.out)
	(( held <= 1 )) || bad "$held threads hold the GIL at once"
	(( $(grep -c '^Thread .*\[Python' gil$i.out) == 4 )) || bad "not every thread is marked as a Python thread"
	threads gil$i.out >gil$i.threads
	n=$(grep -n "^Thread .*holds the GIL" gil$i.out | cut -d: -f1)
	[[ -n $n ]] && awk -v n="$n" 'NR > n && /^Thread / { exit } NR > n' gil$i.out |
		grep -q "(python) spin_here " && gil_spinner=$((gil_spinner + 1))
done
(( gil_spinner >= 1 )) || bad "the spinner was never seen holding the GIL"
info "the spinner held the GIL in $gil_spinner of 3 looks"

run_pmutop json --stacks --json -p "$pid"
(( RC == 0 )) || { show json.err; fail "--stacks --json exited $RC"; }
"$PY" - json.out "$(mark PARK spinner)" <<'PYEOF' || bad "--json: the spinner's Python frames are not there"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["python"].startswith("3.11."), d.get("python")
want = int(sys.argv[2])
ok = any(f.get("python") and f["function"] == "spin_here" and f["line"] == want
         and f["file"].endswith("/py_stacks.py") for t in d["threads"] for f in t["frames"])
sys.exit(0 if ok else 1)
PYEOF

run_pmutop only --stacks --python=only -p "$pid"
(( RC == 0 )) || { show only.err; fail "--stacks --python=only exited $RC"; }
threads only.out >only.threads
# Every thread runs Python: nothing but Python frames.
grep -E ' [^ @]+( |$)' only.threads && bad "--python=only shows native frames"
grep -q "spin_here@$B:$(mark PARK spinner) spinner_main@" only.threads || bad "--python=only: spinner not in place"

run_pmutop off --stacks --python=off -p "$pid"
(( RC == 0 )) || { show off.err; fail "--stacks --python=off exited $RC"; }
grep -q "(python)" off.out && bad "--python=off shows Python frames"
grep -q "_PyEval_EvalFrameDefault" off.out || bad "--python=off: no interpreter loop frame"

# Left running, untraced.
for task in /proc/"$pid"/task/*; do
	tr=$(awk '/^TracerPid:/ { print $2 }' "$task/status" 2>/dev/null)
	[[ -z $tr || $tr == 0 ]] || bad "thread ${task##*/} still traced by $tr"
done
kill -0 "$pid" 2>/dev/null || bad "the target died"

# Without the _PyRuntime symbol (a build that does not export it): found by
# its .PyRuntime section. A copy of python3.11 whose .dynsym names it
# _PyRuntimX instead (nothing links against it: the program runs the same).
"$PY" -c '
import sys
b = open(sys.argv[1], "rb").read()
assert b.count(b"\0_PyRuntime\0") == 1
open(sys.argv[2], "wb").write(b.replace(b"\0_PyRuntime\0", b"\0_PyRuntimX\0"))
' "$PY" python3.11 && chmod +x python3.11 || fail "cannot make a copy of $PY without _PyRuntime"
start_bg ./python3.11 "$WL" 60 >nosym.target.out 2>nosym.target.err
for _ in $(seq 200); do
	grep -q ready nosym.target.out 2>/dev/null && break
	sleep 0.05
done
run_pmutop nosym --stacks -p "$BG_PID"
(( RC == 0 )) || bad "--stacks on python3.11 without _PyRuntime exited $RC"
grep -q "(python) spin_here (.*py_stacks.py:$(mark PARK spinner))" nosym.out ||
	{ show nosym.out; bad "no Python frames when _PyRuntime is found by its section"; }

# A CPython without a layout (pyenv's 3.12/3.13 where installed): one line
# naming it, native frames as before, exit 0.
for v in /root/.pyenv/versions/3.1[23].*/bin/python3.1[23]; do
	[[ -x $v ]] || continue
	start_bg "$v" "$WL" 60 >other.target.out 2>other.target.err
	for _ in $(seq 200); do
		grep -q ready other.target.out 2>/dev/null && break
		sleep 0.05
	done
	run_pmutop other --stacks -p "$BG_PID"
	(( RC == 0 )) || bad "--stacks on $v exited $RC"
	grep -Eq "^\(Python 3\.1[23]\.[0-9]+ in process $BG_PID .*no layout for this CPython version" other.out ||
		{ show other.out; bad "$v: no line saying its version has no layout"; }
	grep -q "(python)" other.out && bad "$v: Python frames read without a layout"
	grep -q "_PyEval_EvalFrameDefault" other.out || bad "$v: native frames missing"
	info "$v: $(grep '^(Python' other.out)"
	kill "$BG_PID" 2>/dev/null
done

(( errs == 0 )) || fail "$errs check(s) failed"
pass "Python stacks of four parked threads at their lines, merged with native frames; only/off modes"
