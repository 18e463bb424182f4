#!/bin/bash
# The holder's function where code has no frame pointers.  A flusher thread
# takes the journal mutex in flush_journal() and holds it across pwrite()
# and fsync(); worker threads take it briefly in append_record().  libc has
# no frame pointers (Debian's); the journal binary has them, journal-nofp
# has none at all.  With each, latop must name flush_journal as the
# function of the flusher's holds, and never a worker's function (worker,
# append_record) on them: a sample belongs to the thread that held the lock
# at that moment, on that lock.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
tmp=$(mktemp -d); rec_pid= demo_pid=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; [ -n "$demo_pid" ] && kill -9 $demo_pid 2>/dev/null; rm -rf "$tmp"' EXIT

# run BIN SNAP: start the journal, record its locks, let it go for 4 s.
run() {
	local bin=$1 snap=$2
	rm -f "$tmp/go" "$tmp/out"; mkfifo "$tmp/go"
	"$bin" 4000 "$tmp" < "$tmp/go" > "$tmp/out" & demo_pid=$!
	exec 3> "$tmp/go"
	for _ in $(seq 50); do [ -s "$tmp/out" ] && break; sleep 0.1; done
	XDG_CONFIG_HOME=${CFG:-$tmp/nocfg} "$L" record -o "$snap" -d 8s --quiet \
		-q "from locks where pid == $demo_pid threshold 1us" & rec_pid=$!
	wait_recording "$snap" || { echo "# the recorder did not start"; return 1; }
	echo g >&3; exec 3>&-
	wait $demo_pid; demo_pid=
	wait $rec_pid; local rc=$?; rec_pid=
	return $rc
}

json() { "$L" report "$1" -q "$2" --json; }

for name in journal journal-nofp; do
	bin=$LATOP_HELPERS/$name
	if [ ! -x "$bin" ]; then
		skip "no $name helper at $bin (make tests-build)"
		continue
	fi
	if [ $name = journal-nofp ]; then
		# No prologue of a frame pointer anywhere in the program's own code.
		! objdump -d --no-show-raw-insn "$bin" | grep -A1 'push *%rbp' | grep -q 'mov *%rsp,%rbp'
		ok $? "$name has no frame pointers"
	fi
	run "$bin" "$tmp/$name.snap"; ok $? "recording $name exits 0"
	echo "# $name: $(sed 's/^r//' "$tmp/out")"

	out=$(json "$tmp/$name.snap" "from locks where holder_comm == 'flusher' group by holder_fn show sum(samples) order by sum(samples) desc")
	echo "$out" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
rows = [r for r in rows if r["sum(samples)"] > 0]
assert rows and rows[0]["holder_fn"] == "flush_journal", rows
assert sum(r["sum(samples)"] for r in rows if r["holder_fn"] != "flush_journal") <= 0.1 * rows[0]["sum(samples)"], rows
'; ok $? "$name: the flusher's holder_fn is flush_journal ($out)"

	out=$(json "$tmp/$name.snap" "from lock_events where holder_comm == 'flusher' show id, holder_fn, holder_stack, samples")
	echo "$out" | python3 -c '
import json, re, sys
rows = [json.loads(l) for l in sys.stdin]
sampled = [r for r in rows if r["samples"] > 0]
# Every hold is sampled at least once (timer, switch-out or release), but a wait
# that starts after the samples of its hold and ends at the release has none:
# 66% of waits had one in runs here, so the bound is well below that.
assert len(rows) >= 50 and len(sampled) >= 0.3 * len(rows), (len(rows), len(sampled))
# Never a function the flusher does not run.  A stack libdw could not unwind
# names the libc call it stopped in (fsync): seen for a few waits at once in
# one run of many, so a small share of those is not a failure.
bad = [r for r in sampled if re.search(r"\b(worker|append_record|busy_ns)\b", r["holder_stack"])]
assert not bad, bad[:5]
named = [r for r in sampled if r["holder_fn"] == "flush_journal"]
assert len(named) >= 0.9 * len(sampled), [r for r in sampled if r["holder_fn"] != "flush_journal"][:5]
assert any(re.search(r"\bflush_journal .*< flusher\b", r["holder_stack"]) for r in sampled), sampled[:5]
'; ok $? "$name: waits on the flusher's holds name flush_journal, never a worker's function ($(echo "$out" | head -c 300))"

	out=$(json "$tmp/$name.snap" "from locks where holder_comm == 'flusher' group by holder_fns show count")
	echo "$out" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert rows, rows
for r in rows:
    fns = r["holder_fns"].split(", ")
    assert "flush_journal" in fns or r["holder_fns"] == "", r
    assert not {"worker", "flusher", "busy_ns"} & {f.split(".")[0] for f in fns}, r
assert any("flush_journal" in r["holder_fns"] for r in rows), rows
'; ok $? "$name: holder_fns has flush_journal, not worker, flusher or busy_ns, which run outside the lock ($out)"
done

# Past the tick's stack copies (latoprc lock_stack_copies; here none at
# all) a sample has only the frame-pointer stack, which from inside the C
# library (no frame pointers) skips its caller: fsync() is followed by
# flusher, not flush_journal.  Such a sample names only the function it was
# in, never a caller's caller.
mkdir -p "$tmp/cfg0/latop"; echo "lock_stack_copies = 0" > "$tmp/cfg0/latop/latoprc"
if [ -x "$LATOP_HELPERS/journal" ]; then
	CFG=$tmp/cfg0 run "$LATOP_HELPERS/journal" "$tmp/fp.snap"; ok $? "recording journal with lock_stack_copies = 0 exits 0"
	out=$(json "$tmp/fp.snap" "from lock_events where holder_comm == 'flusher' and samples > 0 show holder_fn, holder_stack")
	echo "$out" | python3 -c '
import json, re, sys
rows = [json.loads(l) for l in sys.stdin]
assert len(rows) >= 10, rows
for r in rows:
    assert r["holder_fn"] not in ("flusher", "worker", "busy_ns"), r
    assert not re.search(r"\bflusher\b", r["holder_stack"]), r
'; ok $? "frame-pointer stacks alone: no flusher sample names flusher, the caller's caller ($(echo "$out" | head -c 400))"
	out=$(json "$tmp/fp.snap" "from locks where holder_comm == 'flusher' group by holder_fns show count")
	echo "$out" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
for r in rows:
    fns = {f.split(".")[0] for f in r["holder_fns"].split(", ")}
    assert not {"worker", "flusher", "busy_ns"} & fns, r
'; ok $? "frame-pointer stacks alone: holder_fns has no worker, flusher or busy_ns ($out)"
else
	skip "no journal helper (make tests-build)"
fi
done_testing
