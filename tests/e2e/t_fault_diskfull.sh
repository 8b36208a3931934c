#!/usr/bin/env bash
# t_fault_diskfull.sh - the output file system is full when the profile is written.
#
# A 64 KiB tmpfs is mounted in the test's directory and filled to the last
# block (creating the empty probe file pmutop makes at startup still works:
# it needs an inode, not a block). `pmutop -p PID --duration 1 --dump
# FULL/out.pb.gz` then samples normally and fails to write: it must exit
# non-zero with a clear message ("No space left on device", naming the
# file), leave neither out.pb.gz nor its temp file in the directory, and
# leave the attached target running. Needs root to mount (else SKIP).
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
e2e_init
need_wl shares

(( EUID == 0 )) || skip "mounting a tmpfs needs root"
command -v mount >/dev/null 2>&1 || skip "no mount command"
mkdir -p "$T/full"
mount -t tmpfs -o size=64k tmpfs "$T/full" 2>mount.err || { show mount.err; skip "cannot mount a tmpfs here"; }
# Unmount before lib.sh's cleanup removes $T.
trap 'umount "$T/full" 2>/dev/null; e2e_cleanup' EXIT

dd if=/dev/zero of="$T/full/filler" bs=4096 2>/dev/null
info "tmpfs: $(df -k "$T/full" | awk 'NR == 2 { print $3 " KiB used, " $4 " KiB free" }')"

start_bg "$W/shares" 60
target=$BG_PID
wait_started "$target"
run_pmutop full -e task-clock --period 1000000 --duration 1 --dump "$T/full/out.pb.gz" -p "$target"
show full.err
if (( RC == 0 )); then
	problem "exit status 0 although the profile could not be written"
elif (( RC >= 124 )); then
	problem "killed or crashed (status $RC)"
fi
grep -qiE 'no space left|ENOSPC|disk full' full.err || problem "the message does not say the disk is full"
grep -q 'out.pb.gz' full.err || problem "the message does not name the file"
left=$(ls -A "$T/full" | grep -v '^filler$')
[[ -z $left ]] || problem "left behind in the full directory: $left"
alive "$target" || problem "the target did not survive"

(( ERRS == 0 )) || fail "$ERRS problem(s) with a full disk"
pass "disk full: clear error, exit $RC, no file or temp file left, target running"
