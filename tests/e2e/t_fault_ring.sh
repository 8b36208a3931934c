#!/usr/bin/env bash
# t_fault_ring.sh - a corrupt record header in a ring buffer, on a real run.
#
# The kernel owns the ring buffers: nothing outside pmutop can write them
# (/proc/PID/mem and ptrace get EIO on the perf mapping) and pmutop itself
# gets SIGBUS writing a data page (mapped read-only). So the fault is
# injected in pmutop: PMUTOP_FAULT_RING_CORRUPT=N takes the first record's
# header for corrupt the N-th time a buffer with records is drained - what
# the framing says of an impossible header (unit test test_ring checks
# which headers). What a corrupt header does must then
# hold end to end (issue 17; before, the drain loop stopped without giving
# the data back and spun at 100% CPU, later samples lost uncounted):
#   - the rest of that buffer's data is given back and counted once
#     ("1 corrupt record headers" in the summary's WARNING: a buffer not
#     given back would be found corrupt again at every drain);
#   - sampling goes on: the samples after it are there (the injection comes
#     in the first ~100 ms of a 3 s run; at least half the run's samples);
#   - pmutop does not spin: its CPU time stays a fraction of the run's;
#   - exit 0 and a profile go tool pprof reads.
# A second run without the variable reports no corrupt header (the check
# can fail).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
e2e_init
need_wl threads

DUR=$(quick_or 3 2)
PERIOD=250000 # task-clock: 4,000 samples/s per busy CPU

# run NAME [ENV...]: pmutop attached for DUR seconds to ten busy threads
# (attached, so that /usr/bin/time counts pmutop's CPU alone).
run() {
	local name=$1 target
	shift
	start_bg "$W/threads" $((${DUR%.*} + 10))
	target=$BG_PID
	wait_started "$target"
	info "\$ $* pmutop -e task-clock --period $PERIOD --duration $DUR -p $target"
	env "$@" /usr/bin/time -f '%U %S' -o "$name.time" "$PMUTOP" -e task-clock \
		--period "$PERIOD" --duration "$DUR" --dump "$name.pb.gz" -p "$target" \
		>"$name.out" 2>"$name.err"
	RC=$?
	show "$name.err" 6
	kill -0 "$target" 2>/dev/null || problem "$name: the target did not survive"
	kill "$target" 2>/dev/null
}

samples_of() { sed -n 's/^pmutop: \([0-9]*\) samples of.*/\1/p' "$1.err"; }
corrupt_of() { sed -n 's/.*dropped ring-buffer data: \([0-9]*\) corrupt record headers.*/\1/p' "$1.err"; }

run corrupt PMUTOP_FAULT_RING_CORRUPT=3
(( RC == 0 )) || problem "corrupt: exit status $RC, want 0"
n=$(corrupt_of corrupt)
s=$(samples_of corrupt)
cpu=$(awk '{ printf "%.2f", $1 + $2 }' corrupt.time 2>/dev/null)
# Two CPUs at 4,000/s each for DUR s; a quarter of that (half of one CPU's)
# is far below what a loaded run still gets, and far above what a run that
# stopped reading after the first 100 ms gets.
want=$(awk -v d="$DUR" 'BEGIN { printf "%d", 2 * 4000 * d / 4 }')
info "corrupt: ${n:-0} corrupt headers counted, ${s:-0} samples (want >= $want), pmutop CPU ${cpu:-?} s"
# Exactly the one injected: a buffer not given back would be found corrupt
# again at every drain (and the kernel could not write to it any more).
(( ${n:-0} == 1 )) || problem "corrupt: ${n:-0} corrupt record headers counted, want the 1 injected"
(( ${s:-0} >= want )) || problem "corrupt: ${s:-0} samples, want >= $want (sampling did not go on)"
awk -v c="${cpu:-99}" -v d="$DUR" 'BEGIN { exit !(c < d / 2) }' ||
	problem "corrupt: pmutop used ${cpu:-?} s of CPU in a ${DUR} s run (spinning?)"
if [[ ! -s corrupt.pb.gz ]]; then
	problem "corrupt: no profile written"
elif ! pprof -top corrupt.pb.gz >corrupt.top 2>&1; then
	problem "corrupt: go tool pprof cannot read the profile"
fi

run clean
(( RC == 0 )) || problem "clean: exit status $RC, want 0"
n=$(corrupt_of clean)
(( ${n:-0} == 0 )) || problem "clean: $n corrupt headers reported without any injected"

(( ERRS == 0 )) || fail "$ERRS problem(s) with a corrupt ring-buffer header"
pass "a corrupt ring-buffer header is counted, sampling goes on, no spin, profile written"
