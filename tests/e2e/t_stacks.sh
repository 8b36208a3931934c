#!/usr/bin/env bash
# t_stacks.sh - `pmutop --stacks -p PID` shows every thread where it is.
#
# The stacks_target workload parks its threads in known places: "sleeper"
# in nanosleep (stk_sleeper_thread -> stk_sleep_in_nanosleep), "spinner"
# busy in stk_busy_named_function (stk_spinner_thread), "reader" blocked
# reading a pipe (stk_reader_thread -> stk_block_on_pipe_read) and the main
# thread in stk_main_wait. --stacks (text, then --json) must show each
# thread in its place with the whole chain down to its start routine, leave
# no thread traced or stopped, and the program must then finish its work and
# exit 0. As root, the same again as an unprivileged user on their own
# process (setpriv), which is what ptrace permissions allow.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl stacks_target

errs=0
bad() { info "FAILED: $*"; errs=$((errs + 1)); }

# check_text FILE: the four threads in their places, chains complete (past
# each start routine into libc's thread start: the unwind did not stop short).
check_text() {
	awk '
	/^Thread / { cur = $3; gsub(/"/, "", cur); state[cur] = $4; next }
	/^ +#[0-9]+ / && cur != "" { fr[cur] = fr[cur] " " $3 }
	END {
		for (t in fr) printf "%s|%s|%s\n", t, state[t], fr[t]
	}' "$1" >"$1.threads"
	local line name st frames want
	for want in \
		'sleeper|nanosleep .*stk_sleep_in_nanosleep stk_sleeper_thread [^ ]' \
		'spinner|^ stk_busy_named_function stk_spinner_thread [^ ]' \
		'reader|read .*stk_block_on_pipe_read stk_reader_thread [^ ]' \
		'stacks_target|nanosleep .*stk_main_wait main'; do
		name=${want%%|*}
		line=$(grep "^$name|" "$1.threads" | head -n 1)
		if [[ -z $line ]]; then
			bad "$1: no thread \"$name\""
			continue
		fi
		frames=${line#*|*|}
		st=${line#*|}
		st=${st%%|*}
		if ! [[ $frames =~ ${want#*|} ]]; then
			bad "$1: thread $name is not where it should be: frames:$frames (want ${want#*|})"
		fi
		case $name in
		spinner) [[ $st == "(R:" ]] || bad "$1: spinner state $st, want R" ;;
		reader) [[ $st == "(S:" ]] || bad "$1: $name state $st, want S" ;;
		# Its 50 ms nanosleep may have just expired: on a loaded machine
		# it waits runnable for a CPU, still at the frames checked above.
		sleeper) [[ $st == "(S:" || $st == "(R:" ]] || bad "$1: $name state $st, want S (or R: woken, not yet run)" ;;
		esac
	done
}

# check_untraced PID: no thread of PID traced or in a ptrace/job stop.
check_untraced() {
	local task tr st
	for task in /proc/"$1"/task/*; do
		tr=$(awk '/^TracerPid:/ { print $2 }' "$task/status" 2>/dev/null)
		st=$(awk '/^State:/ { print $2 }' "$task/status" 2>/dev/null)
		[[ -z $tr ]] && continue # exited meanwhile
		[[ $tr == 0 ]] || bad "thread ${task##*/} still traced by $tr"
		[[ $st != t && $st != T ]] || bad "thread ${task##*/} left in state $st"
	done
}

# run_one LABEL PREFIX...: one target, --stacks text + --json, checks.
run_one() {
	local label=$1 pid i
	shift
	# Long enough for a loaded machine; SIGUSR2 ends it once the stacks are read.
	"$@" "$W/stacks_target" 60 >"$label.target.out" 2>"$label.target.err" &
	pid=$!
	E2E_BG_PIDS+=("$pid")
	for i in $(seq 100); do
		grep -q ready "$label.target.out" 2>/dev/null && break
		sleep 0.05
	done
	grep -q ready "$label.target.out" || { bad "$label: stacks_target never got ready"; return; }
	# The target's pid: the workload itself, not setpriv (which execs it).
	sleep 0.3

	info "[$label] \$ pmutop --stacks -p $pid"
	t0=$(now)
	"$@" timeout -k 2 20 "$PMUTOP" --stacks -p "$pid" >"$label.txt" 2>"$label.err"
	rc=$?
	info "[$label] exit status $rc in $(elapsed "$t0") s"
	show "$label.txt" 40
	show "$label.err"
	(( rc == 0 )) || bad "$label: pmutop --stacks exited with status $rc"
	check_text "$label.txt"
	check_untraced "$pid"

	info "[$label] \$ pmutop --stacks --json -p $pid"
	"$@" timeout -k 2 20 "$PMUTOP" --stacks --json -p "$pid" >"$label.json" 2>"$label.jerr"
	rc=$?
	(( rc == 0 )) || { show "$label.jerr"; bad "$label: pmutop --stacks --json exited with status $rc"; }
	if command -v python3 >/dev/null 2>&1; then
		python3 - "$label.json" <<-'PY' || bad "$label: JSON output wrong (see above)"
		import json, sys
		doc = json.load(open(sys.argv[1]))
		want = {
		    "sleeper": ["stk_sleep_in_nanosleep", "stk_sleeper_thread"],
		    "spinner": ["stk_busy_named_function", "stk_spinner_thread"],
		    "reader": ["stk_block_on_pipe_read", "stk_reader_thread"],
		}
		seen = {t["name"]: t for t in doc["threads"]}
		ok = True
		for name, chain in want.items():
		    t = seen.get(name)
		    if not t:
		        print("    no thread", name); ok = False; continue
		    fns = [f.get("function") or f.get("fallback") for f in t["frames"]]
		    idx = [fns.index(c) if c in fns else -1 for c in chain]
		    if -1 in idx or idx != sorted(idx):
		        print("    %s: frames %s do not hold %s in order" % (name, fns, chain)); ok = False
		    if name == "spinner" and fns[:1] != ["stk_busy_named_function"]:
		        print("    spinner leaf is", fns[:1]); ok = False
		    for f in t["frames"]:
		        if not f["address"].startswith("0x"):
		            print("    bad address", f); ok = False
		# argv as an array, quoting intact (issue 15), beside the joined command
		if doc.get("argv", [None])[1:] != ["60"] or not doc["argv"][0].endswith("stacks_target"):
		    print("    argv is", doc.get("argv")); ok = False
		print("    JSON: %d threads, pid %d, argv %s" % (len(doc["threads"]), doc["pid"], doc["argv"]))
		sys.exit(0 if ok else 1)
		PY
	else
		grep -q '"stk_busy_named_function"' "$label.json" || bad "$label: JSON lacks the spinner's function"
	fi
	check_untraced "$pid"

	# The program goes on undisturbed: it finishes its work and exits 0.
	kill -USR2 "$pid"
	wait "$pid"
	rc=$?
	show "$label.target.out"
	show "$label.target.err"
	(( rc == 0 )) || bad "$label: stacks_target exited with status $rc after --stacks"
	grep -q 'stacks_target: ok' "$label.target.out" || bad "$label: stacks_target did not report ok"
}

run_one root
if (( EUID == 0 )) && command -v setpriv >/dev/null 2>&1; then
	nobody_paths stacks_target
	PMUTOP=$NB_PMUTOP W=$NB_W run_one nobody setpriv --reuid=65534 --regid=65534 --clear-groups
else
	info "(not root or no setpriv: the unprivileged run is skipped)"
fi

# An absent process: a clear error, not a hang.
"$PMUTOP" --stacks -p 4194000 >absent.out 2>absent.err
rc=$?
show absent.err
(( rc != 0 )) && grep -qi 'no such process' absent.err || bad "--stacks on a missing PID: status $rc"

# Frames without a symbol (a stripped binary: coreutils' sleep) read
# "module+0xOFF": OFF is the start of the function holding the printed
# address (its .eh_frame entry, issue 13), so at or below the address's
# offset in its file and within the same function; the module is not
# repeated after it (issue 15).
sleep 30 &
spid=$!
E2E_BG_PIDS+=("$spid")
sleep 0.3
"$PMUTOP" dump -p "$spid" >sleep.txt 2>sleep.err
show sleep.txt 12
python3 - "$spid" sleep.txt <<-'PY' || bad "dump of sleep: module offsets do not match the addresses"
	import re, sys
	maps = []
	for l in open("/proc/%s/maps" % sys.argv[1]):
	    f = l.split()
	    lo, hi = (int(x, 16) for x in f[0].split("-"))
	    maps.append((lo, hi, int(f[2], 16), f[5] if len(f) > 5 else ""))
	n = 0
	for l in open(sys.argv[2]):
	    m = re.search(r"#\d+ +0x([0-9a-f]+) (\S+)\+0x([0-9a-f]+)(.*)$", l)
	    if not m:
	        continue
	    addr, mod, off, rest = int(m.group(1), 16), m.group(2), int(m.group(3), 16), m.group(4)
	    lo, hi, pgoff, path = next(x for x in maps if x[0] <= addr < x[1])
	    at = addr - lo + pgoff
	    if not (at - 0x10000 < off <= at) or path.rsplit("/", 1)[-1] != mod or "(" + mod + ")" in rest:
	        print("    bad frame:", l.strip(), "map", hex(lo), hex(pgoff), path); sys.exit(1)
	    n += 1
	print("    %d fallback frames: named by a function start at or below their address" % n)
	sys.exit(0 if n else 1)
	PY
kill "$spid" 2>/dev/null

# file:line and inlined calls, read on the loader's thread after the
# threads are released: inline_hot's spin_leaf and spin_mid are inlined
# into outer_caller.
if [[ -x $W/inline_hot ]]; then
	start_bg "$W/inline_hot" 30
	ipid=$BG_PID
	wait_started "$ipid"
	run_pmutop inline --stacks -p "$ipid"
	if (( RC != 0 )); then
		show inline.err; echo "  FAILED: --stacks on inline_hot exited $RC"; errs=$((errs + 1))
	elif ! grep -qE '\(inlined\) spin_leaf .*at inline_hot\.c:[0-9]+' inline.out ||
	     ! grep -qE 'outer_caller .*at inline_hot\.c:[0-9]+' inline.out; then
		show inline.out; echo "  FAILED: no file:line or inlined frames for inline_hot"; errs=$((errs + 1))
	else
		info "inline_hot: $(grep -c 'at inline_hot\.c:' inline.out) frames with file:line, $(grep -c '(inlined)' inline.out) inlined"
	fi
	kill "$ipid" 2>/dev/null
fi

(( errs == 0 )) || fail "$errs check(s) failed"
pass "--stacks shows each thread in its place (text and JSON), with file:line and inlined calls, target untouched and exits 0"
