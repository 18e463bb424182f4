#!/bin/bash
# replay DIR: a ring of recordings (record --rotate) plays as one, and time
# travel crosses from file to file both ways; recordings that overlap in
# time are refused, naming both.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"

S=latoptest-ring-$$
tui_require
need_root

tmp=$(mktemp -d)
wl_pid=
cleanup() {
	[ -n "$wl_pid" ] && kill "$wl_pid" 2>/dev/null
	tui_end
	rm -rf "$tmp"
}
trap cleanup EXIT

# Calls in every tick whatever else the machine does (a quiet one makes
# too few rows): a loop of dd and sleep, every one a process of its own.
cp "$(command -v dd)" "$tmp/latopringwl"
( trap 'exit 0' TERM
  while :; do "$tmp/latopringwl" if=/dev/zero of=/dev/null bs=64 count=2000 2>/dev/null; sleep 0.05; done ) &
wl_pid=$!
timeout 60 "$BIN" record -o "$tmp/ring" --rotate 2s -d 7s -q 'from syscalls' --quiet 2>"$tmp/rec.err"
kill "$wl_pid" 2>/dev/null
wait "$wl_pid" 2>/dev/null
wl_pid=
nf=$(ls "$tmp/ring" | grep -c '\.snap$')
[ "$nf" -ge 3 ]; check $? "record --rotate 2s -d 7s writes a ring of $nf files"
n=$("$BIN" report "$tmp/ring" -q 'from syscalls show count' --json 2>&1 >/dev/null | sed -n 's/.*"ticks": \([0-9]*\).*/\1/p')
[ "${n:-0}" -ge 7 ] || { ok 1 "the ring holds 7 ticks or more (${n:-none})"; done_testing; exit; }

start replay "$tmp/ring"
wait_for "REPLAY [0-9:]+ \\[$n/$n\\]" 30
check $? "replay DIR plays every file's ticks to the last: [$n/$n]"
keys g
wait_for "REPLAY [0-9:]+ \\[1/$n\\]" 10
check $? "g goes back to the first tick of the first file"
for i in 1 2 3 4 5; do keys Right; done
wait_for "REPLAY [0-9:]+ \\[6/$n\\]" 10
check $? "Right five times reads on across the files' boundaries: [6/$n]"
cap | grep -qE '^pid +comm +syscall' && [ "$(cap | grep -cE '^[0-9]+ +[^ ]+ +[a-z_0-9]+ +[0-9.]+K? ')" -ge 3 ]
check $? "and the table has rows there"
keys Left Left Left
wait_for "REPLAY [0-9:]+ \\[3/$n\\]" 10
check $? "Left three times goes back across a boundary: [3/$n]"
keys G
wait_for "REPLAY [0-9:]+ \\[$n/$n\\]" 10
check $? "G goes to the last tick of the last file"
keys q
[ "$(exit_status)" = 0 ]; check $? "q quits with status 0"

# Two recordings made at the same time (overlapping) are not one ring.
timeout 60 "$BIN" record -o "$tmp/a.snap" -d 2s -q 'from syscalls' --quiet 2>/dev/null &
timeout 60 "$BIN" record -o "$tmp/b.snap" -d 2s -q 'from syscalls' --quiet 2>/dev/null
wait
start replay "$tmp/a.snap" "$tmp/b.snap"
st=$(exit_status)
[ "$st" = 2 ] && grep -q "these recordings do not follow each other (other hosts, or overlapping in time)" "$tmp/stderr"
ok $? "replay of two overlapping recordings is refused (exit $st: $(head -c 300 "$tmp/stderr"))"
done_testing
