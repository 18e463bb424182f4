#!/bin/bash
# The flows view when a connection's handshake races its first request.
# synrace (tests/helpers/synrace.c) sends, from a second network namespace
# over a veth pair, the ACK that completes each handshake and the first
# request at the same moment from two CPUs.  The server's kernel then
# often makes two child sockets with the connection's addresses and ports
# and closes the one that lost, from SYN_RECV, while the other serves the
# connection.  That close must not end the flow: every connection's two
# requests are counted, none evicted.  The kernel's own
# inet_sock_set_state events (a tracefs instance) show the race happened.
# A first request taken by the new flow in the race counts under the
# recording's filter like any other: recordings filtered on another port
# see nothing, and on the server's name (known only once it reads) every
# byte, per connection and grouped.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
R=$LATOP_HELPERS/reqsrv S=$LATOP_HELPERS/synrace
[ -x "$R" ] && [ -x "$S" ] || skip_all "no reqsrv or synrace helper in $LATOP_HELPERS (make tests-build)"
command -v ip >/dev/null || skip_all "no ip(8) (iproute2) to make network namespaces"
[ "$(nproc)" -ge 2 ] || skip_all "the race needs two CPUs; this machine has $(nproc)"
N=300 P=$((20000 + RANDOM % 10000))
NS_S=latop-hs-s$$ NS_C=latop-hs-c$$ V0=lhs$$a V1=lhs$$b
tmp=$(mktemp -d); rec_pid= others= tfs=
T=/sys/kernel/tracing
[ -d $T/instances ] || T=/sys/kernel/debug/tracing
# No tracefs mounted: one of this test's own (every mount of tracefs is
# the same tree; the instance made in it is removed at the end).
if [ ! -d $T/instances ] && mkdir "$tmp/tfs" && mount -t tracefs nodev "$tmp/tfs"; then
	T=$tmp/tfs tfs=1
fi
TI=$T/instances/latop-hs-$$
cleanup() {
	[ -n "$rec_pid" ] && kill -9 $rec_pid $others 2>/dev/null
	ip netns del $NS_S 2>/dev/null; ip netns del $NS_C 2>/dev/null
	[ -d "$TI" ] && rmdir "$TI" 2>/dev/null
	[ -n "$tfs" ] && umount "$tmp/tfs"
	rm -rf "$tmp"
}
trap cleanup EXIT

# The server's namespace has 10.203.0.1; the client's has no address at
# all, so no stack there answers the server: synrace's packet socket does.
ip netns add $NS_S && ip netns add $NS_C &&
	ip link add $V0 netns $NS_S type veth peer name $V1 netns $NS_C &&
	ip -n $NS_S addr add 10.203.0.1/24 dev $V0 && ip -n $NS_S link set $V0 up &&
	ip -n $NS_C link set $V1 up
ok $? "two network namespaces joined by a veth pair" || { done_testing; exit; }
mac() { ip -n "$1" -o link show "$2" | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2; }
M0=$(mac $NS_S $V0) M1=$(mac $NS_C $V1)
ip -n $NS_S neigh add 10.203.0.2 lladdr "$M1" dev $V0 nud permanent

twins=
if mkdir "$TI" 2>/dev/null && [ -e "$TI/events/sock/inet_sock_set_state" ]; then
	echo "sport == $P && oldstate == 3 && newstate == 7" \
		> "$TI/events/sock/inet_sock_set_state/filter" &&
		echo 1 > "$TI/events/sock/inet_sock_set_state/enable" && twins=1
fi

"$L" record -o "$tmp/x.snap" --quiet -q "from flows where lport = $P" 2>"$tmp/rec.err" & rec_pid=$!
"$L" record -o "$tmp/other.snap" --quiet -q "from flows where lport = $((P + 1))" \
	2>"$tmp/other.err" & others="$others $!"
"$L" record -o "$tmp/comm.snap" --quiet -q "from flows where comm == 'reqsrv'" \
	2>"$tmp/comm.err" & others="$others $!"
"$L" record -o "$tmp/commg.snap" --quiet -q "from flows where comm == 'reqsrv' group by lport" \
	2>"$tmp/commg.err" & others="$others $!"
for f in x other comm commg; do
	wait_recording "$tmp/$f.snap" || break
done
ok $? "the recorders attach"
ip netns exec $NS_S "$R" server 10.203.0.1 $P $N 2 > "$tmp/srv" & srv=$!
wait_ready "$tmp/srv"
ip netns exec $NS_C "$S" $V1 10.203.0.2 10.203.0.1 "$M0" $P $N > "$tmp/cli"
wait $srv
sleep 1
kill -TERM $rec_pid $others; wait $rec_pid $others
ok $? "the recordings finish ($(cat "$tmp"/*.err))"; rec_pid= others=
answered=$(grep -c '^req .* 1$' "$tmp/srv")
[ "$answered" = $((2 * N)) ]
ok $? "the server answered every request ($answered of $((2 * N)); client: $(tail -1 "$tmp/cli"))"

if [ -n "$twins" ]; then
	echo 0 > "$TI/events/sock/inet_sock_set_state/enable"
	nt=$(grep -c inet_sock_set_state "$TI/trace")
	[ "$nt" -gt 0 ]
	ok $? "the race happened: $nt of $N connections had a second child socket closed from SYN_RECV"
else
	skip "no tracefs instance to see the race in"
fi

"$L" report "$tmp/x.snap" --json -q "from flows group by rport show count, sum(evicted), sum(bytes_in), \
sum(bytes_out)" > "$tmp/flows.json" 2>"$tmp/report.err"
ok $? "report --json over the recording"
out=$("$LATOP_TOP/scripts/synrace-rows" "$tmp/flows.json" "$tmp/cli" $N 2>&1)
ok $? "every connection: 2 requests counted, none evicted, 128 bytes each way ($out)"

out=$("$L" report "$tmp/other.snap" --json -q "from flows" 2>&1 | grep -v '"health"' | head -c 300)
[ -z "$out" ]
ok $? "filtered on another port: no row (${out:-none})"

"$L" report "$tmp/comm.snap" --json -q "from flows where lport == $P group by rport show count, \
sum(evicted), sum(bytes_in), sum(bytes_out)" > "$tmp/comm.json" 2>"$tmp/comm.rep"
out=$(python3 - "$tmp" $N <<'PY' 2>&1
import json, sys
tmp, n = sys.argv[1], int(sys.argv[2])
rows = [json.loads(l) for l in open(tmp + "/comm.json") if '"health"' not in l]
bad = [r for r in rows if (r["count"], r["sum(evicted)"], r["sum(bytes_in)"],
       r["sum(bytes_out)"]) != (2, 0, 128, 128)]
print("%d flows; wrong: %s" % (len(rows), bad[:3] or "none"))
sys.exit(1 if bad or len(rows) != n else 0)
PY
)
ok $? "filtered on the server's name, per connection: 2 requests, 128 bytes each way ($out)"

out=$("$L" report "$tmp/commg.snap" --json -q "from flows where lport == $P group by lport \
show count, sum(bytes_in), sum(bytes_out)" 2>/dev/null | grep -v '"health"')
[ "$out" = "{\"lport\":$P,\"count\":$((2 * N)),\"sum(bytes_in)\":$((128 * N)),\"sum(bytes_out)\":$((128 * N))}" ]
ok $? "filtered on the server's name, grouped in the kernel: every request and byte ($out)"
done_testing
