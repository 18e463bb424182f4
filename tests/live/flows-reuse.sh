#!/bin/bash
# A 4-tuple that comes back before latop reads the connection it had: a
# client that binds one local port and reconnects at once, the server
# closing first (so the client's end has no TIME_WAIT), 2,000 connections
# of 3 requests each in well under a second.  Each connection is counted,
# whole and once: the kernel keeps the last totals of one whose 4-tuple
# came back until latop reads them, and latop tells the connections of one
# 4-tuple apart by their birth.  The same recorded grouped by port too,
# and both again at ticks of 10 ms, which read the flows map as often as
# a connection closes: a flow read between its close and its move to the
# departed map is left to the kernel (removing it could remove the next
# connection of its 4-tuple, whose requests were then lost).
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
tmp=$(mktemp -d); rec_pid=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME=$tmp/cfg
mkdir -p "$tmp/cfg/latop"; : > "$tmp/cfg/latop/latoprc"
base=$(free_ports 2)
P=$base Q=$((base + 1))
CONNS=2000 REQS=3

# reuse: CONNS connections from 127.0.0.1:Q to P, REQS 8-byte requests
# each, answered with 8 bytes; the server closes each connection first.
# A connect that finds the last connection's end not yet gone (EADDRNOTAVAIL)
# tries again.  Prints the requests answered, the connections made, the
# connects retried and the SYNs the kernel sent again meanwhile (TcpExt
# TCPSynRetrans, the whole machine's: one that met the last connection still
# closing goes again from a timer, and its handshake runs in an interrupt
# on whatever thread is on the CPU); exits non-zero (at most 60 s on) if
# either side fails.
reuse() {
	timeout 60 python3 - $P $Q $CONNS $REQS <<'EOF'
import errno, socket, sys, threading, time
P, Q, M, N = (int(a) for a in sys.argv[1:])

def syn_retrans():
    rows = [l.split() for l in open("/proc/net/netstat") if l.startswith("TcpExt:")]
    return int(rows[1][rows[0].index("TCPSynRetrans")])

syns = syn_retrans()
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", P))
ls.listen(128)
ls.settimeout(10)

def serve():
    for _ in range(M):
        c, _ = ls.accept()
        c.settimeout(10)
        for _ in range(N):
            if not c.recv(8):
                break
            c.sendall(b"r" * 8)
        c.close()

t = threading.Thread(target=serve, daemon=True)
t.start()
done = conns = retries = 0
for _ in range(M):
    while True:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.settimeout(10)
        try:
            s.bind(("127.0.0.1", Q))
            s.connect(("127.0.0.1", P))
            break
        except OSError as e:
            if e.errno not in (errno.EADDRNOTAVAIL, errno.EADDRINUSE) or retries > 10 * M:
                raise
            retries += 1
            s.close()
            time.sleep(0.001)
    conns += 1
    for _ in range(N):
        s.sendall(b"q" * 8)
        if len(s.recv(8)) == 8:
            done += 1
    s.recv(8)   # the server's close
    s.close()
t.join(10)
print(done, conns, retries, syn_retrans() - syns)
EOF
}

# record NAME INTERVAL QUERY: record QUERY at ticks of INTERVAL over one run
# of reuse; its truth in NAME.truth.
record() {
	"$L" record -o "$tmp/$1.snap" -i "$2" --quiet -q "$3" 2> "$tmp/$1.err" & rec_pid=$!
	wait_recording "$tmp/$1.snap" || echo "# the recorder did not start"
	reuse > "$tmp/$1.truth"
	sleep 1.5
	kill -TERM $rec_pid; wait $rec_pid; local rc=$?; rec_pid=
	return $rc
}

record conn 1s "from flows where lport == $P"
ok $? "recording $CONNS connections of one 4-tuple exits 0 ($(cat "$tmp/conn.err"))"
read -r want conns retries syns < "$tmp/conn.truth"
[ "$want" = $((CONNS * REQS)) ] && [ "$conns" = $CONNS ]
ok $? "the client made $conns connections from port $Q and got $want answers ($retries connects tried again, $syns SYNs sent again)"

"$L" report "$tmp/conn.snap" --json -q "from flows group by lport show count, sum(evicted), \
sum(unsolicited), sum(bytes_in), sum(bytes_out)" > "$tmp/conn.json" 2> "$tmp/conn.rep"
out=$(python3 - "$tmp/conn.json" "$want" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"health"' not in l]
want = int(sys.argv[2])
assert len(rows) == 1, rows
r = rows[0]
assert r["count"] == want and r["sum(evicted)"] == 0 and r["sum(unsolicited)"] == 0, r
assert r["sum(bytes_in)"] == 8 * want and r["sum(bytes_out)"] == 8 * want, r
print(json.dumps(r))
EOF
)
ok $? "per connection: every request and byte counted once, none evicted or unsolicited ($out)"
! grep -q "warning" "$tmp/conn.err" "$tmp/conn.rep"
ok $? "no warning from record or report ($(cat "$tmp/conn.err" "$tmp/conn.rep"))"

# grouped NAME: NAME's recording, grouped by port, has every request.
grouped() {
	local want conns out
	read -r want conns _ < "$tmp/$1.truth"
	out=$("$L" report "$tmp/$1.snap" --json -q "from flows group by lport show count" \
		2>/dev/null | grep -v health)
	[ "$out" = "{\"lport\":$P,\"count\":$want}" ]
	ok $? "$2: $want requests ($out)"
}

record port 1s "from flows where lport == $P group by lport show count"
ok $? "recording the same grouped by port exits 0"
grouped port "grouped by port in the kernel"

# At ticks of 10 ms: the same counts.  A tick may come late here (over
# 15 ms, a rate's warning); lost and evicted, which the counts are, may not.
record fast 10ms "from flows where lport == $P"
ok $? "recording per connection at ticks of 10 ms exits 0 ($(cat "$tmp/fast.err"))"
grouped fast "per connection, ticks of 10 ms"
"$L" report "$tmp/fast.snap" --json -q "from flows show count" 2>&1 >/dev/null |
	grep '"health"' > "$tmp/fast.health"
python3 - "$tmp/fast.health" <<'EOF'
import json, sys
h = json.loads(open(sys.argv[1]).read())["health"]
assert h["lost"] == 0 and h["evicted"] == 0 and h["dropped"] == 0 and h["overflow"] == 0, h
EOF
ok $? "per connection, ticks of 10 ms: none lost, evicted, dropped or in overflow ($(cat "$tmp/fast.health"))"
! grep -v "ticks came late" "$tmp/fast.err" | grep -q warning
ok $? "no warning but of late ticks ($(cat "$tmp/fast.err"))"

record fastport 10ms "from flows where lport == $P group by lport show count"
ok $? "recording grouped by port at ticks of 10 ms exits 0"
grouped fastport "grouped by port in the kernel, ticks of 10 ms"
echo "1..12"
