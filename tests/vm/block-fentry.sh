#!/bin/bash
# The block probe on a second kernel: Debian's 6.1 under qemu, on a null_blk
# device whose every request takes 200 us (irqmode=2, a timer).  The host
# refuses fentry, so the block probe's fentry alternatives are exercised
# here: the guest records known direct I/O once with the tracepoints and
# once with LATOP_BLOCK_HOOKS=fentry; the host's latop reports both
# recordings and checks counts, stages and the device time against the
# 200 us null_blk was told to take.  null_blk takes at most 255 sectors a
# request, so each 128K write is split into a 124K and a 4K request, both
# followed: the split's accounting is checked too.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
vm_latop_setup latop-static helpers-static

vm_init block-fentry
vm_modules --noload null_blk
vm_file "$top/.output/static/latop" /bin/latop
vm_file "$top/.output/static/blkio" /bin/blkio
cat >"$VM_DIR/guest.sh" <<'GUEST'
# Runs in the guest, cwd /share.
uname -r >uname
modprobe null_blk nr_devices=1 gb=1 bs=4096 queue_mode=2 irqmode=2 completion_nsec=200000 \
	|| echo "modprobe null_blk failed"
latop probes >probes.txt 2>&1
LATOP_BLOCK_HOOKS=fentry latop probes >probes-fentry.txt 2>&1
# record NAME: record the known I/O on nullb0 into NAME.snap.
record() {
	latop record -o $1.snap --quiet \
		-q "from block where dev == 'nullb0' threshold 1ns buffer 100000" 2>$1.err & rec=$!
	vm_wait_file $1.snap.tmp $rec || { echo "the $1 recorder did not start"; kill $rec; return 1; }
	sleep 0.5
	echo g | blkio read /dev/nullb0 4096 300 1 >/dev/null || echo "blkio read failed"
	echo g | blkio write /dev/nullb0 131072 100 4 >/dev/null || echo "blkio write failed"
	sleep 2.5
	kill -TERM $rec
	wait $rec
	echo $? >$1.rc
}
record tp
LATOP_BLOCK_HOOKS=fentry record fentry
GUEST
vm_ok_run "$VM_DIR/guest.sh" 300
grep -q failed "$S/guest.out" 2>/dev/null && sed 's/^/# guest: /' "$S/guest.out" | head -n 10

vm_ok_kver

sed -n '/^block:/,/^[a-z]/p' "$S/probes-fentry.txt" 2>/dev/null | sed 's/^/# probes (fentry first): /' | head -n 24
hooks=$(grep -cE '^  (bio queued|issued to driver|completed) .* fentry/' "$S/probes-fentry.txt" 2>/dev/null)
[ "${hooks:-0}" = 3 ]
ok $? "LATOP_BLOCK_HOOKS=fentry: queue, issue and completion on fentry hooks in 6.1 ($hooks of 3)"
hooks=$(grep -cE '^  (bio queued|issued to driver|completed) .* tp_btf/' "$S/probes.txt" 2>/dev/null)
[ "${hooks:-0}" = 3 ]
ok $? "by default the tracepoints serve them ($hooks of 3)"

for h in tp fentry; do
	[ "$(cat "$S/$h.rc" 2>/dev/null)" = 0 ] && [ -s "$S/$h.snap" ]
	ok $? "$h: the guest's recording finished ($(cat "$S/$h.err" 2>/dev/null))"
	out=$("$L" report "$S/$h.snap" -q "from block where comm == 'blkio' group by dev, op show count, merges, bytes, sum(time), sum(alloc), sum(plug), sum(sched), sum(device), avg(device), p50(device) order by op" --json)
	sizes=$("$L" report "$S/$h.snap" -q "from block where comm == 'blkio' and op == 'write' group by size show count" --json)
	printf '%s\n--\n%s\n' "$out" "$sizes" | python3 -c '
import json, sys
a, b = sys.stdin.read().split("\n--\n")
rows = {r["op"]: r for r in map(json.loads, filter(None, a.split("\n")))}
sizes = {r["size"] for r in map(json.loads, filter(None, b.split("\n")))}
r, w = rows["read"], rows["write"]
assert set(rows) == {"read", "write"} and r["dev"] == w["dev"] == "nullb0", rows
# Every bio is a request of its own or merged into one; a split makes two.
assert r["count"] + r["merges"] == 300 and r["bytes"] == 300 * 4096, r
assert w["count"] + w["merges"] == 200 and w["bytes"] == 100 * 131072, w
assert 126976 in sizes and 131072 not in sizes, sizes
for x in rows.values():
    parts = x["sum(alloc)"] + x["sum(plug)"] + x["sum(sched)"] + x["sum(device)"]
    assert parts == x["sum(time)"], x
    # null_blk completes each request 200 us after it is issued
    assert 190e3 <= x["p50(device)"] <= 3e6, x
'
	ok $? "$h: exact counts on nullb0 (each 128K write split in two: 124K + 4K), stages summing to the latency, device time >= the 200 us null_blk takes ($(echo $out | tr -d '\n'))"
	n=$("$L" report "$S/$h.snap" -q "from block_events where comm == 'blkio' show count" --json 2>/dev/null |
		python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["count"])' 2>/dev/null)
	m=$("$L" report "$S/$h.snap" -q "from block where comm == 'blkio' show merges" --json 2>/dev/null |
		python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["merges"])' 2>/dev/null)
	[ -n "$n" ] && [ -n "$m" ] && [ $((n + m)) = 500 ]
	ok $? "$h: threshold 1ns: every request crossed as an event ($n events + $m merges = 500 bios)"
done
done_testing
