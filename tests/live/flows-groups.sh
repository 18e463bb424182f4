#!/bin/bash
# A grouped query of the flows table (one that reads neither flow nor rport)
# is counted in the kernel per group, not per connection: 3,000 keep-alive
# connections grouped by lport and comm are one kernel key a CPU, and their
# 12,000 requests and bytes are counted exactly.  A serving thread renamed
# mid-connection splits its requests by the name that read them, with no
# row of bytes under pid 0, and idle groups leave the kernel's table.  With flow_max 64, the connections beyond the
# map are counted in their group, not in (other).
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
R=$LATOP_HELPERS/reqsrv
[ -x "$R" ] || skip_all "no reqsrv helper at $R (make tests-build)"
command -v bpftool >/dev/null || skip_all "no bpftool to count the kernel's keys"
tmp=$(mktemp -d); rec_pid=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME=$tmp/cfg
mkdir -p "$tmp/cfg/latop"; : > "$tmp/cfg/latop/latoprc"
base=$(free_ports 3)
P=$base PR=$((base + 1)) PS=$((base + 2))
ncpu=$(nproc)

# keys PID MAP: the entries of PID's BPF map named MAP (found by the map
# ids of PID's descriptors).
keys() {
	python3 - "$1" "$2" <<'EOF'
import json, os, re, subprocess, sys
pid, name = sys.argv[1], sys.argv[2]
ids = set()
for fd in os.listdir("/proc/%s/fdinfo" % pid):
    try:
        m = re.search(r"^map_id:\s*(\d+)", open("/proc/%s/fdinfo/%s" % (pid, fd)).read(), re.M)
    except OSError:
        continue
    if m:
        ids.add(int(m.group(1)))
maps = json.loads(subprocess.run(["bpftool", "map", "show", "--json"], capture_output=True).stdout)
ids = [m["id"] for m in maps if m.get("name") == name and m["id"] in ids]
if len(ids) != 1:
    sys.exit("%d maps named %s of pid %s" % (len(ids), name, pid))
out = subprocess.run(["bpftool", "map", "dump", "id", str(ids[0]), "--json"], capture_output=True)
print(len(json.loads(out.stdout)))
EOF
}

# 3,000 connections, 4 rounds: 12,000 requests of 8 bytes, answered with 8.
"$L" record -o "$tmp/g.snap" -i 1s --quiet \
	-q "from flows where lport == $P group by lport, comm show count, sum(bytes_in)" \
	2> "$tmp/g.err" & rec_pid=$!
wait_recording "$tmp/g.snap"
"$R" many $P 3000 4 > "$tmp/g.truth"
groups=$(keys $rec_pid agg 2>&1)
sleep 1.5
kill -TERM $rec_pid; wait $rec_pid; rec_pid=
[ -n "$groups" ] && [ "$groups" -ge 1 ] 2>/dev/null && [ "$groups" -le "$ncpu" ]
ok $? "3,000 connections grouped by lport, comm: $groups kernel keys (at most one a CPU, $ncpu)"
"$L" report "$tmp/g.snap" --json -q "from flows group by lport, comm show count, sum(bytes_in), \
sum(bytes_out), sum(evicted)" > "$tmp/g.json" 2>"$tmp/g.rep"
out=$(python3 - "$tmp/g.json" $P <<'EOF'
import json, sys
rows = [r for r in map(json.loads, open(sys.argv[1])) if "health" not in r]
print(rows)
assert len(rows) == 1, "one row"
r = rows[0]
assert (r["lport"], r["comm"]) == (int(sys.argv[2]), "reqsrv"), "the port and its server"
assert (r["count"], r["sum(bytes_in)"], r["sum(bytes_out)"], r["sum(evicted)"]) == \
    (12000, 96000, 96000, 0), "12,000 requests, 96,000 bytes each way"
EOF
)
ok $? "every request and byte counted in the group ($(cat "$tmp/g.truth"): $out)"
! grep -q "overflow\|evicted\|lost" "$tmp/g.err"
ok $? "record warns of nothing ($(cat "$tmp/g.err"))"

# The serving thread renames itself once it has answered request 99; the
# first request of the connection arrives before it is read.
"$L" record -o "$tmp/n.snap" -i 250ms --quiet -q "from flows where lport == $PR group by comm, pid show count, sum(bytes_in)" \
	2> "$tmp/n.err" & rec_pid=$!
wait_recording "$tmp/n.snap"
"$R" server 127.0.0.1 $PR 1 1 > "$tmp/srvn" & sn=$!
wait_ready "$tmp/srvn"
"$R" client 127.0.0.1 $PR 200 -n 99 -w 800 >/dev/null
wait $sn
# A group unchanged for 10 reads (2.5 s here) leaves the kernel's table,
# its last totals taken with it.
sleep 4
idle=$(keys $rec_pid agg 2>&1)
kill -TERM $rec_pid; wait $rec_pid; rec_pid=
[ "$idle" = 0 ]
ok $? "4 s after the last request, the idle groups are gone from the kernel ($idle left)"
"$L" report "$tmp/n.snap" --json -q "from flows group by comm, pid show count, sum(bytes_in), sum(bytes_out)" \
	> "$tmp/n.json" 2>"$tmp/n.rep"
out=$(python3 - "$tmp/n.json" <<'EOF'
import json, sys
rows = [r for r in map(json.loads, open(sys.argv[1])) if "health" not in r]
print(sorted((r["comm"], r["count"], r["sum(bytes_in)"]) for r in rows))
assert sorted((r["comm"], r["count"]) for r in rows) == [("reqsrv", 100), ("reqsrv-renamed", 100)]
assert all(r["pid"] and r["sum(bytes_in)"] and r["sum(bytes_in)"] == rows[0]["sum(bytes_in)"]
           for r in rows), "the bytes of each half under its name, none under pid 0"
EOF
)
ok $? "grouped by comm: 100 requests under reqsrv, 100 under reqsrv-renamed, each with its bytes ($out)"

# flow_max 64, 300 connections at once: those beyond the map are followed on
# their sockets and counted in their group.
printf 'flow_max = 64\nflow_spill = always\n' > "$tmp/cfg/latop/latoprc"
"$L" record -o "$tmp/s.snap" -i 500ms --quiet -q "from flows where lport == $PS group by lport show count" \
	2> "$tmp/s.err" & rec_pid=$!
wait_recording "$tmp/s.snap"
"$R" many $PS 300 4 > "$tmp/s.truth"
sleep 1.2
kill -TERM $rec_pid; wait $rec_pid; rec_pid=
"$L" report "$tmp/s.snap" --json -q "from flows group by lport show count, sum(bytes_in)" > "$tmp/s.json" 2>"$tmp/s.rep"
out=$(python3 - "$tmp/s.json" $PS <<'EOF'
import json, sys
rows = [r for r in map(json.loads, open(sys.argv[1])) if "health" not in r]
print(rows)
assert [(r["lport"], r["count"], r["sum(bytes_in)"]) for r in rows] == [(int(sys.argv[2]), 1200, 9600)]
EOF
)
ok $? "flow_max 64, 300 connections: all 1,200 requests in the port's row, none in (other) ($out)"
! grep -q "overflow" "$tmp/s.err"
ok $? "record counts nothing in overflow rows ($(cat "$tmp/s.err"))"
done_testing
