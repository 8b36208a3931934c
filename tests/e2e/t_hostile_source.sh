#!/usr/bin/env bash
# t_hostile_source.sh - a target's DWARF names the source files the
# listing shows; pmutop reads them as the target could, never as root
# (issue 32).
#
# A program run by nobody has a hot loop whose first line comes, by `#line
# 1`, from a file in a directory only root may enter, and whose second from
# a file anyone may read. As root:
#   1. `pmutop -p PID --duration 1 --annotate hot` (the end of a recording)
#      shows the readable file's line and not the root-only one (it used
#      to print both: load_source opened any host path as root);
#   2. the same in the live view (`a` in tmux), when tmux is there;
#   3. a saved profile (`--load F --annotate hot`: host paths, pmutop's own
#      rights, the operator's) still shows both - the rule is about whose
#      files they are, not a blanket refusal.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
command -v cc >/dev/null 2>&1 || skip "no C compiler to build the hostile program"
command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) not installed"
(( $(id -u) == 0 )) || skip "needs root (the case is root reading a file for nobody)"

chmod a+x "$T"
mkdir -m 0700 secretdir && mkdir -m 0755 public nb || fail "mkdir"
echo "SECRET_LINE_$$ only root may read this" >secretdir/secret.c
echo "PUBLIC_LINE_$$ anyone may read this" >public/public.c
chmod 0644 secretdir/secret.c public/public.c
cat >hostile.c <<EOF
#include <stdlib.h>
#include <time.h>
static volatile unsigned long sink;
__attribute__((noinline)) void hot(unsigned long n)
{
	unsigned long x = n, y = 0;
	for (unsigned long i = 0; i < 200000000UL; i++) {
#line 1 "$T/secretdir/secret.c"
		x = x * 6364136223846793005UL + 1442695040888963407UL;
#line 1 "$T/public/public.c"
		y ^= x >> 7;
	}
	sink = y;
}
int main(int argc, char **argv)
{
	time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 30);
	while (time(NULL) < end)
		hot((unsigned long)end);
	return 0;
}
EOF
cc -g -O1 -o nb/hostile hostile.c || fail "cannot build the hostile program"
chmod a+rx nb nb/hostile
setpriv --reuid=65534 --regid=65534 --clear-groups cat secretdir/secret.c >/dev/null 2>&1 &&
	skip "uid 65534 can read $T/secretdir (no root-only directory here)"

errs=0
check() { # FILE WHAT WANT_SECRET
	if ! grep -q "PUBLIC_LINE_$$" "$1"; then
		show "$1" 30
		info "FAILED ($2): the readable source line is not shown"
		errs=$((errs + 1))
	fi
	if (( $3 )) && ! grep -q "SECRET_LINE_$$" "$1"; then
		show "$1" 30
		info "FAILED ($2): the operator's own source line is not shown"
		errs=$((errs + 1))
	elif (( ! $3 )) && grep -q "SECRET_LINE_$$" "$1"; then
		grep "SECRET_LINE_$$" "$1" | sed 's/^/    | /'
		info "FAILED ($2): root read a root-only file the target's DWARF named"
		errs=$((errs + 1))
	fi
}

start_bg setpriv --reuid=65534 --regid=65534 --clear-groups "$T/nb/hostile" 60
target=$BG_PID
wait_started "$target"
[[ $(stat -c %u "/proc/$target") == 65534 ]] || fail "the target does not run as nobody"

run_pmutop rec -e task-clock --duration 1 --dump h.pb.gz --annotate hot -q -p "$target"
(( RC == 0 )) || { show rec.err; fail "pmutop --annotate failed ($RC)"; }
grep -q 'no source lines\|cannot be read' rec.out && show rec.out 5
check rec.out "--annotate at the end of a recording" 0

if command -v tmux >/dev/null 2>&1; then
	SOCK=$T/tmux.sock
	tm() { tmux -S "$SOCK" "$@"; }
	trap 'rc=$?; tmux -S "$SOCK" kill-server >/dev/null 2>&1; (exit $rc); e2e_cleanup' EXIT
	tm -f /dev/null new-session -d -s ann -x 130 -y 40 \
		"env NO_COLOR=1 TERM=xterm-256color $PMUTOP -p $target -e task-clock --refresh 0.5; sleep 60" ||
		fail "cannot start tmux"
	for _ in $(seq 200); do
		tm capture-pane -p -t ann | grep -q ' hot ' && break
		sleep 0.1
	done
	sleep 1
	tm send-keys -t ann a
	for _ in $(seq 100); do
		tm capture-pane -p -t ann | grep -qE 'address: +instruction' && break
		sleep 0.1
	done
	sleep 0.5
	tm capture-pane -p -t ann >tui.txt
	check tui.txt "the live view's a" 0
	tm send-keys -t ann q
else
	info "(tmux not installed: the live view's case not run)"
fi

run_pmutop load --load h.pb.gz --annotate hot -q
(( RC == 0 )) || { show load.err; fail "--load --annotate failed ($RC)"; }
check load.out "--load: the operator's own files" 1

(( errs == 0 )) || fail "$errs problem(s) with source files a hostile target names"
pass "source lines: a target's are read inside its root with its rights (root-only file not shown, readable one shown; batch and live view); a saved profile's with the operator's"
