# tests/e2e/fault_lib.sh - helpers for the fault-matrix tests (t_fault_*.sh).
#
# Sourced after lib.sh. The fault tests mostly run pmutop in the background
# (so they can hurt its target, or pmutop itself, while it samples), then
# check that it ended cleanly and that what it wrote is a profile
# `go tool pprof` reads.

# pm_start NAME ARGS...: start $PMUTOP ARGS in the background, stdout in
# NAME.out, stderr in NAME.err; its pid in $PM. A background job of a
# script starts with SIGINT ignored, unlike pmutop run from a terminal: env
# puts the default dispositions back (job control would too, but it makes
# `wait` lose exit statuses now and then).
pm_start() {
	local name=$1
	shift
	info "\$ pmutop $*  (background)"
	env --default-signal=INT,TERM,HUP "$PMUTOP" "$@" >"$name.out" 2>"$name.err" &
	PM=$!
	E2E_BG_PIDS+=("$PM")
}

# pm_finish SECS: wait up to SECS for $PM to exit; its status in $RC (124
# when it had to be killed).
pm_finish() {
	if ! wait_gone "$PM" "$1"; then
		info "pmutop still running after $1 s: killing it"
		kill -KILL "$PM" 2>/dev/null
		wait "$PM" 2>/dev/null
		RC=124
		return 1
	fi
	wait "$PM"
	RC=$?
	return 0
}

# pm_wait_sampling [SECS]: wait until pmutop has attached, i.e. holds more
# perf_event fds than its own per-CPU buffers (at least one counter on a
# target thread), for at most SECS (default 5). Returns 1 if it did not.
pm_wait_sampling() {
	local i n=$(( ${1:-5} * 20 )) ncpu

	ncpu=$(getconf _NPROCESSORS_CONF)
	for ((i = 0; i < n; i++)); do
		kill -0 "$PM" 2>/dev/null || return 1
		if (( $(pm_perf_fds) > ncpu )); then
			sleep 0.1
			return 0
		fi
		sleep 0.05
	done
	return 1
}

# pm_perf_fds: number of perf_event fds $PM holds.
pm_perf_fds() {
	# One process, not a readlink per fd: cheap enough on a loaded machine.
	find /proc/"$PM"/fd -lname 'anon_inode:\[perf_event\]' 2>/dev/null | wc -l
}

# pm_fds: number of open fds of $PM (0 when it is gone).
pm_fds() {
	local n
	n=$(ls "/proc/$PM/fd" 2>/dev/null | wc -l)
	echo "${n:-0}"
}

# alive PID: 0 when PID runs (not a zombie, not stopped).
alive() {
	local st
	kill -0 "$1" 2>/dev/null || return 1
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
	[[ -n $st && $st != Z && $st != X && $st != T && $st != t ]]
}

ERRS=0
# problem MSG: count a failed check (the test fails at the end).
problem() {
	info "FAILED: $*"
	ERRS=$((ERRS + 1))
}

# readable PROFILE: go tool pprof reads PROFILE; "function flat" lines in
# flat.txt. Counts a problem and returns 1 if not.
readable() {
	if [[ ! -s $1 ]]; then
		problem "no profile $1"
		return 1
	fi
	if ! top_flat "$1" >flat.txt; then
		problem "go tool pprof cannot read $1"
		return 1
	fi
	show "$T/top.txt" "${2:-18}"
	return 0
}

# flat_of FUNC: flat value of FUNC in flat.txt (0 when absent).
flat_of() {
	awk -F'\t' -v f="$1" '$1 == f { v += $2 } END { printf "%.0f\n", v }' flat.txt
}

# flat_total: sum of flat values in flat.txt.
flat_total() {
	awk -F'\t' '{ v += $2 } END { printf "%.0f\n", v }' flat.txt
}

# share FUNC: FUNC's flat as a percentage of the total, 1 decimal.
share() {
	awk -v a="$(flat_of "$1")" -v t="$(flat_total)" \
		'BEGIN { if (t > 0) printf "%.1f", 100 * a / t; else print 0 }'
}
