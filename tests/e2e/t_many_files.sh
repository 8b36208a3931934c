#!/usr/bin/env bash
# t_many_files.sh - many distinct programs, one after the other (issue 21,
# item 5): the files no process maps any more are evicted past a cap (32
# kept), so pmutop's memory does not grow with the number of distinct files
# it has seen, and every program's samples are still named.
#
# N copies of fanout (distinct files: own inode, same build) each run once
# under `pmutop -- sh -c ...`, against one copy run N times. Before the cap
# each distinct file cost ~110 KB for the whole run (250 copies: +31 MB over
# one copy; 500: 137-141 MB against 67-69 MB). Fails without eviction.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
e2e_init
need_wl fanout

EV=task-clock
N=$(quick_or 250 150)
mkdir copies
for i in $(seq -w 1 "$N"); do
	cp "$W/fanout" "copies/fo$i" || fail "cannot copy fanout"
done
# An ASan build keeps freed blocks in a quarantine (256 MB by default), which
# would hide what eviction frees: a small one, and the bound three times as
# large for its shadow memory (as in t_processes).
# (150 copies under ASan: +23.8 MB.) It is also 2-3 times slower, so the
# kernel drops more of the children's samples: fewer copies with a whole
# stack (135 of 150 in one run, none of them unnamed).
growth_max=12000
named_min=95
if ldd "$PMUTOP" 2>/dev/null | grep -q libasan; then
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8
	growth_max=36000
	named_min=85
fi

# rss_run NAME COMMAND: profile `sh -c COMMAND` into NAME.pb.gz; pmutop's peak RSS (KiB) in NAME.rss.
rss_run() {
	info "\$ pmutop -e $EV --dump $1.pb.gz -- sh -c '$2'   (under /usr/bin/time)"
	timeout -k 5 300 /usr/bin/time -f %M -o "$1.rss" "$PMUTOP" -e $EV --dump "$1.pb.gz" \
		-- sh -c "$2" >"$1.out" 2>"$1.err"
	RC=$?
	show "$1.err" 8
	(( RC == 0 )) || fail "$1: pmutop exited $RC"
}

first=copies/fo$(printf "%0${#N}d" 1)
rss_run same "for f in copies/*; do $first child 1 20; done"
rss_run distinct 'for f in copies/*; do $f child 1 20; done'
same=$(tail -1 same.rss)
distinct=$(tail -1 distinct.rss)
growth=$((distinct - same))
info "peak RSS: one copy $N times ${same} KiB, $N distinct copies ${distinct} KiB (+${growth} KiB)"
(( growth < growth_max )) ||
	problem "$N distinct files cost ${growth} KiB more than one (want < $((growth_max / 1000)) MB: the files no process maps any more are not evicted)"

# Counted in the summary and in the profile.
evicted=$(sed -n 's/.*memory cap: symbols of \([0-9]*\) files no process mapped any more freed.*/\1/p' distinct.err)
info "summary: ${evicted:-no} files evicted"
(( ${evicted:-0} >= N / 2 )) || problem "the summary does not count the evicted files (want >= $((N / 2)) of $N)"
comment=$(pprof -raw distinct.pb.gz | sed -n 's/.*modules_evicted=\([0-9]*\).*/\1/p')
[[ ${comment:-x} == "${evicted:-y}" ]] ||
	problem "the profile says modules_evicted=${comment:-nothing}, the summary ${evicted:-nothing}"

# Every program named: a copy counts when one of its stacks has its own
# _start (named from its own file, copies/foNNN) and work_1; a frame left
# as foNNN+0x... in the code (.text) of a copy whose file was opened (its
# mapping has the build-id) is a name lost to eviction.
# .text as file offsets (fanout is PIE: its vaddrs are its offsets) - not
# the PLT, whose first entry has no name in any build.
read -r text_lo text_size < <(readelf -SW "$first" | sed 's/^ *\[ *[0-9]*\]//' |
	awk '$1 == ".text" { print $4, $5 }')
text_lo=$((16#${text_lo:-0}))
text_hi=$((text_lo + 16#${text_size:-0}))
read -r named lost late < <(pprof -raw distinct.pb.gz | awk -v lo="$text_lo" -v hi="$text_hi" '
function hex(s,   v, i, c) { v = 0; s = tolower(s); sub(/^0x/, "", s)
	for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)); if (!c) break; v = v * 16 + c - 1 }
	return v }
/^Samples:/ { sec = "S"; next }
/^Locations/ { sec = "L"; next }
/^Mappings/ { sec = "M"; next }
sec == "S" && /^ +[0-9]+ +[0-9]+: / { n++; s = $0; sub(/^[^:]*: /, "", s); smp[n] = s; next }
sec == "L" && $3 ~ /^M=/ { id = $1; sub(":", "", id); name[id] = $4; map[id] = substr($3, 3)
	file[id] = $5; sub(/:[0-9]+$/, "", file[id]); next }
sec == "M" && /^[0-9]+:/ { id = $1; sub(":", "", id); bid[id] = ($4 ~ /^[0-9a-f]+$/) }
END {
	for (i = 1; i <= n; i++) {
		k = split(smp[i], ids, " "); copy = ""; w = 0
		for (j = 1; j <= k; j++) {
			if (name[ids[j]] == "_start" && file[ids[j]] ~ /\/fo[0-9]+$/) copy = file[ids[j]]
			if (name[ids[j]] == "work_1") w = 1
		}
		if (copy != "" && w) ok[copy] = 1
	}
	for (id in name) if (name[id] ~ /^fo[0-9]+\+0x/) {
		off = hex(substr(name[id], index(name[id], "+") + 1))
		if (!bid[map[id]]) late[file[id]] = 1
		else if (off >= lo && off < hi) lost[file[id]] = 1
	}
	for (c in ok) a++; for (c in lost) b++; for (c in late) l++
	print a + 0, b + 0, l + 0 }')
info "$N copies: ${named:-0} named (_start and work_1 in one stack), ${lost:-?} with code left unnamed after their file was opened, ${late:-?} met only after they exited (never opened)"
(( ${lost:-1} == 0 )) || problem "${lost:-?} copies have frames left unnamed in their code: names lost to eviction"
# Not all: samples may be lost (the summary's lost N), and a child whose
# first record is read after it exited is never opened (late).
(( ${named:-0} * 100 >= N * named_min )) ||
	problem "only ${named:-0} of $N copies named (want >= ${named_min}%)"

(( ERRS == 0 )) || fail "$ERRS problem(s) with many distinct files"
pass "$N distinct files: +${growth} KiB over one file, ${evicted} evicted and counted, ${named} of $N named"
