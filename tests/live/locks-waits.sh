#!/bin/bash
# The locks view's matching tables sized by latoprc's lock_wait_max: N
# threads wait at once, K rounds, each on a futex word of its own until its
# timeout (lockdemo crowd).  With lock_wait_max = 4 the waits that find the
# table full are not followed: they are counted as evicted, and the waits
# counted plus the evicted are exactly the waits lockdemo made (its calls
# with the futex syscall hooks; found by the scheduler, a wait is a sleep,
# and one may go unseen: it is evicted too, when its thread waits again);
# record and report warn of them with the figure, and report --json's
# health line carries it.  With the default size nothing else is evicted.
# `latop probes` states the size; a bad value is named.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
D=$LATOP_HELPERS/lockdemo
[ -x "$D" ] || skip_all "no lockdemo helper at $D (make tests-build)"
tmp=$(mktemp -d); rec_pid= demo_pid=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; [ -n "$demo_pid" ] && kill -9 $demo_pid 2>/dev/null; rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME=$tmp/cfg
mkdir -p "$tmp/cfg/latop"; : > "$tmp/cfg/latop/latoprc"
N=24 K=10
BY_SCHED=0
"$L" probes | grep "futex waits and wakes" | grep -q "tp_btf/sched_switch" && BY_SCHED=1

# run NAME: record lockdemo's crowd of N threads, K rounds.
run() {
	rm -f "$tmp/go" "$tmp/out"; mkfifo "$tmp/go"
	"$D" crowd $N $K < "$tmp/go" > "$tmp/out" & demo_pid=$!
	exec 3> "$tmp/go"
	for _ in $(seq 50); do [ -s "$tmp/out" ] && break; sleep 0.1; done
	"$L" record -o "$tmp/$1.snap" -d 60s --quiet -q "from locks where pid == $demo_pid" \
		2>"$tmp/$1.err" & rec_pid=$!
	wait_recording "$tmp/$1.snap" || echo "# the recorder did not start"
	echo g >&3; exec 3>&-
	wait $demo_pid; demo_pid=
	sleep 1.5; kill -TERM $rec_pid; wait $rec_pid; rec_pid=
	sed 's/^r//' "$tmp/out" > "$tmp/$1.truth"
}

# check NAME WANT-EVICTED: the futex waits counted plus the evicted are the
# waits lockdemo made; some were evicted when WANT-EVICTED is 1, none when 0.
check() {
	"$L" report "$tmp/$1.snap" --json -q "from locks group by kind show count" \
		> "$tmp/$1.json" 2>"$tmp/$1.rerr"
	python3 - "$tmp/$1.json" "$tmp/$1.rerr" "$tmp/$1.truth" "$2" "$BY_SCHED" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
health = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])["health"]
truth = json.load(open(sys.argv[3]))
want_evicted, by_sched = int(sys.argv[4]), int(sys.argv[5])
count = sum(r["count"] for r in rows if r["kind"] == "futex")
evicted = health["evicted"]
print("rows %s, %d futex waits counted, %d evicted, lockdemo %s" % (rows, count, evicted, truth))
assert truth["calls"] == truth["timedout"], truth
if by_sched:
    assert truth["slept"] * 0.98 <= count + evicted <= truth["slept"], (count, evicted, truth)
else:
    assert count + evicted == truth["calls"], (count, evicted, truth)
if want_evicted:
    assert evicted > 0 and count > 0, (count, evicted)
else:
    # Found by the scheduler, a wait whose end ran no program (unseen) is
    # given up, and counted in evicted, when its thread waits again.
    assert evicted == 0 or (by_sched and evicted <= truth["slept"] * 0.02), evicted
EOF
}

"$L" probes | grep -Eq "waits followed at once \(latoprc lock_wait_max\) +[0-9]+ waits"
ok $? "latop probes states the locks matching tables' size"

echo "lock_wait_max = 4" > "$tmp/cfg/latop/latoprc"
"$L" probes | grep -q "waits followed at once (latoprc lock_wait_max) *4 waits"
ok $? "lock_wait_max = 4: latop probes states it"
run small
out=$(check small 1)
ok $? "lock_wait_max = 4: $N waits at once, each counted or evicted ($out)"
n=$(sed -n 's/.*"evicted": \([0-9]*\).*/\1/p' "$tmp/small.rerr" | tail -1)
grep -q "locks: [0-9]* evicted in the kernel" "$tmp/small.err"
ok $? "lock_wait_max = 4: record warns of the evicted waits ($(cat "$tmp/small.err"))"
grep -q "locks: $n evicted in the kernel" "$tmp/small.rerr"
ok $? "lock_wait_max = 4: report warns of the $n evicted waits ($(head -c 400 "$tmp/small.rerr"))"

: > "$tmp/cfg/latop/latoprc"
run big
out=$(check big 0)
ok $? "default lock_wait_max: $N waits at once, every one counted ($out)"
# The warning comes only with what check allowed: waits whose end was unseen.
n=$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["health"]["evicted"])' "$tmp/big.rerr")
if [ "$n" = 0 ]; then
	! grep -q "evicted in the kernel" "$tmp/big.err" "$tmp/big.rerr"
else
	grep -q "locks: $n evicted in the kernel" "$tmp/big.rerr"
fi
ok $? "default lock_wait_max: an eviction warning only with the unseen ends ($n)"

echo "lock_wait_max = 0" > "$tmp/cfg/latop/latoprc"
err=$("$L" probes 2>&1 >/dev/null)
def=$(echo "$err" | sed -n 's/.*latoprc:1: lock_wait_max: not a count of waits from 1 to 1048576; using the default \([0-9]*\)$/\1/p')
[ -n "$def" ]
ok $? "a bad lock_wait_max is named with its line and the default used ($err)"
"$L" probes 2>/dev/null | grep -q "waits followed at once (latoprc lock_wait_max) *$def waits"
ok $? "a bad lock_wait_max: the default size is used"
done_testing
