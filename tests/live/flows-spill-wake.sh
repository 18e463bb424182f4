#!/bin/bash
# The flows map fills within a tick: 100 connections at once against
# flow_max 64, with ticks of 10 s and the spill hook not attached (latoprc
# flow_spill left to its default: attached while the map is half full, as
# a tick finds it).  The first connection the map has no room for wakes
# latop, which attaches the hook then, not at the next tick: the requests,
# sent 200 ms after the last connection, are every one counted, those
# beyond the map in the overflow row.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
R=$LATOP_HELPERS/reqsrv
[ -x "$R" ] || skip_all "no reqsrv helper at $R (make tests-build)"
"$L" probes | grep -q "connections beyond flow_max (request in) *\(tp_btf\|fentry\)/" ||
	skip_all "this kernel has no hook for connections beyond flow_max"
tmp=$(mktemp -d); rec_pid=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME=$tmp/cfg
mkdir -p "$tmp/cfg/latop"; echo "flow_max = 64" > "$tmp/cfg/latop/latoprc"
P=$(free_ports 1)

"$L" record -o "$tmp/x.snap" -i 10s --quiet -q "from flows where lport == $P" 2> "$tmp/rec.err" &
rec_pid=$!
wait_recording "$tmp/x.snap"; ok $? "the recorder attaches"
"$R" many $P 100 3 200 > "$tmp/truth"
ok $? "reqsrv made 100 connections of 3 requests each ($(cat "$tmp/truth"))"
sleep 0.5
kill -TERM $rec_pid; wait $rec_pid; ok $? "the recording exits 0 ($(cat "$tmp/rec.err"))"; rec_pid=

"$L" report "$tmp/x.snap" --json -q "from flows group by flow show count, sum(evicted), \
sum(unsolicited)" > "$tmp/rows.json" 2> "$tmp/rep.err"
out=$(python3 - "$tmp/rows.json" "$tmp/rep.err" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
health = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])["health"]
total = sum(r["count"] for r in rows)
other = sum(r["count"] for r in rows if r["flow"] == "(other)")
own = len([r for r in rows if r["flow"] != "(other)"])
unsol = sum(r["sum(unsolicited)"] for r in rows)
print("%d requests counted, %d in (other), %d connections in rows of their own, "
      "%d unsolicited, evicted %d, ticks %d" % (total, other, own, unsol, health["evicted"],
                                               health["ticks"]))
assert total == 300 and own <= 64 and other == 300 - 3 * own and other > 0, total
assert unsol == 0 and health["evicted"] == 0 and all(r["sum(evicted)"] == 0 for r in rows)
EOF
)
ok $? "every request counted, those beyond flow_max in the overflow row ($out)"
echo "1..4"
