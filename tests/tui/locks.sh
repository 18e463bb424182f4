#!/bin/bash
# The locks view under tmux, on a replay of LDB's example (tests/helpers/
# lockdemo.c): the row of state_lock with its holder functions, and in the
# detail pane the timeline of a wait: the waiter, bgsnap holding the lock,
# what it ran (snapshot_state) and its I/O wait, on one time axis.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"

D=${LATOP_HELPERS:-.output/helpers}/lockdemo
S=latoplocks-$$
tui_require
[ -x "$D" ] || skip_all "no lockdemo helper at $D (make tests-build)"
need_root

tmp=$(mktemp -d) rec_pid= demo_pid=
cleanup() {
	tui_end
	[ -n "$rec_pid" ] && kill -9 "$rec_pid" 2>/dev/null
	[ -n "$demo_pid" ] && kill -9 "$demo_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# ---- a recording of lockdemo ------------------------------------------------
mkfifo "$tmp/go"
"$D" snapshot 3000 "$tmp" < "$tmp/go" > "$tmp/out" & demo_pid=$!
exec 3> "$tmp/go"
for _ in $(seq 50); do [ -s "$tmp/out" ] && break; sleep 0.1; done
"$BIN" record -o "$tmp/locks.snap" -d 6s --quiet -q "from locks where pid == $demo_pid threshold 1us" &
rec_pid=$!
for _ in $(seq 150); do [ -e "$tmp/locks.snap.tmp" ] && break; sleep 0.1; done; sleep 0.5
echo g >&3; exec 3>&-
wait $demo_pid; demo_pid=
wait $rec_pid; check $? "latop record of lockdemo snapshot exits 0"; rec_pid=

# ---- replay: the view, then the detail pane ----------------------------------
tmux new-session -d -s "$S" -x 170 -y 60 -c "$tmp" \
	"env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color XDG_CONFIG_HOME=$tmp/config \
	 ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} $BIN replay $tmp/locks.snap 2>$tmp/stderr; sleep 600"
wait_for 'REPLAY [0-9:]+ \[[0-9]+/[0-9]+\]' 30
check $? "replay starts"
wait_for '^lock +kind +sym +pid +process +holder_fns +count' 10
check $? "the locks view (the only table recorded) shows its columns"
wait_for '^0x[0-9a-f]+ +mutex +state_lock +[0-9]+ +lockdemo +([a-z_]+, )*snapshot_state' 20
check $? "state_lock's row: a mutex of lockdemo, snapshot_state among its holders' functions"

# The selection follows the row it is on as ticks replay, and the first
# tick's top row may be a kernel spinlock: select state_lock by search.
keys /
type_text state_lock
keys Enter
tmux send-keys -t "$S" Tab
wait_for "detail: lock == '0x[0-9a-f]+' and kind == 'mutex' and sym == 'state_lock'" 10
check $? "Tab opens the detail pane on state_lock"
wait_for '^ timeline of event [0-9]+/[0-9]+' 10
check $? "the pane draws the timeline of a wait"
# bgsnap's row: its hold, or its release alone when it took the lock where
# no wait could see it (no label then, so only the timeline's own line).
wait_for '^ *holder [0-9]+ bgsnap' 10 && cap | grep -qE '^ +waiter [0-9]+ req-[0-9]+:'
check $? "... with a waiter's row and bgsnap's row"
# Find an event whose timeline shows what bgsnap ran and its I/O: { } step.
found=1
for _ in $(seq 32); do
	if cap | grep -E '^ +holder [0-9]+ bgsnap:' | grep -q 'snapshot_state' &&
	   cap | grep -E '^ +holder [0-9]+ bgsnap:' | grep -q 'I/O wait'; then
		found=0
		break
	fi
	tmux send-keys -t "$S" '}'
	sleep 0.3
done
check $found "a timeline shows bgsnap running snapshot_state and waiting for I/O while holding"
tmux send-keys -t "$S" q
sleep 1
[ ! -s "$tmp/stderr" ] || ! grep -qE 'runtime error|AddressSanitizer|LeakSanitizer' "$tmp/stderr"
check $? "no sanitizer report"
done_testing
