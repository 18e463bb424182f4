#!/bin/bash
# Connections beyond flow_max, end to end: with the flows map (flow_max 64)
# held full by 80 idle connections, two servers' connections (IPv4 and
# IPv6) are all beyond it.  The hook that follows them is attached once the
# map is half full.  They are followed on their sockets and counted in the
# overflow row, against the servers' own account of every request: exact
# counts and bytes, host latency at least the server's recv->send time and
# close to it, an unanswered request evicted (with its own event, under its
# real ports), a slow request crossed as an event, and the kernel filter
# still keeping other ports out.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
R=$LATOP_HELPERS/reqsrv
[ -x "$R" ] || skip_all "no reqsrv helper at $R (make tests-build)"
"$L" probes | grep -q "connections beyond flow_max (request in) *\(tp_btf\|fentry\)/" ||
	skip_all "this kernel has no hook for connections beyond flow_max"
tmp=$(mktemp -d); rec_pid=; hold_pid=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; [ -n "$hold_pid" ] && kill $hold_pid 2>/dev/null
rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME=$tmp/cfg
mkdir -p "$tmp/cfg/latop"
printf 'flow_max = 64\nflow_timeout = 300ms\n' > "$tmp/cfg/latop/latoprc"
base=$(free_ports 4)
PH=$base P=$((base + 1)) PX=$((base + 2)) P6=$((base + 3))

"$L" record -o "$tmp/s.snap" -i 250ms --quiet -q "from flows where lport in ($P, $P6) threshold 20ms" \
	2> "$tmp/rec.err" & rec_pid=$!
wait_recording "$tmp/s.snap"; ok $? "the recorder attaches"

# True when the hook that follows connections beyond the map is attached.
spill_attached() {
	python3 - <<'EOF'
import json, subprocess, sys
progs = {p["id"]: p.get("name") for p in
         json.loads(subprocess.run(["bpftool", "prog", "show", "--json"], capture_output=True).stdout)}
links = json.loads(subprocess.run(["bpftool", "link", "show", "--json"], capture_output=True).stdout)
sys.exit(0 if any(progs.get(l.get("prog_id")) in ("rx_spill", "rx_spill_tp", "rx_spill_d", "rx_spill_tp_d") for l in links) else 1)
EOF
}
spill_attached
[ $? = 1 ]; ok $? "the map nearly empty, the hook for connections beyond it is not attached"

# 80 accepted connections that stay open and idle: they take every row.
python3 - $PH > "$tmp/hold" <<'EOF' & hold_pid=$!
import socket, sys, time
port = int(sys.argv[1])
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", port)); ls.listen(128)
cs = [socket.create_connection(("127.0.0.1", port)) for _ in range(80)]
ss = [ls.accept()[0] for _ in range(80)]
print("ready", flush=True)
time.sleep(120)
EOF
wait_ready "$tmp/hold"; ok $? "80 idle connections hold the flows map full"

# It is attached at the tick that sees the map half full: wait for it.
for _ in $(seq 100); do spill_attached && break; sleep 0.1; done
spill_attached; ok $? "the map half full, the hook for connections beyond it is attached"

"$R" server 127.0.0.1 $P 3 2 > "$tmp/srv" & s=$!
"$R" server 127.0.0.1 $PX 1 1 > "$tmp/srvx" & sx=$!
"$R" server ::1 $P6 1 1 > "$tmp/srv6" & s6=$!
wait_ready "$tmp/srv" && wait_ready "$tmp/srvx" && wait_ready "$tmp/srv6"
{
	"$R" client 127.0.0.1 $P 300 -d 300 | sed 's/^/plain /'
	"$R" client 127.0.0.1 $P 40 -s 20000 -r 200000 -d 25000 | sed 's/^/big /'
	"$R" client 127.0.0.1 $P 5 -x 2 -w 700 | sed 's/^/evict /'
	"$R" client 127.0.0.1 $PX 200 | sed 's/^/other /'
	"$R" client ::1 $P6 100 -d 300 | sed 's/^/plain6 /'
} > "$tmp/clients"
wait $s $sx $s6
sleep 1
kill -TERM $rec_pid; wait $rec_pid; ok $? "the recording finishes on SIGTERM"; rec_pid=

"$L" report "$tmp/s.snap" --json -q "from flows group by flow show count, count(lat), sum(lat), \
min(lat), sum(evicted), sum(bytes_in), sum(bytes_out)" > "$tmp/flows.json" 2> "$tmp/rep.err"
"$L" report "$tmp/s.snap" --json -q "from flow_events show ts, id, lport, rport, kind, lat, count" \
	> "$tmp/events.json"
python3 - "$tmp" <<'EOF'
import json, re, sys
tmp = sys.argv[1]
rows = [json.loads(l) for l in open(tmp + "/flows.json")]
events = [json.loads(l) for l in open(tmp + "/events.json")]
clients = dict((t, int(p)) for t, _, p in (l.split() for l in open(tmp + "/clients")))
truth = [(int(rp), int(ns), int(a)) for f in ("/srv", "/srv6") for l in open(tmp + f)
         if l.startswith("req ") for _, lp, rp, seq, ns, a in [l.split()]]
ans = [ns for rp, ns, a in truth if a]
big = [ns for rp, ns, a in truth if a and rp == clients["big"]]
msg, bad = [], []
def check(what, cond):
    msg.append(what)
    if not cond:
        bad.append(what)
tracked = [r for r in rows if r["flow"] != "(other)"]
check("tracked rows %s" % [r["flow"] for r in tracked], not tracked)
o = next(r for r in rows if r["flow"] == "(other)")
check("(other) %d requests of %d answered, %d in its histogram" % (o["count"], len(ans), o["count(lat)"]),
      o["count"] == len(ans) == 300 + 40 + 4 + 100 and o["count(lat)"] == o["count"])
over = (o["sum(lat)"] - sum(ans)) / len(ans)
check("host latency +%.0fus/req over the server's own, min %.0fus >= %.0fus"
      % (over / 1e3, o["min(lat)"] / 1e3, min(ans) / 1e3),
      o["sum(lat)"] >= sum(ans) and o["min(lat)"] >= min(ans) and over <= 2e6)
# 64-byte requests and responses by default
want_in, want_out = 405 * 64 + 40 * 20000, 404 * 64 + 40 * 200000
check("bytes in %d/%d out %d/%d" % (o["sum(bytes_in)"], want_in, o["sum(bytes_out)"], want_out),
      o["sum(bytes_in)"] == want_in and o["sum(bytes_out)"] == want_out)
ev = [e for e in events if e["kind"] == "evicted"]
check("evicted %d, events %s" % (o["sum(evicted)"], ev),
      o["sum(evicted)"] == 1 and len(ev) == 1 and ev[0]["rport"] == clients["evict"] and
      ev[0]["count"] == 1 and 0.3e9 <= ev[0]["lat"] <= 2e9)
slow = [e for e in events if e["kind"] == "slow"]
bigs = [e for e in slow if e["rport"] == clients["big"]]
check("%d slow events, %d from big, each at least its server's 25 ms" % (len(slow), len(bigs)),
      len(bigs) == 40 and all(e["lat"] >= 25e6 for e in bigs) and sum(e["lat"] for e in bigs) >= sum(big)
      and all(e["lat"] >= 20e6 for e in slow))
said = [int(m.group(1)) for f in ("rec.err", "rep.err") for m in
        re.finditer(r"flows: (\d+) counted in overflow rows", open(tmp + "/" + f).read())]
check("record and report say %s counted in overflow" % said,
      len(said) == 2 and all(n == o["count"] for n in said))
print("; ".join(msg) + ("\nFAILED: " + "; ".join(bad) if bad else ""))
sys.exit(1 if bad else 0)
EOF
ok $? "every request of connections beyond flow_max counted in (other), true to the server"
done_testing
