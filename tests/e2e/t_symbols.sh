#!/usr/bin/env bash
# t_symbols.sh - code without symbols is grouped per function; PLT stubs
# are named; every output names a frame alike.
#
#  1. nosym_main + a stripped copy of libnosym.so: the library's two hot
#     static functions have no symbol left, only their .eh_frame FDEs. Each
#     must be ONE row named libnosym.so+0xSTART, START being the function's
#     start (from the unstripped copy's symbol table), with shares 25/75
#     within 4 points; no other libnosym.so row has real weight.
#  2. The same names, and only those, in the table, the pprof dump (read by
#     go tool pprof, every location with an address and the library's
#     mapping with its build-id), folded output and --stacks of the running
#     program.
#  3. nosym_main in its PLT loop: a "plt_empty@plt" row, and no "_init".
#  4. If openssl is installed: SHA-256 in Debian's libcrypto.so.3 (assembly
#     without symbols) is a handful of rows, not one per instruction.
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl nosym_main libnosym.so

DUR=$(quick_or 2 1.5)
mkdir -p s && cp "$W/nosym_main" s/ || fail "cp"
strip --strip-all -o s/libnosym.so "$W/libnosym.so" || fail "strip"
nm s/libnosym.so >/dev/null 2>&1 && nm s/libnosym.so 2>&1 | grep -q lib_quarter && fail "strip left lib_quarter"
# nm's address is the vaddr; in this library text's vaddr is its file offset.
fn_name() { printf 'libnosym.so+0x%x' "0x$(nm "$W/libnosym.so" | awk -v f="$1" '$3 == f { print $1 }')"; }
Q=$(fn_name lib_quarter)
TQ=$(fn_name lib_three_quarters)
[[ $Q != libnosym.so+0x0 && $TQ != libnosym.so+0x0 ]] || fail "cannot read the functions' addresses from the unstripped library"
info "expect $Q (lib_quarter, 25%) and $TQ (lib_three_quarters, 75%)"

# 1. the table.
run_pmutop tab --no-tui --table-file tab.out -e task-clock -- s/nosym_main "$DUR" fde
(( RC == 0 )) || { show tab.err; fail "pmutop exited with status $RC"; }
show tab.out 8
awk -v q="$Q" -v tq="$TQ" '
	$NF ~ /^libnosym\.so\+/ { n++; v[$NF] = $2 + 0 }
	END {
		a = v[q]; b = v[tq]
		if (a + b <= 0) { print "  no samples in " q " or " tq; exit 1 }
		s = 100 * a / (a + b)
		printf "  %s %.1f%%, %s %.1f%% of the two; %d libnosym rows\n", q, s, tq, 100 - s, n
		d = s - 25; if (d < 0) d = -d
		for (k in v) if (k != q && k != tq && v[k] > 1) { print "  extra row " k " " v[k] "%"; exit 1 }
		exit d > 4
	}' tab.out || fail "unnamed functions not grouped by FDE start with 25/75 shares"

# 2. the dump, folded, --stacks: the same names.
run_pmutop dump -q -e task-clock --dump d.pb.gz -- s/nosym_main "$DUR" fde
(( RC == 0 )) || { show dump.err; fail "pmutop --dump exited with status $RC"; }
pprof -top d.pb.gz >d.top 2>/dev/null || fail "go tool pprof cannot read the dump"
for f in "$Q" "$TQ"; do
	grep -q " $f\$" d.top || fail "$f missing from the dump"
done
awk '$NF ~ /^libnosym\.so\+/ { print $NF }' d.top | sort -u >dump.names
[[ $(wc -l <dump.names) -le 3 ]] || { show dump.names; fail "the dump splits libnosym.so into rows per address"; }
BID=$(readelf -n s/libnosym.so | awk '/Build ID/ { print $3 }')
pprof -raw d.pb.gz 2>/dev/null | grep -E "libnosym\.so $BID" >/dev/null ||
	fail "the dump's libnosym.so mapping lacks its build-id $BID"
pprof -raw d.pb.gz 2>/dev/null | awk '/^Locations/ { l = 1; next } /^Mappings/ { l = 0 }
	l && /libnosym\.so\+/ && !($2 ~ /^0x[0-9a-f]+$/ && $3 ~ /^M=[0-9]+$/) { bad = 1 }
	END { exit bad }' || fail "an unnamed location lacks its address or mapping"
# One location per sampled address (a later symbolizer needs them), one function.
NLOC=$(pprof -raw d.pb.gz 2>/dev/null | grep -cF " $TQ ")
info "$TQ: $NLOC locations in the dump"
(( NLOC > 1 )) || fail "the dump keeps one address for all of $TQ"

run_pmutop fold -q -e task-clock --format folded --dump f.folded -- s/nosym_main "$DUR" fde
(( RC == 0 )) || fail "pmutop --format folded exited with status $RC"
for f in "$Q" "$TQ"; do
	grep -q ";$f " f.folded || fail "$f missing from the folded stacks"
done
# Other unnamed libnosym.so frames (its _init, run once) hold almost nothing.
awk -v q="$Q" -v tq="$TQ" '{ w = $NF; t += w; n = split($1, f, ";")
	for (i = 1; i <= n; i++) if (f[i] ~ /^libnosym\.so\+/ && f[i] != q && f[i] != tq) { o += w; break } }
	END { printf "  other libnosym.so frames: %.2f%% of the samples\n", 100 * o / t; exit !(o * 50 < t) }' f.folded ||
	fail "folded output splits libnosym.so into other frames"

start_bg s/nosym_main 30 fde
wait_started "$BG_PID"
run_pmutop st --stacks -p "$BG_PID"
kill "$BG_PID" 2>/dev/null
(( RC == 0 )) || { show st.err; fail "--stacks exited with status $RC"; }
show st.out 8
awk -v q="$Q" -v tq="$TQ" '{ for (i = 1; i <= NF; i++) if ($i == q || $i == tq) ok = 1 } END { exit !ok }' st.out ||
	fail "--stacks does not name the frame $Q or $TQ"
grep -oE 'libnosym\.so\+0x[0-9a-f]+' st.out | grep -vxF -e "$Q" -e "$TQ" | grep -q . &&
	fail "--stacks names a libnosym.so frame the profile does not"

# 3. PLT.
run_pmutop plt --no-tui --table-file plt.out -e task-clock -- s/nosym_main "$DUR" plt
(( RC == 0 )) || fail "pmutop exited with status $RC"
show plt.out 6
grep -qE ' plt_empty@plt$' plt.out || fail "no plt_empty@plt row"
grep -qE ' _init$' plt.out && fail "a row named _init"

# 4. Debian's libcrypto.
if command -v openssl >/dev/null 2>&1; then
	run_pmutop ssl --no-tui --table-file ssl.out -e task-clock -- openssl speed -seconds 1 -bytes 16384 -evp sha256
	(( RC == 0 )) || { show ssl.err; fail "pmutop on openssl speed exited with status $RC"; }
	show ssl.out 6
	# Rows of 1% or more: one per unnamed function (a few), not one per address (dozens).
	awk '$NF ~ /^libcrypto\.so\.3\+/ && $2 + 0 >= 1 { n++; if ($2 + 0 > top) top = $2 + 0 }
	     END { printf "  libcrypto.so.3 unnamed rows of >= 1%%: %d, the largest %.1f%%\n", n, top
		   exit !(n <= 5 && top >= 30) }' ssl.out ||
		fail "SHA-256 in libcrypto.so.3 is not grouped into a few functions"
fi
pass "unnamed functions grouped by FDE ($Q, $TQ) alike in table, dump, folded, --stacks; plt_empty@plt"
