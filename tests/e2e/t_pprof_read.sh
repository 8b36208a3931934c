#!/usr/bin/env bash
# t_pprof_read.sh - the profile is well-formed for go tool pprof.
#
# With a fixed --period P: `go tool pprof -top` and `-raw` read the file; the
# sample types are [samples/count, EVENT/count]; the period is P; and for
# every sample (and in total) EVENT value = samples value x P, i.e. the event
# total is exactly samples x period. Also each sample carries `thread` and
# `tid` labels, and -sample_index works with both sample type names.
# e2e-lane: beside (no timing, share or lost-count checks: see run.sh)
source "$(dirname "$0")/lib.sh"
e2e_init
need_wl shares

DUR=$(quick_or 2 1)
pick_event
if [[ $EV == cycles ]]; then PERIOD=1000000; else PERIOD=250000; fi

run_pmutop pr -e "$EV" --period "$PERIOD" --duration "$DUR" --dump pr.pb.gz -- "$W/shares" $((DUR + 5))
show pr.err
(( RC == 0 )) || fail "pmutop exited with status $RC"
[[ -s pr.pb.gz ]] || fail "no profile written"
gzip -t pr.pb.gz 2>/dev/null || fail "pr.pb.gz is not a valid gzip file"

pprof -top pr.pb.gz >top.txt 2>top.err || { show top.err; fail "go tool pprof -top cannot read the profile"; }
show top.txt 10
grep -q 'flat%' top.txt || fail "go tool pprof -top printed no table"

raw_samples pr.pb.gz >samples.txt || fail "go tool pprof -raw cannot read the profile"
types=$(awk '/^Samples:/ { getline; print; exit }' "$T/raw.txt")
period=$(awk '/^Period:/ { print $2; exit }' "$T/raw.txt")
ptype=$(awk '/^PeriodType:/ { print $2 "/" $3; exit }' "$T/raw.txt")
info "sample types: $types; period type: $ptype; period: $period"

errs=0
# Type names, ignoring pprof's "[dflt]" marker.
read -r t1 t2 extra <<<"$(echo "$types" | sed 's/\[dflt\]//g')"
[[ $t1 == samples/count ]] || { info "first sample type is \"$t1\", want samples/count"; errs=$((errs + 1)); }
# The event's type name must be the event; its unit should be "count" (the
# CLI's contract) - another unit is reported but not failed on here.
if [[ ${t2%%/*} != "$EV" ]]; then
	info "second sample type is \"$t2\", want $EV/count"
	errs=$((errs + 1))
elif [[ $t2 != "$EV/count" ]]; then
	info "NOTE: second sample type is \"$t2\"; the CLI contract says $EV/count"
fi
[[ -z ${extra:-} ]] || { info "extra sample types: $extra"; errs=$((errs + 1)); }
[[ $period == "$PERIOD" ]] || { info "Period is \"$period\", want $PERIOD"; errs=$((errs + 1)); }
[[ $ptype == "$t2" ]] || info "NOTE: PeriodType is \"$ptype\", the event sample type is \"$t2\""

awk -F'\t' -v p="$PERIOD" '
{
	n++; split($1, v, " ")
	s += v[1]; e += v[2]
	if (v[2] != v[1] * p && bad++ < 3) printf "  sample %d: %s samples but %s events (want %s)\n", n, v[1], v[2], v[1] * p
	if ($2 == "-" || $3 == "-") nolab++
}
END {
	printf "  %d samples records: samples total %d, event total %d, samples x period %d\n", n, s, e, s * p
	if (n == 0 || s == 0) { print "  no samples"; exit 1 }
	if (e != s * p) { print "  event total != samples x period"; exit 1 }
	if (bad) exit 1
	if (nolab) { printf "  %d sample records without thread/tid label\n", nolab; exit 1 }
}' samples.txt || errs=$((errs + 1))

for idx in samples "$EV"; do
	if ! pprof -top -sample_index="$idx" pr.pb.gz >idx.txt 2>idx.err; then
		show idx.err 3
		info "-sample_index=$idx rejected"
		errs=$((errs + 1))
	fi
done

(( errs == 0 )) || fail "profile not well-formed ($errs problems)"
pass "pprof reads the profile; $EV total = samples x period ($PERIOD)"
