#!/bin/bash
# The block view on a loop device of its own (a file in /dev/shm): record
# known direct I/O (4K reads, 128K writes, fsync flushes, at depth 1 and 8),
# report it as JSON and check counts, stages, in-flight, pushdown, single
# events and BASELINE ratios against what the I/O is known to be.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
B=$LATOP_HELPERS/blkio
[ -x "$B" ] || skip_all "no blkio helper at $B (make tests-build)"
command -v losetup >/dev/null || skip_all "no losetup (util-linux)"
"$L" probes 2>/dev/null | grep -q 'tp_btf/block_rq_issue' || skip_all "no block tracepoints here"
tmp=$(mktemp -d); rec_pid=; loop=; bg_pid=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; unseen_end >/dev/null; [ -n "$bg_pid" ] && kill -9 $bg_pid 2>/dev/null; [ -n "$loop" ] && losetup -d $loop; [ -n "${eloop:-}" ] && losetup -d $eloop 2>/dev/null; umount "$tmp/small" 2>/dev/null; rm -rf "$tmp" /dev/shm/latop-test-$$.img' EXIT
truncate -s 128M /dev/shm/latop-test-$$.img
loop=$(losetup -f --show /dev/shm/latop-test-$$.img) || skip_all "losetup failed"
D=$(basename "$loop")
udevadm settle 2>/dev/null; sleep 0.5	# udev's first reads of a new device

json() { "$L" report "$1" -q "$2" --json; }
# start_recording NAME QUERY: record $tmp/NAME.snap, and count what no
# program can see on this kernel (tests/lib.sh's unseen_begin) meanwhile.
start_recording() {
	unseen_begin "$D"
	"$L" record -o "$tmp/$1.snap" -d 120s --quiet -q "$2" & rec_pid=$!
	wait_recording "$tmp/$1.snap"
}
# end_recording NAME: end the recording a second after its workload did,
# however long that took (a busy machine may stretch it), so what is
# recorded is all of the workload; $tmp/NAME.unseen holds the completions
# no program ran for, which the exact checks subtract.
end_recording() {
	local rc
	sleep 1; kill -TERM $rec_pid; wait $rec_pid; rc=$?
	unseen_end >"$tmp/$1.unseen"
	return $rc
}

# 1. Known I/O, every request also a single event (THRESHOLD 1ns).
start_recording run "from block where dev == '$D' threshold 1ns buffer 100000"
ok $? "the recorder attaches"
echo g | "$B" read "$loop" 4096 1000 1 >/dev/null
echo g | "$B" write "$loop" 131072 200 4 >/dev/null
echo g | "$B" fsync "$loop" 0 10 1 >/dev/null
echo g | "$B" read "$loop" 4096 2000 8 >/dev/null
end_recording run; ok $? "record exits 0"; rec_pid=
export U=$(cat "$tmp/run.unseen")

# A failure here prints what the recording says it missed (health: lost
# counts runs the kernel skipped, evicted requests untracked or given up)
# and the merges, so a miscount says which it was.
out=$(json "$tmp/run.snap" "from block where comm == 'blkio' group by dev, op, size show count, bytes, errors, merges order by op" 2>"$tmp/health")
out="$out"$'\n'"$(grep -h '"health"' "$tmp/health")"
echo "$out" | grep -v '"health"' | D=$D python3 -c '
import json, os, sys
rows = {(r["dev"], r["op"], r["size"]): r for r in map(json.loads, sys.stdin)}
d, u = os.environ["D"], json.loads(os.environ["U"])
reads = 3000 - u.get("read 4096", 0)
assert rows[(d, "read", 4096)]["count"] == reads, rows
assert rows[(d, "read", 4096)]["bytes"] == reads * 4096, rows
assert rows[(d, "write", 131072)]["count"] == 200 - u.get("write 131072", 0), rows
assert rows[(d, "flush", 0)]["count"] == 10 - u.get("flush 0", 0), rows
assert len(rows) == 3, rows
assert all(r["errors"] == 0 for r in rows.values()), rows
'; ok $? "exact counts per (dev, op, size): 3000 4K reads, 200 128K writes, 10 flushes, less unseen $U ($out)"

out=$(json "$tmp/run.snap" "from block where comm == 'blkio' group by op show count, sum(time), sum(alloc), sum(plug), sum(sched), sum(device), p50(lat), p99(lat), p99(device), p99(alloc), avg(device)")
echo "$out" | python3 -c '
import json, sys
for r in map(json.loads, sys.stdin):
    parts = r["sum(alloc)"] + r["sum(plug)"] + r["sum(sched)"] + r["sum(device)"]
    assert abs(parts - r["sum(time)"]) <= 1e-3 * r["sum(time)"], r
    assert r["sum(device)"] > 0 and r["sum(time)"] > 0, r
    assert 0 < r["p99(device)"] <= r["p99(lat)"] * 1.07, r
    assert r["p50(lat)"] <= r["p99(lat)"], r
    assert abs(r["avg(device)"] - r["sum(device)"] / r["count"]) <= 0.01 * r["avg(device)"] + 1, r
    if r["op"] == "read":
        assert r["sum(alloc)"] > 0 and r["sum(plug)"] > 0, r
'; ok $? "stages present, summing to the end-to-end time; p99(stage) reads its histogram ($out)"

out=$(json "$tmp/run.snap" "from block where comm == 'blkio' group by stage show sum(time) order by stage")
echo "$out" | python3 -c '
import json, sys
rows = {r["stage"]: r["sum(time)"] for r in map(json.loads, sys.stdin)}
assert set(rows) <= {"alloc", "plug", "sched", "device"} and "device" in rows, rows
'; ok $? "group by stage unpivots the stages ($out)"

out=$(json "$tmp/run.snap" "from block where comm == 'blkio' and op == 'read' group by pid show count, max(inflight), max(queued) order by count")
echo "$out" | python3 -c '
import json, os, sys
rows = sorted(map(json.loads, sys.stdin), key=lambda r: r["count"])
u = json.loads(os.environ["U"]).get("read 4096", 0)	# whose, tracefs cannot say
assert sum(r["count"] for r in rows) == 3000 - u, rows
assert all(w - u <= r["count"] <= w for r, w in zip(rows, (1000, 2000))), rows
assert rows[1]["max(inflight)"] >= 2 and rows[1]["max(queued)"] >= 2, rows
'; ok $? "depth 8: more than one request in flight at once ($out)"

out=$(json "$tmp/run.snap" "from block_events where comm == 'blkio' show ts, id, op, size, lat, alloc, plug, sched, device")
echo "$out" | python3 -c '
import json, os, sys
rows = [json.loads(l) for l in sys.stdin]
assert len(rows) == 3210 - sum(json.loads(os.environ["U"]).values()), len(rows)
for r in rows:
    assert r["alloc"] + r["plug"] + r["sched"] + r["device"] == r["lat"], r
    assert r["device"] > 0, r
assert len({r["id"] for r in rows}) > 1
'; ok $? "threshold 1ns: every request is a single event whose stages sum to its latency"

spans=$(json "$tmp/run.snap" "from block_spans group by id, start, kind show sum(dur) as dur")
evs=$(json "$tmp/run.snap" "from block_events where comm == 'blkio' show ts, id, lat, alloc, plug, sched, device")
printf '%s\n--\n%s\n' "$spans" "$evs" | python3 -c '
import json, os, sys
sp, ev = sys.stdin.read().split("\n--\n")
spans = {(r["id"], r["start"]): r for r in map(json.loads, sp.split("\n")) if True}
n = 0
for e in (json.loads(l) for l in ev.split("\n") if l):
    t = e["ts"] - e["lat"]
    for k in ("alloc", "plug", "sched", "device"):
        if e[k] == 0:
            continue
        s = spans[e["id"], t]
        assert s["kind"] == k and s["dur"] == e[k], (e, s)
        t += s["dur"]
    assert t == e["ts"], e
    n += 1
assert n == 3210 - sum(json.loads(os.environ["U"]).values()), n
'; ok $? "spans: each request's stages follow each other from queueing to completion"

# An I/O scheduler: requests are inserted before they are issued, and the
# time between is sched; requests it merges count as merges.
if grep -qw mq-deadline /sys/block/$D/queue/scheduler && echo mq-deadline > /sys/block/$D/queue/scheduler; then
	start_recording sched "from block where dev == '$D'"
	echo g | "$B" read "$loop" 4096 1000 8 >/dev/null
	end_recording sched; rec_pid=
	export U=$(cat "$tmp/sched.unseen")
	echo none > /sys/block/$D/queue/scheduler
	out=$(json "$tmp/sched.snap" "from block where comm == 'blkio' group by op show count, merges, sum(time), sum(alloc), sum(plug), sum(sched), sum(device), p99(sched)")
	echo "$out" | python3 -c '
import json, os, sys
r = json.loads(sys.stdin.readline())
# Adjacent reads of the 8 threads may merge in the scheduler.
unseen = sum(n * int(k.split()[1]) // 4096 for k, n in json.loads(os.environ["U"]).items() if k.startswith("read"))
assert r["count"] + r["merges"] == 1000 - unseen, r
assert r["sum(sched)"] > 0 and r["p99(sched)"] > 0, r
assert r["sum(alloc)"] + r["sum(plug)"] + r["sum(sched)"] + r["sum(device)"] == r["sum(time)"], r
'; ok $? "mq-deadline: the sched stage holds the time from insertion to issue, every read a request or merged ($out)"
else
	skip "no mq-deadline scheduler for $D"
fi

# merge_case NAME BYTES BIOS FIO-ARGS...: record fio's 4K direct writes to
# $D, 32 submitted at a time under one plug, and check that every bio is
# either a request's first or counted as merged.
merge_case() {
	local name=$1 bytes=$2 bios=$3 out
	shift 3
	start_recording "$name" "from block where dev == '$D'"
	fio --name="$name" --filename="$loop" --bs=4k --iodepth=32 --iodepth_batch_submit=32 \
		--iodepth_batch_complete_min=32 --ioengine=libaio --direct=1 --output-format=terse \
		"$@" >/dev/null
	end_recording "$name"; rec_pid=
	out=$(json "$tmp/$name.snap" "from block where comm == 'fio' group by op show count, merges, bytes")
	echo "$out" | U=$(cat "$tmp/$name.unseen") python3 -c '
import json, os, sys
bytes, bios = int(sys.argv[1]), int(sys.argv[2])
for k, n in json.loads(os.environ["U"]).items():
    if k.startswith("write"):
        bytes -= n * int(k.split()[1])
        bios -= n * int(k.split()[1]) // 4096
r = json.loads(sys.stdin.readline())
assert r["op"] == "write" and r["bytes"] == bytes, r
assert r["merges"] > 0 and r["count"] + r["merges"] == bios, r
' "$bytes" "$bios"
	ret=$?
	echo "$out"
	return $ret
}
if command -v fio >/dev/null; then
	# Adjacent writes merge at the back of the request before them.
	out=$(merge_case merge $((4 << 20)) 1024 --rw=write --size=4M)
	ok $? "merges: requests + merged bios = the 1024 bios written ($out)"
	# Descending offsets: each bio front-merges into the request before it,
	# which then is followed by its new first bio.
	out=$(merge_case front $((1 << 20)) 256 --rw=write:-8k --offset=4m --size=4m --number_ios=256)
	ok $? "front merges: requests + merged bios = the 256 bios written backwards ($out)"
else
	skip "no fio (scripts/install-deps.sh --test)"
	skip "no fio (scripts/install-deps.sh --test)"
fi

# 2. Pushdown: the kernel counts only what the query keeps.
start_recording push "from block where dev == '$D' and op == 'write' and size == 128K and comm == 'blkio'"
echo g | "$B" read "$loop" 4096 500 1 >/dev/null
echo g | "$B" write "$loop" 131072 50 2 >/dev/null
echo g | "$B" write "$loop" 65536 50 1 >/dev/null
end_recording push; rec_pid=
export U=$(cat "$tmp/push.unseen")
out=$(json "$tmp/push.snap" "from block group by dev, op, size show count")
echo "$out" | D=$D python3 -c '
import json, os, sys
rows = [json.loads(l) for l in sys.stdin]
assert len(rows) == 1, rows
r = rows[0]
want = 50 - json.loads(os.environ["U"]).get("write 131072", 0)
assert (r["dev"], r["op"], r["size"], r["count"]) == (os.environ["D"], "write", 131072, want), rows
'; ok $? "pushdown on dev, op, size and comm: the recording holds only the 50 128K writes ($out)"

# Pushdown on pid: of two processes reading the device at once, the kernel
# counts only the one named.
mkfifo "$tmp/go"
"$B" read "$loop" 4096 700 2 <"$tmp/go" >"$tmp/ready" & want_pid=$!
exec 7>"$tmp/go"
start_recording pid "from block where pid == $want_pid"
echo g >&7
echo g | "$B" read "$loop" 4096 300 1 >/dev/null
wait $want_pid; exec 7>&-
end_recording pid; rec_pid=
export U=$(cat "$tmp/pid.unseen")
out=$(json "$tmp/pid.snap" "from block group by pid, op, size show count")
echo "$out" | P=$want_pid python3 -c '
import json, os, sys
rows = [json.loads(l) for l in sys.stdin]
u = json.loads(os.environ["U"]).get("read 4096", 0)	# of either process
assert [(r["pid"], r["op"], r["size"]) for r in rows] == [(int(os.environ["P"]), "read", 4096)], rows
assert 700 - u <= rows[0]["count"] <= 700, (rows, u)
'; ok $? "pushdown on pid: only the 700 reads of pid $want_pid are in the recording ($out)"

# A process renamed between two batches of reads (prctl(PR_SET_NAME), its
# worker threads made anew): each read counts under the name of the thread
# that queued it.
start_recording name "from block where dev == '$D'"
echo g | "$B" read-rename "$loop" 4096 300 2 >/dev/null
end_recording name; rec_pid=
export U=$(cat "$tmp/name.unseen")
out=$(json "$tmp/name.snap" "from block where comm ~ 'blkio*' group by comm, op show count")
echo "$out" | python3 -c '
import json, os, sys
rows = sorted((r["comm"], r["op"], r["count"]) for r in map(json.loads, sys.stdin))
u = json.loads(os.environ["U"]).get("read 4096", 0)	# under either name
assert [r[:2] for r in rows] == [("blkio", "read"), ("blkio-renamed", "read")], rows
assert sum(r[2] for r in rows) == 600 - u and all(300 - u <= r[2] <= 300 for r in rows), (rows, u)
'; ok $? "a renamed process: 300 reads under blkio, the next 300 under blkio-renamed ($out)"

# Errors: a loop device over a file in a 1 MiB tmpfs; 128K writes fill it,
# and the first that cannot be stored completes with BLK_STS_NOSPC (3).
mkdir "$tmp/small"
if mount -t tmpfs -o size=1m tmpfs "$tmp/small" && truncate -s 16M "$tmp/small/img" &&
   eloop=$(losetup -f --show "$tmp/small/img"); then
	"$L" record -o "$tmp/err.snap" -d 120s --quiet \
		-q "from block where dev == '$(basename "$eloop")' threshold 1ns" & rec_pid=$!
	wait_recording "$tmp/err.snap"
	"$B" write-now "$eloop" 131072 64 1 2>/dev/null
	end_recording err; rec_pid=
	losetup -d "$eloop"; eloop=
	out=$(json "$tmp/err.snap" "from block where comm == 'blkio' group by op, size show count, errors")
	ev=$(json "$tmp/err.snap" "from block_events where comm == 'blkio' and error != 0 show op, error")
	printf '%s\n%s\n' "$out" "$ev" | python3 -c '
import json, sys
r, e = (json.loads(l) for l in sys.stdin.read().split("\n")[:2])
assert (r["op"], r["size"], r["errors"]) == ("write", 131072, 1) and r["count"] >= 2, r
assert e == {"op": "write", "error": 3}, e
'; ok $? "errors: the write that found the backing tmpfs full counts as an error, its event says 3 ($out $ev)"
else
	skip "cannot mount a small tmpfs for a failing loop device"
fi
umount "$tmp/small" 2>/dev/null

# 3. SAMPLE 1/N decides once per request at submission.
"$L" record -o "$tmp/sample.snap" -d 120s --quiet \
	-q "from block where dev == '$D' sample 1/10 buffer 100000" & rec_pid=$!
wait_recording "$tmp/sample.snap"
echo g | "$B" read "$loop" 4096 4000 4 >/dev/null
end_recording sample; rec_pid=
out=$(json "$tmp/sample.snap" "from block where comm == 'blkio' show count")
ev=$("$L" report "$tmp/sample.snap" -q "from block_events where comm == 'blkio' show count" --json)
echo "$out $ev" | python3 -c '
import json, sys
a, b = sys.stdin.read().split("} {")
count = json.loads(a + "}")["count"]; ev = json.loads("{" + b)["count"]
assert 2800 <= count <= 5200, (count, ev)
assert ev * 10 == count, (count, ev)
'; ok $? "sample 1/10: ~400 sampled requests, counts scaled by 10, each sent as an event ($out $ev)"

# 4. BASELINE: latency amplification per stage, loaded against unloaded.
# Each recording ends (SIGTERM) a tick after its reads did, however slow.
"$L" record -o "$tmp/base.snap" -d 60s --quiet -q "from block where dev == '$D'" & rec_pid=$!
wait_recording "$tmp/base.snap"
echo g | "$B" read "$loop" 4096 2000 1 >/dev/null
sleep 1.5; kill -TERM $rec_pid; wait $rec_pid; rec_pid=
"$L" record -o "$tmp/load.snap" -d 60s --quiet -q "from block where dev == '$D'" & rec_pid=$!
wait_recording "$tmp/load.snap"
"$B" randwrite-now "$loop" 131072 4 8 >/dev/null & bg_pid=$!
sleep 0.3
echo g | "$B" read "$loop" 4096 2000 1 >/dev/null
kill $bg_pid 2>/dev/null; wait $bg_pid 2>/dev/null; bg_pid=
sleep 1.5; kill -TERM $rec_pid; wait $rec_pid; rec_pid=
q="from block where comm == 'blkio' and op == 'read' and size == 4K group by op show count, avg(alloc), avg(plug), avg(device), avg(lat)"
lad=$(json "$tmp/load.snap" "$q baseline '$tmp/base.snap'")
l=$(json "$tmp/load.snap" "$q"); b=$(json "$tmp/base.snap" "$q")
printf '%s\n%s\n%s\n' "$lad" "$l" "$b" | python3 -c '
import json, sys
lad, l, b = (json.loads(x) for x in sys.stdin.read().split("\n")[:3])
assert lad["count/base"] == 1 or abs(lad["count/base"] - 1) < 0.01, lad
for c in ("avg(alloc)", "avg(plug)", "avg(device)", "avg(lat)"):
    want = l[c] / b[c]
    assert abs(lad[c + "/base"] - want) <= 0.01 * want, (c, lad, l, b)
assert lad["avg(device)/base"] > 1.5, lad
'; ok $? "baseline: LAD per stage = loaded / unloaded, the device stage grew ($lad)"

out=$(json "$tmp/load.snap" "from block where comm == 'blkio' and op == 'read' group by stage show sum(time) baseline '$tmp/base.snap'")
echo "$out" | python3 -c '
import json, sys
rows = {r["stage"]: r for r in map(json.loads, sys.stdin)}
assert rows["device"]["sum(time)/base"] > 1.5, rows
'; ok $? "baseline by stage: the device row's time ratio ($out)"
done_testing
