#!/bin/bash
# Names and counts a user can check with strace: every call is shown under
# the name its thread had when it made it (after an exec from a shell, a
# prctl(PR_SET_NAME), a pthread_setname_np from the thread itself or from
# another), and the calls that do not return the usual way are counted
# once each: exit and exit_group (at entry, without a latency), execve (in
# the image it returns to, from any thread), rt_sigreturn.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
H=$LATOP_HELPERS/renamer
[ -x "$H" ] || skip_all "no renamer helper at $H (make tests-build)"
tmp=$(mktemp -d); rec_pid=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; rm -rf "$tmp"' EXIT

# The same program under other names, to tell its runs apart by comm.
cp "$H" "$tmp/forker"; cp "$H" "$tmp/threader"

# counts QUERY: the report of the recording as {"comm/syscall": count}.
counts() {
	"$L" report "$tmp/run.snap" -q "$1 group by comm, syscall show count" --json |
		python3 -c '
import json, sys
print(json.dumps({r["comm"] + "/" + r["syscall"]: r["count"] for r in map(json.loads, sys.stdin)},
                 sort_keys=True))'
}

"$L" record -o "$tmp/run.snap" -d 5s --quiet \
	-q "from syscalls where syscall in (getppid, execve, exit, exit_group, rt_sigreturn)" &
rec_pid=$!
wait_recording "$tmp/run.snap"; ok $? "the recorder attaches"
# sh calls getppid itself (dash sets $PPID) before it execs: sh0 tells how often.
sh -c "exec $H getppid 0" & sh0=$!; wait $sh0
sh -c "exec $H exec 2 500" & chain=$!; wait $chain
"$H" threadexec 100 & tx=$!; wait $tx
"$H" prctl 100 newname 300 & pr=$!; wait $pr
"$H" thread 40 60 & th=$!; wait $th
"$tmp/forker" forkexit 20 > "$tmp/forker.pid"
"$tmp/threader" threadexit 30 & te=$!; wait $te
"$H" signals 50 & sg=$!; wait $sg
wait $rec_pid; ok $? "record exits 0"; rec_pid=

base=$(counts "from syscalls where pid == $sh0 and syscall == getppid")
out=$(counts "from syscalls where pid == $chain and syscall == getppid")
python3 -c '
import json, sys
base, got = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert got.get("renamer/getppid") == 500, got
assert got.get("sh/getppid", 0) == base.get("sh/getppid", 0), (got, base)
' "$base" "$out"
ok $? "sh -c 'exec renamer': its 500 getppid are all under renamer, none under sh ($out; sh alone: $base)"

out=$(counts "from syscalls where pid == $chain and syscall == execve")
[ "$out" = '{"renamer/execve": 3, "sh/execve": 1}' ]
ok $? "each execve counted once, under the program it started: 1 into sh, 3 into renamer ($out)"

out=$(counts "from syscalls where pid == $tx and syscall in (execve, getppid)")
[ "$out" = '{"renamer/execve": 2, "renamer/getppid": 100}' ]
ok $? "an exec from a second thread is counted, once, under the id it takes: 2 execve in all ($out)"

out=$(counts "from syscalls where pid == $pr and syscall == getppid")
[ "$out" = '{"newname/getppid": 300, "renamer/getppid": 100}' ]
ok $? "prctl(PR_SET_NAME): 100 getppid before under renamer, 300 after under newname ($out)"

out=$(counts "from syscalls where pid == $th and syscall == getppid")
[ "$out" = '{"wk-a/getppid": 40, "wk-b/getppid": 60}' ]
ok $? "pthread_setname_np: 40 getppid as wk-a, renamed by main, 60 as wk-b ($out)"

out=$(counts "from syscalls where pid in ($chain, $pr, $th) and syscall in (exit, exit_group)")
[ "$out" = '{"newname/exit_group": 1, "renamer/exit_group": 2, "wk-b/exit": 1}' ]
ok $? "exit and exit_group counted once each, under the name at the end ($out)"

fp=$(cat "$tmp/forker.pid")
out=$("$L" report "$tmp/run.snap" --json \
	-q "from syscalls where comm == 'forker' and syscall == exit_group and pid != $fp group by pid show count")
echo "$out" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.strip()]
assert len(rows) == 20 and all(r["count"] == 1 for r in rows), rows
'; ok $? "20 forked children that _exit: exactly one exit_group each ($(echo $out | head -c 200))"

out=$(counts "from syscalls where pid == $te and syscall in (exit, exit_group)")
[ "$out" = '{"threader/exit": 30, "threader/exit_group": 1}' ]
ok $? "30 threads end in exit, the process in exit_group: counted 30 and 1 ($out)"

out=$("$L" report "$tmp/run.snap" --json -q "from syscalls where pid == $te and syscall == exit \
	show count, sum(time), p50(lat), max(lat)")
[ "$out" = '{"count":30,"sum(time)":0,"p50(lat)":null,"max(lat)":null}' ]
ok $? "exit has no latency: time 0, p50 and max of lat null ($out)"

out=$(counts "from syscalls where pid == $sg and syscall == rt_sigreturn")
[ "$out" = '{"renamer/rt_sigreturn": 50}' ]
ok $? "50 signal handlers return through rt_sigreturn: counted 50 ($out)"

# A recording whose query is of syscall_events: its GROUP BY names the
# events' fields, not the syscalls table's, so the syscalls table keeps its
# full key and reports the 30 threads apart.
"$L" record -o "$tmp/ev.snap" -d 3s --quiet \
	-q "from syscall_events where comm == 'threader' group by comm show count" &
rec_pid=$!
wait_recording "$tmp/ev.snap"
"$tmp/threader" threadexit 30 & te=$!; wait $te
wait $rec_pid; rec_pid=
out=$("$L" report "$tmp/ev.snap" --json -q "from syscalls where pid == $te and syscall == exit group by tid show count")
echo "$out" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.strip()]
assert len(rows) == 30 and all(r["count"] == 1 and r["tid"] for r in rows), rows
'; ok $? "recorded for syscall_events, the syscalls table still keys by thread: 30 tids, one exit each ($(echo $out | head -c 200))"
done_testing
