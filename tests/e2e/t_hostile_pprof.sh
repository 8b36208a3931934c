#!/usr/bin/env bash
# t_hostile_pprof.sh - --load on files made to hurt (issue 17):
#   1. a location with a million inlined lines (4 MB raw, a few KB gzipped)
#      referenced 100 times by each of 1000 samples: under the 512 MiB
#      input cap, but 10^11 frames once expanded;
#   2. a location with 4096 lines (allowed) referenced 16 times per sample
#      (65536 frames, allowed) by 4000 samples: 2.7*10^8 frames in all;
#   3. a FIFO (the old open() blocked until a writer came);
#   4. control: the same shape at a sane size loads.
# Each must end within seconds with a clear error (status 1) and modest
# memory (max RSS under 300 MB), never a multi-GB allocation or a hang.
source "$(dirname "$0")/lib.sh"
e2e_init
command -v python3 >/dev/null || skip "python3 not installed (builds the hostile files)"

# mk FILE NLINES REFS NSAMPLES: a pprof with one location of NLINES lines,
# each sample naming it REFS times.
mk() {
	python3 - "$@" <<-'EOF' || fail "cannot build $1"
	import gzip, sys
	def varint(n):
	    out = bytearray()
	    while True:
	        b = n & 0x7f; n >>= 7
	        out.append(b | (0x80 if n else 0))
	        if not n: return bytes(out)
	def field(num, payload):  # length-delimited
	    return varint(num << 3 | 2) + varint(len(payload)) + payload
	def vfield(num, v):
	    return varint(num << 3) + varint(v)
	path, nlines, refs, nsamples = sys.argv[1], *map(int, sys.argv[2:])
	strings = [b"", b"samples", b"count", b"hot_function", b"x.c"]
	vt = vfield(1, 1) + vfield(2, 2)
	line = field(4, vfield(1, 1) + vfield(2, 7))
	loc = vfield(1, 1) + vfield(3, 0x1000) + line * nlines
	fn = vfield(1, 1) + vfield(2, 3) + vfield(3, 3) + vfield(4, 4)
	sample = field(1, varint(1) * refs) + field(2, varint(1))
	prof = field(1, vt) + field(2, sample) * nsamples + field(4, loc) + field(5, fn)
	prof += b"".join(field(6, s) for s in strings)
	open(path, "wb").write(gzip.compress(prof, 9))
	EOF
}

# load NAME FILE: pmutop --load FILE with a 30 s limit; RC, seconds, max RSS.
load() {
	local t0
	info "\$ pmutop --load $2 --no-tui"
	t0=$(now)
	timeout -k 5 30 /usr/bin/time -f '%M' -o "$1.rss" "$PMUTOP" --load "$2" --no-tui \
		>"$1.out" 2>"$1.err"
	RC=$?
	EL=$(elapsed "$t0")
	RSS=$(( $(tail -1 "$1.rss" | tr -dc 0-9) / 1024 ))
	info "$1: status $RC in $EL s, max RSS $RSS MB: $(grep -v '^\s*Command' "$1.err" | head -1)"
}

# 1.
mk amp1.pb.gz 1000000 100 1000
info "amp1.pb.gz: $(stat -c %s amp1.pb.gz) bytes"
load amp1 amp1.pb.gz
(( RC == 1 )) || { show amp1.err; fail "amp1: status $RC, expected 1"; }
grep -q "has 1000000 lines (inlined frames); at most" amp1.err || fail "amp1: no clear error"
(( RSS < 300 )) || fail "amp1: max RSS $RSS MB"

# 2.
mk amp2.pb.gz 4096 16 4000
info "amp2.pb.gz: $(stat -c %s amp2.pb.gz) bytes"
load amp2 amp2.pb.gz
(( RC == 1 )) || { show amp2.err; fail "amp2: status $RC, expected 1"; }
grep -q "the samples expand to more than" amp2.err || fail "amp2: no clear error"
(( RSS < 300 )) || fail "amp2: max RSS $RSS MB"
awk -v e="$EL" 'BEGIN { exit !(e < 20) }' || fail "amp2: took $EL s"

# 3.
mkfifo prof.fifo
load fifo prof.fifo
(( RC != 0 && RC != 124 )) || { show fifo.err; fail "--load FIFO: status $RC"; }
grep -q "not a regular file" fifo.err || { show fifo.err; fail "--load FIFO: no clear error"; }

# 4. Control: the same shape, small, loads and shows the function.
mk ok.pb.gz 3 2 10
load ok ok.pb.gz
(( RC == 0 )) || { show ok.err; fail "a sane profile of the same shape: status $RC"; }
grep -q hot_function ok.out || { show ok.out; fail "the sane profile's function missing"; }
pass "pprof amplification (lines per location, frames in all) and FIFOs refused quickly with bounded memory"
