#!/usr/bin/env bash
# t_hostile_escapes.sh - escape sequences a target or a client controls
# never reach the operator's terminal raw (issue 32; t_hostile_text holds
# the thread names, command lines and HTML of issue 17).
#   1. --http: a refused request value (`?seconds=%1b%5d0;PWNED%07`, which
#      would retitle the terminal) is quoted in the server's log line: it
#      was printed raw there, escaped everywhere else;
#   2. the batch summary's "skipped N unsafe target files (PATH ...)" note,
#      for a target whose path holds an escape sequence;
#   3. --annotate: the listing's header (the function's name) and the
#      "matches several functions" error, for symbols (renamed with
#      objcopy) holding an escape sequence.
# Each: no raw ESC or BEL in pmutop's output, the text shown as \x1b...\x07.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl inline_hot shares
command -v curl >/dev/null || skip "curl not installed"
command -v objcopy >/dev/null || skip "objcopy (binutils) not installed"
command -v cc >/dev/null || skip "no C compiler"

ESC=$'\e' BEL=$'\a'
EVIL="${ESC}]0;PWNED${BEL}"
errs=0
# raw FILE... WHAT: fail the case when a raw ESC or BEL is in the files.
raw() {
	local what=${*: -1}
	set -- "${@:1:$#-1}"
	if LC_ALL=C grep -q "[$ESC$BEL]" "$@"; then
		LC_ALL=C grep -h "[$ESC$BEL]" "$@" | cat -v | sed 's/^/    | /'
		info "FAILED ($what): a raw escape sequence reached the terminal"
		errs=$((errs + 1))
		return 0
	fi
	return 1
}
shown() { # FILE WHAT: the escaped form is there
	if ! grep -qF '\x1b]0;PWNED\x07' "$1"; then
		show "$1"
		info "FAILED ($2): the value is not shown escaped"
		errs=$((errs + 1))
	fi
}

# 1. --http's log line.
start_bg "$W/shares" 60
TP=$BG_PID
wait_started "$TP"
timeout -k 5 60 "$PMUTOP" --http 127.0.0.1:0 -p "$TP" 2>server.err &
SRV=$!
E2E_BG_PIDS+=("$SRV")
for _ in $(seq 200); do grep -q 'serving profiles' server.err 2>/dev/null && break; sleep 0.05; done
PORT=$(grep -o '127.0.0.1:[0-9]*' server.err | head -1 | cut -d: -f2)
[[ -n $PORT ]] || { show server.err; fail "the server did not start"; }
c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 \
	"http://127.0.0.1:$PORT/debug/pprof/profile?seconds=%1b%5d0;PWNED%07")
info "?seconds=%1b%5d0;PWNED%07: HTTP $c"
[[ $c == 400 ]] || { info "FAILED (http): HTTP $c, expected 400"; errs=$((errs + 1)); }
kill "$SRV"
wait "$SRV" 2>/dev/null
raw server.err "the HTTP log" || shown server.err "the HTTP log"
kill "$TP"

# 2. The summary's skipped-file note: a binary whose directory's name holds
# the sequence, with a "../" .gnu_debuglink (refused, named by that path).
D="dir$EVIL"
mkdir -p "$D" real
cp "$W/inline_hot" "$D/inline_hot"
objcopy --only-keep-debug "$D/inline_hot" real/inline_hot.debug || fail "objcopy failed"
objcopy --strip-debug "$D/inline_hot" || fail "objcopy --strip-debug failed"
python3 - <<-'EOF' || fail "cannot build the debuglink section"
	import zlib, struct
	name = b"../real/inline_hot.debug\0"
	name += b"\0" * (-len(name) % 4)
	crc = zlib.crc32(open("real/inline_hot.debug", "rb").read()) & 0xffffffff
	open("link.sec", "wb").write(name + struct.pack("<I", crc))
EOF
objcopy --add-section .gnu_debuglink=link.sec --set-section-flags .gnu_debuglink=readonly \
	"$D/inline_hot" t.tmp && mv t.tmp "$D/inline_hot" && chmod +x "$D/inline_hot" ||
	fail "objcopy could not set the debuglink"
# (Not run_pmutop: its echo of the command line would put the raw sequence here.)
info "\$ pmutop -e task-clock --duration 1 --dump skip.pb.gz -- './dir\x1b]0;PWNED\x07/inline_hot' 5"
timeout -k 5 60 "$PMUTOP" -e task-clock --duration 1 --dump skip.pb.gz -- "./$D/inline_hot" 5 \
	>skip.out 2>skip.err
RC=$?
(( RC == 0 )) || { show skip.err; fail "pmutop failed on the skipped-file case ($RC)"; }
if ! grep -q 'pmutop: skipped .*unsafe target file' skip.err; then
	show skip.err
	info "FAILED (skipped note): no 'skipped ... unsafe target file' note"
	errs=$((errs + 1))
fi
# The command's own name is the operator's (print_exit): look at the note only.
grep 'pmutop: skipped' skip.err >skip.note
raw skip.note "the skipped-file note" || shown skip.note "the skipped-file note"

# 3. --annotate: two functions named with the sequence.
cat >evil.c <<'EOF'
#include <stdlib.h>
#include <time.h>
static volatile unsigned long sink;
__attribute__((noinline)) void hot_AAAA(unsigned long n)
{
	for (unsigned long i = 0; i < 20000000UL; i++)
		sink += n * i;
}
__attribute__((noinline)) void hot_BBBB(unsigned long n)
{
	for (unsigned long i = 0; i < 20000000UL; i++)
		sink ^= n + i;
}
int main(int argc, char **argv)
{
	time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 5);
	while (time(NULL) < end) {
		hot_AAAA((unsigned long)end);
		hot_BBBB((unsigned long)end);
	}
	return 0;
}
EOF
cc -O1 -o evil evil.c || fail "cannot build the program"
objcopy --redefine-sym "hot_AAAA=hot${EVIL}_one" --redefine-sym "hot_BBBB=hot${EVIL}_two" evil ||
	fail "objcopy could not rename the symbols"
run_pmutop rec -e task-clock --duration 1.5 --dump evil.pb.gz -- ./evil 4
(( RC == 0 )) || { show rec.err; fail "pmutop failed on the renamed program ($RC)"; }
run_pmutop one --load evil.pb.gz --annotate _one -q
(( RC == 0 )) || { show one.err; info "FAILED (annotate): --annotate _one exited $RC"; errs=$((errs + 1)); }
head -n 1 one.out >one.head
raw one.out one.err "the annotate header" || shown one.head "the annotate header"
run_pmutop several --load evil.pb.gz --annotate PWNED -q
(( RC != 0 )) && grep -q 'matches several functions' several.err || {
	show several.err
	info "FAILED (several): no 'matches several functions' error"
	errs=$((errs + 1))
}
raw several.err "the several-functions error" || shown several.err "the several-functions error"

(( errs == 0 )) || fail "$errs problem(s) with escape sequences"
pass "HTTP log, skipped-file note, annotate header and several-functions error: escape sequences shown as \\x1b...\\x07, never raw"
