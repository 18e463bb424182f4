#!/bin/bash
# The block view on the machine's own disk, the one under /var/tmp, as an
# operator would use it: 4 threads writing 4K direct into a file there.
# Their completions come in the disk's interrupts, on either CPU, often in
# the middle of another thread's queueing, where the completion's program
# runs nested in the queueing's.  Every write counts exactly once, less
# those the kernel ran no program for (tests/lib.sh's unseen_begin, within
# the file's blocks: other programs write to this disk too).
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
B=$LATOP_HELPERS/blkio
N=${BLOCK_DISK_WRITES:-60000}
[ -x "$B" ] || skip_all "no blkio helper at $B (make tests-build)"
"$L" probes 2>/dev/null | grep -q 'tp_btf/block_rq_issue' || skip_all "no block tracepoints here"
dev=$(stat -c '%Hd:%Ld' /var/tmp)
[ -e "/sys/dev/block/$dev" ] || skip_all "/var/tmp is on no block device ($dev)"
D=$(basename "$(readlink -f "/sys/dev/block/$dev")")
tmp=$(mktemp -d); rec_pid=
file=$(mktemp -p /var/tmp latop-disk.XXXXXX)
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; unseen_end >/dev/null; rm -rf "$tmp" "$file"' EXIT
# Written once first, so the test's writes overwrite blocks in place: no
# allocation, no journal, one request each.
dd if=/dev/zero of="$file" bs=1M count=16 oflag=direct conv=fsync status=none 2>/dev/null ||
	skip_all "no direct I/O on /var/tmp ($D)"

unseen_begin "$D" "$file"; ok $? "the file's blocks on $D are known (FIEMAP)"
"$L" record -o "$tmp/disk.snap" -d 300s --quiet \
	-q "from block where dev == '$D' and comm == 'blkio'" & rec_pid=$!
wait_recording "$tmp/disk.snap"; ok $? "the recorder attaches"
echo g | "$B" write "$file" 4096 "$N" 4 >/dev/null; ok $? "$N 4K direct writes to $D"
sleep 1; kill -TERM $rec_pid; wait $rec_pid; ok $? "record exits 0"; rec_pid=
unseen_end >"$tmp/unseen"; unseen=$(cat "$tmp/unseen")

# Only the writes: blkio may also read from the disk (its program's pages
# or file system metadata), and those reads are counted too.
out=$("$L" report "$tmp/disk.snap" -q "from block where comm == 'blkio' and op == 'write' group by op, size show count, bytes, merges" --json 2>&1)
echo "$out" | N=$N U="$unseen" python3 -c '
import json, os, sys
n, unseen = int(os.environ["N"]), json.loads(os.environ["U"])
# A request of several bios (merged) is one the kernel completed unseen too.
want = n - sum(c * int(k.split()[1]) // 4096 for k, c in unseen.items() if k.startswith("write"))
rows = [json.loads(l) for l in sys.stdin if l.startswith("{\"op\"")]
assert rows and all(r["op"] == "write" and r["size"] % 4096 == 0 for r in rows), rows
bios = sum(r["count"] + r["merges"] for r in rows)
assert bios == want, (want, bios, rows)
assert sum(r["bytes"] for r in rows) == 4096 * bios, rows
'; ok $? "every write counted once, as a request or merged: $N less those no program ran for ($unseen): $out"
done_testing
