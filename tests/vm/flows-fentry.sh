#!/bin/bash
# The flows probe on a second kernel: Debian's 6.1 under qemu, where fentry
# loads (the host refuses it).  The guest runs `latop probes` and records
# reqsrv traffic over loopback, IPv4 and IPv6; the host's latop reports the
# recording and checks that the fentry hooks (tcp_v4_rcv, tcp_v6_rcv,
# __dev_queue_xmit) were chosen and counted every request, pipelined ones
# and an unanswered one included.  6.1 has no sock_recv_length tracepoint:
# the serving-process stage is refused there and pid/comm stay empty.
# Then, with flow_max 64, 100 connections at once: those beyond it are
# followed through fentry on tcp_filter and counted in the overflow row, or,
# recorded grouped by port, in their port's row.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
vm_latop_setup latop-static helpers-static

vm_init flows-fentry
vm_file "$top/.output/static/latop" /bin/latop
vm_file "$top/.output/static/reqsrv" /bin/reqsrv
cat >"$VM_DIR/guest.sh" <<'EOF'
# Runs in the guest, cwd /share.
uname -r >uname
latop probes >probes.txt 2>&1
echo $? >probes.rc
mkdir -p cfg/latop && echo "flow_timeout = 500ms" >cfg/latop/latoprc
XDG_CONFIG_HOME=$PWD/cfg latop record -o x.snap --quiet \
	-q "from flows where lport in (7101, 7102)" 2>record.err & rec=$!
vm_wait_file x.snap.tmp $rec || { echo "the recorder did not start"; kill $rec; exit 1; }
# The recorder makes x.snap.tmp once its probes are attached (fentry
# trampolines take seconds under TCG): connections from here on are seen.
reqsrv server 127.0.0.1 7101 3 1 >srv4 & s4=$!
reqsrv server ::1 7102 1 1 >srv6 & s6=$!
sleep 0.5
{
	reqsrv client 127.0.0.1 7101 100 -d 500 | sed 's/^/plain4 /'
	reqsrv client 127.0.0.1 7101 12 -P 3 -g 20000 -d 60000 | sed 's/^/pipe4 /'
	reqsrv client 127.0.0.1 7101 5 -x 2 -w 1200 | sed 's/^/evict4 /'
	reqsrv client ::1 7102 100 -d 500 | sed 's/^/plain6 /'
} >clients
wait $s4 $s6
sleep 2.5
kill -TERM $rec
wait $rec
echo $? >record.rc
mkdir -p cfg2/latop && printf 'flow_max = 64\nflow_spill = always\n' >cfg2/latop/latoprc
XDG_CONFIG_HOME=$PWD/cfg2 latop record -o m.snap --quiet -q "from flows where lport == 7103" \
	2>many.err & rec=$!
vm_wait_file m.snap.tmp $rec || { echo "the recorder did not start"; kill $rec; exit 1; }
reqsrv many 7103 100 3 >many.out
sleep 2.5
kill -TERM $rec
wait $rec
echo $? >many.rc
XDG_CONFIG_HOME=$PWD/cfg2 latop record -o g.snap --quiet \
	-q "from flows where lport == 7104 group by lport show count" 2>group.err & rec=$!
vm_wait_file g.snap.tmp $rec || { echo "the recorder did not start"; kill $rec; exit 1; }
reqsrv many 7104 100 3 >group.out
sleep 2.5
kill -TERM $rec
wait $rec
echo $? >group.rc
EOF
vm_ok_run "$VM_DIR/guest.sh" 300

vm_ok_kver
sed -n '/^flows:/,/^[a-z]/p' "$S/probes.txt" 2>/dev/null | sed 's/^/# probes: /'
grep -q "ingress (request in) *fentry/tcp_v4_rcv+tcp_v6_rcv" "$S/probes.txt" 2>/dev/null
ok $? "probes: ingress uses fentry on tcp_v4_rcv and tcp_v6_rcv"
grep -q "egress (response out) *fentry/__dev_queue_xmit" "$S/probes.txt" 2>/dev/null
ok $? "probes: egress uses fentry on __dev_queue_xmit"
# 6.1 has no bpf_rdonly_cast: the hooks that copy the headers load, not
# their twins that read in place (which libbpf leaves unresolved).
grep -q "packet headers *copied (bpf_probe_read_kernel)" "$S/probes.txt" 2>/dev/null &&
	grep -q "not in place: kfunc:bpf_rdonly_cast: not in this kernel" "$S/probes.txt"
ok $? "probes: packet headers copied, bpf_rdonly_cast not in 6.1"
[ "$(cat "$S/record.rc" 2>/dev/null)" = 0 ] && [ -s "$S/x.snap" ]
ok $? "latop record in the guest finished x.snap ($(cat "$S/record.err" 2>/dev/null))"

"$L" report "$S/x.snap" --json -q "from flows group by lport, rport show count, sum(lat), \
min(lat), sum(evicted), sum(unsolicited), sum(bytes_in)" >"$S/flows.json" 2>"$S/flows.err"
sed 's/^/# flows: /' "$S/flows.json" "$S/flows.err"
# The evicted requests one by one: when, and how old (at close, or past
# flow_timeout when a later response started).
"$L" report "$S/x.snap" -q "from flow_events show ts, flow, kind, lat, count" 2>&1 |
	sed 's/^/# events: /'
out=$(python3 - "$S" 2>&1 <<'EOF'
import json, sys
s = sys.argv[1]
flows = {(r["lport"], r["rport"]): r for r in map(json.loads, open(s + "/flows.json"))}
clients = {t: int(p) for t, _, p in (l.split() for l in open(s + "/clients"))}
truth = {}
for f in ("srv4", "srv6"):
    for line in open(s + "/" + f):
        if line.startswith("req "):
            _, lp, rp, seq, ns, ans = line.split()
            truth.setdefault((int(lp), int(rp)), []).append((int(ns), int(ans)))
msg = []
for tag, lport in (("plain4", 7101), ("pipe4", 7101), ("evict4", 7101), ("plain6", 7102)):
    k = (lport, clients[tag])
    t = [ns for ns, a in truth[k] if a]
    r = flows[k]
    msg.append("%s %d/%d evicted %d unsolicited %d, slowest answer %.1f ms" %
               (tag, r["count"], len(t), r["sum(evicted)"], r["sum(unsolicited)"], max(t, default=0) / 1e6))
    assert r["count"] == len(t) and r["sum(lat)"] >= sum(t) and r["min(lat)"] >= min(t), msg
assert flows[(7101, clients["evict4"])]["sum(evicted)"] == 1, msg
print("; ".join(msg))
EOF
)
ok $? "fentry hooks: exact counts, latency >= server truth, pipelined and the unanswered one evicted ($out)"

grep -q "connections beyond flow_max (request in) *fentry/tcp_filter" "$S/probes.txt" 2>/dev/null
ok $? "probes: connections beyond flow_max use fentry on tcp_filter"
"$L" report "$S/m.snap" --json -q "from flows group by flow show count, sum(evicted)" \
	>"$S/many.json" 2>"$S/many.rep"
sed 's/^/# many: /' "$S/many.out" "$S/many.err" "$S/many.rep"
out=$(python3 - "$S/many.json" 2>&1 <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
other = sum(r["count"] for r in rows if r["flow"] == "(other)")
total = sum(r["count"] for r in rows)
tracked = len([r for r in rows if r["flow"] != "(other)"])
print("%d requests, %d in (other), %d tracked rows" % (total, other, tracked))
assert total == 300 and other >= 36 * 3 and tracked <= 64
assert all(r["sum(evicted)"] == 0 for r in rows)
EOF
)
ok $? "flow_max 64, 100 connections at once: all 300 requests counted, those beyond in (other) ($out)"

# The same grouped by port: counted in the kernel per port, the connections
# beyond flow_max in their port's row too.
"$L" report "$S/g.snap" --json -q "from flows group by lport show count, sum(bytes_in)" \
	>"$S/group.json" 2>"$S/group.rep"
sed 's/^/# group: /' "$S/group.out" "$S/group.err" "$S/group.rep"
out=$(python3 - "$S/group.json" 2>&1 <<'EOF'
import json, sys
rows = [r for r in map(json.loads, open(sys.argv[1])) if "health" not in r]
print(rows)
assert [(r["lport"], r["count"], r["sum(bytes_in)"]) for r in rows] == [(7104, 300, 2400)]
EOF
)
ok $? "grouped by lport: all 300 requests in the port's row, none in (other) ($out)"
done_testing
