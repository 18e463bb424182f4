#!/bin/bash
# The recorder keeps time on a saturated machine: once attached, the thread
# that collects ticks runs SCHED_FIFO 1 (reset on fork), so with 200
# runnable threads making syscalls under the syscalls probe on every CPU, a
# 6 s recording at -i 1s still gets its ticks on time (without it, here, one
# tick of 6 s or more).  A late tick keeps its length and record and report
# both say so.  --no-realtime and latoprc's realtime = no keep the
# default policy; a process that may not take real time says so once
# (not with --quiet) and records on.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
C=$LATOP_HELPERS/crowd
[ -x "$C" ] || skip_all "no crowd helper at $C (make tests-build)"
tmp=$(mktemp -d); rec_pid= crowd_pid=
trap '[ -n "$crowd_pid" ] && kill -9 $crowd_pid 2>/dev/null
      [ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; rm -rf "$tmp"' EXIT
Q="from syscalls"

# sched: "RTPRIO POLICY" of each of the recorder's threads, one line each
# (/proc/PID/task/TID/stat fields 40 and 41, counted after the comm).
sched() {
	local f
	for f in /proc/$rec_pid/task/*/stat; do
		sed 's/^.*) //' "$f" | awk '{print $38, $39}'
	done
}

# record_bg FILE ARGS...: start a recorder writing FILE (stderr to
# FILE.err) and wait until it has attached.  -d ends it; the trap kills it
# if the test ends first.
record_bg() {
	local f=$1; shift
	"$L" record -o "$f" -i 1s -q "$Q" "$@" 2>"$f.err" & rec_pid=$!
	wait_recording "$f"
}

# finish: wait for the recorder; its status is the recorder's.
finish() {
	wait $rec_pid; local rc=$?; rec_pid=; return $rc
}

# Under load: 200 threads (8 getppid, then a 1 ms sleep, in a loop) on every
# CPU, for 8 s at most (the crowd stops by itself), while the recorder runs
# 6 s.  Its policy is read while it runs.
record_bg "$tmp/busy.snap" -d 6s
timeout 15 "$C" 200 8 sys >"$tmp/crowd.out" & crowd_pid=$!
sleep 1
pol=$(sched | sort -u | tr '\n' ' ')
reset=$(chrt -p $rec_pid 2>&1)
finish; rc=$?
kill $crowd_pid 2>/dev/null; wait $crowd_pid 2>/dev/null; crowd_pid=
[ "$pol" = "1 1 " ]
ok $? "while recording, every latop thread is SCHED_FIFO priority 1 (rtprio policy: $pol)"
echo "$reset" | grep -q 'SCHED_FIFO|SCHED_RESET_ON_FORK'
ok $? "and children it would start get the default policy back ($reset)"
n=$(sed -n 's/^latop: recorded \([0-9]*\) ticks.*/\1/p' "$tmp/busy.snap.err")
[ $rc -eq 0 ] && ! grep -q 'came late' "$tmp/busy.snap.err" && [ "${n:-0}" -ge 6 ] &&
	[ "${n:-0}" -le 8 ]
ok $? "200 runnable threads on every CPU: 6 s at -i 1s make ${n:-no} ticks, none late (exit $rc: $(tr '\n' ' ' <"$tmp/busy.snap.err"))"
"$L" report "$tmp/busy.snap" -q "$Q show count" >/dev/null 2>"$tmp/busy.rep"
! grep -q 'came late' "$tmp/busy.rep"
ok $? "report finds no late tick either ($(head -c 300 "$tmp/busy.rep"))"

# A late tick stays marked in the file: a recorder stopped 3 s (SIGSTOP)
# into a 2 s recording at -i 1s holds a tick of 3 s or more and the short
# last one, and report, reading the interval from the recording, says the
# first came late (the median of two ticks would be the late one itself).
record_bg "$tmp/stop.snap" -d 2s
kill -STOP $rec_pid; sleep 3; kill -CONT $rec_pid
finish; rc=$?
"$L" report "$tmp/stop.snap" -q "$Q show count" >/dev/null 2>"$tmp/stop.rep"
[ $rc -eq 0 ] && grep -q 'warning: 1 of 2 ticks came late (the longest lasted 3\.[0-9]*s for an interval of 1\.00s)' "$tmp/stop.snap.err" &&
	grep -q 'warning: 1 of 2 ticks came late (the longest lasted 3\.[0-9]*s for an interval of 1\.00s)' "$tmp/stop.rep"
ok $? "a tick 3 s long stays marked: record and report both say it came late (exit $rc: $(grep late "$tmp/stop.snap.err") / $(cat "$tmp/stop.rep"))"

# The live TUI collects at SCHED_FIFO 1 too, once its probes are attached
# (its header counts ticks: "LIVE").
if command -v tmux >/dev/null; then
	S=latop-rt-$$
	trap '[ -n "$crowd_pid" ] && kill -9 $crowd_pid 2>/dev/null
	      [ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null
	      tmux kill-session -t "$S" 2>/dev/null; rm -rf "$tmp"' EXIT
	tmux new-session -d -s "$S" -x 160 -y 48 \
		"env TERM=xterm-256color XDG_CONFIG_HOME=$tmp/none $L -q 'from syscalls' 2>$tmp/tui.err; sleep 60"
	tui_pid=
	for _ in $(seq 150); do
		tui_pid=$(pgrep -x -P "$(tmux list-panes -t "$S" -F '#{pane_pid}')" latop)
		[ -n "$tui_pid" ] && tmux capture-pane -p -t "$S" | grep -q 'syscalls' &&
			[ "$(sed 's/^.*) //' /proc/$tui_pid/stat | awk '{print $39}')" = 1 ] && break
		sleep 0.1
	done
	pol=$(for f in /proc/$tui_pid/task/*/stat; do sed 's/^.*) //' "$f" | awk '{print $38, $39}'; done |
		sort -u | tr '\n' ' ')
	tmux send-keys -t "$S" q
	[ "$pol" = "1 1 " ]
	ok $? "the live TUI collects at SCHED_FIFO 1 (rtprio policy: $pol)"
	tmux kill-session -t "$S" 2>/dev/null
else
	skip "no tmux for the live TUI"
fi

# --no-realtime: the default policy, and nothing said.
record_bg "$tmp/off.snap" -d 2s --no-realtime
pol=$(sched | sort -u | tr '\n' ' ')
finish; rc=$?
[ $rc -eq 0 ] && [ "$pol" = "0 0 " ] && ! grep -q 'real-time' "$tmp/off.snap.err"
ok $? "--no-realtime: SCHED_OTHER, nothing said (exit $rc, rtprio policy: $pol)"

# latoprc's realtime = no does the same; a value other than yes or no is a
# warning, and real time stays on.
mkdir -p "$tmp/xdg/latop"
echo 'realtime = no' >"$tmp/xdg/latop/latoprc"
XDG_CONFIG_HOME=$tmp/xdg record_bg "$tmp/rc.snap" -d 2s
pol=$(sched | sort -u | tr '\n' ' ')
finish; rc=$?
[ $rc -eq 0 ] && [ "$pol" = "0 0 " ]
ok $? "latoprc realtime = no: SCHED_OTHER (exit $rc, rtprio policy: $pol)"
echo 'realtime = maybe' >"$tmp/xdg/latop/latoprc"
XDG_CONFIG_HOME=$tmp/xdg record_bg "$tmp/rc2.snap" -d 2s
pol=$(sched | sort -u | tr '\n' ' ')
finish; rc=$?
[ $rc -eq 0 ] && [ "$pol" = "1 1 " ] &&
	grep -q 'latoprc:1: realtime: not yes or no; using the default yes' "$tmp/rc2.snap.err"
ok $? "latoprc realtime = maybe: a warning, and SCHED_FIFO 1 (exit $rc, rtprio policy: $pol: $(tr '\n' ' ' <"$tmp/rc2.snap.err"))"

# Without CAP_SYS_NICE: the warning, once, with why, and the recording goes on
# at the nice it may take; --quiet says nothing.
if setpriv --inh-caps=-sys_nice --bounding-set=-sys_nice true 2>/dev/null; then
	setpriv --inh-caps=-sys_nice --bounding-set=-sys_nice -- \
		timeout 40 "$L" record -o "$tmp/nocap.snap" -d 1s -i 1s -q "$Q" 2>"$tmp/nocap.err"
	rc=$?
	[ $rc -eq 0 ] && [ "$(grep -c 'warning: collecting runs at nice' "$tmp/nocap.err")" -eq 1 ] &&
		grep -q 'not at real-time priority (SCHED_FIFO: it needs CAP_SYS_NICE' "$tmp/nocap.err"
	ok $? "without CAP_SYS_NICE: one warning saying why, and a recording (exit $rc: $(tr '\n' ' ' <"$tmp/nocap.err"))"
	setpriv --inh-caps=-sys_nice --bounding-set=-sys_nice -- \
		timeout 40 "$L" record -o "$tmp/nocapq.snap" -d 1s -i 1s -q "$Q" --quiet 2>"$tmp/nocapq.err"
	rc=$?
	[ $rc -eq 0 ] && ! grep -q 'collecting\|recording to' "$tmp/nocapq.err"
	ok $? "and with --quiet, nothing of it (exit $rc: $(head -c 300 "$tmp/nocapq.err"))"
else
	skip "setpriv cannot drop CAP_SYS_NICE here"
	skip "setpriv cannot drop CAP_SYS_NICE here"
fi
done_testing
