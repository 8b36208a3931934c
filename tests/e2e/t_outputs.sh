#!/usr/bin/env bash
# t_outputs.sh - where --dump writes, on real runs (issue 15 item 3, issue
# 22 item 6):
#   --dump - (pprof and folded) goes to stdout, readable by go tool pprof /
#   as folded lines; --dump - with --dump-split is refused;
#   --dump LINK writes the link's target and keeps the link;
#   --dump /dev/stdout into a pipe writes the pipe (no file replaced);
#   --dump FIFO writes into the FIFO in place;
#   --dump DIR (an existing directory) fails before sampling, status 2;
#   --dump-split through a symlinked directory, every file written there;
#   a file name of NAME_MAX (255) characters works;
#   a path longer than PATH_MAX fails with an error that ends with its reason.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl threads
DUR=1
run() { run_pmutop "$@"; }

# 1. stdout, pprof and folded.
info "\$ pmutop -e task-clock --duration $DUR --dump - -- threads 2 3 > std.pb.gz"
timeout 60 "$PMUTOP" -e task-clock --duration $DUR --dump - -- "$W/threads" 2 3 >std.pb.gz 2>std.err
(( $? == 0 )) || { show std.err; fail "--dump - exited with $?"; }
[[ ! -e ./- ]] || fail "--dump - created a file named '-'"
pprof -top std.pb.gz >std.top 2>&1 || { show std.top; fail "pprof cannot read what --dump - wrote"; }
grep -q "wrote the profile to stdout" std.err || fail "no 'wrote the profile to stdout'"
timeout 60 "$PMUTOP" -e task-clock --duration $DUR --format folded --dump - -- "$W/threads" 2 3 >fold.txt 2>fold.err
grep -qE '^[^ ].* [0-9]+$' fold.txt || { show fold.err; fail "--format folded --dump - printed no folded lines"; }
run split -e task-clock,page-faults --dump - --dump-split -- "$W/threads" 1 1
(( RC != 0 )) && grep -q "drop --dump-split" split.err || fail "--dump - --dump-split accepted"

# 2. A symlink: its target is written, the link stays.
mkdir real
ln -s real/out.pb.gz link.pb.gz
run link -e task-clock --duration $DUR --dump link.pb.gz -- "$W/threads" 2 3
(( RC == 0 )) || { show link.err; fail "--dump LINK exited with $RC"; }
[[ -L link.pb.gz ]] || fail "the symlink was replaced"
[[ -f real/out.pb.gz ]] && pprof -top real/out.pb.gz >/dev/null 2>&1 ||
	fail "the symlink's target is not a readable profile"

# 3. /dev/stdout into a pipe.
info "\$ pmutop --dump /dev/stdout ... | cat > piped.pb.gz"
timeout 60 "$PMUTOP" -e task-clock --duration $DUR --dump /dev/stdout -- "$W/threads" 2 3 2>piped.err |
	cat >piped.pb.gz
pprof -top piped.pb.gz >/dev/null 2>&1 || { show piped.err; fail "--dump /dev/stdout into a pipe"; }
[[ -c /dev/stdout || -L /dev/stdout ]] || fail "/dev/stdout was replaced"

# 4. A FIFO, in place.
mkfifo out.fifo
cat out.fifo >fifo.pb.gz &
CAT=$!
run fifo -e task-clock --duration $DUR --dump out.fifo -- "$W/threads" 2 3
wait "$CAT"
(( RC == 0 )) || { show fifo.err; fail "--dump FIFO exited with $RC"; }
[[ -p out.fifo ]] || fail "the FIFO was replaced"
pprof -top fifo.pb.gz >/dev/null 2>&1 || fail "what came through the FIFO is not a profile"

# 5. An existing directory: refused before sampling.
mkdir adir
run dir -e task-clock --duration $DUR --dump adir -- "$W/threads" 1 1
(( RC == 2 )) && grep -q "adir': is a directory" dir.err || { show dir.err; fail "--dump DIR: status $RC"; }

# 6. --dump-split through a symlinked directory.
mkdir splitdir && ln -s splitdir sd
run split2 -e task-clock,page-faults --duration $DUR --dump sd/p.pb.gz --dump-split -- "$W/threads" 2 3
(( RC == 0 )) || { show split2.err; fail "--dump-split exited with $RC"; }
n=$(ls splitdir | grep -c '\.pb\.gz$')
(( n == 2 )) || { ls -la splitdir; fail "--dump-split wrote $n files, expected 2"; }
[[ -L sd ]] || fail "the directory symlink was replaced"

# 7. NAME_MAX.
long=$(printf 'n%.0s' $(seq 249)).pb.gz
run namemax -e task-clock --duration $DUR --dump "$long" -- "$W/threads" 1 1
(( RC == 0 )) && pprof -top "$long" >/dev/null 2>&1 ||
	{ show namemax.err; fail "a 255-character file name failed"; }

# 8. Over PATH_MAX: the error ends with the reason.
p=.; while (( ${#p} < 4200 )); do p=$p/deeper-and-deeper-and-deeper; done
info "\$ pmutop --dump ./deeper.../out.pb.gz (${#p} characters) -- threads 1 1"
timeout 60 "$PMUTOP" -e task-clock --duration $DUR --dump "$p/out.pb.gz" -- "$W/threads" 1 1 \
	>pathmax.out 2>pathmax.err
RC=$?
(( RC == 2 )) || { show pathmax.err; fail "a path over PATH_MAX: status $RC"; }
last=$(tail -1 pathmax.err)
info "pathmax: ${last:0:60}...${last: -60}"
[[ $last == *"File name too long" || $last == *"does not exist" ]] ||
	fail "the error about a long path does not end with its reason: ...${last: -80}"
pass "--dump to stdout, symlinks, /dev/stdout, FIFOs, directories, --dump-split, NAME_MAX, PATH_MAX"
