#!/bin/bash
# The flows view over a veth pair between two network namespaces (a real
# NIC driver path, not loopback), IPv4 and IPv6: exact counts and latency
# against the server's truth, and an address-prefix filter pushed into the
# kernel keeping one client's flow out while another's is counted.  The
# server listens before latop starts.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
R=$LATOP_HELPERS/reqsrv
[ -x "$R" ] || skip_all "no reqsrv helper at $R (make tests-build)"
command -v ip >/dev/null || skip_all "no ip(8) (iproute2)"
tag=lf$$
ip netns add $tag-s 2>/dev/null || skip_all "cannot create network namespaces"
tmp=$(mktemp -d); rec_pid=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; ip netns del $tag-s 2>/dev/null;
      ip netns del $tag-c 2>/dev/null; rm -rf "$tmp"' EXIT
ip netns add $tag-c

# A subnet of our own: 10.231.N.0/24 and fd00:231:N::/64.
n=$((RANDOM % 250 + 1))
S4=10.231.$n.1 C4=10.231.$n.2 C4B=10.231.$n.66 S6=fd00:231:$n::1 C6=fd00:231:$n::2
ip link add $tag-a netns $tag-s type veth peer name $tag-b netns $tag-c &&
ip -n $tag-s addr add $S4/24 dev $tag-a &&
ip -n $tag-c addr add $C4/24 dev $tag-b &&
ip -n $tag-c addr add $C4B/24 dev $tag-b &&
ip -n $tag-s addr add $S6/64 dev $tag-a nodad &&
ip -n $tag-c addr add $C6/64 dev $tag-b nodad &&
ip -n $tag-s link set $tag-a up && ip -n $tag-c link set $tag-b up &&
ip -n $tag-s link set lo up && ip -n $tag-c link set lo up
ok $? "veth pair between two namespaces, IPv4 and IPv6"

P=$((20000 + RANDOM % 20000))
# Only clients in 10.231.N.64/26 (C4B) and the IPv6 subnet pass the filter.
# The server listens before latop starts, in a namespace latop is not in:
# its connections still count from their first request.
ip netns exec $tag-s "$R" server :: $P 4 2 > "$tmp/srv" & srv=$!
wait_ready "$tmp/srv"; ok $? "the server listens in its namespace"
"$L" record -o "$tmp/veth.snap" -i 250ms --quiet \
	-q "from flows where lport == $P and raddr in (10.231.$n.64/26, fd00:231:$n::/64)" & rec_pid=$!
wait_recording "$tmp/veth.snap"; ok $? "the recorder attaches"
{
	ip netns exec $tag-c "$R" client $S4 $P 200 -d 300 -b $C4B | sed 's/^/in4 /'
	ip netns exec $tag-c "$R" client $S4 $P 200 -d 300 -b $C4 | sed 's/^/out4 /'
	ip netns exec $tag-c "$R" client $S6 $P 200 -d 300 -b $C6 | sed 's/^/in6 /'
	ip netns exec $tag-c "$R" client $S6 $P 30 -P 4 -g 300 -d 3000 -b $C6 | sed 's/^/pipe6 /'
} > "$tmp/clients"
wait $srv
sleep 1
kill -TERM $rec_pid; wait $rec_pid; ok $? "the recording finishes"; rec_pid=

"$L" report "$tmp/veth.snap" --json -q "from flows group by raddr, rport show count, sum(lat), \
min(lat), p50(lat), sum(evicted)" > "$tmp/flows.json"
ok $? "report --json"

check() {
	python3 - "$1" "$tmp" <<'EOF'
import json, sys
name, tmp = sys.argv[1], sys.argv[2]
flows = {r["rport"]: r for r in map(json.loads, open(tmp + "/flows.json"))}
clients = {t: int(p) for t, _, p in (l.split() for l in open(tmp + "/clients"))}
truth = {}
for line in open(tmp + "/srv"):
    if line.startswith("req "):
        _, lp, rp, seq, ns, ans = line.split()
        if int(ans):
            truth.setdefault(int(rp), []).append(int(ns))
msg = []
if name == "counts":
    for tag in ("in4", "in6", "pipe6"):
        r, t = flows.get(clients[tag]), truth[clients[tag]]
        msg.append("%s %s/%d" % (tag, r and r["count"], len(t)))
        assert r and r["count"] == len(t), msg
elif name == "truth":
    for tag in ("in4", "in6"):
        r, t = flows[clients[tag]], truth[clients[tag]]
        over = (r["sum(lat)"] - sum(t)) / len(t)
        msg.append("%s +%.0fus/req over truth" % (tag, over / 1e3))
        assert r["sum(lat)"] >= sum(t) and r["min(lat)"] >= min(t) and over <= 2e6, msg
elif name == "filter":
    msg.append("out4 flow %s; truth has %d requests" % (flows.get(clients["out4"]),
               len(truth[clients["out4"]])))
    assert clients["out4"] not in flows and len(truth[clients["out4"]]) == 200, msg
    assert len(flows) == 3, flows
print("; ".join(msg))
EOF
}
out=$(check counts 2>&1); ok $? "exact counts over veth, IPv4 and IPv6, pipelined too ($out)"
out=$(check truth 2>&1); ok $? "host latency >= server truth, within 2 ms per request ($out)"
out=$(check filter 2>&1); ok $? "raddr prefix pushdown: the client outside 10.231.$n.64/26 was not counted ($out)"
done_testing
