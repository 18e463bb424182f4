#!/bin/bash
# Kernel lock contention in the locks view: threads of one process map,
# touch and unmap memory, contending their mm's mmap_lock (an rw_semaphore)
# and page-table spinlocks.  latop must report that contention, its kind and
# the lock's name, and the lock's hooks in `latop probes`.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
D=$LATOP_HELPERS/lockdemo
[ -x "$D" ] || skip_all "no lockdemo helper at $D (make tests-build)"
"$L" probes | grep -q "tp_btf/contention_begin+contention_end" ||
	skip_all "lock:contention_begin/end cannot be attached here"
tmp=$(mktemp -d); rec_pid= demo_pid=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; [ -n "$demo_pid" ] && kill -9 $demo_pid 2>/dev/null; rm -rf "$tmp"' EXIT

out=$("$L" probes --json)
echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
text = json.dumps(d)
assert "kernel lock contention" in text and "futex waits and wakes" in text, text[:400]
'; ok $? "latop probes lists the locks probe's stages"

mkfifo "$tmp/go"
"$D" mmap 3000 4 < "$tmp/go" > "$tmp/out" & demo_pid=$!
exec 3> "$tmp/go"
for _ in $(seq 50); do [ -s "$tmp/out" ] && break; sleep 0.1; done
"$L" record -o "$tmp/k.snap" -d 7s --quiet -q "from locks where comm ~ 'mapper-*' threshold 1us" & rec_pid=$!
for _ in $(seq 150); do [ -e "$tmp/k.snap.tmp" ] && break; sleep 0.1; done; sleep 0.5
echo g >&3; exec 3>&-
wait $demo_pid; demo_pid=
wait $rec_pid; ok $? "recording lockdemo mmap exits 0"; rec_pid=
echo "# lockdemo: $(sed 's/^r//' "$tmp/out")"

out=$("$L" report "$tmp/k.snap" -q "from locks where kind ~ 'rwsem*' group by kind, sym, process show count, p99(wait), max(wait)" --json)
echo "$out" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
mm = [r for r in rows if r["sym"] == "mmap_lock" and r["process"] == "lockdemo"]
assert mm and sum(r["count"] for r in mm) >= 10, rows
assert any(r["kind"] == "rwsem-w" for r in mm), rows
assert all(r["max(wait)"] > 0 for r in mm), rows
'; ok $? "mmap_lock contention reported as rwsem-w/rwsem-r of lockdemo ($out)"

out=$("$L" report "$tmp/k.snap" -q "from locks group by comm show count" --csv | tail -n +2 | cut -d, -f1 | sort -u | tr '\n' ' ')
echo "$out" | grep -qE '^(mapper-[1-4] )+$'; ok $? "the kernel's comm ~ 'mapper-*' filter kept only the mapper threads' waits ($out)"

out=$("$L" report "$tmp/k.snap" -q "from lock_events where sym == 'mmap_lock' show count, max(wait)" --json)
echo "$out" | python3 -c '
import json, sys
r = json.loads(sys.stdin.readline())
assert r["count"] >= 10 and r["max(wait)"] > 0, r
'; ok $? "single mmap_lock waits crossed as lock_events ($out)"

out=$("$L" report "$tmp/k.snap" -q "from locks where not kind ~ 'rwsem*' and kind != 'futex' group by kind show count" --json)
echo "$out" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.strip()]
kinds = {r["kind"] for r in rows}
assert kinds <= {"spinlock", "rwlock-r", "rwlock-w", "kmutex", "rtmutex", "percpu-rwsem", "klock", "mutex", "lll", "pi"}, kinds
'; ok $? "every other kind is a known kernel or user kind ($out)"
done_testing
