#!/bin/bash
# The block view keys by the fields the query reads: reads of three sizes
# and writes of two (five processes, two threads each) on a loop device of
# its own, with a stats map of 3 keys (latoprc block_max).  A query grouping
# by op makes one key per op: exact totals per op, no (other) row, no
# overflow warning, and rows whose pid and size are left out.  A query
# reading op, size and pid needs five keys: the rest go to (other), warned
# of, every total still exact.  With one key, a query grouping by dev counts
# every read of the device in its one row.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
B=$LATOP_HELPERS/blkio
[ -x "$B" ] || skip_all "no blkio helper at $B (make tests-build)"
command -v losetup >/dev/null || skip_all "no losetup (util-linux)"
"$L" probes 2>/dev/null | grep -q 'tp_btf/block_rq_issue' || skip_all "no block tracepoints here"
tmp=$(mktemp -d); rec_pid=; loop=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; unseen_end >/dev/null; [ -n "$loop" ] && losetup -d $loop; rm -rf "$tmp" /dev/shm/latop-keys-$$.img' EXIT
export XDG_CONFIG_HOME=$tmp/cfg
mkdir -p "$tmp/cfg/latop"
truncate -s 64M /dev/shm/latop-keys-$$.img
loop=$(losetup -f --show /dev/shm/latop-keys-$$.img) || skip_all "losetup failed"
D=$(basename "$loop")
udevadm settle 2>/dev/null; sleep 0.5	# udev's first reads of a new device
RSIZES="4096 8192 16384"
WSIZES="65536 131072"
N=40

# record NAME QUERY [reads]: record the device under QUERY while a process
# per size reads (and, without "reads", writes) it, N I/Os each, 2 threads.
record() {
	unseen_begin "$D"
	"$L" record -o "$tmp/$1.snap" -d 60s --quiet -q "$2" 2>"$tmp/$1.err" & rec_pid=$!
	wait_recording "$tmp/$1.snap"
	for s in $RSIZES; do echo g | "$B" read "$loop" "$s" $N 2 >/dev/null; done
	if [ "${3:-}" != reads ]; then
		for s in $WSIZES; do echo g | "$B" write "$loop" "$s" $N 2 >/dev/null; done
	fi
	sleep 1.5; kill -TERM $rec_pid; wait $rec_pid; rec_pid=
	unseen_end >"$tmp/$1.unseen"
}

# check NAME WANT-OTHER: the totals per op are the I/Os made; an (other)
# row exists when WANT-OTHER is 1, and not when 0.
check() {
	"$L" report "$tmp/$1.snap" --json \
		-q "from block group by dev, op, size, pid, comm show count, bytes" \
		> "$tmp/$1.json" 2>"$tmp/$1.rerr"
	python3 - "$tmp/$1.json" "$2" "$N" "$RSIZES" "$WSIZES" "$tmp/$1.unseen" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
want_other, n = int(sys.argv[2]), int(sys.argv[3])
rsizes, wsizes = [int(s) for s in sys.argv[4].split()], [int(s) for s in sys.argv[5].split()]
# What the kernel completed where no program runs (tests/lib.sh).
unseen = {op: [0, 0] for op in ("read", "write")}
for k, c in json.load(open(sys.argv[6])).items():
    op, size = k.split()
    if op in unseen:
        unseen[op][0] += c
        unseen[op][1] += c * int(size)
other = [r for r in rows if r["op"] == "(other)"]
print("%d rows, other: %s, unseen: %s" % (len(rows), other, unseen))
assert sum(r["count"] for r in rows) == n * (len(rsizes) + len(wsizes)) - unseen["read"][0] - unseen["write"][0], rows
assert sum(r["bytes"] for r in rows) == n * (sum(rsizes) + sum(wsizes)) - unseen["read"][1] - unseen["write"][1], rows
if want_other:
    assert len(other) == 1 and other[0]["count"] > 0, rows
else:
    assert not other, rows
    per = {r["op"]: r for r in rows}
    assert set(per) == {"read", "write"} and len(rows) == 2, rows
    assert per["read"]["count"] == n * len(rsizes) - unseen["read"][0], rows
    assert per["read"]["bytes"] == n * sum(rsizes) - unseen["read"][1], rows
    assert per["write"]["count"] == n * len(wsizes) - unseen["write"][0], rows
    assert per["write"]["bytes"] == n * sum(wsizes) - unseen["write"][1], rows
    # The key left out what the query did not read.
    assert all(r["size"] == 0 and r["pid"] == 0 and r["comm"] == "blkio" for r in rows), rows
EOF
}

echo "block_max = 3" > "$tmp/cfg/latop/latoprc"
"$L" probes | grep -q "keys counted at once (latoprc block_max) *3 keys"
ok $? "block_max = 3: latop probes states it"

record byop "from block where dev == '$D' and comm == 'blkio' group by op show count, bytes, p99(lat)"
out=$(check byop 0)
ok $? "block_max = 3, group by op: one key per op, exact counts and bytes per op, no (other) row ($out)"
! grep -q "counted in overflow" "$tmp/byop.err" "$tmp/byop.rerr"
ok $? "block_max = 3, group by op: no overflow warning ($(cat "$tmp/byop.err" "$tmp/byop.rerr"))"

record bypid "from block where dev == '$D' and comm == 'blkio' group by op, size, pid show count"
out=$(check bypid 1)
ok $? "block_max = 3, group by op, size, pid: five keys, exact totals, the rest in (other) ($out)"
grep -q "block: [0-9]* counted in overflow rows" "$tmp/bypid.err"
ok $? "block_max = 3, group by op, size, pid: record warns of the overflow ($(cat "$tmp/bypid.err"))"

echo "block_max = 1" > "$tmp/cfg/latop/latoprc"
record bydev "from block where dev == '$D' group by dev show count, p99(lat)" reads
"$L" report "$tmp/bydev.snap" --json -q "from block group by dev show count, p99(lat)" \
	> "$tmp/bydev.json" 2>"$tmp/bydev.rerr"
out=$(python3 - "$tmp/bydev.json" "$D" "$N" "$RSIZES" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
d, n, sizes = sys.argv[2], int(sys.argv[3]), sys.argv[4].split()
print(rows)
# Other processes (udev) may read the device too: at least the reads made.
assert len(rows) == 1 and rows[0]["dev"] == d, rows
assert rows[0]["count"] >= n * len(sizes) and rows[0]["p99(lat)"] > 0, rows
EOF
)
ok $? "block_max = 1, group by dev: every read in the device's one row ($out)"
! grep -q "counted in overflow" "$tmp/bydev.err" "$tmp/bydev.rerr"
ok $? "block_max = 1, group by dev: no overflow warning ($(cat "$tmp/bydev.err" "$tmp/bydev.rerr"))"
done_testing
