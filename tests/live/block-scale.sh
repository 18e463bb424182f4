#!/bin/bash
# The block view's stats map sized by latoprc's block_max: reads of six
# sizes from six processes (six keys) on a loop device of its own.  With
# block_max = 4 the keys that find no room are counted in the (other) row:
# every read and byte is still counted, exactly, and record and report
# warn of the overflow.  With the default size there is no (other) row.
# With a request table of 8 (block_inflight_max) under 32 threads' reads,
# the requests without room are counted as evicted and warned of.
# `latop probes` states the sizes; a bad block_max is named.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
B=$LATOP_HELPERS/blkio
[ -x "$B" ] || skip_all "no blkio helper at $B (make tests-build)"
command -v losetup >/dev/null || skip_all "no losetup (util-linux)"
"$L" probes 2>/dev/null | grep -q 'tp_btf/block_rq_issue' || skip_all "no block tracepoints here"
tmp=$(mktemp -d); rec_pid=; loop=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; unseen_end >/dev/null; [ -n "$loop" ] && losetup -d $loop; rm -rf "$tmp" /dev/shm/latop-scale-$$.img' EXIT
export XDG_CONFIG_HOME=$tmp/cfg
mkdir -p "$tmp/cfg/latop"; : > "$tmp/cfg/latop/latoprc"
truncate -s 64M /dev/shm/latop-scale-$$.img
loop=$(losetup -f --show /dev/shm/latop-scale-$$.img) || skip_all "losetup failed"
D=$(basename "$loop")
udevadm settle 2>/dev/null; sleep 0.5	# udev's first reads of a new device
SIZES="4096 8192 16384 32768 65536 131072"
N=50

# record_reads NAME: record the device while six processes read it, N reads
# of one size each.
record_reads() {
	unseen_begin "$D"
	"$L" record -o "$tmp/$1.snap" -d 60s --quiet \
		-q "from block where dev == '$D' and comm == 'blkio'" 2>"$tmp/$1.err" & rec_pid=$!
	wait_recording "$tmp/$1.snap"
	for s in $SIZES; do echo g | "$B" read "$loop" "$s" $N 1 >/dev/null; done
	sleep 1.5; kill -TERM $rec_pid; wait $rec_pid; rec_pid=
	unseen_end >"$tmp/$1.unseen"
}

# check NAME WANT-OTHER: the totals are the reads made; an (other) row
# exists when WANT-OTHER is 1, and not when 0.
check() {
	"$L" report "$tmp/$1.snap" --json \
		-q "from block group by dev, op, size, pid, comm show count, bytes, sum(time), p99(lat)" \
		> "$tmp/$1.json" 2>"$tmp/$1.rerr"
	python3 - "$tmp/$1.json" "$2" "$N" "$tmp/$1.unseen" $SIZES <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
want_other, n, sizes = int(sys.argv[2]), int(sys.argv[3]), [int(s) for s in sys.argv[5:]]
# What the kernel completed where no program runs (tests/lib.sh).
unseen = {k: c for k, c in json.load(open(sys.argv[4])).items() if k.startswith("read ")}
count = sum(r["count"] for r in rows)
nbytes = sum(r["bytes"] for r in rows)
other = [r for r in rows if r["comm"] == "(other)"]
print("%d rows, %d reads, %d bytes, other: %s, unseen: %s" % (len(rows), count, nbytes, other, unseen))
assert count == n * len(sizes) - sum(unseen.values()), count
assert nbytes == n * sum(sizes) - sum(c * int(k.split()[1]) for k, c in unseen.items()), nbytes
assert all(r["sum(time)"] > 0 and r["p99(lat)"] > 0 for r in rows), rows
if want_other:
    assert len(other) == 1 and other[0]["count"] > 0, other
    o = other[0]
    assert (o["dev"], o["op"], o["size"], o["pid"]) == ("(other)", "(other)", 0, 0), o
    assert len(rows) <= 5, rows
else:
    assert not other and len(rows) == len(sizes), rows
EOF
}

"$L" probes | grep -Eq "keys counted at once \(latoprc block_max\) +[0-9]+ keys"
ok $? "latop probes states the block stats map's default size"
"$L" probes | grep -Eq "requests in flight \(latoprc block_inflight_max\) +[0-9]+ requests"
ok $? "latop probes states the block request table's size"

echo "block_max = 4" > "$tmp/cfg/latop/latoprc"
"$L" probes | grep -q "keys counted at once (latoprc block_max) *4 keys"
ok $? "block_max = 4: latop probes states it"
record_reads small
out=$(check small 1)
ok $? "block_max = 4: six keys, every read and byte counted, the rest in one (other) row ($out)"
grep -q "block: [0-9]* counted in overflow rows" "$tmp/small.err"
ok $? "block_max = 4: record warns of the overflow ($(cat "$tmp/small.err"))"
grep -q "block: [0-9]* counted in overflow rows" "$tmp/small.rerr"
ok $? "block_max = 4: report warns of the overflow ($(cat "$tmp/small.rerr"))"

: > "$tmp/cfg/latop/latoprc"
record_reads big
out=$(check big 0)
ok $? "default block_max: six keys, six rows, no (other) row ($out)"
! grep -q "counted in overflow" "$tmp/big.err" "$tmp/big.rerr"
ok $? "default block_max: no overflow warning"

# A request table of 8 (block_inflight_max) under reads from 32 threads at
# once: the requests that find no room are not followed, counted as
# untracked (evicted); the rest are counted in full.
echo "block_inflight_max = 8" > "$tmp/cfg/latop/latoprc"
"$L" probes | grep -q "requests in flight (latoprc block_inflight_max) *8 requests"
ok $? "block_inflight_max = 8: latop probes states it"
NR=3000
"$L" record -o "$tmp/inflight.snap" -d 60s --quiet \
	-q "from block where dev == '$D' and comm == 'blkio'" 2>"$tmp/inflight.err" & rec_pid=$!
wait_recording "$tmp/inflight.snap"
echo g | "$B" read "$loop" 4096 $NR 32 >/dev/null
sleep 1.5; kill -TERM $rec_pid; wait $rec_pid; rec_pid=
"$L" report "$tmp/inflight.snap" --json -q "from block group by op show count" \
	> "$tmp/inflight.json" 2>"$tmp/inflight.rerr"
out=$(python3 - "$tmp/inflight.json" "$tmp/inflight.rerr" $NR <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
health = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])["health"]
count, evicted, n = sum(r["count"] for r in rows), health["evicted"], int(sys.argv[3])
print("%d reads counted, %d evicted, of %d" % (count, evicted, n))
assert count + evicted == n and evicted > 0 and count > 0, (rows, health)
EOF
)
ok $? "block_inflight_max = 8: every read counted or evicted ($out)"
grep -q "block: [0-9]* evicted in the kernel" "$tmp/inflight.err" &&
	grep -q "block: [0-9]* evicted in the kernel" "$tmp/inflight.rerr"
ok $? "block_inflight_max = 8: record and report warn of the evicted requests ($(head -c 300 "$tmp/inflight.rerr"))"

echo "block_inflight_max = 7x" > "$tmp/cfg/latop/latoprc"
err=$("$L" probes 2>&1 >/dev/null)
echo "$err" | grep -q "latoprc:1: block_inflight_max: not a count of requests from 8 to 1048576; using the default [0-9]*$"
ok $? "a bad block_inflight_max is named with its line and the default used ($err)"

echo "block_max = abc" > "$tmp/cfg/latop/latoprc"
err=$("$L" probes 2>&1 >/dev/null)
def=$(echo "$err" | sed -n 's/.*latoprc:1: block_max: not a count of keys from 1 to 1048576; using the default \([0-9]*\)$/\1/p')
[ -n "$def" ]
ok $? "a bad block_max is named with its line and the default used ($err)"
"$L" probes 2>/dev/null | grep -q "keys counted at once (latoprc block_max) *$def keys"
ok $? "a bad block_max: the default size is used"
done_testing
