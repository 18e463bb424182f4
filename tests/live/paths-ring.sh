#!/bin/bash
# The paths records ring is drained when it is a quarter full, not only at
# the tick: with a 1 MiB ring (latoprc paths_ring_mb) and a 10 s tick, a
# burst of 20,000 requests (40,000 records, about 4 MiB, within one tick or
# two) must be counted whole, with no record lost.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
T=$LATOP_HELPERS/tiers
[ -x "$T" ] || skip_all "no tiers helper at $T (make tests-build)"
tmp=$(mktemp -d); pids=()
trap 'for p in "${pids[@]}"; do kill -9 $p 2>/dev/null; wait $p 2>/dev/null; done; rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME=$tmp/cfg
mkdir -p "$tmp/cfg/latop"
P=$(free_ports 1)

printf 'paths_ring_mb = 1\n' > "$tmp/cfg/latop/latoprc"
"$L" probes | grep -q "records ring (latoprc paths_ring_mb) *1 MiB"
ok $? "paths_ring_mb = 1: latop probes states it"
printf 'paths_ring_mb = 3\n' > "$tmp/cfg/latop/latoprc"
"$L" probes | grep -q "records ring (latoprc paths_ring_mb) *4 MiB"
ok $? "paths_ring_mb = 3 is rounded up to a power of two"
printf 'paths_ring_mb = lots\n' > "$tmp/cfg/latop/latoprc"
"$L" probes 2>&1 | grep -q "paths_ring_mb.*not a count of MiB from 1 to 1024"
ok $? "a bad paths_ring_mb is named, with what it takes"
printf 'paths_ring_mb = 1\n' > "$tmp/cfg/latop/latoprc"

"$T" serve -p $P -w 2 -t "$tmp/truth.tsv" >/dev/null & ps=$!; pids+=($ps)
"$L" record -o "$tmp/run.lat" -i 10s -q "from paths where pid == $ps" \
	2> "$tmp/record.err" & rec=$!; pids+=($rec)
wait_recording "$tmp/run.lat"; ok $? "the recorder attaches"
timeout 120 "$T" client -c 127.0.0.1:$P -C 2 -n 10000 -r 16
ok $? "2 clients x 10,000 requests"
sleep 1
kill -TERM $rec; wait $rec; ok $? "the recorder finishes on SIGTERM"

"$L" report "$tmp/run.lat" --json -q "from paths where lport == $P group by lport show count" \
	> "$tmp/paths.json" 2> "$tmp/report.err"
python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
truth = [l.split() for l in open(f"{tmp}/truth.tsv")]
first = min(int(t[3]) for t in truth)
last = max(int(t[4]) for t in truth)
got = sum(json.loads(l)["count"] for l in open(f"{tmp}/paths.json"))
health = [json.loads(l)["health"] for l in open(f"{tmp}/report.err") if l.startswith('{"health"')]
lost = sum(h.get("lost", 0) for h in health if h["table"] == "paths")
print("# %d requests served in %.2f s, %d counted, %d records lost" %
      (len(truth), (last - first) / 1e9, got, lost))
# Within 10 s, at most two ticks: one of them held over 2 MiB of records.
sys.exit(0 if len(truth) == 20000 and got == 20000 and lost == 0 and last - first < 10e9 else 1)
PY
ok $? "every request of a burst larger than the ring counted, none lost"
! grep -q "lost" "$tmp/record.err"
ok $? "record says nothing is lost ($(tr '\n' ' ' < "$tmp/record.err"))"
done_testing
