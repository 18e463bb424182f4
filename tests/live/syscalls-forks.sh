#!/bin/bash
# Short-lived processes under a long tick: two loops start /bin/true 150
# times a second each for 6 s while latop records with a 5 s tick and a
# table of 8192 keys (latoprc syscall_max).  Every process's calls are keys
# of their own (about 25 each), 20-40 thousand a tick: more than the table
# holds, unless the keys of processes that exited are freed between ticks
# (every 250 ms).  Every run's exit_group is counted, under its own name,
# none in the overflow row.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
tmp=$(mktemp -d); rec=
trap '[ -n "$rec" ] && kill -9 $rec 2>/dev/null; rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME=$tmp/cfg
mkdir -p "$tmp/cfg/latop"
printf 'syscall_max = 8192\n' > "$tmp/cfg/latop/latoprc"

"$L" record -o "$tmp/run.lat" -i 5s -q "from syscalls" 2> "$tmp/record.err" & rec=$!
wait_recording "$tmp/run.lat"; ok $? "the recorder attaches"
# Each loop counts its runs: the truth.
python3 - "$tmp" <<'PY'
import os, subprocess, sys, threading, time
tmp = sys.argv[1]
runs = [0, 0]
def loop(i):
    end = time.monotonic() + 6
    while time.monotonic() < end:
        subprocess.run(["/bin/true"])
        runs[i] += 1
        time.sleep(1 / 150)
ts = [threading.Thread(target=loop, args=(i,)) for i in (0, 1)]
for t in ts: t.start()
for t in ts: t.join()
open(f"{tmp}/truth", "w").write(str(sum(runs)))
PY
sleep 6	# the tick that reads the last runs' calls ends
kill -TERM $rec; wait $rec; ok $? "the recorder finishes on SIGTERM"; rec=

"$L" report "$tmp/run.lat" --json -q "from syscalls where comm == 'true' and syscall == exit_group show count" \
	> "$tmp/count.json" 2> "$tmp/report.err"
python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
truth = int(open(f"{tmp}/truth").read())
rows = [json.loads(l) for l in open(f"{tmp}/count.json") if l.strip()]
got = rows[0]["count"] if rows else 0
health = [json.loads(l)["health"] for l in open(f"{tmp}/report.err") if l.startswith('{"health"')]
over = sum(h["overflow"] for h in health if h["table"] == "syscalls")
print("# %d runs of /bin/true, %d exit_group counted under 'true', %d calls in the overflow row"
      % (truth, got, over))
sys.exit(0 if truth > 500 and got == truth and over == 0 else 1)
PY
ok $? "every run counted under its own name, nothing in the overflow row"
done_testing
