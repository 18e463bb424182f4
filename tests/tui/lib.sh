#!/bin/bash
# What the TUI tests share: latop in a tmux session named $S, its screen
# read back as tmux renders it.  Source it after tests/lib.sh, then:
#   tui_require            skip_all without tmux or without the latop at $BIN
#                          ($LATOP_BIN, default .output/san/latop)
#   cap                    print the screen
#   wait_for ERE [SECS]    wait until the screen matches (at most SECS, 20)
#   wait_gone ERE [SECS]   wait until it no longer matches (at most SECS, 10)
#   check STATUS DESC      ok, and on failure the screen as TAP comments
#   keys KEY...            send keys; type_text TEXT sends TEXT literally
#   tui_end                stop the test's tmux server (in its EXIT trap)
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	echo "1..0 # SKIP tests/tui/lib.sh is the library the tui tests source, not a test"
	exit 0
fi
BIN=$(realpath "${LATOP_BIN:-.output/san/latop}" 2>/dev/null)

# Every tmux command of a test goes to a server of its own, which outlives
# its last session: start kills a test's session before it makes the next,
# and a tmux client that reaches a server on its way out after its last
# session fails ("server exited unexpectedly": 2 of 300 kill-then-new
# cycles here, a test's checks lost with it).  Its socket and config are
# made at the first command; tui_end stops it and removes them.
TUI_TMUX=${TMPDIR:-/tmp}/latop-tmux-$$
tmux() {
	if [ ! -e "$TUI_TMUX/tmux.conf" ]; then
		mkdir -p "$TUI_TMUX" && echo 'set-option -s exit-empty off' >"$TUI_TMUX/tmux.conf"
	fi
	command tmux -S "$TUI_TMUX/sock" -f "$TUI_TMUX/tmux.conf" "$@"
}
tui_end() {
	[ -e "$TUI_TMUX/sock" ] && command tmux -S "$TUI_TMUX/sock" kill-server 2>/dev/null
	rm -rf "$TUI_TMUX"
}

tui_require() {
	command -v tmux >/dev/null || skip_all "tmux is not installed"
	[ -n "$BIN" ] && [ -x "$BIN" ] || skip_all "no latop binary at $BIN (make san)"
}
cap() { tmux capture-pane -p -t "$S" 2>/dev/null; }
wait_for() {
	local i
	for ((i = 0; i < ${2:-20} * 10; i++)); do
		cap | grep -qE -- "$1" && return 0
		sleep 0.1
	done
	return 1
}
wait_gone() {
	local i
	for ((i = 0; i < ${2:-10} * 10; i++)); do
		cap | grep -qE -- "$1" || return 0
		sleep 0.1
	done
	return 1
}
check() {
	ok "$1" "$2"
	[ "$1" -eq 0 ] || cap | sed 's/^/#  |/'
}
keys() { tmux send-keys -t "$S" "$@"; }
type_text() { tmux send-keys -t "$S" -l "$1"; }
# start ARGS...: run $BIN in a 160x48 tmux session $S from $tmp, with
# XDG_CONFIG_HOME=$tmp/config, its stderr in $tmp/stderr and its exit status
# in $tmp/exit.
start() {
	tmux kill-session -t "$S" 2>/dev/null
	rm -f "$tmp/exit"
	tmux new-session -d -s "$S" -x 160 -y 48 -c "$tmp" \
		"env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color XDG_CONFIG_HOME=$tmp/config \
		 ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} $BIN $* 2>$tmp/stderr; echo \$? >$tmp/exit; sleep 600"
}
# exit_status: wait up to 10 s for what start ran to exit; print its status.
exit_status() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ -s "$tmp/exit" ] && { cat "$tmp/exit"; return; }
		sleep 0.1
	done
	echo timeout
}
