#!/bin/bash
# A thread that exits with a user lock wait still open (its end never seen:
# the switch or syscall exit that ended it ran no program, as this
# machine's scheduler tracepoint now and then does not) has it given up at
# its exit, counted in evicted, not left to user space's sweep ten ticks
# later, which a recording that stops before would never say.  The open
# wait is put by hand in the recorder's uwaits table for a process that
# then exits.  The futex syscall hooks are used (tracefs mounted): found by
# the scheduler, the thread's next switch-in would end the wait instead.
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

"$L" record -o "$tmp/exit.snap" -d 60s --quiet -q "from locks" 2>"$tmp/exit.err" & rec_pid=$!
wait_recording "$tmp/exit.snap"
ok $? "record locks"
sleep 60 & sp=$!
uw=$(python3 - "$rec_pid" <<'EOF'
import json, os, subprocess, sys
pid = sys.argv[1]
ids = set()
for fd in os.listdir("/proc/%s/fdinfo" % pid):
    try:
        for line in open("/proc/%s/fdinfo/%s" % (pid, fd)):
            if line.startswith("map_id:"):
                ids.add(int(line.split()[1]))
    except OSError:
        pass
maps = json.loads(subprocess.run(["bpftool", "-j", "map", "show"], capture_output=True,
                                 text=True, check=True).stdout)
m = [m for m in maps if m["id"] in ids and m.get("name") == "uwaits"]
print(m[0]["id"], m[0]["bytes_value"])
EOF
)
id=${uw% *}
key=$(python3 -c 'import sys; print(" ".join(str(b) for b in int(sys.argv[1]).to_bytes(4, "little")))' $sp)
val=$(python3 -c 'import sys; print(" ".join(["0"] * int(sys.argv[1])))' "${uw#* }")
[ -n "$id" ] && bpftool map update id "$id" key $key value $val &&
	bpftool map lookup id "$id" key $key >/dev/null
ok $? "an open wait of process $sp is in the recorder's uwaits table (map $id)"
sleep 0.5
bpftool map lookup id "$id" key $key >/dev/null 2>&1
ok $? "while $sp lives, its wait stays open"
kill -9 $sp; wait $sp 2>/dev/null; dead=$sp sp=
sleep 0.3
! bpftool map lookup id "$id" key $key >/dev/null 2>&1
ok $? "$dead killed, its open wait is gone from uwaits at once"
sleep 1; kill -TERM $rec_pid; wait $rec_pid; rc=$?; rec_pid=
"$L" report "$tmp/exit.snap" --json -q "from locks show count" >/dev/null 2>"$tmp/rep.err"
n=$(sed -n 's/.*"evicted": \([0-9]*\).*/\1/p' "$tmp/rep.err" | tail -1)
[ $rc = 0 ] && [ "${n:-0}" -ge 1 ] && grep -q "locks: $n evicted in the kernel" "$tmp/rep.err"
ok $? "the recording counts it in evicted and report warns of it (exit $rc; $(head -c 300 "$tmp/rep.err"))"
done_testing
