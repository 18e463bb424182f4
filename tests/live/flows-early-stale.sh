#!/bin/bash
# A connection's first request can reach the host before the connection is
# made (the handshake's last ACK and the request race on two CPUs): the
# ingress hook keeps a segment no flow has in a slot per CPU, and a new
# flow takes it from there.  A segment left there by the connection its
# 4-tuple had before (one the flows map had no room for, its segments
# seen by no flow) is not the new one's: taken, it was a request never
# answered, 8 bytes too many and an eviction in the new connection's row.
# Here: flow_max = 64 (the least), 64 connections that stay open fill it;
# a client from 127.0.0.1:Q makes 3 requests (followed beyond flow_max, in
# the overflow row), one of the 64 ends, and the client comes back from
# the same port: its 3 requests in a row of their own, exact.  Then the
# same at once: the map full again, the client's 3 requests beyond it, one
# of the 64 reset, and the client back within a millisecond or two (the
# new connection's sequence numbers start a few thousand past the old
# one's, not anywhere).
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
tmp=$(mktemp -d); rec_pid=; cli=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; [ -n "$cli" ] && kill $cli 2>/dev/null
	rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME=$tmp/cfg
mkdir -p "$tmp/cfg/latop"
printf 'flow_max = 64\nflow_spill = always\n' > "$tmp/cfg/latop/latoprc"
base=$(free_ports 2)
P=$base Q=$((base + 1))
FILL=64 REQS=3

# Each line read from "go" is a step: fill (FILL connections from
# 127.0.2.x, one request each, left open), again (REQS requests from
# 127.0.0.1:Q; the server closes first, so the port has no TIME_WAIT),
# free (one of the fill connections ends), fill1 (one more fill
# connection), near (again, one fill connection reset after its answers
# and before its end, and again at once), end (the rest end).  The client
# prints "STEP ANSWERS" after each.
mkfifo "$tmp/go"
python3 - $P $Q $FILL $REQS "$tmp/go" > "$tmp/cli" 2> "$tmp/cli.err" <<'EOF' & cli=$!
import socket, struct, sys, threading, time
P, Q, FILL, N, go = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", P))
ls.listen(128)

def serve(c, peer):
    n = 0
    try:
        while c.recv(8):
            c.sendall(b"r" * 8)
            n += 1
            if peer == "127.0.0.1" and n == N:
                break
    except ConnectionResetError:
        pass    # a fill connection reset (near)
    c.close()

def accept():
    while True:
        c, a = ls.accept()
        threading.Thread(target=serve, args=(c, a[0]), daemon=True).start()

threading.Thread(target=accept, daemon=True).start()
print("ready", flush=True)
def filler(i):
    s = socket.create_connection(("127.0.0.1", P), 10, ("127.0.2.%d" % (1 + i), 0))
    s.sendall(b"q" * 8)
    fill.append(s)
    return len(s.recv(8)) == 8

def again(reset=None):
    """N requests from Q; reset: a fill connection to reset before the end."""
    while True:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.settimeout(10)
        try:
            s.bind(("127.0.0.1", Q))
            s.connect(("127.0.0.1", P))
            break
        except OSError:     # the last connection's end not yet gone
            s.close()
            time.sleep(0.001)
    done = 0
    for _ in range(N):
        s.sendall(b"q" * 8)
        done += len(s.recv(8)) == 8
    if reset:
        reset.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        reset.close()
    s.recv(8)   # the server's close
    s.close()
    return done

fill = []
for line in open(go):
    step, done = line.split()[0], 0
    if step == "fill":
        done = sum(filler(i) for i in range(FILL))
    elif step == "fill1":
        done = int(filler(FILL))
    elif step == "again":
        done = again()
    elif step == "near":
        done = again(fill.pop(0)) + again()
    elif step == "free":
        fill.pop().close()
    elif step == "end":
        while fill:
            fill.pop().close()
    print(step, done, flush=True)
EOF
exec 3> "$tmp/go"
for _ in $(seq 50); do grep -q ready "$tmp/cli" && break; sleep 0.1; done

# step NAME: send it, wait for the client's answer.
step() {
	echo "$1" >&3
	for _ in $(seq 100); do grep -q "^$1 " "$tmp/cli" && return; sleep 0.1; done
	echo "# no answer to step $1: $(cat "$tmp/cli.err")"
}

"$L" record -o "$tmp/x.snap" -i 1s --quiet -q "from flows where lport == $P" 2> "$tmp/rec.err" 3>&- &
rec_pid=$!
wait_recording "$tmp/x.snap" || echo "# the recorder did not start"
step fill
step again
step free
sleep 0.3	# the server's end of it closes: a place in the flows map
step again
step fill1
sleep 0.3	# the fill connection's establishment is seen
step near
step end
exec 3>&-
wait $cli; ok $? "the client's steps ran ($(tr '\n' ' ' < "$tmp/cli") $(cat "$tmp/cli.err"))"; cli=
sleep 1.5
kill -TERM $rec_pid; wait $rec_pid; ok $? "the recording exits 0 ($(cat "$tmp/rec.err"))"; rec_pid=

"$L" report "$tmp/x.snap" --json -q "from flows group by flow, raddr, rport show count, sum(evicted), \
sum(bytes_in), sum(bytes_out)" > "$tmp/rows.json" 2> "$tmp/rep.err"
out=$(python3 - "$tmp/rows.json" "$tmp/rep.err" $Q $FILL $REQS <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
health = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])["health"]
q, fill, n = (int(a) for a in sys.argv[3:])
# Q's row: the two connections back on it; (other): the two beyond.
back = [r for r in rows if r["flow"] != "(other)" and r["rport"] == q]
other = [r for r in rows if r["flow"] == "(other)"]
print("back:", back, "other:", other, "lost %d evicted %d" % (health["lost"], health["evicted"]))
assert len(back) == 1 and back[0]["count"] == 2 * n and back[0]["sum(evicted)"] == 0, back
assert back[0]["sum(bytes_in)"] == 16 * n and back[0]["sum(bytes_out)"] == 16 * n, back
assert sum(r["count"] for r in other) == 2 * n, other
assert sum(r["count"] for r in rows) == fill + 1 + 4 * n, rows
assert all(r["sum(evicted)"] == 0 for r in rows) and health["lost"] == 0 and health["evicted"] == 0
EOF
)
ok $? "the connections back on their 4-tuple, after a while and at once: $REQS requests each, $((8 * REQS)) bytes each way, none evicted ($out)"
echo "1..3"
