#!/bin/bash
# The locks view on LDB's example, an unmodified program: request threads
# take a mutex briefly; a background thread ("bgsnap") snapshots the state
# every 10 ms holding that mutex, in snapshot_state(), with file I/O.
# latop must name bgsnap as the holder behind the waiters' tail, name
# snapshot_state (with file:line) among its stacks, see it off CPU in I/O,
# report a tail near the hold time while the median stays small, and push
# THRESHOLD down (waits below it counted, not sent).
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
D=$LATOP_HELPERS/lockdemo
[ -x "$D" ] || skip_all "no lockdemo helper at $D (make tests-build)"
tmp=$(mktemp -d); rec_pid= demo_pid=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; [ -n "$demo_pid" ] && kill -9 $demo_pid 2>/dev/null; rm -rf "$tmp"' EXIT

# Wait until a recorder has its probes attached (its .tmp file exists).
# run SNAP QUERY-OPTIONS MODE ARGS...: start lockdemo, record its pid, let it go.
run() {
	local snap=$1 opts=$2; shift 2
	rm -f "$tmp/go" "$tmp/out"; mkfifo "$tmp/go"
	"$D" "$@" < "$tmp/go" > "$tmp/out" & demo_pid=$!
	exec 3> "$tmp/go"
	for _ in $(seq 50); do [ -s "$tmp/out" ] && break; sleep 0.1; done
	"$L" record -o "$snap" -d 9s --quiet -q "from locks where pid == $demo_pid $opts" & rec_pid=$!
	wait_recording "$snap" || { echo "# the recorder did not start"; return 1; }
	echo g >&3; exec 3>&-
	wait $demo_pid; demo_pid=
	wait $rec_pid; local rc=$?; rec_pid=
	return $rc
}

json() { "$L" report "$1" -q "$2" --json; }

# tests/live/locks-tracefs.sh names the futex hook this run must use.
if [ -n "${LOCKS_FUTEX_HOOK:-}" ]; then
	"$L" probes | grep "futex waits and wakes" | grep -qF "$LOCKS_FUTEX_HOOK"
	ok $? "futex waits are hooked at $LOCKS_FUTEX_HOOK"
fi

run "$tmp/snap.snap" "threshold 1us" snapshot 4000 "$tmp"; ok $? "recording lockdemo snapshot exits 0"
demo=$(sed 's/^r//' "$tmp/out")
echo "# lockdemo: $demo"

out=$(json "$tmp/snap.snap" "from locks where kind == 'mutex' group by sym show count, p50(wait), p9999(wait), max(wait)")
echo "$out" | python3 -c '
import json, sys
demo = json.loads(sys.argv[1])
rows = [json.loads(l) for l in sys.stdin]
assert len(rows) == 1 and rows[0]["sym"] == "state_lock", rows
r = rows[0]
assert r["count"] >= 100, r
assert r["p9999(wait)"] >= 0.5 * demo["hold_p50_ns"], (r, demo)
# Every wait is inside one of the lock() calls lockdemo timed (one clock):
# none is longer than the longest call, but for the max of a tick or a
# percentile read from its histogram bucket (at most 1/16 over).
assert r["max(wait)"] <= demo["lock_max_ns"] * 17 / 16, (r, demo)
assert r["p9999(wait)"] <= demo["lock_max_ns"] * 17 / 16, (r, demo)
assert r["p50(wait)"] <= 0.25 * demo["hold_p50_ns"], (r, demo)
' "$demo"; ok $? "one contended mutex, named state_lock; p99.99 wait near the hold time, none longer than the longest lock() call, median small ($out)"

# A request thread preempted while holding (2 busy vCPUs) can hold long
# once; bgsnap holds long every time: its median hold against lockdemo's
# own count of its contended holds (from the first request that came to
# wait, as latop's hold is: with the CPUs busy, requests come to wait
# later into a hold, and the contended part is shorter than the hold).
out=$(json "$tmp/snap.snap" "from locks where sym == 'state_lock' group by holder_comm show count, p50(hold), max(hold), sum(holder_offcpu) order by p50(hold) desc")
echo "$out" | python3 -c '
import json, sys
demo = json.loads(sys.argv[1])
rows = [json.loads(l) for l in sys.stdin]
top = rows[0]
assert top["holder_comm"] == "bgsnap", rows
assert top["p50(hold)"] >= 0.5 * demo["contended_p50_ns"], (top, demo)
assert top["max(hold)"] <= 1.5 * demo["hold_max_ns"] + 5e6, (top, demo)
assert top["sum(holder_offcpu)"] > 0, top
assert any(r["holder_comm"].startswith("req-") for r in rows), rows
' "$demo"; ok $? "bgsnap is the holder with the longest median hold, near lockdemo's own count of its contended holds, off CPU while holding ($out)"

out=$(json "$tmp/snap.snap" "from locks where sym == 'state_lock' and holder_comm == 'bgsnap' group by holder_fn show sum(samples) order by sum(samples) desc")
echo "$out" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert rows and rows[0]["holder_fn"] == "snapshot_state" and rows[0]["sum(samples)"] > 0, rows
'; ok $? "bgsnap's most sampled function while others waited is snapshot_state ($out)"

out=$(json "$tmp/snap.snap" "from lock_events where kind == 'mutex' and holder_comm == 'bgsnap' show id, comm, holder, holder_comm, holder_fn, holder_stack, wait, hold, holder_offcpu, holder_io order by wait desc limit 5")
echo "$out" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert len(rows) == 5, rows
assert all(r["comm"].startswith("req-") and r["holder_comm"] == "bgsnap" for r in rows), rows
assert any("snapshot_state (lockdemo.c:" in r["holder_stack"] for r in rows), rows
# Each sampled one names the code of bgsnap itself, where it held the lock
# or released it, not fdatasync of the C library alone (a sample left
# without a copy of its stack when others had taken the copies; a hold
# without any sample is one the budget dropped, said in the health line).
assert all(r["holder_fn"] in ("snapshot_state", "bgsnap_main") for r in rows if r["holder_stack"]), rows
assert any(r["holder_io"] > 0 for r in rows), rows
'; ok $? "report --json: the worst waits name bgsnap, its stack with snapshot_state (lockdemo.c:N), its own function in each, its I/O wait"

ids=$(echo "$out" | python3 -c 'import json,sys; print(",".join(str(json.loads(l)["id"]) for l in sys.stdin))')

# Every sampled wait, not just the worst: request threads barge, so most
# holds a wait sees end in an unlock, sampled there past the tick's full
# stack copies.  Each must still name lockdemo's own code (its functions,
# from its symbol table), never "?" or the C library's or kernel's
# function alone (the unlock's frame-pointer stack names no caller).
fns=$(nm --defined-only "$D" | awk '$2 ~ /^[tT]$/ {print $3}' | tr '\n' ' ')
out=$(json "$tmp/snap.snap" "from lock_events where kind == 'mutex' and samples > 0 show id, holder_comm, holder_fn")
echo "$out" | python3 -c '
import collections, json, sys
own = set(sys.argv[1].split())
rows = [json.loads(l) for l in sys.stdin]
by = collections.Counter(r["holder_fn"] for r in rows)
print("# sampled waits by holder_fn:", dict(by.most_common(8)))
assert len(rows) >= 100, len(rows)
bad = {f: n for f, n in by.items() if f not in own}
assert not bad, bad
' "$fns"; ok $? "every sampled wait names lockdemo's own function as its holder's ($(echo "$out" | wc -l) waits)"
out=$(json "$tmp/snap.snap" "from lock_spans where id in ($ids) show id, row, kind, label, dur")
echo "$out" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
by = {}
for r in rows:
    by.setdefault(r["id"], []).append(r)
assert len(by) >= 3, by.keys()
for spans in by.values():
    assert any(s["row"].startswith("waiter ") and s["kind"] == "wait" for s in spans), spans
    # Its hold, or its release alone when it took the lock where no wait
    # could see it (between a release and the next wait).
    assert any(s["row"].endswith(" bgsnap") and s["kind"] in ("hold", "release") for s in spans), spans
assert any(s["kind"] == "oncpu" and s["label"] == "snapshot_state" for s in rows), rows
assert any(s["kind"] == "offcpu" and s["label"] == "I/O wait" for s in rows), rows
'; ok $? "lock_spans: each worst wait has its waiter row and bgsnap's (its hold, or its release alone), snapshot_state on CPU, I/O off CPU"

# A query that reads none of the holder's fields (holder, holder_comm,
# holder_fn, holder_fns) keys each lock once in the kernel, whoever
# released it: one row of holder 0, where the recording above has one per
# holder; its holders' samples and off-CPU time are still the lock's.
run "$tmp/grp.snap" "group by sym show count, sum(samples), sum(holder_offcpu)" snapshot 2000 "$tmp"
ok $? "recording with group by sym exits 0"
out=$(json "$tmp/grp.snap" "from locks where sym == 'state_lock' group by holder, holder_comm show count, sum(samples), sum(holder_offcpu)")
all=$(json "$tmp/snap.snap" "from locks where sym == 'state_lock' group by holder show count")
echo "$out" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert len(rows) == 1, rows
r = rows[0]
assert r["holder"] == 0 and r["holder_comm"] == "" and r["count"] >= 100, r
assert r["sum(samples)"] > 0 and r["sum(holder_offcpu)"] > 0, r
' && [ "$(echo "$all" | wc -l)" -ge 2 ]
ok $? "group by sym: state_lock keyed once, holder 0, with its holders' samples and off-CPU time ($out; keyed by holder: $(echo $all))"

# THRESHOLD goes down: shorter waits are counted, not sent.
run "$tmp/thr.snap" "threshold 1ms" snapshot 2000 "$tmp"; ok $? "recording with threshold 1ms exits 0"
out=$(json "$tmp/thr.snap" "from locks where sym == 'state_lock' show count, below")
n_ev=$(json "$tmp/thr.snap" "from lock_events where sym == 'state_lock' show count, min(wait)")
echo "$out $n_ev" | python3 -c '
import json, sys
a, b = sys.argv[1], sys.argv[2]
r, e = json.loads(a), json.loads(b)
assert r["below"] > 0 and r["count"] > r["below"], r
assert e["min(wait)"] >= 1e6, e
assert abs(e["count"] - (r["count"] - r["below"])) <= 2, (r, e)
' "$out" "$n_ev"; ok $? "threshold 1ms: waits below it counted ($out), only longer ones sent ($n_ev)"

# SAMPLE 1/N goes down: 1 wait in N is followed, sent as an event, and the
# totals scale by N, so they are N times the events (give or take a wait
# whose event and totals fall on either side of the recording's end).
run "$tmp/smp.snap" "sample 1/4 threshold 10s" snapshot 2000 "$tmp"; ok $? "recording with sample 1/4 exits 0"
out=$(json "$tmp/smp.snap" "from locks show count")
n_ev=$(json "$tmp/smp.snap" "from lock_events show count")
echo "$out $n_ev" | python3 -c '
import json, sys
r, e = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert e["count"] >= 20, e
assert abs(r["count"] - 4 * e["count"]) <= 8, (r, e)
' "$out" "$n_ev"; ok $? "sample 1/4: the sampled waits all crossed as events, the totals are 4 times them ($out, $n_ev)"

# A process that waits and exits within one tick is named all the same:
# its maps are noted the moment its first wait on a lock ends, not at the
# tick, when it has none left to read.
"$L" record -o "$tmp/short.snap" -i 4s -d 5s --quiet -q "from locks" & rec_pid=$!
wait_recording "$tmp/short.snap"
echo g | "$D" snapshot 300 "$tmp" > "$tmp/short.out" & demo_pid=$!; wait $demo_pid; pid=$demo_pid; demo_pid=
wait $rec_pid; rec_pid=
out=$(json "$tmp/short.snap" "from locks where pid == $pid group by sym show count order by count desc")
echo "$out" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert rows[0]["sym"] == "state_lock" and rows[0]["count"] >= 20, rows
# Every lock is named, those in thread stacks mapped after the first
# notice too ("[anon]"): the notice of a new lock outside the noted maps
# reads them again.
assert all(r["sym"] for r in rows), rows
'; ok $? "lockdemo of 300 ms, gone before the first 4 s tick: its waits are on state_lock, every lock named ($(echo $out))"

# A holder that took the lock with no kernel event: main releases (waking
# "woken"), "barger" takes the lock at once and holds it 300 ms in
# barge_hold() while "waiter" waits on; woken waits again only 150 ms in.
# Barger is the holder from its first sample (the mutex names its owner),
# not from woken's second wait: the hold its waiters waited through is all
# 300 ms but a sampler's period, and barge_hold is what it ran.  A wait
# whose end ran no program (this machine's scheduler tracepoint now and
# then runs none for a switch in) is given up at its thread's exit and
# said so, in evicted: the count may fall short by that, and no more.
run "$tmp/barge.snap" "threshold 1us" barge 300 3; ok $? "recording lockdemo barge exits 0"
demo=$(sed 's/^r//' "$tmp/out")
out=$(json "$tmp/barge.snap" "from locks where kind == 'mutex' group by holder_comm \
show count, min(hold), max(hold) order by holder_comm" 2>"$tmp/barge.rep")
evicted=$(sed -n 's/^{"health": .*"evicted": \([0-9]*\).*/\1/p' "$tmp/barge.rep" | tail -1)
echo "$out" | python3 -c '
import json, sys
rows = {r["holder_comm"]: r for r in map(json.loads, sys.stdin)}
assert sys.argv[1], "report --json gave no health line"
evicted = int(sys.argv[1])
# Waiter'"'"'s 3 waits and woken'"'"'s 3 second ones are barger'"'"'s, woken'"'"'s 3
# first ones main'"'"'s, each counted or given up; min(hold) is a histogram
# bucket'"'"'s floor, within 1/16 of the hold.
b, m = rows["barger"]["count"], rows.get("lockdemo", {"count": 0})["count"]
assert set(rows) <= {"barger", "lockdemo"} and b <= 6 and m <= 3, (rows, evicted)
assert b + m + evicted >= 9, (rows, evicted)
assert rows["barger"]["min(hold)"] >= 0.8 * 300e6, rows
' "$evicted"; ok $? "a holder that barged in: its whole hold counts, from its first sample; every wait counted under its holder or said given up ($demo; $(echo $out); evicted ${evicted:-none})"
out=$(json "$tmp/barge.snap" "from locks where holder_comm == 'barger' group by holder_fn \
show sum(samples) order by sum(samples) desc" 2>/dev/null)
echo "$out" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert rows and rows[0]["holder_fn"] == "barge_hold" and rows[0]["sum(samples)"] > 0, rows
'; ok $? "a holder that barged in: its samples name barge_hold ($(echo $out))"
done_testing
