#!/bin/bash
# A user lock wait whose end was never seen (the switch or syscall exit that
# ended it ran no program, as this machine's scheduler tracepoint now and
# then does not) is given up, counted in evicted, and never counted as a
# wait: when its thread exits (at once, not at user space's sweep ten ticks
# later, which a recording that stops before would never reach), and, with
# futex waits found by the scheduler, when its thread comes back on a CPU
# outside the futex call.  The open wait is put by hand in the recorder's
# uwaits table for a sleep(1) process.  The exit is tested on the futex
# syscall hooks (tracefs mounted), where a switch-in ends no wait.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
command -v bpftool >/dev/null || skip_all "no bpftool (scripts/install-deps.sh --test)"
tmp=$(mktemp -d); rec_pid= sp= mounted=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; [ -n "$sp" ] && kill -9 $sp 2>/dev/null
	[ -n "$mounted" ] && umount /sys/kernel/tracing; rm -rf "$tmp"' EXIT
if [ ! -e /sys/kernel/tracing/events/syscalls ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
		skip_all "cannot mount tracefs on /sys/kernel/tracing"
	mounted=1
fi
"$L" probes | grep "futex waits and wakes" | grep -q "tp/syscalls/sys_enter_futex"
ok $? "with tracefs the locks probe hooks the futex syscalls"
"$L" probes | grep -q "thread exits (open waits given up) *tp_btf/sched_process_exit"
ok $? "latop probes names the exit hook"

# open_wait PID: put an open futex wait of PID (all zero: no lock known) in
# the running recorder's uwaits table; sets id and key.
open_wait() {
	local uw
	uw=$("$LATOP_TOP/scripts/held-maps" "$rec_pid" | awk '$2 == "uwaits" {print $1, $4; exit}')
	id=${uw% *}
	key=$(python3 -c 'import sys; print(" ".join(str(b) for b in int(sys.argv[1]).to_bytes(4, "little")))' "$1")
	[ -n "$id" ] && bpftool map update id "$id" key $key \
		value $(python3 -c 'import sys; print(" ".join(["0"] * int(sys.argv[1])))' "${uw#* }")
}

# stop_count NAME MIN WHAT: stop the recorder of NAME.snap; its report says
# at least MIN evicted, and warns of them.
stop_count() {
	local rc n
	sleep 1; kill -TERM $rec_pid; wait $rec_pid; rc=$?; rec_pid=
	"$L" report "$tmp/$1.snap" --json -q "from locks show count" >/dev/null 2>"$tmp/$1.rep"
	n=$(sed -n 's/.*"evicted": \([0-9]*\).*/\1/p' "$tmp/$1.rep" | tail -1)
	[ $rc = 0 ] && [ "${n:-0}" -ge "$2" ] && grep -q "locks: $n evicted in the kernel" "$tmp/$1.rep"
	ok $? "$3 (exit $rc; $(head -c 300 "$tmp/$1.rep"))"
}

"$L" record -o "$tmp/exit.snap" -d 60s --quiet -q "from locks" 2>"$tmp/exit.err" & rec_pid=$!
wait_recording "$tmp/exit.snap"
ok $? "record locks"
sleep 60 & sp=$!
open_wait "$sp" && bpftool map lookup id "$id" key $key >/dev/null
ok $? "an open wait of process $sp is in the recorder's uwaits table (map $id)"
sleep 0.5
bpftool map lookup id "$id" key $key >/dev/null 2>&1
ok $? "while $sp lives, its wait stays open"
kill -9 $sp; wait $sp 2>/dev/null; dead=$sp sp=
sleep 0.3
! bpftool map lookup id "$id" key $key >/dev/null 2>&1
ok $? "$dead killed, its open wait is gone from uwaits at once"
stop_count exit 1 "the recording counts it in evicted and report warns of it"

# Found by the scheduler, a thread that comes back on a CPU outside the
# futex call had its wait end unseen: the wait is given up, not counted as
# a futex wait lasting until then.  The open wait is put in for a sleep(1)
# process, which SIGSTOP then runs (to stop it) and SIGCONT runs again.
pre=(unshare -m --propagation private sh -c 'for d in tracing debug/tracing debug; do
	while umount /sys/kernel/$d 2>/dev/null; do :; done; done; exec "$@"' sh)
if "${pre[@]}" "$L" probes 2>/dev/null | grep "futex waits and wakes" | grep -q "tp_btf/sched_switch"; then
	"${pre[@]}" "$L" record -o "$tmp/sched.snap" -d 60s --quiet -q "from locks" 2>"$tmp/sched.err" & rec_pid=$!
	wait_recording "$tmp/sched.snap"
	ok $? "record locks, futex waits found by the scheduler"
	sleep 60 & sp=$!
	open_wait "$sp"
	ok $? "an open wait of process $sp is in the recorder's uwaits table (map $id)"
	kill -STOP $sp; sleep 0.2; kill -CONT $sp; sleep 0.3
	! bpftool map lookup id "$id" key $key >/dev/null 2>&1 && [ -d /proc/$sp ]
	ok $? "$sp run again outside futex (stopped, continued): its open wait is gone, it lives"
	kill -9 $sp; wait $sp 2>/dev/null; dead=$sp sp=
	stop_count sched 1 "the recording counts it in evicted and report warns of it"
	# Its kernel lock waits (the exit's, say) count, as any process's.
	n=$("$L" report "$tmp/sched.snap" --json -q "from locks where pid == $dead group by kind show count" 2>/dev/null)
	! echo "$n" | grep -Eq '"kind":"(futex|mutex|lll|pi)"'
	ok $? "no futex wait of $dead is counted (got: ${n:-none})"
else
	skip "no mount namespace without tracefs: futex waits found by the scheduler"
fi
done_testing
