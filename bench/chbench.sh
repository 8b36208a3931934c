#!/usr/bin/env bash
# bench/chbench.sh - the fleet store's figures (issue 35): rows and bytes
# per window and the agent's CPU with --push on a real run, then the load
# time of --load clickhouse://... over synthetic windows from 10 hosts
# (1 hour and 24 hours of 60-second windows). Prints a Markdown section for
# bench/RESULTS.md. Starts its own clickhouse-server on loopback
# (tests/e2e/clickhouse_lib.sh); the synthetic rows are made by ClickHouse
# itself (INSERT ... SELECT FROM numbers()).
#
# usage: bench/chbench.sh [STACK_ROWS_PER_WINDOW]   (default 300)
source "$(dirname "$0")/../tests/e2e/lib.sh"
source "$(dirname "$0")/../tests/e2e/clickhouse_lib.sh"
e2e_init
need_wl shares
ch_need
PER_WIN=${1:-300}
ch_start
URL=$CH_URL/bench
cpu() { awk '{ printf "%.2f", $1 + $2 }' "$1"; }

# A real agent on a shares process it attaches to: 10 windows of 1 s, with
# and without --push (its own CPU, not the workload's).
agent() { # agent NAME ARGS...: pmutop -p on a fresh shares, its CPU in NAME.time
	local name=$1 wl
	shift
	"$W/shares" 12 & wl=$!
	E2E_BG_PIDS+=("$wl")
	sleep 0.3
	/usr/bin/time -f "%U %S" -o "$name.time" "$PMUTOP" -e task-clock --period 1000000 \
		--dump-every 1 --dump "$name/" --duration 10 -p "$wl" "$@" 2>"$name.err"
	kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
}
agent plain
agent push --push "$URL" --label host=real
line=$(grep "windows pushed" push.err)
[[ $line =~ ([0-9]+)\ windows\ pushed\ \(([0-9]+)\ rows,\ ([0-9]+)\ bytes ]] || fail "no push summary: $line"
nw=${BASH_REMATCH[1]} rows=${BASH_REMATCH[2]} bytes=${BASH_REMATCH[3]}

# Synthetic fleet: 10 hosts x 1440 windows (24 h of 60 s) x PER_WIN stack rows.
t0=$(now)
ch_q "INSERT INTO bench.pmutop_mappings_v1 SELECT number + 1, concat('/usr/lib/libsyn', toString(number), '.so'), hex(cityHash64(number)) FROM numbers(10)"
ch_q "INSERT INTO bench.pmutop_stacks_v1 (stack_id, frames.func, frames.file, frames.line, frames.mapping_id, frames.address)
	SELECT number + 1, arrayMap(i -> concat('fn_', toString((number * 7 + i * 13) % 3000)), range(20)),
	arrayMap(i -> 'syn.c', range(20)), arrayMap(i -> toInt64(0), range(20)),
	arrayMap(i -> toUInt64((number + i) % 10 + 1), range(20)),
	arrayMap(i -> toUInt64(4096 + ((number * 7 + i * 13) % 3000) * 64), range(20)) FROM numbers(5000)"
total=$((10 * 1440 * PER_WIN))
ch_q "INSERT INTO bench.pmutop_samples_v1 (window_id, ts, start_ns, duration_ns, host, pid, comm, tid, thread, labels.key, labels.value, event, unit, stack_id, samples, value)
	SELECT intDiv(number, $PER_WIN) + 1000000 AS w, toDateTime(toUInt32(now()) - 86400 + intDiv(w - 1000000, 10) * 60) AS t,
	toUInt64(toUInt32(t)) * 1000000000, 60000000000, concat('host', toString(w % 10)), 100 + w % 10, 'syn',
	100 + number % 4, 'worker', ['service'], ['syn'], 'task-clock', 'nanoseconds',
	cityHash64(number % 5000, intDiv(number, $PER_WIN)) % 5000 + 1, 3, 3000000 FROM numbers($total)"
gen=$(elapsed "$t0")
stored=$(ch_q "SELECT sum(bytes_on_disk) FROM system.parts WHERE database = 'bench' AND table = 'pmutop_samples_v1' AND active")

load() { # load NAME QUERY: wall seconds of pmutop --load (3 runs, best and median)
	local name=$1 q=$2 ts=() t0 i
	for i in 1 2 3; do
		t0=$(now)
		"$PMUTOP" --load "$URL?$q" --dump "$name.pb.gz" 2>"$name.err" || { show "$name.err"; fail "load $q"; }
		ts+=("$(elapsed "$t0")")
	done
	LINE=$(grep "ClickHouse merged" "$name.err" | sed 's/^pmutop: //')
	BEST=$(printf '%s\n' "${ts[@]}" | sort -n | head -1)
	MED=$(printf '%s\n' "${ts[@]}" | sort -n | sed -n 2p)
}
load h1 "service=syn&from=-1h&to=now"; h1="$BEST / $MED s ($LINE)"
load d1 "service=syn&from=-24h&to=now"; d1="$BEST / $MED s ($LINE)"
load one "host=host3&from=-24h"; one="$BEST / $MED s ($LINE)"

cat <<MD
## Fleet store: ClickHouse (bench/chbench.sh, issue 35)

_$(date -u '+%Y-%m-%d %H:%M:%S UTC'); clickhouse-server $(ch_q "SELECT version()") (Debian), started on loopback by the script (max_threads 1); load average at the end $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs, shared with other sessions._

| | |
|---|---|
| real agent, shares workload, task-clock 1 ms, --dump-every 1 for 10 s | $nw windows pushed, $((rows / nw)) rows and $((bytes / nw)) bytes of JSONEachRow per window (the first window carries the stacks and mappings) |
| agent CPU (user+sys) for that run, without / with --push | $(cpu plain.time) s / $(cpu push.time) s |
| synthetic fleet | 10 hosts x 1440 windows (24 h of 60 s) x $PER_WIN stack rows = $total rows, 5000 stacks of 20 frames; generated in $gen s; $((stored / 1048576)) MiB on disk |
| --load ?service=syn&from=-1h (10 hosts, 1 hour) | $h1 |
| --load ?service=syn&from=-24h (10 hosts, 24 hours) | $d1 |
| --load ?host=host3&from=-24h (1 host, 24 hours) | $one |

Times are wall seconds of the whole pmutop --load (best / median of 3), writing a pprof file.
MD
