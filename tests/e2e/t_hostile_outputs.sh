#!/usr/bin/env bash
# t_hostile_outputs.sh - pmutop as root writing into a directory another
# user owns: that user cannot choose where the bytes go, take them, or stall
# the write (issue 32).
#
# In a directory owned by uid 65534, that user planted, at the output
# names, symlinks to a root-owned file and a FIFO it reads. As root:
#   1. --dump to the symlink: refused (it was followed: the root-owned file
#      was overwritten with the profile);
#   2. --table-file to the symlink: refused (fopen "w" truncated and wrote
#      the root-owned file);
#   3. --dump to nobody's FIFO: refused (the profile went to nobody's
#      reader);
#   4. --dump to our own FIFO with no reader: an error within seconds (the
#      open blocked for good, SIGINT/SIGTERM held back meanwhile);
#   5. our own FIFO with a reader: the profile arrives, readable.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares
(( EUID == 0 )) || skip "needs root (root writing into another user's directory is the case)"
command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

chmod a+x "$T"
mkdir nbdir && chown 65534:65534 nbdir && chmod 0755 nbdir || fail "cannot make nobody's directory"
echo VICTIM >victim
as_nobody ln -s "$T/victim" nbdir/out.pb.gz || fail "nobody cannot plant a symlink"
as_nobody ln -s "$T/victim" nbdir/table.txt || fail "nobody cannot plant a symlink"
as_nobody mkfifo nbdir/fifo.pb.gz || fail "nobody cannot plant a FIFO"
errs=0
victim_intact() { # WHAT
	if ! echo VICTIM | cmp -s - victim; then
		info "FAILED ($1): the root-owned file behind nobody's symlink was written"
		errs=$((errs + 1))
		echo VICTIM >victim
	fi
}

PM_TIMEOUT=60 run_pmutop link -e task-clock --duration 0.5 --dump nbdir/out.pb.gz -- "$W/shares" 3
show link.err 3
(( RC != 0 )) && grep -q 'refusing to follow a symlink owned by uid 65534' link.err || {
	info "FAILED (1: --dump): status $RC, no refusal"
	errs=$((errs + 1))
}
victim_intact "1: --dump"

PM_TIMEOUT=60 run_pmutop table -e task-clock --duration 0.5 --table-file nbdir/table.txt -- "$W/shares" 3
grep 'table' table.err | sed 's/^/    | /'
(( RC != 0 )) && grep -q 'refusing to follow a symlink owned by uid 65534' table.err || {
	info "FAILED (2: --table-file): status $RC, no refusal"
	errs=$((errs + 1))
}
victim_intact "2: --table-file"

# Not through as_nobody (a function: & would fork a shell around setpriv).
setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'exec cat nbdir/fifo.pb.gz >nbdir/stolen' &
reader=$!
E2E_BG_PIDS+=("$reader")
stolen=nbdir/stolen
PM_TIMEOUT=60 run_pmutop nbfifo -e task-clock --duration 0.5 --dump nbdir/fifo.pb.gz -- "$W/shares" 3
show nbfifo.err 3
(( RC != 0 )) && grep -q 'refusing to write into a FIFO owned by uid 65534' nbfifo.err || {
	info "FAILED (3: nobody's FIFO): status $RC, no refusal"
	errs=$((errs + 1))
}
kill "$reader" 2>/dev/null
wait "$reader" 2>/dev/null
if [[ -s $stolen ]]; then
	info "FAILED (3: nobody's FIFO): its reader got $(stat -c %s "$stolen") bytes of the profile"
	errs=$((errs + 1))
fi

mkfifo own.fifo
t0=$(now)
PM_TIMEOUT=60 run_pmutop noreader -e task-clock --duration 0.5 --dump own.fifo -- "$W/shares" 3
took=$(elapsed "$t0")
show noreader.err 3
info "own FIFO, no reader: status $RC after $took s"
(( RC == 1 )) && grep -q 'a FIFO with no reader' noreader.err || {
	info "FAILED (4: no reader): status $RC (124/137: it blocked until killed)"
	errs=$((errs + 1))
}

# (A reader that never gets a writer is ended at cleanup.)
cat own.fifo >got.pb.gz &
reader=$!
E2E_BG_PIDS+=("$reader")
PM_TIMEOUT=60 run_pmutop reader -e task-clock --duration 0.5 --dump own.fifo -- "$W/shares" 3
wait "$reader"
if (( RC != 0 )) || ! top_flat got.pb.gz >got.flat || ! grep -q _expect_ got.flat; then
	show reader.err
	info "FAILED (5: own FIFO with a reader): status $RC, profile not received whole"
	errs=$((errs + 1))
fi

(( errs == 0 )) || fail "$errs problem(s) writing into another user's directory"
pass "nobody's symlinks (--dump, --table-file) and FIFO refused, a FIFO with no reader an error in seconds, our own FIFO still written"
