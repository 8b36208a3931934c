#!/usr/bin/env bash
# t_offcpu_dstate.sh - -e offcpu's first look at threads in uninterruptible
# sleep is bounded and leaves none of them seized (issue 32).
#
# -e offcpu looks at every sleeping thread once at the start (a stack for
# blocks already under way). A thread in 'D' does not stop for ptrace
# until it leaves the kernel: the look waited 2 x 200 ms for each (4,096
# such threads: ~27 minutes before sampling began), and a thread that did
# not stop stayed seized, to enter tracing stop ('t') when it left the
# kernel, until pmutop exited. The target here: 48 threads each stuck in
# vfork() (the child sleeps until 25 s after the start: killable, not
# interruptible - a thread on a hung NFS or FUSE file looks the same).
#   1. `pmutop -e offcpu -p PID --duration 1` ends within 10 s (48 x 0.4 s
#      = 19 s of waiting before);
#   2. a second pmutop still sampling when the vforks end: no thread of the
#      target is in tracing stop afterwards (they were, until its exit);
# each time the profile written, the target left running and untraced.
source "$(dirname "$0")/lib.sh"
e2e_init
command -v cc >/dev/null 2>&1 || skip "no C compiler to build the target"
(( EUID == 0 )) || skip "needs root (ptrace and perf on another process)"

cat >dstuck.c <<'C'
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static time_t until;
static void *stuck(void *arg)
{
	(void)arg;
	if (vfork() == 0) {
		while (time(NULL) < until)
			usleep(100000);
		_exit(0);
	}
	for (;;)
		sleep(1);
	return NULL;
}
int main(int argc, char **argv)
{
	int n = atoi(argv[1]);
	volatile unsigned long x = 0;
	pthread_t t;

	until = time(NULL) + atoi(argv[2]);
	for (int i = 0; i < n; i++)
		pthread_create(&t, NULL, stuck, NULL);
	for (;;)
		x++;
}
C
cc -O1 -pthread -o dstuck dstuck.c || fail "cannot build the target"

N=48 STUCK=25
start_bg ./dstuck "$N" "$STUCK"
TP=$BG_PID
t_start=$(now)
dcount() { grep -h '^State:' /proc/"$TP"/task/*/status 2>/dev/null | grep -c "$1"; }
for _ in $(seq 100); do (( $(dcount 'D (') >= N )) && break; sleep 0.05; done
info "target $TP: $(dcount 'D (') threads in D"
(( $(dcount 'D (') >= N )) || fail "the target's threads are not in D"
errs=0

info "\$ pmutop -e offcpu -p $TP --duration 1 --dump one.pb.gz"
t0=$(now)
timeout -k 5 60 "$PMUTOP" -e offcpu -p "$TP" --duration 1 --dump one.pb.gz >one.out 2>one.err
rc=$?
took=$(elapsed "$t0")
show one.err 6
info "exit status $rc after $took s"
(( rc == 0 )) || { info "FAILED (1): exit status $rc"; errs=$((errs + 1)); }
awk -v t="$took" 'BEGIN { exit !(t < 10) }' ||
	{ info "FAILED (1): $took s for --duration 1 with $N threads in D"; errs=$((errs + 1)); }
[[ -s one.pb.gz ]] || { info "FAILED (1): no profile"; errs=$((errs + 1)); }

set -m
info "\$ pmutop -e offcpu -p $TP --duration 60 --dump two.pb.gz  (until the vforks end, then SIGINT)"
timeout -k 5 90 "$PMUTOP" -e offcpu -p "$TP" --duration 60 --dump two.pb.gz >two.out 2>two.err &
pm=$!
E2E_BG_PIDS+=("$pm")
set +m
# Until the vforks have ended (the children exit at STUCK s), and 2 s more.
while awk -v a="$t_start" -v b="$(now)" -v s="$STUCK" 'BEGIN { exit !(b - a < s + 2) }'; do
	sleep 0.2
done
if ! kill -0 "$pm" 2>/dev/null; then
	show two.err
	info "FAILED (2): pmutop ended before the vforks did"
	errs=$((errs + 1))
fi
traced=$(dcount 'tracing stop')
info "after the vforks ended: $(dcount 'D (') in D, $traced in tracing stop, pmutop still sampling"
(( traced == 0 )) || { info "FAILED (2): $traced threads left in tracing stop"; errs=$((errs + 1)); }
kill -INT "$pm"
wait_gone "$pm" 20 || { info "FAILED (2): pmutop still running 20 s after SIGINT"; errs=$((errs + 1)); }
wait "$pm"
rc=$?
(( rc == 0 )) || { show two.err; info "FAILED (2): exit status $rc"; errs=$((errs + 1)); }
[[ -s two.pb.gz ]] || { info "FAILED (2): no profile"; errs=$((errs + 1)); }
kill -0 "$TP" 2>/dev/null || { info "FAILED: the target died"; errs=$((errs + 1)); }
[[ $(awk '/^TracerPid:/ { print $2 }' "/proc/$TP/status") == 0 ]] ||
	{ info "FAILED: the target is left traced"; errs=$((errs + 1)); }
(( $(dcount 'tracing stop') == 0 )) || { info "FAILED: threads still in tracing stop"; errs=$((errs + 1)); }

(( errs == 0 )) || fail "$errs problem(s) with -e offcpu and threads in D"
pass "-e offcpu with $N threads in D: a 1 s run in $took s, none left in tracing stop"
