#!/bin/bash
# The locks probe on a second kernel: Debian's 6.1 under qemu.  Its CO-RE
# objects, built against the host's BTF, must load and count right on an
# older kernel, where tracefs is mounted and so futex waits are taken at the
# futex syscalls' own tracepoints.  The guest records LDB's example
# (tests/helpers/lockdemo.c) and kernel lock contention (lockdemo mmap); the
# host's latop reports the recording.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
vm_latop_setup latop-static helpers-static

vm_init locks
vm_file "$top/.output/static/latop" /bin/latop
vm_file "$top/.output/static/lockdemo" /bin/lockdemo
cat >"$VM_DIR/guest.sh" <<'EOF'
# Runs in the guest, cwd /share.
uname -r >uname
latop probes >probes.txt 2>&1
latop record -o x.snap --quiet -q "from locks where comm ~ 'req-*' or comm ~ 'mapper-*' threshold 1us" \
	2>record.err & rec=$!
vm_wait_file x.snap.tmp $rec || { echo "the recorder did not start"; kill $rec; exit 1; }
sleep 0.5
mkdir -p /tmp/snap
echo g | lockdemo snapshot 3000 /tmp/snap >demo.out || echo "lockdemo snapshot failed"
echo g | lockdemo mmap 2000 2 >mmap.out || echo "lockdemo mmap failed"
sleep 2.5
kill -TERM $rec
wait $rec
echo $? >record.rc
EOF
vm_ok_run "$VM_DIR/guest.sh" 300

vm_ok_kver
sed -n '/^locks:/,/^[a-z]/p' "$S/probes.txt" 2>/dev/null | sed 's/^/# probes: /'
grep -A1 -F "  futex waits and wakes" "$S/probes.txt" 2>/dev/null | head -n1 |
	grep -qF "tp/syscalls/sys_enter_futex+sys_exit_futex"
ok $? "probes: futex waits on the futex syscall tracepoints in the guest"

[ "$(cat "$S/record.rc" 2>/dev/null)" = 0 ] && [ -s "$S/x.snap" ]
ok $? "latop record of the locks tables in the guest finished x.snap ($(cat "$S/record.err" 2>/dev/null))"

json() { "$L" report "$S/x.snap" -q "$1" --json; }
demo=$(sed 's/^r//' "$S/demo.out" 2>/dev/null)
echo "# lockdemo: $demo"
out=$(json "from locks where kind == 'mutex' group by sym, holder_comm show count, p50(hold), max(hold) order by p50(hold) desc")
echo "$out" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert rows and all(r["sym"] == "state_lock" for r in rows), rows
assert rows[0]["holder_comm"] == "bgsnap" and rows[0]["p50(hold)"] > 0, rows
assert sum(r["count"] for r in rows) >= 20, rows
'; ok $? "state_lock contended, bgsnap the holder with the longest median hold ($(echo $out | head -c 300))"

out=$(json "from lock_events where holder_comm == 'bgsnap' show count, max(wait)")
echo "$out" | python3 -c '
import json, sys
r = json.loads(sys.stdin.readline())
assert r["count"] >= 5 and r["max(wait)"] > 0, r
'; ok $? "waits on bgsnap crossed as lock_events ($out)"

out=$(json "from locks where kind ~ 'rwsem*' and sym == 'mmap_lock' group by kind show count")
echo "$out" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert rows and sum(r["count"] for r in rows) >= 1, rows
'; ok $? "kernel mmap_lock contention of the mapper threads seen through contention_begin/end ($out)"
done_testing
