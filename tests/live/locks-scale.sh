#!/bin/bash
# The locks view's stats hash sized by latoprc's lock_max: one thread makes
# K futex waits, each sleeping to its timeout, on each of N futex words (N
# lock keys), recorded with THRESHOLD 1ns so that every wait the probe sees
# is also a lock_events row of its own.  With lock_max = 4 the keys that
# find no room are counted in the (other) row: the waits counted are still
# exactly the events, lock by lock, and the waits lockdemo made (its calls
# with the futex syscall hooks; found by the scheduler, a wait is a sleep,
# and one may go unseen), and record and report warn of the overflow.  With
# the default size there is no (other) row.  `latop probes` states the
# size; a bad lock_max is named.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
D=$LATOP_HELPERS/lockdemo
[ -x "$D" ] || skip_all "no lockdemo helper at $D (make tests-build)"
tmp=$(mktemp -d); rec_pid= demo_pid=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; [ -n "$demo_pid" ] && kill -9 $demo_pid 2>/dev/null; rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME=$tmp/cfg
mkdir -p "$tmp/cfg/latop"; : > "$tmp/cfg/latop/latoprc"
N=40 K=25
BY_SCHED=0
"$L" probes | grep "futex waits and wakes" | grep -q "tp_btf/sched_switch" && BY_SCHED=1

# run NAME: record lockdemo's waits on N words, K each.
run() {
	rm -f "$tmp/go" "$tmp/out"; mkfifo "$tmp/go"
	"$D" words $N $K < "$tmp/go" > "$tmp/out" & demo_pid=$!
	exec 3> "$tmp/go"
	for _ in $(seq 50); do [ -s "$tmp/out" ] && break; sleep 0.1; done
	"$L" record -o "$tmp/$1.snap" -d 60s --quiet -q "from locks where pid == $demo_pid threshold 1ns buffer 100000" \
		2>"$tmp/$1.err" & rec_pid=$!
	wait_recording "$tmp/$1.snap" || echo "# the recorder did not start"
	echo g >&3; exec 3>&-
	wait $demo_pid; demo_pid=
	sleep 1.5; kill -TERM $rec_pid; wait $rec_pid; rec_pid=
	sed 's/^r//' "$tmp/out" > "$tmp/$1.truth"
}

# check NAME WANT-OTHER: the waits counted are the calls lockdemo made; an
# (other) row exists when WANT-OTHER is 1, and not when 0.
check() {
	"$L" report "$tmp/$1.snap" --json \
		-q "from locks group by lock, kind, sym, pid, process, holder_comm show count, sum(time), max(wait)" \
		> "$tmp/$1.json" 2>"$tmp/$1.rerr"
	"$L" report "$tmp/$1.snap" --json -q "from lock_events group by lock show count" \
		> "$tmp/$1.ev.json" 2>/dev/null
	python3 - "$tmp/$1.json" "$tmp/$1.ev.json" "$tmp/$1.truth" "$2" "$N" "$BY_SCHED" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
events = {r["lock"]: r["count"] for r in map(json.loads, open(sys.argv[2]))}
truth = json.load(open(sys.argv[3]))
want_other, n, by_sched = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
count = sum(r["count"] for r in rows)
other = [r for r in rows if r["lock"] == "(other)"]
print("%d rows, %d waits counted, %d events, lockdemo %s, other: %s" %
      (len(rows), count, sum(events.values()), truth, other))
# lockdemo may also wait on a kernel lock now and then (a page fault's
# mmap_lock, its exit): a real wait, counted like any other, but not one of
# the workload's words, whose counts are checked against its own.
kernel = lambda lock: lock != "(other)" and int(lock, 16) >= 0xffff800000000000
words = {l: c for l, c in events.items() if not kernel(l)}
assert truth["calls"] == truth["timedout"], truth
assert len(words) == n, events
assert count == sum(events.values()), (count, events)
for r in rows:
    if r["lock"] != "(other)":
        assert r["count"] == events.pop(r["lock"]), (r, events)
assert sum(o["count"] for o in other) == sum(events.values()), (other, events)
waits = sum(words.values())
if by_sched:
    assert truth["slept"] * 0.98 <= waits <= truth["slept"], (waits, truth)
else:
    assert waits == truth["calls"], (waits, truth)
assert sum(r["sum(time)"] for r in rows) > 0, rows
if want_other:
    assert len(other) == 1 and other[0]["count"] > 0, other
    o = other[0]
    assert all(o[f] == "(other)" for f in ("kind", "sym", "process", "holder_comm")), o
    assert o["pid"] == 0 and o["max(wait)"] > 0, o
    # lock_max keys, and the reserve's (up to 256, latop(1) lock_max): keys
    # made while the kernel's allocator had no element ready, on top.
    assert len(rows) <= 4 + 256 + 1, rows
else:
    assert not other and len([r for r in rows if not kernel(r["lock"])]) == n, rows
EOF
}

"$L" probes | grep -Eq "lock keys counted at once \(latoprc lock_max\) +[0-9]+ keys"
ok $? "latop probes states the locks stats hash's default size"

echo "lock_max = 4" > "$tmp/cfg/latop/latoprc"
"$L" probes | grep -q "lock keys counted at once (latoprc lock_max) *4 keys"
ok $? "lock_max = 4: latop probes states it"
run small
out=$(check small 1)
ok $? "lock_max = 4: $N lock keys, every wait counted, the rest in one (other) row ($out)"
grep -q "locks: [0-9]* counted in overflow rows" "$tmp/small.err"
ok $? "lock_max = 4: record warns of the overflow ($(cat "$tmp/small.err"))"
grep -q "locks: [0-9]* counted in overflow rows" "$tmp/small.rerr"
ok $? "lock_max = 4: report warns of the overflow ($(cat "$tmp/small.rerr"))"

: > "$tmp/cfg/latop/latoprc"
run big
out=$(check big 0)
ok $? "default lock_max: $N lock keys, $N rows, no (other) row ($out)"
! grep -q "counted in overflow" "$tmp/big.err" "$tmp/big.rerr"
ok $? "default lock_max: no overflow warning"

echo "lock_max = 0x" > "$tmp/cfg/latop/latoprc"
err=$("$L" probes 2>&1 >/dev/null)
def=$(echo "$err" | sed -n 's/.*latoprc:1: lock_max: not a count of keys from 1 to 1048576; using the default \([0-9]*\)$/\1/p')
[ -n "$def" ]
ok $? "a bad lock_max is named with its line and the default used ($err)"
"$L" probes 2>/dev/null | grep -q "lock keys counted at once (latoprc lock_max) *$def keys"
ok $? "a bad lock_max: the default size is used"
done_testing
