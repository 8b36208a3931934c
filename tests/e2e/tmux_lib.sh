#!/usr/bin/env bash
# tmux_lib.sh - drive the live view in a real terminal: a private tmux
# server (socket under $T), one window "tui" whose screen is read with
# capture-pane. Sourced by the live-view tests after lib.sh and e2e_init;
# defines problem/errs like fault_lib.sh does.
command -v tmux >/dev/null 2>&1 || skip "tmux not installed (apt-get install tmux; make deps)"

SOCK=$T/tmux.sock
tm() { tmux -S "$SOCK" "$@"; }
trap 'rc=$?; tmux -S "$SOCK" kill-server >/dev/null 2>&1; (exit $rc); e2e_cleanup' EXIT

errs=0
problem() { info "FAILED: $*"; errs=$((errs + 1)); }
screen() { tm capture-pane -p -t tui; }
show_screen() { screen | sed 's/^/    | /'; }

# wait_for REGEX [SECS]: until the pane shows REGEX (extended); 1 on timeout.
wait_for() {
	local i n=$(( ${2:-10} * 10 ))

	for (( i = 0; i < n; i++ )); do
		screen | grep -qE -- "$1" && return 0
		sleep 0.1
	done
	return 1
}

# keys KEY...: send tmux key names, then let the view redraw.
keys() {
	tm send-keys -t tui "$@"
	sleep 0.4
}

# run_in_pane CMD: type CMD and Enter at the shell prompt of the pane.
run_in_pane() {
	tm send-keys -t tui -l "$1"
	tm send-keys -t tui Enter
}

# table_rows: the rows under the column titles, up to the footer.
table_rows() {
	screen | awk '/^ +flat +flat%/ { on = 1; next } /qQuit/ { on = 0 } on && NF >= 3'
}

# tmux_start [COLS ROWS [TERM]]: the window "tui" running a plain shell with
# the prompt "tui-prompt$ " in $T.
tmux_start() {
	tm -f /dev/null new-session -d -s tui -x "${1:-80}" -y "${2:-24}" \
		"env PS1='tui-prompt\$ ' HOME=$T TERM=${3:-xterm-256color} bash --norc --noprofile" ||
		fail "cannot start tmux"
	tm set -g escape-time 10 >/dev/null
	tm set -g window-size manual >/dev/null 2>&1
	wait_for 'tui-prompt\$' 5 || fail "the shell in tmux did not start"
	cd "$T" || fail "cd $T"
}
