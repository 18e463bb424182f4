#!/bin/bash
# Three tiers on three "hosts": network namespaces joined by veth pairs
# (client -> front -> mid -> back), each tier recorded by its own latop into
# its own file, as if on separate machines.  `latop report front mid back`
# must join every downstream call to the request it served on the next
# host, giving each front request its end-to-end path through all three.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
T=$LATOP_HELPERS/tiers
[ -x "$T" ] || skip_all "no tiers helper at $T (make tests-build)"
command -v ip >/dev/null || skip_all "no ip(8) (iproute2) to make namespaces"
n=lp$$
ip netns add ${n}c 2>/dev/null || skip_all "cannot create network namespaces here"
tmp=$(mktemp -d); pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 $p 2>/dev/null; wait $p 2>/dev/null; done
	for s in c f m b; do ip netns del $n$s 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
for s in f m b; do ip netns add $n$s; done
# link NS1 IF1 ADDR1 NS2 IF2 ADDR2: a veth pair between two namespaces.
link() {
	ip link add $2 netns $1 type veth peer name $5 netns $4 &&
	ip -n $1 addr add $3/24 dev $2 && ip -n $4 addr add $6/24 dev $5 &&
	ip -n $1 link set $2 up && ip -n $4 link set $5 up &&
	ip -n $1 link set lo up && ip -n $4 link set lo up
}
link ${n}c ${n}c0 10.201.1.1 ${n}f ${n}f0 10.201.1.2 &&
link ${n}f ${n}f1 10.201.2.1 ${n}m ${n}m0 10.201.2.2 &&
link ${n}m ${n}m1 10.201.3.1 ${n}b ${n}b0 10.201.3.2
ok $? "four namespaces joined by three veth pairs"
PF=8080 PM=9090 PB=3306
ip netns exec ${n}b "$T" serve -b 10.201.3.2 -p $PB -w 8 -d 1000 -t "$tmp/back.tsv" >/dev/null & pb=$!; pids+=($pb)
ip netns exec ${n}m "$T" serve -b 10.201.2.2 -p $PM -w 8 -d 500 -c 10.201.3.2:$PB:1:2 \
	-t "$tmp/mid.tsv" >/dev/null & pm=$!; pids+=($pm)
ip netns exec ${n}f "$T" serve -b 10.201.1.2 -p $PF -w 8 -d 300 -c 10.201.2.2:$PM:1:1 \
	-t "$tmp/front.tsv" >/dev/null & pf=$!; pids+=($pf)
for t in front:$pf mid:$pm back:$pb; do
	"$L" record -o "$tmp/${t%%:*}.lat" --quiet \
		-q "from paths where pid == ${t#*:} threshold 1ns buffer 100000" & pids+=($!); recs+=($!)
done
for t in front mid back; do
	for _ in $(seq 150); do [ -e "$tmp/$t.lat.tmp" ] && break; sleep 0.1; done
done
sleep 0.5
[ -e "$tmp/front.lat.tmp" ] && [ -e "$tmp/mid.lat.tmp" ] && [ -e "$tmp/back.lat.tmp" ]
ok $? "one recorder per host attaches"
timeout 120 ip netns exec ${n}c "$T" client -c 10.201.1.2:$PF -C 3 -n 40 -f 6 -t "$tmp/client.tsv"
ok $? "3 clients x 40 requests across the namespaces"
sleep 2
for r in "${recs[@]}"; do kill -TERM $r; wait $r || echo "# recorder $r failed"; done

for t in front mid back; do
	"$L" report "$tmp/$t.lat" -q "from paths group by lport, path show count, calls" --json > "$tmp/$t.json"
done
"$L" report "$tmp/front.lat" "$tmp/mid.lat" "$tmp/back.lat" \
	-q "from path_joins show id, host, path, lat, tiers, requests, calls, joined, unjoined, work, net" --json > "$tmp/joins.json"
ok $? "report front.lat mid.lat back.lat from path_joins"

check() { python3 - "$tmp" $PF $PM $PB "$1" <<'PY'
import collections, json, sys
tmp, pf, pm, pb, what = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
load = lambda f: [json.loads(l) for l in open(f"{tmp}/{f}") if l.strip()]
def truth(tier):
    out = collections.Counter()
    for l in open(f"{tmp}/{tier}.tsv"):
        out[l.rstrip("\n").split(" ", 7)[7]] += 1
    return out
if what == "hosts":
    for tier, port in (("front", pf), ("mid", pm), ("back", pb)):
        rows = load(f"{tier}.json")
        assert {r["lport"] for r in rows} == {port}, (tier, rows)
        got = collections.Counter()
        for r in rows:
            got[r["path"]] += r["count"]
        assert got == truth(tier), (tier, got, truth(tier))
    print("# each recording holds its own tier, with the truth's shapes and counts")
    sys.exit(0)
joins = load("joins.json")
# Expected end-to-end path of each front request, from the client's fan:
# front makes 1 + fan % 2 mid calls, each mid makes 1 + fan % 3 back calls.
want = collections.Counter()
for l in open(f"{tmp}/client.tsv"):
    cport, i, fan, lat = map(int, l.split())
    k, j = 1 + fan % 2, 1 + fan % 3
    want[f":{pf} → 10.201.2.2:{pm} ×{k} (:{pm} → 10.201.3.2:{pb} ×{j} (:{pb}))"] += 1
got = collections.Counter(r["path"] for r in joins)
if what == "paths":
    assert got == want, (got, want)
    print(f"# {sum(got.values())} front requests, {len(got)} end-to-end paths, as the truth says")
elif what == "counts":
    total = sum(sum(truth(t).values()) for t in ("front", "mid", "back"))
    assert sum(r["requests"] for r in joins) == total, total
    assert all(r["unjoined"] == 0 and r["joined"] == r["calls"] == r["requests"] - 1 and r["tiers"] == 3
               for r in joins), [r for r in joins if r["unjoined"]][:3]
    print(f"# {total} requests on three hosts, every call joined")
elif what == "time":
    # Sequential calls: the front's latency is the work of every tier plus
    # the time between tiers, each measured on its own host's clock.
    assert joins
    bad = [r for r in joins if abs(r["lat"] - r["work"] - r["net"]) > 2000]
    assert not bad, bad[:3]
    assert all(0 < r["net"] < r["lat"] for r in joins)
    print("# lat == work + net for every path (within 2 us)")
PY
}
check hosts; ok $? "each host's recording: its own tier, shapes and counts equal the truth"
check paths; ok $? "path_joins: every front request's end-to-end path equals the truth"
check counts; ok $? "path_joins: every call joined to the request it served (no unjoined)"
check time; ok $? "path_joins: end-to-end latency = time in tiers + time between them"
done_testing
