# shellcheck shell=bash
# shellcheck disable=SC2034  # W, EV, EV_HW, ... are set for the tests.
# tests/e2e/lib.sh - helpers sourced by the end-to-end tests (t_*.sh).
#
# A test is a bash script that sources this file, calls e2e_init, runs
# pmutop on a workload with a known answer and reads the result back with
# `go tool pprof` - the ecosystem's reader, not our own. It ends through
# pass (exit 0), skip (exit 77) or fail (exit 1); run.sh tallies them.
#
# Environment:
#   PMUTOP        the binary under test (default ./pmutop)
#   WORKLOAD_DIR  the built workloads (default: workloads/ next to PMUTOP's
#                 build dir, else build/workloads)
#   PMUTOP_QUICK  1 = shorter runs (e.g. under ASan)
#   E2E_KEEP      1 = keep each test's temp dir (profiles, logs)

set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_REPO=$(cd "$E2E_DIR/../.." && pwd)

# Make PMUTOP and WORKLOAD_DIR absolute (tests cd into temp dirs) and export
# them. Relative paths are taken from the current directory.
e2e_resolve_paths() {
	local p=${PMUTOP:-./pmutop} wd

	if [[ $p != */* ]] && command -v "$p" >/dev/null 2>&1; then
		p=$(command -v "$p")
	fi
	[[ $p == /* ]] || p=$PWD/$p
	PMUTOP=$p

	wd=${WORKLOAD_DIR:-}
	if [[ -z $wd ]]; then
		if [[ -d $(dirname "$p")/workloads ]]; then
			wd=$(dirname "$p")/workloads
		elif [[ -d $PWD/build/workloads ]]; then
			wd=$PWD/build/workloads
		else
			wd=$E2E_REPO/build/workloads
		fi
	fi
	[[ $wd == /* ]] || wd=$PWD/$wd
	WORKLOAD_DIR=$wd
	export PMUTOP WORKLOAD_DIR
}

QUICK=${PMUTOP_QUICK:-0}
[[ $QUICK == 1 ]] || QUICK=0

pass() { echo "PASS: $*"; exit 0; }
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
info() { echo "  $*"; }

# is_asan: whether $PMUTOP is an ASan build, read off the file (ldd runs
# the binary's loader, and under load it once missed libasan: a bound meant
# for the normal build then failed the ASan run).
is_asan() {
	readelf -d "$PMUTOP" 2>/dev/null | grep -q 'NEEDED.*libasan' ||
		readelf -Ws "$PMUTOP" 2>/dev/null | grep -q ' __asan_init'
}

# quick_or NORMAL QUICK: the value for this run.
quick_or() {
	if (( QUICK )); then echo "$2"; else echo "$1"; fi
}

E2E_BG_PIDS=()

e2e_cleanup() {
	local rc=$? p

	for p in "${E2E_BG_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	for p in "${E2E_BG_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	# A JIT killed with SIGKILL leaves its perf map; the pid comes round
	# again in a later test (pmutop leaves such a map unread, but the
	# machine should not fill /tmp with them).
	for p in "${E2E_BG_PIDS[@]}"; do
		rm -f "/tmp/perf-$p.map"
	done
	if [[ ${E2E_KEEP:-0} == 1 ]]; then
		echo "  (kept $T)"
	else
		rm -rf "$T"
	fi
	exit "$rc"
}

# Set up a test: resolve paths, check the binary, the workloads and go,
# make a temp dir $T (removed on exit) and cd into it.
e2e_init() {
	# Hermetic: no debuginfod server from the user's login (Debian's profile
	# may set one); t_debuginfod names its own per run.
	unset DEBUGINFOD_URLS
	e2e_resolve_paths
	[[ -x $PMUTOP ]] || fail "pmutop binary $PMUTOP not found (make pmutop; or set PMUTOP)"
	[[ -d $WORKLOAD_DIR ]] || fail "workloads not built in $WORKLOAD_DIR (make workloads)"
	command -v go >/dev/null 2>&1 ||
		fail "go not found: go tool pprof is needed to read profiles (apt-get install golang-go; make deps)"
	T=$(mktemp -d "${TMPDIR:-/tmp}/pmutop-e2e.XXXXXX") || fail "mktemp failed"
	trap e2e_cleanup EXIT
	cd "$T" || fail "cd $T"
}

# nobody_paths WL...: set NB_PMUTOP and NB_W to a pmutop and workloads WL
# that uid 65534 can run and read (for the unprivileged cases). They are
# $PMUTOP and $W themselves when those are reachable; a checkout under
# /root (mode 0700, as in a CI clone there) is not, so then copies in a
# directory of $T that everyone may enter (the copies are the same files:
# same code, same symbols).
nobody_paths() {
	local ok=1 w d
	as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	as_nobody test -x "$PMUTOP" || ok=0
	for w in "$@"; do
		as_nobody test -r "$W/$w" -a -x "$W/$w" || ok=0
	done
	NB_PMUTOP=$PMUTOP NB_W=$W
	(( ok )) && return 0
	d=$T/nobody-bin
	mkdir -p "$d/wl" || fail "mkdir $d"
	cp "$PMUTOP" "$d/pmutop" || fail "cannot copy $PMUTOP for uid 65534"
	for w in "$@"; do
		cp "$W/$w" "$d/wl/" || fail "cannot copy $W/$w for uid 65534"
	done
	chmod a+x "$T"
	chmod -R a+rX "$d"
	NB_PMUTOP=$d/pmutop NB_W=$d/wl
	info "(uid 65534 cannot reach $PMUTOP: unprivileged cases use copies in $d)"
}

# need_wl NAME...: fail the test unless these workloads are built. Use them
# as "$W/NAME".
need_wl() {
	local n

	for n in "$@"; do
		[[ -x $WORKLOAD_DIR/$n || -f $WORKLOAD_DIR/$n ]] ||
			fail "workload $WORKLOAD_DIR/$n not built (make workloads)"
	done
	W=$WORKLOAD_DIR
}

# start_bg CMD...: start CMD in the background and remember it for cleanup;
# its pid is in $BG_PID.
start_bg() {
	"$@" &
	BG_PID=$!
	E2E_BG_PIDS+=("$BG_PID")
}

# now: seconds since the epoch with sub-second precision.
now() { date +%s.%N; }

# elapsed START: seconds since START (from now), 2 decimals.
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# wait_gone PID SECS: wait until PID has exited (and been reaped if it is
# our child) for at most SECS. Returns 0 if it is gone.
wait_gone() {
	local pid=$1 deadline

	deadline=$(awk -v t="$(now)" -v s="$2" 'BEGIN { printf "%.3f", t + s }')
	while kill -0 "$pid" 2>/dev/null; do
		if awk -v t="$(now)" -v d="$deadline" 'BEGIN { exit !(t > d) }'; then
			return 1
		fi
		# A zombie child of ours is gone for our purposes.
		if [[ $(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null) == Z ]]; then
			return 0
		fi
		sleep 0.05
	done
	return 0
}

# wait_started PID: give a just-started workload time to exec and get going.
wait_started() {
	local _

	for _ in $(seq 50); do
		[[ -r /proc/$1/exe ]] && [[ $(readlink "/proc/$1/exe") != *bash* ]] && break
		sleep 0.02
	done
	sleep 0.1
}

# holds_perf_fd PID: whether PID, or a child of it (the command under a
# timeout wrapper), has a perf_event file open: its counters are set up.
holds_perf_fd() {
	local p

	for p in "$1" $(pgrep -P "$1"); do
		ls -l "/proc/$p/fd" 2>/dev/null | grep -q 'anon_inode:\[perf_event\]' && return 0
	done
	return 1
}

# open_gate FIFO PROFILER_PID...: once every profiler holds its counters
# (holds_perf_fd; at most 30 s), open the start gate of a workload waiting
# in wl_gate() (workload.h), so all of them see its whole run. Returns 1
# if some profiler never got there.
open_gate() {
	local fifo=$1 p ok _
	shift

	for _ in $(seq 600); do
		ok=1
		for p in "$@"; do holds_perf_fd "$p" || { ok=0; break; }; done
		if (( ok )); then
			# The counters are enabled right after they are opened.
			sleep 0.3
			timeout 10 sh -c "echo go >'$fifo'" && return 0
			return 1
		fi
		sleep 0.05
	done
	return 1
}

# run_pmutop NAME ARGS...: run $PMUTOP ARGS with stdout in NAME.out and
# stderr in NAME.err; the exit status is in $RC and the command is echoed.
# Killed after $PM_TIMEOUT seconds (default 90; RC is then 124 or 137).
run_pmutop() {
	local name=$1
	shift
	info "\$ pmutop $*"
	timeout -k 5 "${PM_TIMEOUT:-90}" "$PMUTOP" "$@" >"$name.out" 2>"$name.err"
	RC=$?
	if (( RC == 124 || RC == 137 )); then
		info "pmutop did not finish within ${PM_TIMEOUT:-90} s and was killed"
	fi
}

# show FILE [N]: print the first N (default 20) lines of FILE, indented.
show() {
	[[ -s $1 ]] || return 0
	head -n "${2:-20}" "$1" | sed 's/^/    | /'
}

# pprof ARGS...: go tool pprof, reading only what the file says (no
# re-symbolization from local binaries, which could hide our mistakes).
pprof() {
	HOME=${HOME:-/tmp} GOCACHE=${GOCACHE:-/tmp/gocache} \
		go tool pprof -symbolize=none "$@"
}

# pick_event: choose the event for tests that want a hardware counter.
# Sets EV to "cycles" when pmutop can sample it here, else to "task-clock"
# (saying so). Sets EV_HW=1/0. Fails the test if the probe fails for a
# reason other than "no such hardware counter".
pick_event() {
	local probe_rc

	timeout -k 5 30 "$PMUTOP" -q -e cycles --duration 0.2 --dump "$T/probe.pb.gz" -- true \
		>"$T/probe.out" 2>"$T/probe.err"
	probe_rc=$?
	if (( probe_rc == 0 )); then
		EV=cycles
		EV_HW=1
		return
	fi
	if grep -qiE 'not supported|unsupported|not available|no hardware|no pmu|not counted|EOPNOTSUPP|ENOENT|No such device' "$T/probe.err" ||
		perf stat -e cycles true 2>&1 | grep -q 'not supported'; then
		EV=task-clock
		EV_HW=0
		echo "SKIP/FALLBACK: no hardware PMU here, using task-clock"
		info "(pmutop said: $(head -n 1 "$T/probe.err"))"
		return
	fi
	show "$T/probe.err"
	fail "probing 'pmutop -e cycles' failed with status $probe_rc for a reason other than a missing PMU"
}

# raw_samples PROFILE: one line per sample from `go tool pprof -raw`:
#   VALUE1 VALUE2 ...<TAB>THREAD<TAB>TID<TAB>leaf;caller;...;root
# THREAD/TID are "-" when the sample has no such label. Inlined frames are
# expanded (innermost first); a location without a function shows as its
# address. Returns non-zero if pprof cannot read the file.
raw_samples() {
	pprof -raw "$1" >"$T/raw.txt" 2>"$T/raw.err" || {
		show "$T/raw.err"
		return 1
	}
	awk '
	function flush() {
		if (ns > 0) { svals[ns] = cur_vals; slocs[ns] = cur_locs;
			sthr[ns] = cur_thr; stid[ns] = cur_tid }
	}
	/^Samples:/ { mode = "types"; next }
	mode == "types" { mode = "samples"; next }
	mode == "samples" && /^Locations/ { flush(); mode = "locs"; next }
	mode == "samples" {
		if ($0 ~ /^ *-?[0-9]+( +-?[0-9]+)*: /) {
			flush(); ns++
			i = index($0, ":")
			cur_vals = substr($0, 1, i - 1); cur_locs = substr($0, i + 1)
			gsub(/^ +| +$/, "", cur_vals); gsub(/ +/, " ", cur_vals)
			gsub(/^ +| +$/, "", cur_locs)
			cur_thr = "-"; cur_tid = "-"
		} else {
			if (match($0, /(^|[ ])thread:\[[^]]*\]/)) {
				s = substr($0, RSTART, RLENGTH); sub(/^ /, "", s)
				cur_thr = substr(s, 9, length(s) - 9)
			}
			if (match($0, /(^|[ ])tid:\[[^]]*\]/)) {
				s = substr($0, RSTART, RLENGTH); sub(/^ /, "", s)
				s = substr(s, 6, length(s) - 6); sub(/ .*/, "", s)
				cur_tid = s
			}
		}
		next
	}
	mode == "locs" && /^Mappings/ { mode = "maps"; next }
	mode == "locs" {
		if ($1 ~ /^[0-9]+:$/) {
			id = substr($1, 1, length($1) - 1); addr = $2
			j = 3
			if ($j ~ /^M=/) j++
			if ($j == "[F]") j++
			loc[id] = (j <= NF) ? $j : addr
		} else if (NF > 0) {
			loc[id] = loc[id] ";" $1
		}
		next
	}
	END {
		for (k = 1; k <= ns; k++) {
			n = split(slocs[k], ids, " "); st = ""
			for (m = 1; m <= n; m++) {
				f = (ids[m] in loc) ? loc[ids[m]] : ("loc" ids[m])
				st = (m == 1) ? f : st ";" f
			}
			printf "%s\t%s\t%s\t%s\n", svals[k], sthr[k], stid[k], st
		}
	}' "$T/raw.txt"
}

# sample_types PROFILE: the "samples/count event/count" line of -raw.
sample_types() {
	pprof -raw "$1" 2>/dev/null | awk '/^Samples:/ { getline; print; exit }'
}

# top_flat PROFILE [SAMPLE_INDEX]: "function flat" lines from
# `go tool pprof -top` (all nodes), flat as a plain number in the sample
# type's own unit (time units are printed in ns).
top_flat() {
	pprof -top -nodecount=100000 -nodefraction=0 -edgefraction=0 -unit=ns \
		${2:+-sample_index=$2} "$1" >"$T/top.txt" 2>"$T/top.err" || {
		show "$T/top.err"
		return 1
	}
	awk '
	/^ +flat +flat%/ { body = 1; next }
	body && NF >= 6 {
		v = $1; sub(/[a-zA-Z]+$/, "", v)
		name = $6
		for (i = 7; i <= NF; i++) name = name " " $i
		printf "%s\t%.0f\n", name, v + 0
	}' "$T/top.txt"
}

# need_browser: fail unless Debian's chromium, node and playwright-core
# (tests/web, installed by `make deps`) are there. Sets BROWSER_CHECK to
# the page checker, run as: node "$BROWSER_CHECK" URL [options].
need_browser() {
	local web=$E2E_REPO/tests/web

	command -v node >/dev/null 2>&1 || fail "node not found (make deps installs nodejs)"
	[[ -x ${CHROMIUM:-/usr/bin/chromium} ]] ||
		fail "chromium not found at ${CHROMIUM:-/usr/bin/chromium} (make deps installs it)"
	[[ -d $web/node_modules/playwright-core ]] ||
		fail "playwright-core not installed in $web (make deps runs npm ci there)"
	BROWSER_CHECK=$web/check_flame.js
}

# json_get FILE EXPR: the value of the JavaScript expression EXPR over the
# JSON object in FILE (bound to o), printed by node; e.g. json_get r.json o.state.zoom
json_get() {
	node -e 'const o = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		const v = eval(process.argv[2]); console.log(typeof v === "object" ? JSON.stringify(v) : v);' "$1" "$2"
}

# browser NAME URL ARGS...: the checker's JSON in NAME.json; fails the test on a failed check.
browser() {
	local name=$1
	shift
	info "\$ check_flame $*"
	timeout -k 5 100 node "$BROWSER_CHECK" "$@" >"$name.json" 2>"$name.err"
	local rc=$?
	show "$name.err"
	(( rc == 0 )) || fail "$name: the page failed in chromium (status $rc)"
}

# shares_table FILE: the --shares rows of check_flame's JSON in FILE, and the max error.
shares_table() {
	json_get "$1" 'o.shares.rows.map(r => "    " + r.name + " matched " + r.matched + "% -> " + r.share + "% of the ten (want " + r.want + "%)").join("\n")'
	info "max error $(json_get "$1" o.shares.max_error_pp) pp"
}

# http_start ARGS...: run `$PMUTOP --http ARGS` in the background (stderr in
# server.err), wait for the loopback address it prints; sets SRV (its pid)
# and PORT, or fails the test. The test's cleanup kills the server; the
# timeout (${HTTP_TIMEOUT:-300} s) is only a net for a server left behind,
# longer than any test may run (run.sh's limit), so that it never ends a
# server a slow test still uses (an ASan build with the other core busy
# took t_http past 100 s).
http_start() {
	timeout -k 5 "${HTTP_TIMEOUT:-300}" "$PMUTOP" --http "$@" 2>server.err &
	SRV=$!
	E2E_BG_PIDS+=("$SRV")
	PORT=
	for _ in $(seq 100); do
		PORT=$(grep -o 'http://127\.0\.0\.1:[0-9]*' server.err 2>/dev/null | head -1 | sed 's/.*://')
		[[ -n $PORT ]] && break
		sleep 0.05
	done
	[[ -n $PORT ]] || { show server.err; fail "the server did not report its address (loopback)"; }
}

# cum_share PROFILE FUNC [PPROF ARGS...]: FUNC's cumulative value as a % of
# the total (of the samples any -tagfocus in ARGS keeps).
cum_share() {
	local prof=$1 fn=$2
	shift 2
	pprof -top -nodecount=100000 -nodefraction=0 -edgefraction=0 -unit=ns "$@" "$prof" 2>/dev/null |
		awk -v f="$fn" '
		# "Showing nodes accounting for X, P% of T total": with every node
		# shown, X is the total of the samples kept by any -tagfocus.
		/^Showing nodes accounting for/ { t = $5; sub(/[a-z]*,$/, "", t); t += 0 }
		/^ +flat +flat%/ { body = 1; next }
		body && $6 == f { c = $4; sub(/[a-z]+$/, "", c); v += c }
		END { if (t > 0) printf "%.1f\n", 100 * v / t; else print 0 }'
}

# tag_values PROFILE KEY: the values of label KEY with their share, "VALUE\tPCT".
tag_values() {
	pprof -tags "$1" 2>/dev/null | awk -v k="$2:" '
		$1 == k { on = 1; next }
		on && NF == 0 { on = 0 }
		on && /%\):/ { v = $NF; p = $0; sub(/.*\( */, "", p); sub(/%.*/, "", p); print v "\t" p }'
}

# thread_shares RAW CPUFILE LABEL LOST PERIOD: each worker's share of the
# samples against its share of what it really ran.
#   RAW      raw_samples of a profile of the threads workload, launched by
#            pmutop and recorded until it exited (no --duration);
#   CPUFILE  what the workload measured in that run (THREADS_CPU_FILE, with
#            THREADS_COUNT_EVENT the sampled event: "TID NAME CPU_NS SYS_NS
#            COUNT" per worker, tests/workloads/threads.c).
# Both sides cover the same window - each worker's whole life - so the truth
# is exact, whatever the scheduler gave each thread on a busy machine (ten
# threads on two CPUs shared with other work are not 10% each). The truth is
# each worker's own count of the sampled event (its CPU time where it has
# none): what the kernel drew the samples from. Its CPU time (the thread's
# CPU clock) is printed beside it; the two differ by up to ~5% of a thread
# when ptrace stops it at every sample. Shares are of the ten workers'
# samples and counts (the main thread, ~0.1%, is printed apart). A worker's
# bound is 4 standard deviations of its share measured with that many
# samples (binomial: 4 * sqrt(p (1 - p) / N); periodic sampling is less
# noisy, so this is conservative), plus what LOST samples (the summary's "lost N": the kernel dropped them, buffer
# full) can move it at most: (1 - p) * LOST / (N + LOST), all of them from
# one thread, since losses come in bursts on whichever threads ran. Also
# checked: every sample has thread and tid labels, each worker's tid carries
# the worker's name and no other tid does. The spread of the truth and of
# pmutop's shares around the nominal 10% is printed, not checked (it is the
# machine's, not pmutop's), and so is how many samples the counts and the
# sample PERIOD call for that are neither in the profile nor among the
# lost ones (an ASan pmutop at load 19 once had 151 of 4,432 missing with
# "lost 0", 70 of them worker2's: -1.63 pp against a 1.86 pp bound; issue 15
# item 2 asks for losses always to be counted). With task-clock on this VM
# ~0.15% go missing: perf record -e task-clock -c 250000 of the same
# workload misses as many (58 of the 39,742 the counts call for): the kernel's hrtimer behind the
# software clocks fires late now and then and forwards over the periods it
# missed without a sample or a LOST record. Prints a table; returns
# non-zero when a check fails.
thread_shares() {
	awk -F'\t' -v label="$3" -v lost="${4:-0}" -v period="${5:-0}" '
	FNR == NR {
		if (split($0, f, " ") < 5) next
		nw++; t = f[1]; wtid[nw] = t; wname[t] = f[2]
		cpu[t] = f[3]; cpusum += f[3]; sys[t] = f[4]
		cnt[t] = f[5]; if (f[5] < 0) nocount = 1; cntsum += f[5]
		next
	}
	{
		split($1, v, " "); n = v[1] + 0
		all += n
		if ($2 == "-" || $3 == "-") { nolabel += n; next }
		by[$3] += n
		if ($3 in wname) {
			nsamp += n
			if ($2 != wname[$3] && !(($3, $2) in seen)) { seen[$3, $2] = 1; misname[$3] = misname[$3] " " $2 }
		} else {
			other[$2 " (tid " $3 ")"] += n
			if ($2 ~ /^worker[0-9]$/) stray[$2 " (tid " $3 ")"] += n
		}
	}
	END {
		bad = 0
		if (nw != 10 || cpusum <= 0) { printf "  %s: the workload measured %d workers (want 10)\n", label, nw; exit 1 }
		if (nsamp <= 0) { printf "  %s: no samples of the ten workers\n", label; exit 1 }
		what = nocount ? "CPU time" : "count of the event"
		printf "  %s: %d samples of the ten workers, %.3f s of their CPU time; truth: each one'"'"'s %s\n",
			label, nsamp, cpusum / 1e9, what
		printf "  %-8s %-8s %8s %8s %8s %7s %6s %5s\n", "tid", "thread", "truth%", "pmutop%", "error", "bound", "cpu%", "sys%"
		for (k = 1; k <= nw; k++) {
			t = wtid[k]; p = nocount ? cpu[t] / cpusum : cnt[t] / cntsum
			c = 100 * cpu[t] / cpusum; got = 100 * by[t] / nsamp
			err = got - 100 * p; abserr = err < 0 ? -err : err
			b = 400 * sqrt(p * (1 - p) / nsamp)
			b += 100 * (1 - p) * lost / (nsamp + lost)
			over = abserr > b
			if (over) bad = 1
			if (abserr > maxerr) { maxerr = abserr; worst = wname[t]; wb = b }
			d = 100 * p - 10; d = d < 0 ? -d : d; if (d > tspread) tspread = d
			d = got - 10; d = d < 0 ? -d : d; if (d > nomerr) nomerr = d
			d = got - c; d = d < 0 ? -d : d; if (d > cpuerr) cpuerr = d
			printf "  %-8s %-8s %8.2f %8.2f %+8.2f %7.2f %6.2f %5.1f%s\n", t, wname[t], 100 * p, got, err, b, c,
				(cpu[t] > 0) ? 100 * sys[t] / cpu[t] : 0, over ? "  <-- over the bound" : ""
		}
		for (o in other) printf "  (other: %s, %.2f%% of all samples)\n", o, 100 * other[o] / all
		printf "  %s: max error %.2f pp (%s; bound %.2f pp = 4 sigma of %d samples%s)\n", label, maxerr, worst, wb,
			nsamp, (lost > 0) ? sprintf(" + up to %.2f for %d lost", 100 * lost / (nsamp + lost), lost) : ""
		if (!nocount && period > 0)
			printf "  %s: not checked: the counts call for %d samples, the profile has %d and %d were lost: %d unaccounted\n",
				label, cntsum / period, nsamp, lost, cntsum / period - nsamp - lost
		printf "  %s: not checked: pmutop against CPU time %.2f pp at most; against the nominal 10%%: truth %.2f pp, pmutop %.2f pp\n",
			label, cpuerr, tspread, nomerr
		if (nolabel > 0) { printf "  %.2f%% of the samples lack thread/tid labels\n", 100 * nolabel / all; bad = 1 }
		for (t in misname) { printf "  tid %s (%s) also labelled:%s\n", t, wname[t], misname[t]; bad = 1 }
		for (s in stray) { printf "  %s: a worker name on a tid the workload did not report\n", s; bad = 1 }
		exit bad
	}' "$2" "$1"
}
