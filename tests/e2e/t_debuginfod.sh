#!/usr/bin/env bash
# t_debuginfod.sh - names, lines and code of stripped binaries from a
# debuginfod server by build-id (issue 13 item 5, issue 16 item 3).
#
# A real `debuginfod -F` on 127.0.0.1 serves a directory holding the
# unstripped two_loops; pmutop profiles a stripped copy (strip -s: no
# .symtab, no DWARF; the same build-id). Checked:
#   1. names and file:line come from the server: two_loops at its LOOP_A /
#      LOOP_B lines in `go tool pprof`, the file is in the client cache;
#   2. --annotate on that profile with the binary gone: its bytes come from
#      the server, the listing is objdump's for the unstripped file; without
#      DEBUGINFOD_URLS the error says how to get it;
#   3. --no-debuginfod: addresses (tl_stripped+0x...), nothing fetched;
#   4. a server that is down (closed port) and one that hangs
#      (DEBUGINFOD_TIMEOUT=1): no hang, a note, names fall back; Ctrl-C
#      while the end waits on the hanging one (DEBUGINFOD_TIMEOUT=60) ends
#      it at once; the live view shows its final screen after 2 s at most;
#   5. a server answering garbage, and one answering another build's ELF:
#      rejected with a note, names fall back, the file leaves the cache;
#   6. a local debug file with .symtab but no DWARF (by build-id in
#      PMUTOP_DEBUGINFO_PATH): its names are used (issue 13 item 4);
#   7. a dwz-compressed debug file: its supplement fetched by pmutop's
#      thread (strace: no connect() from the session's thread), lines right.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl two_loops
command -v debuginfod >/dev/null || skip "debuginfod not installed (apt-get install debuginfod)"
# Debian's python3 (a version manager's shim in PATH can take a second to start).
PY=/usr/bin/python3
[[ -x $PY ]] || PY=$(type -P python3) || skip "python3 not installed (the misbehaving servers)"
command -v curl >/dev/null || skip "curl not installed"
for t in strip objcopy objdump readelf; do
	command -v $t >/dev/null || skip "$t not installed (binutils)"
done
FAKE=$E2E_DIR/fake_debuginfod.py
DUR=1
unset DEBUGINFOD_URLS DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE

mkdir -p srv
cp "$W/two_loops" srv/two_loops
cp "$W/two_loops" tl_stripped
strip -s tl_stripped
readelf -S tl_stripped | grep -qE '\.symtab|\.debug_info' && fail "strip -s left .symtab or DWARF"
BID=$(readelf -n tl_stripped | awk '/Build ID:/ { print $3 }')
[[ $BID == "$(readelf -n srv/two_loops | awk '/Build ID:/ { print $3 }')" && -n $BID ]] ||
	fail "the stripped copy's build-id differs"
SRC=$E2E_REPO/tests/workloads/two_loops.c
L_A=$(grep -n '/\* LOOP_A' "$SRC" | head -1 | cut -d: -f1)
L_B=$(grep -n '/\* LOOP_B' "$SRC" | head -1 | cut -d: -f1)

# For 7: shares and threads compressed by dwz (shared DIEs moved to a
# supplement, common.debug), served beside two_loops.
ALT=
if command -v dwz >/dev/null; then
	mkdir -p dz && cp "$W/shares" dz/s && cp "$W/threads" dz/t
	(cd dz && dwz -m common.debug -M /nowhere/common.debug s t) || fail "dwz failed"
	readelf -S dz/s | grep -q gnu_debugaltlink || fail "dwz left no .gnu_debugaltlink"
	ALT=$(readelf -n dz/common.debug | awk '/Build ID:/ { print $3 }')
	SBID=$(readelf -n dz/s | awk '/Build ID:/ { print $3 }')
	cp dz/s srv/shares_dwz && cp dz/common.debug srv/common.debug
fi

free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The real server: a free port (retried if taken meanwhile), then wait
# until its scan has indexed the binary.
for try in 1 2 3; do
	PORT=$(free_port)
	env -u DEBUGINFOD_URLS debuginfod -F -p "$PORT" -d "$T/db.sqlite" -t 0 -g 0 -c 1 \
		"$T/srv" >server.log 2>&1 &
	SRV=$!
	E2E_BG_PIDS+=("$SRV")
	code=000
	for _ in $(seq 300); do
		kill -0 "$SRV" 2>/dev/null || break
		code=$(curl -s -m 2 -o /dev/null -w '%{http_code}' \
			"http://127.0.0.1:$PORT/buildid/$BID/debuginfo")
		[[ $code == 200 && -n $ALT ]] &&
			code=$(curl -s -m 2 -o /dev/null -w '%{http_code}' \
				"http://127.0.0.1:$PORT/buildid/$ALT/debuginfo")
		[[ $code == 200 && -n $ALT ]] &&
			code=$(curl -s -m 2 -o /dev/null -w '%{http_code}' \
				"http://127.0.0.1:$PORT/buildid/$SBID/debuginfo")
		[[ $code == 200 ]] && break
		sleep 0.1
	done
	[[ $code == 200 ]] && break
	kill "$SRV" 2>/dev/null
	rm -f "$T"/db.sqlite*
done
[[ $code == 200 ]] || { show server.log; fail "debuginfod did not serve $BID (last HTTP status $code)"; }
URL=http://127.0.0.1:$PORT
info "debuginfod on $URL serves build-id $BID"

# rec NAME URLS [PMUTOP ARGS...]: profile tl_stripped with DEBUGINFOD_URLS
# (empty: unset) and a fresh client cache NAME.cache; NAME.secs = wall time.
rec() {
	local name=$1 urls=$2 t0
	shift 2
	t0=$(now)
	if [[ -n $urls ]]; then
		DEBUGINFOD_URLS=$urls DEBUGINFOD_CACHE_PATH=$T/$name.cache \
			run_pmutop "$name" -e task-clock --duration "$DUR" --no-tui \
			--dump "$name.pb.gz" "$@" -- ./tl_stripped $((DUR + 30))
	else
		DEBUGINFOD_CACHE_PATH=$T/$name.cache \
			run_pmutop "$name" -e task-clock --duration "$DUR" --no-tui \
			--dump "$name.pb.gz" "$@" -- ./tl_stripped $((DUR + 30))
	fi
	SECS=$(elapsed "$t0")
	(( RC == 0 )) || { show "$name.err"; fail "$name: pmutop exited with status $RC"; }
	[[ -s $name.pb.gz ]] || fail "$name: no profile written"
}

# top_share NAME FUNC: FUNC's flat % in NAME.pb.gz (0 when absent).
top_share() {
	pprof -top -nodecount=50 "$1.pb.gz" 2>/dev/null |
		awk -v f="$2" '$6 == f { v = $2; sub(/%/, "", v); print v; found = 1; exit }
			       END { if (!found) print 0 }'
}

# fallback_only NAME: the profile names the hot code by address, not two_loops.
fallback_only() {
	local s
	s=$(top_share "$1" two_loops)
	awk -v s="$s" 'BEGIN { exit !(s == 0) }' || fail "$1: two_loops named ($s%) without its debug file"
	pprof -top -nodecount=5 "$1.pb.gz" 2>/dev/null | grep -q 'tl_stripped+0x' ||
		{ pprof -top -nodecount=8 "$1.pb.gz" 2>&1 | sed 's/^/    | /'; fail "$1: no tl_stripped+0x... row"; }
}

# bounded NAME: pmutop ended in bounded time (its duration + a margin for
# one timeout and its retries on a loaded machine).
bounded() {
	awk -v s="$SECS" -v d="$DUR" 'BEGIN { exit !(s < d + 15) }' ||
		fail "$1: pmutop took $SECS s for a ${DUR} s profile: it waited on the server"
	info "$1: pmutop ended after $SECS s (duration $DUR s)"
}

# 1. Names and lines from the server.
rec named "$URL"
show named.err 3
s=$(top_share named two_loops)
info "named: two_loops has $s% of the samples"
awk -v s="$s" 'BEGIN { exit !(s > 80) }' ||
	{ pprof -top -nodecount=8 named.pb.gz 2>&1 | sed 's/^/    | /'; fail "two_loops not named from the server's debug file ($s%)"; }
pprof -lines -top -nodecount=20 named.pb.gz >named.lines 2>&1
grep -qE "two_loops .*two_loops\.c:$L_A\$" named.lines && grep -qE "two_loops .*two_loops\.c:$L_B\$" named.lines ||
	{ show named.lines 12; fail "no two_loops.c:$L_A / :$L_B lines from the server's DWARF"; }
[[ -s named.cache/$BID/debuginfo ]] || fail "the debug file is not in the client cache (named.cache/$BID)"
info "named: two_loops at two_loops.c:$L_A and :$L_B, debug file in the client cache"

# 2. --annotate with the binary gone: its code from the server.
mv tl_stripped tl_stripped.away
DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH=$T/ann.cache \
	run_pmutop ann --load named.pb.gz --annotate two_loops -q
(( RC == 0 )) || { show ann.err; fail "--annotate with the binary fetched from debuginfod failed ($RC)"; }
show ann.out 6
grep -q 'came from debuginfod' ann.out || fail "no note that the code came from debuginfod"
[[ -s ann.cache/$BID/executable ]] || fail "the executable is not in the client cache"
grep -q 'LOOP_A' ann.out || fail "no source lines in the fetched binary's listing"
objdump -d --no-show-raw-insn srv/two_loops |
	awk '/<two_loops>:$/ { on = 1; next } on && /^$/ { exit } on { a = $1; sub(/:/, "", a); print a }' >obj.txt
awk '/^ *[0-9.]*%? *[0-9a-f]+:  / { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9a-f]+:$/) { a = $i; sub(/:/, "", a); print a; break } }' \
	ann.out >ours.txt
[[ -s obj.txt ]] && diff obj.txt ours.txt >addr.diff ||
	{ show addr.diff; fail "the listing's addresses are not objdump's for the served binary"; }
info "annotate: $(wc -l <obj.txt) instructions from the fetched binary, objdump's addresses"
DEBUGINFOD_CACHE_PATH=$T/ann2.cache run_pmutop ann_off --load named.pb.gz --annotate two_loops -q
(( RC == 1 )) || fail "--annotate without the binary and without DEBUGINFOD_URLS: status $RC, want 1"
grep -q 'DEBUGINFOD_URLS' ann_off.err || { show ann_off.err; fail "the error does not name DEBUGINFOD_URLS"; }
mv tl_stripped.away tl_stripped

# 3. --no-debuginfod: addresses, nothing fetched (libdwfl's client neither).
rec off "$URL" --no-debuginfod
fallback_only off
[[ ! -e off.cache/$BID ]] || fail "--no-debuginfod: something was fetched (off.cache/$BID)"
info "--no-debuginfod: addresses, nothing in the client cache"

# 4. A server that is down, and one that hangs.
rec down "http://127.0.0.1:$(free_port)"
fallback_only down
bounded down
grep -q 'debuginfod: no answer from' down.err || { show down.err; fail "down: no note that the server did not answer"; }

start_bg "$PY" "$FAKE" slow.port slow
for _ in $(seq 100); do [[ -s slow.port ]] && break; sleep 0.05; done
[[ -s slow.port ]] || fail "the hanging server did not start"
DEBUGINFOD_TIMEOUT=1 rec slow "http://127.0.0.1:$(cat slow.port)"
fallback_only slow
bounded slow
grep -q 'debuginfod: no answer from' slow.err || { show slow.err; fail "slow: no note that the server did not answer"; }
# One file or more: without libc6-dbg, libc and ld.so are asked for too.
grep -qE 'debuginfod: fetching [0-9]+ files?' slow.err || { show slow.err; fail "slow: no progress line"; }

# Ctrl-C while the end waits for a hanging server (its timeout 60 s): the
# transfer is cancelled, the profile written at once.
DEBUGINFOD_TIMEOUT=60 DEBUGINFOD_URLS="http://127.0.0.1:$(cat slow.port)" DEBUGINFOD_CACHE_PATH=$T/int.cache \
	timeout -k 5 60 "$PMUTOP" -e task-clock --duration "$DUR" --no-tui --dump int.pb.gz \
	-- ./tl_stripped 30 >int.out 2>int.err &
PM=$!
E2E_BG_PIDS+=("$PM")
for _ in $(seq 300); do grep -qs 'debuginfod: fetching' int.err && break; sleep 0.05; done
grep -q 'debuginfod: fetching' int.err || { show int.err; fail "Ctrl-C: no progress line within 15 s"; }
t0=$(now)
kill -INT "$PM"
wait_gone "$PM" 15 || fail "Ctrl-C: pmutop still waits on the server 15 s later"
wait "$PM"
RC=$?
info "Ctrl-C while fetching: pmutop ended $(elapsed "$t0") s later, status $RC"
(( RC == 0 )) && [[ -s int.pb.gz ]] || { show int.err; fail "Ctrl-C while fetching: status $RC, profile $(ls int.pb.gz 2>&1)"; }
grep -q 'interrupted while fetching debug info from debuginfod' int.err || { show int.err; fail "Ctrl-C: no note"; }

# The live view, the same hanging server: when sampling ends the screen
# shows the final data after two seconds at most, and q quits.
if command -v tmux >/dev/null 2>&1; then
	source "$E2E_DIR/tmux_lib.sh"
	tmux_start 100 30
	t0=$(now)
	run_in_pane "clear; DEBUGINFOD_TIMEOUT=60 DEBUGINFOD_URLS=http://127.0.0.1:$(cat slow.port) DEBUGINFOD_CACHE_PATH=$T/tui.cache $PMUTOP -e task-clock --duration $DUR -- ./tl_stripped 30 2>tui.err; echo EXIT=\$?"
	wait_for 'sampling ended|exited: showing' $((DUR + 20)) ||
		{ show_screen; fail "live view: no final screen $((DUR + 20)) s after start"; }
	ended=$(elapsed "$t0")
	info "live view: final data on screen $ended s after start (duration $DUR s)"
	awk -v e="$ended" -v d="$DUR" 'BEGIN { exit !(e < d + 12) }' ||
		fail "live view: the final screen took $ended s: it waited on the server"
	keys q
	wait_for 'EXIT=0' 10 || { show_screen; show tui.err; fail "live view: q did not end pmutop with status 0"; }
else
	info "tmux not installed: the live-view part is not run"
fi

# 5. Wrong answers: random bytes, another build's ELF.
head -c 30000 /dev/urandom >garbage.bin
OTHER=$(type -P true) # an ELF file of another build
for kind in garbage other; do
	f=garbage.bin
	[[ $kind == other ]] && f=$OTHER
	start_bg "$PY" "$FAKE" "$kind.port" file "$f"
	for _ in $(seq 100); do [[ -s $kind.port ]] && break; sleep 0.05; done
	[[ -s $kind.port ]] || fail "the $kind server did not start"
	rec "$kind" "http://127.0.0.1:$(cat "$kind.port")"
	fallback_only "$kind"
	want='not an ELF file: ignored'
	[[ $kind == other ]] && want='build-id [0-9a-f]*, not the one asked for: ignored'
	grep -qE "debuginfod: .*$want" "$kind.err" || { show "$kind.err"; fail "$kind: no rejection note ($want)"; }
	[[ ! -s $kind.cache/$BID/debuginfo ]] || fail "$kind: the rejected file stayed in the client cache"
	info "$kind: rejected ($(grep -oE "$want" "$kind.err" | head -1))"
done

# 6. A local debug file with .symtab and no DWARF names the stripped code.
mkdir -p dbg/.build-id/"${BID:0:2}"
objcopy --only-keep-debug srv/two_loops symtab.debug &&
	objcopy --strip-debug symtab.debug dbg/.build-id/"${BID:0:2}/${BID:2}.debug" ||
	fail "objcopy could not make a symtab-only debug file"
readelf -S dbg/.build-id/"${BID:0:2}/${BID:2}.debug" 2>/dev/null | grep -q '\.debug_info' && fail "the debug file still has DWARF"
PMUTOP_DEBUGINFO_PATH=$T/dbg rec symtab "" --no-debuginfod
s=$(top_share symtab two_loops)
info "symtab-only debug file: two_loops has $s%"
awk -v s="$s" 'BEGIN { exit !(s > 80) }' ||
	{ pprof -top -nodecount=8 symtab.pb.gz 2>&1 | sed 's/^/    | /'; fail "the debug file's .symtab did not name two_loops"; }

# 7. A dwz-compressed debug file: its supplement (.gnu_debugaltlink) is
# fetched by pmutop's fetching thread too, before libdw reads the DWARF -
# libdw would otherwise fetch it on the session's thread. The lines need
# the supplement (dwz moved shared DIEs there).
if [[ -n $ALT ]]; then
	cp dz/s sh_stripped && strip -s sh_stripped
	if command -v strace >/dev/null; then
		# Who connects: every connect() must come from another thread than
		# the one that exec'd pmutop (the session's). (LeakSanitizer cannot
		# run under ptrace: off for this run in ASan builds.)
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH=$T/dwz.cache timeout -k 5 60 \
			strace -f -qq -e trace=execve,connect -o dwz.strace \
			"$PMUTOP" -e task-clock --duration "$DUR" --no-tui --dump dwz.pb.gz \
			-- ./sh_stripped $((DUR + 30)) >dwz.out 2>dwz.err
		RC=$?
		main=$(awk '/execve\(.*pmutop/ { print $1; exit }' dwz.strace)
		n_main=$(awk -v m="$main" '$1 == m && /connect\(/' dwz.strace | wc -l)
		n_all=$(grep -c 'connect(' dwz.strace)
		info "dwz: $n_all connect() calls, $n_main from the session's thread ($main)"
		(( n_all >= 1 && n_main == 0 )) ||
			fail "dwz: the session's thread connected to the server ($n_main of $n_all)"
	else
		DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH=$T/dwz.cache run_pmutop dwz -e task-clock \
			--duration "$DUR" --no-tui --dump dwz.pb.gz -- ./sh_stripped $((DUR + 30))
	fi
	(( RC == 0 )) || { show dwz.err; fail "dwz: pmutop exited with status $RC"; }
	[[ -s dwz.cache/$ALT/debuginfo ]] || fail "dwz: the supplement $ALT is not in the client cache"
	pprof -lines -top -nodecount=20 dwz.pb.gz >dwz.lines 2>&1
	grep -qE "[A-J]_expect_[0-9_]+ .*shares\.c:[0-9]+\$" dwz.lines ||
		{ show dwz.lines 8; fail "dwz: no X_expect_N shares.c:LINE rows through the supplement"; }
	info "dwz: supplement fetched too: $(grep -m1 -oE '[A-J]_expect_[0-9_]+ .*shares\.c:[0-9]+' dwz.lines)"
else
	info "dwz not installed: the supplement case is not run"
fi

pass "names, lines and code by build-id from debuginfod; down, hanging and lying servers handled"
