#!/bin/bash
# The flows view at the scale of a busy server: 5,000 keep-alive connections
# open at once on loopback (more than the 4,096 flows a fixed map held),
# four 8-byte requests each: every connection a row, every request counted,
# exactly.  latoprc's flow_max sizes the map: `latop probes` says it, a
# small one holds that many connections as rows and counts the requests of
# the others in the overflow row, exactly, and says so; a bad one is named.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
R=$LATOP_HELPERS/reqsrv
[ -x "$R" ] || skip_all "no reqsrv helper at $R (make tests-build)"
tmp=$(mktemp -d); rec_pid=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; unseen_end >/dev/null; rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME=$tmp/cfg
mkdir -p "$tmp/cfg/latop"; : > "$tmp/cfg/latop/latoprc"
P=$(free_ports 1)

# record_many CONNS ROUNDS NAME [PAUSE_MS RENAME_ROUND [EVERY]]: record the
# port while reqsrv many runs, a tick every $interval.  $tmp/NAME.unseen:
# the requests no program could see come in (tests/lib.sh's unseen_rx_begin),
# {"RPORT": [ROUND, ...]}, rounds from 1; the checks of exact counts take
# them out of the truth, and want their answers counted unsolicited.
interval=500ms
record_many() {
	"$L" record -o "$tmp/$3.snap" -i $interval -q "from flows where lport == $P" --quiet \
		2>"$tmp/$3.err" & rec_pid=$!
	wait_recording "$tmp/$3.snap"
	unseen_rx_begin $P
	"$R" many $P "$1" "$2" ${4:+"$4" "$5"} ${6:+"$6"} > "$tmp/$3.truth"
	unseen_end > "$tmp/$3.unseen"
	sleep 1
	kill -TERM $rec_pid; wait $rec_pid; rec_pid=
}

"$L" probes | grep -q "connections tracked at once (latoprc flow_max) *65536 connections"
ok $? "latop probes states the flows map's default size"

record_many 5000 4 big
"$L" report "$tmp/big.snap" --json -q "from flows group by rport show count, sum(evicted), \
sum(unsolicited)" > "$tmp/big.json"
python3 - "$tmp/big.json" "$tmp/big.unseen" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
unseen = {int(p): len(v) for p, v in json.load(open(sys.argv[2])).items()}
n, total = len(rows), sum(r["count"] for r in rows)
bad = [r for r in rows if r["count"] != 4 - unseen.get(r["rport"], 0) or r["sum(evicted)"] or
       r["sum(unsolicited)"] != unseen.get(r["rport"], 0)]
print("%d connections, %d requests, %d rows not 4 requests (but for those unseen: %s): %s" %
      (n, total, len(bad), unseen, bad[:3]))
sys.exit(0 if n == 5000 and total == 20000 - sum(unseen.values()) and not bad else 1)
EOF
ok $? "5,000 connections at once: 5,000 rows of 4 requests, 20,000 counted ($(cat "$tmp/big.truth"))"

# The serving thread renames itself before round 2 of 4: each of the 5,000
# connections' rows splits at its first read under the new name, wherever
# the ticks fall.
record_many 5000 4 renamed 0 2
"$L" report "$tmp/renamed.snap" --json -q "from flows group by comm show count, sum(evicted), \
sum(unsolicited)" > "$tmp/renamed.json" 2> "$tmp/renamed.rep"
python3 - "$tmp/renamed.json" "$tmp/renamed.rep" "$tmp/renamed.unseen" <<'EOF'
import json, sys
rows = {r["comm"]: (r["count"], r["sum(evicted)"], r["sum(unsolicited)"])
        for r in map(json.loads, open(sys.argv[1]))}
health = [json.loads(l)["health"] for l in open(sys.argv[2]) if l.startswith('{"health"')]
rounds = [n for v in json.load(open(sys.argv[3])).values() for n in v]
early = sum(n <= 2 for n in rounds)	# before the rename, at round 3
print(rows, health, "unseen:", rounds)
want = {"reqsrv": (10000 - early, 0), "reqsrv-renamed": (10000 - len(rounds) + early, 0)}
sys.exit(0 if {k: v[:2] for k, v in rows.items()} == want and
         sum(v[2] for v in rows.values()) == len(rounds) else 1)
EOF
ok $? "renamed while it serves 5,000 connections: 10,000 requests under reqsrv, 10,000 under reqsrv-renamed ($(cat "$tmp/renamed.truth"))"

# Renamed before every round, reqsrv-renamed and reqsrv in turn, a tick
# every 20 ms: ticks fall while the connections' reads change name, between
# latop's reads of the changes and of the connections, and a connection
# changes twice or more between two ticks (one read of the changes can give
# the later and not the earlier).  Every connection half its requests under
# each name: 5,000 connections of 10 requests, 1,000 of 50.
turns() { # CONNS ROUNDS
	interval=20ms record_many "$1" "$2" "turns$1" 0 1 1
	"$L" report "$tmp/turns$1.snap" --json -q "from flows group by rport, comm show count, \
sum(unsolicited)" > "$tmp/turns$1.json" 2> "$tmp/turns$1.rep"
	python3 - "$tmp/turns$1.json" "$tmp/turns$1.rep" "$1" "$2" "$tmp/turns$1.unseen" <<'EOF'
import collections, json, sys
conns, rounds = int(sys.argv[3]), int(sys.argv[4])
rows = [json.loads(l) for l in open(sys.argv[1])]
# Round 1 under reqsrv, then each round renamed: round 2 reqsrv-renamed,
# round 3 reqsrv, and so on.
name = lambda n: "reqsrv-renamed" if n % 2 == 0 else "reqsrv"
unseen = collections.Counter((int(p), name(n)) for p, v in json.load(open(sys.argv[5])).items()
                             for n in v)
tot, per, uns = collections.Counter(), collections.Counter(), 0
for r in rows:
    tot[r["comm"]] += r["count"]
    per[r["comm"]] += 1
    uns += r["sum(unsolicited)"]
bad = [r for r in rows if r["count"] != rounds // 2 - unseen[(r["rport"], r["comm"])]]
health = [json.loads(l)["health"] for l in open(sys.argv[2]) if l.startswith('{"health"')]
print(dict(tot), dict(per), len(bad), bad[:4], health, "unseen:", dict(unseen))
want = {n: conns * rounds // 2 - sum(v for (_, m), v in unseen.items() if m == n)
        for n in ("reqsrv", "reqsrv-renamed")}
sys.exit(0 if tot == want and uns == sum(unseen.values()) and
         per == {"reqsrv": conns, "reqsrv-renamed": conns} and not bad else 1)
EOF
	ok $? "renamed before each of $2 rounds over $1 connections: each connection $(($2 / 2)) requests under each name ($(cat "$tmp/turns$1.truth"))"
}
turns 5000 10
turns 1000 50

# flow_spill always: the 300 connections open at once, faster than a tick
# could attach the spill hook when the map passes half full.
printf 'flow_max = 100\nflow_spill = always\n' > "$tmp/cfg/latop/latoprc"
"$L" probes | grep -q "connections tracked at once (latoprc flow_max) *100 connections"
ok $? "flow_max = 100: latop probes states it"
"$L" probes | grep -q "connections beyond flow_max (request in) *\(tp_btf/tcp_probe\|fentry/tcp_filter\)"
ok $? "latop probes names the hook that follows connections beyond flow_max"
record_many 300 2 small
"$L" report "$tmp/small.snap" --json -q "from flows group by flow show count, sum(evicted), count(lat)" \
	> "$tmp/small.json" 2> "$tmp/small.rep"
python3 - "$tmp/small.json" "$tmp/small.err" "$tmp/small.rep" <<'EOF2'
import json, re, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
other = [r for r in rows if r["flow"] == "(other)"]
flows = [r for r in rows if r["flow"] != "(other)"]
total = sum(r["count"] for r in rows)
ocount = other[0]["count"] if other else 0
said = [int(m.group(1)) for f in sys.argv[2:] for m in
        re.finditer(r"flows: (\d+) counted in overflow rows", open(f).read())]
health = [json.loads(l)["health"] for l in open(sys.argv[3]) if l.startswith('{"health"')]
said += [h["overflow"] for h in health if h["table"] == "flows"]
print("%d requests: %d in %d tracked rows, %d in (other); evicted %d; record, report "
      "and report's health say %s" % (total, total - ocount, len(flows), ocount,
                                      sum(r["sum(evicted)"] for r in rows), said))
ok = (total == 600 and len(flows) <= 100 and len(other) == 1 and ocount >= 400 and
      all(r["sum(evicted)"] == 0 and r["count(lat)"] == r["count"] for r in rows) and
      len(said) == 3 and all(n == ocount for n in said))
sys.exit(0 if ok else 1)
EOF2
ok $? "flow_max = 100: 300 connections, every request counted, those beyond in (other), and said"

echo "flow_max = 12x" > "$tmp/cfg/latop/latoprc"
err=$("$L" probes 2>&1 >/dev/null)
echo "$err" | grep -q "latoprc:1: flow_max: not a count of connections from 64 to 4194304; using the default 65536"
ok $? "a bad flow_max is named with its line and the default used ($err)"
printf '# spill\nflow_spill = sometimes\n' > "$tmp/cfg/latop/latoprc"
err=$("$L" record -o "$tmp/bad.snap" -q "from flows" -d 1s 2>&1 >/dev/null)
echo "$err" | grep -q "latoprc:2: flow_spill: not auto or always; using auto"
ok $? "a bad flow_spill is named with its line ($err)"
done_testing
