#!/bin/bash
# A connection whose establishment ran no program is still counted: its
# server's first read finds no flow and adopts it, its first request taken
# from the slot where the ingress hook left it.  Such establishments are
# real: a SYN that found the 4-tuple's last connection still closing is
# sent again a second later from a timer, and its handshake runs in an
# interrupt on top of whatever thread is on the CPU; where that thread is
# one no program runs in (this machine's PID 1), nothing sees it.  Here the
# flow is removed by hand from the recorder's flows table between the
# accept and the first request.  And a socket that connected from a served
# port (a listener there has gone: the mark stays) is no flow: its reads
# adopt nothing.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
command -v bpftool >/dev/null || skip_all "no bpftool (scripts/install-deps.sh --test)"
tmp=$(mktemp -d); rec_pid=; cli=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; [ -n "$cli" ] && kill $cli 2>/dev/null
	rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME=$tmp/cfg
mkdir -p "$tmp/cfg/latop"; : > "$tmp/cfg/latop/latoprc"
base=$(free_ports 3)
P=$base X=$((base + 1)) Y=$((base + 2))
REQS=3

"$L" record -o "$tmp/a.snap" --quiet -q "from flows where lport in ($P, $X, $Y)" \
	2> "$tmp/a.err" & rec_pid=$!
wait_recording "$tmp/a.snap"
ok $? "the recorder attaches"

# The workload reads steps from the fifo go: accept (a connection to P,
# accepted; prints "accept PORT"), talk (its REQS requests, answered;
# the server closes first), connect (a listener on X, closed, and one on
# Y; a client bound to X makes REQS requests to Y).  Prints "STEP ANSWERS".
mkfifo "$tmp/go"
python3 - $P $X $Y $REQS "$tmp/go" > "$tmp/cli" 2> "$tmp/cli.err" <<'EOF' & cli=$!
import socket, sys
P, X, Y, N = (int(a) for a in sys.argv[1:5])
go = sys.argv[5]

def listener(port):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(8)
    ls.settimeout(10)
    return ls

def talk(cs, ss):
    """N requests from cs, each answered by ss; ss closes first."""
    n = 0
    for _ in range(N):
        cs.sendall(b"q" * 8)
        if ss.recv(8) == b"q" * 8:
            ss.sendall(b"r" * 8)
        if cs.recv(8) == b"r" * 8:
            n += 1
    ss.close()
    cs.recv(8)
    cs.close()
    return n

lp = listener(P)
for step in open(go):
    step = step.strip()
    if step == "accept":
        c = socket.create_connection(("127.0.0.1", P), 10)
        s, _ = lp.accept()
        s.settimeout(10)
        print("accept", c.getsockname()[1], flush=True)
    elif step == "talk":
        print("talk", talk(c, s), flush=True)
    elif step == "connect":
        listener(X).close()
        ly = listener(Y)
        c = socket.socket()
        c.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        c.settimeout(10)
        c.bind(("127.0.0.1", X))
        c.connect(("127.0.0.1", Y))
        s, _ = ly.accept()
        s.settimeout(10)
        print("connect", talk(c, s), flush=True)
    else:
        break
EOF
exec 3> "$tmp/go"

# step STEP: run one step of the workload; its line of output.
step() {
	echo "$1" >&3
	for _ in $(seq 100); do
		grep "^$1 " "$tmp/cli" && return 0
		sleep 0.1
	done
	return 1
}

cport=$(step accept | cut -d' ' -f2)
[ -n "$cport" ]
ok $? "a connection to $P accepted, from port $cport ($(cat "$tmp/cli.err"))"

# The recorder's flows entry of that connection, removed: as if its
# establishment ran no program.  Prints what it removed.
fmap=$("$LATOP_TOP/scripts/held-maps" "$rec_pid" | awk '$2 == "flows" {print $1}')
python3 - "$fmap" "$P" "$cport" > "$tmp/removed" 2>&1 <<'EOF'
import json, subprocess, sys
m, lport, rport = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
assert m.isdigit(), "no flows map (%r)" % m
dump = json.loads(subprocess.run(["bpftool", "-j", "map", "dump", "id", m], capture_output=True,
                                 text=True, check=True).stdout)
found = 0
for e in dump:
    key = bytes(int(b, 16) for b in e["key"])
    if int.from_bytes(key[32:36], "little") == lport and \
       int.from_bytes(key[36:40], "little") == rport:
        subprocess.run(["bpftool", "map", "delete", "id", m, "key"] + e["key"], check=True)
        found += 1
print("removed", found)
assert found == 1
EOF
ok $? "the connection's flow removed from the recorder's table ($(cat "$tmp/removed"))"

out=$(step talk)
[ "$out" = "talk $REQS" ]
ok $? "the client's $REQS requests answered ($out)"

out=$(step connect)
[ "$out" = "connect $REQS" ]
ok $? "a client bound to served port $X made $REQS requests to $Y ($out)"
echo end >&3
exec 3>&-
wait $cli; cli=

sleep 1.5
kill -TERM $rec_pid; wait $rec_pid; rc=$?; rec_pid=
ok $rc "record exits 0 ($(cat "$tmp/a.err"))"

"$L" report "$tmp/a.snap" --json -q "from flows group by lport, rport, comm show count, \
sum(bytes_in), sum(bytes_out), sum(evicted), sum(unsolicited), min(lat)" \
	> "$tmp/a.json" 2> "$tmp/a.rep"
rows=$(grep -v '"health"' "$tmp/a.json")
out=$(python3 - "$P" "$cport" "$REQS" "$rows" <<'EOF'
import json, sys
P, cport, N = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rows = [json.loads(l) for l in sys.argv[4].splitlines()]
r = [r for r in rows if r["lport"] == P]
assert len(r) == 1, rows
r = r[0]
assert r["rport"] == cport and r["comm"] == "python3", r
assert r["count"] == N and r["sum(bytes_in)"] == 8 * N and r["sum(bytes_out)"] == 8 * N, r
assert r["sum(evicted)"] == 0 and r["sum(unsolicited)"] == 0 and r["min(lat)"] > 0, r
print(json.dumps(r))
EOF
)
ok $? "the adopted connection: its $REQS requests and their bytes, served by python3 ($out)"

out=$(python3 - "$X" "$Y" "$REQS" "$rows" <<'EOF'
import json, sys
X, Y, N = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rows = [json.loads(l) for l in sys.argv[4].splitlines()]
assert not [r for r in rows if r["lport"] == X], rows
r = [r for r in rows if r["lport"] == Y]
assert len(r) == 1 and r[0]["rport"] == X and r[0]["count"] == N, rows
assert r[0]["sum(unsolicited)"] == 0 and r[0]["sum(evicted)"] == 0, rows
print(json.dumps(r[0]))
EOF
)
ok $? "the client bound to served port $X is no flow; its server's $REQS requests counted ($out)"
! grep -q warning "$tmp/a.err" "$tmp/a.rep"
ok $? "no warning from record or report ($(cat "$tmp/a.err" "$tmp/a.rep"))"
done_testing
