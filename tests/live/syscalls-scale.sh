#!/bin/bash
# The syscalls view at the scale of a busy host: 1,000 threads alive at once,
# each making 8 cheap syscalls 20 times (160,000 calls), counted exactly.
# Per thread, the table holds them all.  With latoprc syscall_max = 1024
# (fewer slots than 8,000 thread keys) the threads whose keys find no slot
# are counted in their process's overflow row (tid 0), so each process's
# counts stay whole, and record and report say how much went there; when
# even those rows find no slot (each of the 1,000 threads named apart) the
# table's (other) row takes the rest, and every total stays exact.  A query
# that does not read tid keys by process in the kernel and needs 8 keys a
# CPU, so nothing overflows.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
W=$LATOP_HELPERS/workload
[ -x "$W" ] || skip_all "no workload helper at $W (make tests-build)"
tmp=$(mktemp -d); rec_pid=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; [ -n "$KEEP" ] || rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME=$tmp/cfg
mkdir -p "$tmp/cfg/latop"; : > "$tmp/cfg/latop/latoprc"
THREADS=1000 CALLS=20
WANT=$((THREADS * CALLS))
CALLS8="'getppid', 'getpid', 'gettid', 'getuid', 'geteuid', 'getgid', 'getegid', 'getpgrp'"
ONLY="comm == 'crowd' and syscall in ($CALLS8)"

# record_crowd NAME QUERY: record while a crowd runs, only the crowd's calls.
record_crowd() {
	"$L" record -o "$tmp/$1.snap" -i 500ms -q "$2" 2>"$tmp/$1.err" & rec_pid=$!
	wait_recording "$tmp/$1.snap"
	"$W" crowd $THREADS $CALLS
	sleep 1
	kill -TERM $rec_pid; wait $rec_pid; rec_pid=
}

# report NAME QUERY: the report's JSON lines, its warnings in NAME.rerr.
report() {
	"$L" report "$tmp/$1.snap" --json -q "$2" 2>"$tmp/$1.rerr"
}

"$L" probes | grep -Eq "keys held at once \(latoprc syscall_max\) +[0-9]+ keys"
ok $? "latop probes states the syscalls table's size"

# Per thread, the default size: a row per thread and syscall, all exact.
record_crowd thread "from syscalls where $ONLY group by pid, tid, comm, syscall show count"
report thread "from syscalls where syscall in ($CALLS8) group by tid, syscall show count" \
	> "$tmp/thread.json"
python3 - "$tmp/thread.json" $THREADS $CALLS <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
threads, calls = int(sys.argv[2]), int(sys.argv[3])
by = {}
for r in rows:
    by.setdefault(r["syscall"], []).append(r["count"])
bad = {s: (len(v), sum(v)) for s, v in by.items() if len(v) != threads or set(v) != {calls}}
print("# %d syscalls; not %d rows of %d: %s" % (len(by), threads, calls, bad))
sys.exit(0 if len(by) == 8 and not bad else 1)
EOF
ok $? "per thread: 8 syscalls x $THREADS rows of $CALLS calls each"
! grep -q "counted in overflow" "$tmp/thread.err" "$tmp/thread.rerr"
ok $? "per thread, default size: nothing counted in overflow ($(cat "$tmp/thread.err" "$tmp/thread.rerr"))"

# health NAME: the syscalls health figures report --json wrote last on
# standard error, as JSON.
health() {
	tail -1 "$tmp/$1.rerr" | python3 -c '
import json, sys
h = json.loads(sys.stdin.readline())["health"]
assert h["table"] == "syscalls", h
print(json.dumps(h))'
}

# Per thread, 1024 slots: the detail is coarser, every process's counts whole.
echo "syscall_max = 1024" > "$tmp/cfg/latop/latoprc"
"$L" probes | grep -q "keys held at once (latoprc syscall_max) *1024 keys"
ok $? "syscall_max = 1024: latop probes states it"
record_crowd small "from syscalls where $ONLY group by pid, tid, comm, syscall show count"
report small "from syscalls group by comm, syscall, tid show count" > "$tmp/small.json"
python3 - "$tmp/small.json" $WANT "$(health small)" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
want, h = int(sys.argv[2]), json.loads(sys.argv[3])
by, other, own, proc = {}, 0, 0, 0
for r in rows:
    if r["syscall"] == "(other)":
        other += r["count"]
        continue
    by[(r["comm"], r["syscall"])] = by.get((r["comm"], r["syscall"]), 0) + r["count"]
    if r["tid"]:
        own += r["count"]
    else:
        proc += r["count"]
bad = {k: v for k, v in by.items() if k[0] != "crowd" or v != want}
print("# per (comm, syscall): %d keys, not %d: %s; own rows %d, process rows (tid 0) %d, "
      "(other) %d; health %s" % (len(by), want, bad, own, proc, other, h))
sys.exit(0 if len(by) == 8 and not bad and own > 0 and proc > 0 and other == 0 and
         h["overflow"] == proc and h["evicted"] == 0 and h["lost"] == 0 else 1)
EOF
ok $? "1024 slots: each syscall of crowd exactly $WANT calls, in threads' rows and the process's overflow row (tid 0), as many as health's overflow"
grep -q "counted in overflow rows" "$tmp/small.err" && grep -q "counted in overflow rows" "$tmp/small.rerr"
ok $? "record and report say how much went to overflow ($(grep -h overflow "$tmp/small.err" "$tmp/small.rerr" | head -2))"

# 1024 slots, 1,000 threads named apart: 8,000 process keys too, more than
# the table holds; what finds no slot at all is in the (other) row.
# The crowd's process stops itself before its exec, so that the recording
# can take only its pid's calls.
sh -c 'kill -STOP $$; exec "$@"' sh "$W" crowd $THREADS $CALLS named & crowd_pid=$!
"$L" record -o "$tmp/named.snap" -i 500ms \
	-q "from syscalls where pid == $crowd_pid and syscall in ($CALLS8) group by pid, tid, comm, syscall show count" \
	2>"$tmp/named.err" & rec_pid=$!
wait_recording "$tmp/named.snap"
kill -CONT $crowd_pid; wait $crowd_pid
sleep 1
kill -TERM $rec_pid; wait $rec_pid; rec_pid=
report named "from syscalls group by syscall, tid show count" > "$tmp/named.json"
python3 - "$tmp/named.json" $((8 * WANT)) "$(health named)" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
want, h = int(sys.argv[2]), json.loads(sys.argv[3])
other = sum(r["count"] for r in rows if r["syscall"] == "(other)")
proc = sum(r["count"] for r in rows if r["syscall"] != "(other)" and not r["tid"])
own = sum(r["count"] for r in rows if r["syscall"] != "(other)" and r["tid"])
print("# own rows %d + process rows %d + (other) %d = %d of %d; health %s"
      % (own, proc, other, own + proc + other, want, h))
sys.exit(0 if own > 0 and proc > 0 and other > 0 and own + proc + other == want and
         h["overflow"] == proc + other and h["evicted"] == 0 and h["lost"] == 0 else 1)
EOF
ok $? "1024 slots, threads named apart: own rows, process rows and (other) hold all $((8 * WANT)) calls exactly, overflow = process rows + (other)"

# Per process, 1024 slots: a key per process, syscall and CPU; all exact.
record_crowd proc "from syscalls where $ONLY group by pid, comm, syscall show count"
report proc "from syscalls where syscall in ($CALLS8) group by syscall, tid show count" > "$tmp/proc.json"
python3 - "$tmp/proc.json" $WANT <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
want = int(sys.argv[2])
print("# %s" % rows)
sys.exit(0 if len(rows) == 8 and all(r["count"] == want and r["tid"] == 0 for r in rows) else 1)
EOF
ok $? "per process: each syscall one row (tid 0) of exactly $WANT calls"
! grep -q "counted in overflow" "$tmp/proc.err" "$tmp/proc.rerr"
ok $? "per process, 1024 slots: nothing counted in overflow"

echo "syscall_max = 12x" > "$tmp/cfg/latop/latoprc"
err=$("$L" probes 2>&1 >/dev/null)
echo "$err" | grep -q "latoprc:1: syscall_max: not a count of keys from 1024 to 1048576; using the default"
ok $? "a bad syscall_max is named with its line and the default used ($err)"
done_testing
