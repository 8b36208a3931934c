#!/usr/bin/env bash
# t_tui_sigbus.sh - a mapped target file truncated under the live view
# (issue 32).
#
# pmutop maps the target's files to read them; a file cut short after that
# raises SIGBUS on the next read of a page past its new end, which module.c
# survives (a zero page over it: t_fault_corrupt_elf's "shrinks" case,
# batch). The live view installed its own crash handler over that, so the
# same target killed pmutop in the view (or, the handler set back to the
# default on leaving it, at the --dump after) and the profile was lost.
# Here: dl_main running in its own copy of libfat.so, `pmutop -p PID --dump
# F --top` in the live view (tmux), libfat.so cut to its loaded pages while the
# view runs, new samples and symbols for a few seconds, then `q`: pmutop
# must exit 0 with no "fatal signal", F readable, the target alive.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl dl_main libfat.so
command -v tmux >/dev/null 2>&1 || skip "tmux not installed (apt-get install tmux; make deps)"

SOCK=$T/tmux.sock
tm() { tmux -S "$SOCK" "$@"; }
trap 'rc=$?; tmux -S "$SOCK" kill-server >/dev/null 2>&1; (exit $rc); e2e_cleanup' EXIT

loaded_end() {
	local m=0 off fsz e
	while read -r off fsz; do
		e=$((off + fsz))
		((e > m)) && m=$e
	done < <(readelf -lW "$1" | awk '$1 == "LOAD" { print $2, $5 }')
	echo $(((m + 4095) / 4096 * 4096))
}
size=$(stat -c %s "$W/libfat.so")
cut=$(loaded_end "$W/libfat.so")
(( cut < size - 4096 )) || fail "libfat.so has too little past its loaded pages to cut"

mkdir -p lib
cp "$W/dl_main" "$W/libfat.so" lib/
start_bg "$T/lib/dl_main" 120 0.1 "$T/lib/libfat.so"
TGT=$BG_PID
for _ in $(seq 100); do grep -q "$T/lib/libfat.so" "/proc/$TGT/maps" 2>/dev/null && break; sleep 0.05; done
grep -q "$T/lib/libfat.so" "/proc/$TGT/maps" || fail "the target did not load libfat.so"

tm -f /dev/null new-session -d -s sb -x 110 -y 30 \
	"env NO_COLOR=1 TERM=xterm-256color $PMUTOP --top -p $TGT -e task-clock --period 500000 --refresh 0.5 --dump $T/sb.pb.gz 2>$T/sb.err; echo \$? >$T/status; sleep 60" ||
	fail "cannot start tmux"
for _ in $(seq 300); do
	tm capture-pane -p -t sb | grep -q 'libhot_spin\|libfat' && break
	sleep 0.1
done
tm capture-pane -p -t sb | grep -q 'libhot_spin\|libfat' ||
	{ tm capture-pane -p -t sb | sed 's/^/    | /'; fail "the view never showed libfat.so's code"; }
truncate -s "$cut" lib/libfat.so
info "libfat.so cut from $size to $cut bytes under the live view"
sleep 3
tm send-keys -t sb q
for _ in $(seq 300); do [[ -s status ]] && break; sleep 0.1; done
[[ -s status ]] || { tm capture-pane -p -t sb | sed 's/^/    | /'; fail "pmutop did not exit after q"; }
rc=$(cat status)
show sb.err 8
info "pmutop exited with status $rc"
errs=0
if [[ $rc != 0 ]]; then
	info "FAILED: exit status $rc (135 = SIGBUS)"
	errs=$((errs + 1))
fi
if grep -q 'fatal signal' sb.err; then
	info "FAILED: the view's crash handler ran"
	errs=$((errs + 1))
fi
if [[ ! -s sb.pb.gz ]] || ! top_flat sb.pb.gz >flat.txt; then
	info "FAILED: no readable profile"
	errs=$((errs + 1))
fi
kill -0 "$TGT" 2>/dev/null || { info "FAILED: the target died"; errs=$((errs + 1)); }
(( errs == 0 )) || fail "$errs problem(s) with a file truncated under the live view"
pass "a mapped file truncated under the live view: exit 0, profile written, target alive"
