#!/bin/bash
# The replay's go-to line (@): a time, absolute (RFC 3339 here, so the test
# does not depend on the time zone) or relative to the tick shown, shows the
# tick that covers it.  tests/data/torn/syscalls.snap has 10 ticks of 1 s
# ending at 2026-11-21 18:05:57.516 UTC, 18:05:58.516 ... 18:06:06.516;
# ticks 5 and 6 cannot be decoded.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"

S=goto-$$
tui_require

tmp=$(mktemp -d)
cleanup() {
	tui_end
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/config"
rec=$(realpath tests/data/torn/syscalls.snap)

# go TEXT: open the go-to line, type TEXT, press Enter.
go() {
	keys @
	wait_for 'go to:' 5 || return 1
	tmux send-keys -t "$S" -l -- "$1"
	keys Enter
}

start replay "$rec"
wait_for 'REPLAY [0-9:]+ \[10/10\]' 30
check $? "replay plays to its last tick"

go '2026-11-21T18:05:59Z'
wait_for '\[3/10\]' 5 && cap | grep -q 'at 2026-11-21 ..:05:59 (tick 3 of 10)'
check $? "@ 18:05:59Z shows tick 3 (18:05:58.5 to 18:05:59.5) and says so"

go '+3.5s'
wait_for '\[7/10\]' 5
check $? "@ +3.5s counts from the tick shown: 18:06:03.0 is in tick 7"

keys g
wait_for '\[1/10\]' 5
go '2026-11-21T18:06:01Z'
wait_for '\[7/10\]' 5
check $? "a time in an undecodable tick (5: 18:06:00.5 to 18:06:01.5) goes to the next readable one (7)"

keys G
wait_for '\[10/10\]' 5
go '-3.5s'
wait_for '\[7/10\]' 5
check $? "@ -3.5s from the last tick: tick 7"

go '2026-11-21T17:00:00Z'
wait_for '\[1/10\]' 5 && cap | grep -q 'is before the recording: at its first tick'
check $? "a time before the recording goes to its first tick, saying so"

go '2026-11-22T00:00:00+01:00'
wait_for '\[10/10\]' 5 && cap | grep -q 'is past the recording: at its last tick'
check $? "a time past the recording goes to its last tick, saying so"

go 'yesterday'
wait_for "'yesterday' is not a time" 5 && cap | grep -q 'go to: yesterday'
check $? "a bad time is said in place and the text stays for editing"
keys Escape
wait_gone 'go to:' 5
check $? "Esc closes the go-to line"

# A time series in the TUI: the time column first; Enter drills into the
# row's other keys, and sorting by the time column is refused.
keys :
wait_for 'query:' 5
tmux send-keys -t "$S" -l -- 'group by time(4s), comm show count'
keys Enter
wait_for '^time +comm +count' 10 && cap | grep -qE '^2026-11-21 [0-9:]{8} +[^ ]+ +[0-9.]+[KM]?'
check $? "group by time(4s), comm shows a time column first, as local time"
keys Enter
wait_for 'where comm == ' 10 && ! cap | grep -q 'time =='
check $? "Enter drills into the row's comm, not into its window"

keys '?'
wait_for 'go to a time' 5
check $? "the help lists @"
keys q
wait_gone 'go to a time' 5
keys q
[ "$(exit_status)" = 0 ]
check $? "q quits"
grep -q 'ERROR: AddressSanitizer\|runtime error' "$tmp/stderr"
[ $? -ne 0 ]
check $? "no sanitizer report"
done_testing
