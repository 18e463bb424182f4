#!/bin/bash
# The flows view on loopback, IPv4 and IPv6, end to end through the binary:
# record real request/response traffic (reqsrv), report it as JSON, and
# check per flow against the server's own account of every request:
# exact request counts, pipelined requests all matched, latencies at least
# the server's recv->send time and close to it, an unanswered request
# evicted after the timeout and counted, and the kernel filter keeping
# other flows out.  Only the test's own ports are looked at.
# The headers are read in place where the kernel allows it; with
# LATOP_FLOWS_READS=copy (tests/live/flows-copy.sh) they are copied, and the
# same checks hold.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
R=$LATOP_HELPERS/reqsrv
[ -x "$R" ] || skip_all "no reqsrv helper at $R (make tests-build)"
[ -e /proc/sys/net/ipv6/conf/lo ] || skip_all "no IPv6 on loopback"
tmp=$(mktemp -d); rec_pid=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; rm -rf "$tmp"' EXIT

# The unanswered-request timeout Φ, short so the test does not wait long.
export XDG_CONFIG_HOME=$tmp/cfg
mkdir -p "$tmp/cfg/latop"; echo "flow_timeout = 300ms" > "$tmp/cfg/latop/latoprc"

# How the segment hooks read headers: in place where this kernel has
# bpf_rdonly_cast (6.2+), unless LATOP_FLOWS_READS=copy.
want="copied (bpf_probe_read_kernel)"
if [ "${LATOP_FLOWS_READS:-auto}" != copy ] &&
	bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null | grep -q "FUNC 'bpf_rdonly_cast'"; then
	want="read in place (bpf_rdonly_cast)"
fi
got=$("$L" probes | grep "^  packet headers")
case $got in *"$want"*) true ;; *) false ;; esac
ok $? "packet headers: $want (${LATOP_FLOWS_READS:-auto}; latop probes: ${got##*  })"

base=$(free_ports 5)
P4=$base P6=$((base + 1)) PX=$((base + 2))

"$L" record -o "$tmp/lo.snap" -i 250ms --quiet \
	-q "from flows where lport in ($P4, $P6) threshold 20ms sample 1/10" & rec_pid=$!
wait_recording "$tmp/lo.snap"; ok $? "the recorder attaches"
# The segment programs the recorder loaded: the twins that read in place
# (*_d), or the plain ones.
progs=$("$LATOP_TOP/scripts/held-progs" $rec_pid | awk '$2 ~ /^(rx|tx)_/ {print $2}' | sort | tr '\n' ' ')
progs=${progs% }
case $want in
"read in place"*) [[ " $progs " == *" rx_tp_d "* || " $progs " == *" rx_tcp_d "* ]] && [[ " $progs " != *" rx_tp "* ]] ;;
*) [[ " $progs " == *" rx_tp "* || " $progs " == *" rx_tcp "* ]] && [[ " $progs " != *"_d "* ]] ;;
esac
ok $? "the segment programs loaded match: $progs"

"$R" server 127.0.0.1 $P4 5 2 > "$tmp/srv4" & s4=$!
"$R" server ::1 $P6 3 2 > "$tmp/srv6" & s6=$!
# Traffic on a port outside the filter: the kernel must not count it.
"$R" server 127.0.0.1 $PX 1 1 > "$tmp/srvx" & sx=$!
wait_ready "$tmp/srv4" && wait_ready "$tmp/srv6" && wait_ready "$tmp/srvx"
ok $? "three servers listen"

{
	"$R" client 127.0.0.1 $P4 300 -d 300 | sed 's/^/plain4 /'
	"$R" client 127.0.0.1 $P4 40 -P 4 -g 300 -d 3000 | sed 's/^/pipe4 /'
	"$R" client 127.0.0.1 $P4 5 -x 2 -w 700 | sed 's/^/evict4 /'
	"$R" client 127.0.0.1 $P4 40 -s 20000 -r 200000 -d 25000 | sed 's/^/big4 /'
	"$R" client 127.0.0.1 $P4 100 -o -s 300 -r 3000 -d 300 | sed 's/^/opt4 /'
	"$R" client ::1 $P6 300 -d 300 | sed 's/^/plain6 /'
	"$R" client ::1 $P6 40 -P 4 -g 300 -d 3000 | sed 's/^/pipe6 /'
	"$R" client ::1 $P6 40 -s 20000 -r 200000 -d 500 | sed 's/^/big6 /'
	"$R" client 127.0.0.1 $PX 200 | sed 's/^/other /'
} > "$tmp/clients"
wait $s4 $s6 $sx
sleep 1
kill -TERM $rec_pid; wait $rec_pid; ok $? "the recording finishes on SIGTERM"; rec_pid=

"$L" report "$tmp/lo.snap" --json -q "from flows group by lport, rport, comm, pid show count, count(lat), sum(lat), \
min(lat), p50(lat), max(lat), sum(evicted), sum(bytes_in), sum(bytes_out)" > "$tmp/flows.json"
ok $? "report --json over the recording"
"$L" report "$tmp/lo.snap" --json -q "from flow_events show ts, id, lport, rport, kind, lat, count" \
	> "$tmp/events.json"

# check.py NAME: one named check over the report, truth and client ports.
check() {
	python3 - "$1" "$tmp" $P4 $P6 $PX <<'EOF'
import json, sys
name, tmp, p4, p6, px = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
rows = [json.loads(l) for l in open(tmp + "/flows.json")]
flows = {(r["lport"], r["rport"]): r for r in rows}
# A connection split over rows (another comm or pid) would hide in the dict:
# say so, with the rows, in every check.
split = [[r for r in rows if (r["lport"], r["rport"]) == k] for k in flows]
split = [rs for rs in split if len(rs) > 1]
events = [json.loads(l) for l in open(tmp + "/events.json")]
clients = {}
for line in open(tmp + "/clients"):
    tag, _, port = line.split()
    clients[tag] = int(port)
truth = {}
for f in ("srv4", "srv6", "srvx"):
    for line in open(tmp + "/" + f):
        if line.startswith("req "):
            _, lp, rp, seq, ns, ans = line.split()
            truth.setdefault((int(lp), int(rp)), []).append((int(ns), int(ans)))
def key(tag):
    return (p6 if tag.endswith("6") else p4, clients[tag])
def answered(tag):
    return [ns for ns, a in truth[key(tag)] if a]
msg = ["connections split over rows: %s" % split] if split else []
if name == "counts":
    for tag in ("plain4", "pipe4", "big4", "opt4", "plain6", "pipe6", "big6", "evict4"):
        got, want = flows[key(tag)]["count"], len(answered(tag))
        hist = flows[key(tag)]["count(lat)"]
        msg.append("%s %d/%d" % (tag, got, want) + (" hist %d" % hist if hist != got else ""))
        # Each tick's latency histogram holds that tick's requests, no more.
        assert got == want and hist == got, msg
elif name == "truth":
    # Host latency >= the server's recv->send time, and close to it.
    for tag in ("plain4", "plain6", "big4", "big6"):
        r, t = flows[key(tag)], answered(tag)
        over = (r["sum(lat)"] - sum(t)) / len(t)
        msg.append("%s +%.0fus/req (truth p50 %.0fus, latop p50 %.0fus)" % (tag, over / 1e3,
                   sorted(t)[len(t) // 2] / 1e3, r["p50(lat)"] / 1e3))
        assert r["sum(lat)"] >= sum(t), msg
        assert r["min(lat)"] >= min(t), msg
        assert over <= 2e6, msg          # 2 ms per request: a loaded 2-vCPU box
        assert r["p50(lat)"] >= 0.96 * sorted(t)[len(t) // 2], msg
elif name == "pipeline":
    for tag in ("pipe4", "pipe6"):
        r, t = flows[key(tag)], answered(tag)
        msg.append("%s %d matched, sum %.1fms >= truth %.1fms" % (tag, r["count"],
                   r["sum(lat)"] / 1e6, sum(t) / 1e6))
        assert r["count"] == 40 and r["sum(evicted)"] == 0, msg
        # The 4th of each batch waited for 3 earlier answers of 3 ms each.
        assert r["max(lat)"] >= 11e6 and r["sum(lat)"] >= sum(t), msg
elif name == "evict":
    r = flows[key("evict4")]
    ev = [e for e in events if e["rport"] == clients["evict4"] and e["kind"] == "evicted"]
    msg.append("count %d evicted %d events %s" % (r["count"], r["sum(evicted)"], ev))
    assert r["count"] == 4 and r["sum(evicted)"] == 1, msg
    assert len(ev) == 1 and ev[0]["count"] == 1 and 0.3e9 <= ev[0]["lat"] <= 2e9, msg
elif name == "bytes":
    r = flows[key("big4")]
    msg.append("in %d out %d" % (r["sum(bytes_in)"], r["sum(bytes_out)"]))
    assert r["sum(bytes_in)"] == 40 * 20000 and r["sum(bytes_out)"] == 40 * 200000, msg
    # 24-byte IP headers both ways: the TCP header is found after the options.
    r = flows[key("opt4")]
    msg.append("with IP options: in %d out %d" % (r["sum(bytes_in)"], r["sum(bytes_out)"]))
    assert r["sum(bytes_in)"] == 100 * 300 and r["sum(bytes_out)"] == 100 * 3000, msg
elif name == "slow":
    slow = [e for e in events if e["kind"] == "slow"]
    big = [e for e in slow if e["rport"] == clients["big4"]]
    msg.append("%d slow events, %d from big4" % (len(slow), len(big)))
    assert len(big) == 40 and all(e["lat"] >= 20e6 for e in big), msg
    assert len({e["id"] for e in slow}) == len(slow), msg
elif name == "sample":
    sampled = [e for e in events if e["kind"] == "sampled"]
    n = sum(r["count"] for r in flows.values()) - 40    # all but the 40 slow ones
    msg.append("%d sampled of %d requests" % (len(sampled), n))
    assert 0.05 * n <= len(sampled) <= 0.2 * n, msg
    assert all(e["lat"] < 20e6 for e in sampled), msg
elif name == "owner":
    comms = {r["comm"] for r in flows.values()}
    msg.append("comms %s" % comms)
    assert comms == {"reqsrv"} and all(r["pid"] > 0 for r in flows.values()), msg
elif name == "pushdown":
    other = [k for k in flows if k[0] == px]
    msg.append("flows on the unfiltered port: %s" % other)
    assert not other and px in [k[0] for k in truth], msg
print("; ".join(msg))
EOF
}

out=$(check counts 2>&1); ok $? "exact request counts per flow, v4 (also with IP options) and v6, and in their latency histograms ($out)"
out=$(check truth 2>&1); ok $? "host latency >= server truth, within 2 ms per request ($out)"
out=$(check pipeline 2>&1); ok $? "pipelined requests (4 deep) all matched ($out)"
out=$(check evict 2>&1); ok $? "the unanswered request is evicted after 300 ms and counted ($out)"
out=$(check bytes 2>&1); ok $? "payload bytes in and out exact for 20 KB requests / 200 KB responses, and with IP options ($out)"
out=$(check slow 2>&1); ok $? "threshold 20ms: every 25 ms request crossed as a slow event ($out)"
out=$(check sample 2>&1); ok $? "sample 1/10: about a tenth of the other requests crossed, all still counted ($out)"
out=$(check owner 2>&1); ok $? "flows belong to the serving process ($out)"
out=$(check pushdown 2>&1); ok $? "lport pushdown: the kernel counted nothing on the other port ($out)"

# The serving thread renames itself (prctl(PR_SET_NAME)) once it has answered
# request 99 of one connection; the client pauses there for three ticks.
# The flow's requests are shown under the name they were read by.
PR=$((base + 3))
"$L" record -o "$tmp/name.snap" -i 250ms --quiet -q "from flows where lport == $PR" & rec_pid=$!
wait_recording "$tmp/name.snap"
"$R" server 127.0.0.1 $PR 1 1 > "$tmp/srvn" & sn=$!
wait_ready "$tmp/srvn"
"$R" client 127.0.0.1 $PR 200 -n 99 -w 800 >/dev/null
wait $sn; sleep 1
kill -TERM $rec_pid; wait $rec_pid; rec_pid=
out=$("$L" report "$tmp/name.snap" --json -q "from flows group by comm show count")
echo "$out" | python3 -c '
import json, sys
rows = sorted((r["comm"], r["count"]) for r in map(json.loads, sys.stdin))
assert rows == [("reqsrv", 100), ("reqsrv-renamed", 100)], rows
'; ok $? "a reader renamed mid-connection: 100 requests under reqsrv, the next 100 under reqsrv-renamed ($out)"

# The same rename with no pause: the 200 requests take a few ms, in one tick
# of 1 s.  The tick's row of the flow splits at the rename.
PR=$((base + 4))
"$L" record -o "$tmp/name1.snap" --quiet -q "from flows where lport == $PR" & rec_pid=$!
wait_recording "$tmp/name1.snap"
"$R" server 127.0.0.1 $PR 1 1 > "$tmp/srvn1" & sn=$!
wait_ready "$tmp/srvn1"
"$R" client 127.0.0.1 $PR 200 -n 99 >/dev/null
wait $sn; sleep 1
kill -TERM $rec_pid; wait $rec_pid; rec_pid=
out=$("$L" report "$tmp/name1.snap" --json -q "from flows group by comm show count, sum(bytes_out)")
echo "$out" | python3 -c '
import json, sys
rows = sorted((r["comm"], r["count"], r["sum(bytes_out)"]) for r in map(json.loads, sys.stdin))
assert rows == [("reqsrv", 100, 6400), ("reqsrv-renamed", 100, 6400)], rows
'; ok $? "renamed within one tick: 100 requests under reqsrv, 100 under reqsrv-renamed, 64 B each ($out)"

# A request that waits unread: the server's one worker serves a first
# connection (two answers 400 ms late each) while the second's request sits
# in its socket for ticks.  Its bytes are its reader's, shown under reqsrv,
# not in a row of their own under pid 0.  (Φ is the default here: no
# request waits past it.)  Recordings filtered on the server's name (not
# known until it reads) count those bytes too, per connection and grouped.
PW=$((base + 4))
XDG_CONFIG_HOME=$tmp/none "$L" record -o "$tmp/wait.snap" -i 100ms --quiet \
	-q "from flows where lport == $PW" & rec_pid=$!
XDG_CONFIG_HOME=$tmp/none "$L" record -o "$tmp/waitc.snap" -i 100ms --quiet \
	-q "from flows where comm == 'reqsrv'" & rec_c=$!
XDG_CONFIG_HOME=$tmp/none "$L" record -o "$tmp/waitg.snap" -i 100ms --quiet \
	-q "from flows where comm == 'reqsrv' group by lport" & rec_pid="$rec_pid $rec_c $!"
wait_recording "$tmp/wait.snap" && wait_recording "$tmp/waitc.snap" &&
	wait_recording "$tmp/waitg.snap"
"$R" server 127.0.0.1 $PW 2 1 > "$tmp/srvw" & sw=$!
wait_ready "$tmp/srvw"
"$R" client 127.0.0.1 $PW 2 -d 400000 >/dev/null & cw=$!
sleep 0.2
"$R" client 127.0.0.1 $PW 1 -s 4000 >/dev/null
wait $cw $sw; sleep 0.5
kill -TERM $rec_pid; wait $rec_pid; rec_pid=
# unread SNAP: SNAP's rows of port PW are the two connections, whole.
unread() {
	"$L" report "$1" --json -q "from flows where lport == $PW group by rport, pid, comm \
show count, sum(bytes_in)" 2>/dev/null | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.strip()]
assert len(rows) == 2 and all(r["comm"] == "reqsrv" and r["pid"] > 0 for r in rows), rows
assert sorted(r["count"] for r in rows) == [1, 2], rows
assert sorted(r["sum(bytes_in)"] for r in rows) == [128, 4000], rows
print(json.dumps(rows))'
}
out=$(unread "$tmp/wait.snap" 2>&1)
ok $? "a request left unread for ticks: its bytes under the process that reads it, one row a connection ($(echo $out | head -c 300))"
out=$(unread "$tmp/waitc.snap" 2>&1)
ok $? "the same filtered on the server's name: every byte ($(echo $out | head -c 300))"
out=$("$L" report "$tmp/waitg.snap" --json -q "from flows where lport == $PW group by lport \
show count, sum(bytes_in)" 2>/dev/null)
[ "$out" = "{\"lport\":$PW,\"count\":3,\"sum(bytes_in)\":4128}" ]
ok $? "the same grouped in the kernel: every byte ($out)"
done_testing
