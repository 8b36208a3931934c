#!/usr/bin/env bash
# t_hostile_files.sh - a target that controls its files cannot steer root
# pmutop (issue 17).
#
# inline_hot, split from its debug info, is given a .gnu_debuglink naming
# something hostile next to it; pmutop attaches with -p as root. Each case:
#   fifo   the debuglink names a FIFO (the old open() blocked for good,
#          SIGTERM could not stop it, no profile was written)
#   zero   a symlink to /dev/zero (CRC loop over an endless file)
#   dev    a character device (opening it runs the driver as root)
#   dotdot the debuglink is "../real/inline_hot.debug" and the real debug
#          file is there: it must NOT be used (names only, no paths)
#   swap   the binary's path is bind-mounted over with another ELF after
#          the target started, and pmutop has no CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE (so no
#          /proc/PID/map_files): the path no longer names the mapped inode
#          and must not be read as its symbols
# In every case pmutop ends on time (--duration 2) with status 0, writes a
# profile `go tool pprof` reads with the target's function names (except
# swap), leaves the target running and untraced, and says what it skipped.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl inline_hot branchy
command -v objcopy >/dev/null || skip "objcopy (binutils) not installed"
(( EUID == 0 )) || skip "needs root (pmutop as root against a hostile target is the point)"

mkdir -p split real
cp "$W/inline_hot" split/inline_hot
objcopy --only-keep-debug split/inline_hot real/inline_hot.debug || fail "objcopy failed"
objcopy --strip-debug split/inline_hot || fail "objcopy --strip-debug failed"

# with_link NAME FILE: split/inline_hot with a .gnu_debuglink section naming
# NAME (any bytes: objcopy itself would keep only a basename), CRC of FILE.
with_link() {
	python3 - "$1" "$2" <<-'EOF' || fail "cannot build the debuglink section"
	import sys, zlib, struct
	name = sys.argv[1].encode() + b"\0"
	name += b"\0" * (-len(name) % 4)
	crc = zlib.crc32(open(sys.argv[2], "rb").read()) & 0xffffffff
	open("link.sec", "wb").write(name + struct.pack("<I", crc))
	EOF
	objcopy --remove-section=.gnu_debuglink --add-section .gnu_debuglink=link.sec \
		--set-section-flags .gnu_debuglink=readonly split/inline_hot split/t.tmp &&
		mv split/t.tmp split/inline_hot || fail "objcopy could not set the debuglink"
}

# attach NAME [ENV...]: run pmutop -p against split/inline_hot for 2 s and
# check the common promises. Leaves the profile in NAME.pb.gz.
attach() {
	local name=$1 t0 el
	shift
	start_bg ./split/inline_hot 60
	local tp=$BG_PID
	wait_started "$tp"
	t0=$(now)
	PM_TIMEOUT=40 run_pmutop "$name" -p "$tp" -e task-clock --duration 2 --dump "$name.pb.gz" "$@"
	el=$(elapsed "$t0")
	info "$name: status $RC after $el s"
	(( RC == 0 )) || { show "$name.err"; fail "$name: pmutop exited with status $RC"; }
	awk -v e="$el" 'BEGIN { exit !(e < 20) }' || fail "$name: took $el s for --duration 2"
	kill -0 "$tp" 2>/dev/null || fail "$name: the target is gone"
	[[ $(awk '/^State:/ { print $2 }' "/proc/$tp/status") != [tT] ]] ||
		fail "$name: the target is left stopped"
	[[ $(awk '/^TracerPid:/ { print $2 }' "/proc/$tp/status") == 0 ]] ||
		fail "$name: the target is left traced"
	pprof -top "$name.pb.gz" >"$name.top" 2>&1 || { show "$name.top"; fail "$name: pprof cannot read the profile"; }
	kill "$tp"
}

# expect_skip NAME WHY: the summary names the skipped file and the reason.
expect_skip() {
	grep -q "pmutop: skipped .*unsafe target file.*$2" "$1.err" ||
		{ show "$1.err"; fail "$1: no 'skipped ... $2' line in the summary"; }
	grep -q outer_caller "$1.top" || { show "$1.top"; fail "$1: function names missing"; }
	info "$1: $(grep 'pmutop: skipped' "$1.err")"
}

# 1. FIFO.
with_link fifo.debug real/inline_hot.debug
mkfifo split/fifo.debug
attach fifo
expect_skip fifo "fifo.debug: not a regular file"

# 2. Symlink to /dev/zero.
with_link zero.debug real/inline_hot.debug
ln -s /dev/zero split/zero.debug
attach zero
expect_skip zero "not a regular file"

# 3. A character device (/dev/null's numbers).
with_link dev.debug real/inline_hot.debug
if mknod split/dev.debug c 1 3 2>/dev/null; then
	attach dev
	expect_skip dev "dev.debug: not a regular file"
else
	info "dev: mknod not permitted here; case skipped"
fi

# 4. "../": the file it names exists and matches, and must not be used.
with_link ../real/inline_hot.debug real/inline_hot.debug
attach dotdot
expect_skip dotdot "gnu_debuglink is not a plain file name"
pprof -lines -top dotdot.pb.gz 2>/dev/null | grep -q 'inline_hot\.c:' &&
	fail "dotdot: file:line came from the ../ debug file"

# 5. The path swapped after mmap (bind mount), no CAP_SYS_ADMIN.
command -v capsh >/dev/null || skip "capsh (libcap2-bin) not installed for the swap case"
mkdir -p swap
cp "$W/inline_hot" swap/prog
start_bg ./swap/prog 60
SP=$BG_PID
wait_started "$SP"
mount --bind "$W/branchy" swap/prog || skip "cannot bind-mount here (swap case)"
trap 'rc=$?; umount "$T/swap/prog" 2>/dev/null; (exit $rc); e2e_cleanup' EXIT
t0=$(now)
info "\$ capsh --drop=cap_sys_admin,cap_checkpoint_restore -- -c 'pmutop -p $SP --duration 2 --dump swap.pb.gz'"
timeout -k 5 40 capsh --drop=cap_sys_admin,cap_checkpoint_restore -- -c \
	"exec '$PMUTOP' -p $SP -e task-clock --duration 2 --dump swap.pb.gz" >swap.out 2>swap.err
RC=$?
umount swap/prog
(( RC == 0 )) || { show swap.err; fail "swap: pmutop exited with status $RC"; }
kill -0 "$SP" 2>/dev/null || fail "swap: the target is gone"
pprof -top swap.pb.gz >swap.top 2>&1 || fail "swap: pprof cannot read the profile"
grep -q "not the mapped file" swap.err || { show swap.err; fail "swap: no 'not the mapped file' note"; }
# branchy.s own functions would show up if its symbols were used for prog's addresses.
nm "$W/branchy" | awk 'NF == 3 && $2 ~ /^[tT]$/ { print $3 }' | grep -vE '^(_|main$|frame_dummy|deregister|register)' >other.syms
grep -qwFf other.syms swap.top && { show swap.top; fail "swap: symbols of the swapped-in file used"; }
info "swap: $(grep 'pmutop: skipped' swap.err)"
pass "FIFO, /dev/zero, device and ../ debuglinks skipped and a swapped path refused; profiles written on time"
