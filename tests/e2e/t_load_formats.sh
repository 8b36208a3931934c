#!/usr/bin/env bash
# t_load_formats.sh - --load of a file pmutop or perf writes that is not a
# pprof profile names what it is and the command that reads it (issue 33),
# instead of "not a pprof profile (neither gzip nor ...)": folded stacks,
# the SVG and HTML flame graphs, speedscope JSON (all written here by
# pmutop from one run) and perf.data (written by perf record, when perf is
# installed). Each must exit 1 with the format and its reader named.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares

run_pmutop rec -e task-clock -d 1 -o p.pb.gz -- "$W/shares" 3
(( RC == 0 )) || { show rec.err; fail "recording failed ($RC)"; }
for f in p.folded p.svg p.json p.html; do
	run_pmutop "conv_$f" --load p.pb.gz -o "$f"
	(( RC == 0 )) || { show "conv_$f.err"; fail "--load p.pb.gz -o $f failed ($RC)"; }
done
errs=0
check() { # FILE REGEX
	run_pmutop "load_$1" --load "$1" --no-tui
	show "load_$1.err" 1
	if (( RC != 1 )) || ! grep -qE -- "$2" "load_$1.err"; then
		info "FAILED: --load $1: status $RC, want 1 and /$2/"
		errs=$((errs + 1))
	fi
}
check p.folded 'folded stacks.*flamegraph\.pl'
check p.svg 'SVG file.*browser'
check p.json 'speedscope file.*speedscope'
check p.html 'HTML page.*browser'
if command -v perf >/dev/null 2>&1 && perf record -q -e task-clock -o perf.data -- true >/dev/null 2>&1 &&
	[[ -s perf.data ]]; then
	check perf.data 'perf\.data file.*perf report'
else
	info "(perf record unavailable: perf.data case skipped)"
fi
(( errs == 0 )) || fail "$errs format(s) not named"
pass "--load names folded stacks, SVG, HTML, speedscope and perf.data, with their readers"
