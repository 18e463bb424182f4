#!/bin/bash
# LIVE means counting: the probes are attached before the header first says
# LIVE, so processes started the moment it does are all counted.  200 runs
# of /bin/true start as soon as LIVE shows; the history the TUI saves (key
# s) holds every one's exit_group.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"

S=live-start-$$
tui_require
need_root

tmp=$(mktemp -d)
cleanup() {
	tui_end
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/config/latop"

start
# Look at the screen as often as tmux can draw it, not every 0.1 s.
for ((i = 0; i < 3000; i++)); do cap | grep -qE '^ latop +LIVE ' && break; sleep 0.01; done
cap | grep -qE '^ latop +LIVE '
check $? "the header says LIVE"
for _ in $(seq 200); do /bin/true; done
sleep 2.5	# a tick after the last run
keys s
wait_for 'saved [0-9]+ ticks to \./latop-[0-9]{8}-[0-9]{6}\.snap' 30
check $? "s saves the history"
snap=$(ls "$tmp"/latop-*.snap 2>/dev/null | head -1)
n=$("$BIN" report "$snap" --json -q "from syscalls where comm == 'true' and syscall == exit_group show count" 2>/dev/null |
	sed -n 's/.*"count":\([0-9]*\).*/\1/p')
[ "${n:-0}" -eq 200 ]
check $? "every run started at LIVE is counted (${n:-0} of 200)"
keys q
[ "$(exit_status)" = 0 ]
check $? "q quits"
done_testing
