#!/bin/bash
# The block view in the TUI: a replay of a loaded recording with BASELINE
# against an unloaded one marks, in each row, the stage ratio that grew
# most (the latency amplification of the worst stage), and only that one.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
B=${LATOP_HELPERS:-.output/helpers}/blkio
S=latopblk-$$
tui_require
[ -x "$B" ] || skip_all "no blkio helper at $B (make tests-build)"
need_root
command -v losetup >/dev/null || skip_all "no losetup (util-linux)"
tmp=$(mktemp -d); loop=; bg_pid=; rec_pid=
trap 'tui_end; [ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; [ -n "$bg_pid" ] && kill -9 $bg_pid 2>/dev/null; [ -n "$loop" ] && losetup -d $loop; rm -rf "$tmp" /dev/shm/latop-tui-$$.img' EXIT
truncate -s 64M /dev/shm/latop-tui-$$.img
loop=$(losetup -f --show /dev/shm/latop-tui-$$.img) || skip_all "losetup failed"
D=$(basename "$loop")
udevadm settle 2>/dev/null; sleep 0.5

# rec NAME [BACKGROUND-LOAD]: 1000 4K reads at depth 1 recorded into NAME.snap;
# loaded, behind 8 writers of 1 MiB each, so that the loop device's queue
# holds several ahead of each read (about 1 ms a read, against 15-35 us
# unloaded; 128 KiB writes gave 110-180 us, less than one unloaded
# baseline that took 213 us while the machine was slow, and the check
# failed: nothing grew).
rec() {
	"$BIN" record -o "$tmp/$1.snap" -d 4s --quiet -q "from block where dev == '$D'" & rec_pid=$!
	for _ in $(seq 100); do [ -e "$tmp/$1.snap.tmp" ] && break; sleep 0.1; done
	sleep 0.5
	if [ -n "${2:-}" ]; then "$B" randwrite-now "$loop" 1048576 6 8 >/dev/null & bg_pid=$!; sleep 0.3; fi
	echo g | "$B" read "$loop" 4096 1000 1 >/dev/null
	[ -n "$bg_pid" ] && { kill $bg_pid 2>/dev/null; wait $bg_pid 2>/dev/null; bg_pid=; }
	wait $rec_pid; rec_pid=
}
rec base
rec load loaded
q="from block where comm == 'blkio' and op == 'read' group by op show count, avg(alloc), avg(plug), avg(sched), avg(device) baseline '$tmp/base.snap'"
want=$("$BIN" report "$tmp/load.snap" -q "$q" --json | python3 -c '
import json, sys
r = json.loads(sys.stdin.readline())
st = {k: v for k, v in r.items() if k.endswith("/base") and k != "count/base" and v is not None}
k = max(st, key=st.get)
print("%s %.2fx" % (k, st[k]))
sys.exit(0 if st[k] > 1 else 1)')
ok $? "the report names the stage that grew most, by more than 1x ($want)"

# Go to the last tick (the replay plays on its own: an early screen holds
# only the first ticks) and wait until it is drawn with the row.
at_last_tick() {
	for _ in $(seq 50); do
		tmux capture-pane -p -t "$S" | grep -q '^read ' && break
		sleep 0.1
	done
	tmux send-keys -t "$S" G
	for _ in $(seq 50); do
		tmux capture-pane -p -t "$S" | grep -qE '\[([0-9]+)/\1\]' &&
			tmux capture-pane -p -t "$S" | grep -q '^read ' && break
		sleep 0.1
	done
}
tmux new-session -d -s "$S" -x 200 -y 30 "$BIN replay $tmp/load.snap -q \"$q\""
at_last_tick
marked=$(tmux capture-pane -e -p -t "$S" | python3 -c '
import re, sys
lines = sys.stdin.read().split("\n")
sgr = re.compile(r"\x1b\[[0-9;]*m")
head = next(sgr.sub("", l) for l in lines if "avg(device)/base" in sgr.sub("", l))
row = next(l for l in lines if sgr.sub("", l).startswith("read "))
cols = {m.end(): m.group() for m in re.finditer(r"\S+", head)}
out = []
# A cell drawn bold (the mark), through the colour codes that follow.
for m in re.finditer(r"\x1b\[1m(?:\x1b\[[0-9;]*m)*\s*[0-9.]+x", row):
    end = len(sgr.sub("", row[:m.end()]))
    out.append(cols.get(end, "?"))
print(" ".join(out))')
[ "$marked" = "${want%% *}" ]
ok $? "the replay marks that stage's ratio column and no other (marked '$marked', want '${want%% *}')"
[ "$marked" = "${want%% *}" ] || tmux capture-pane -p -t "$S" | sed 's/^/#  |/'
tmux send-keys -t "$S" q
sleep 0.5
tmux kill-session -t "$S" 2>/dev/null

# Rows that are stages: the row of the stage whose time grew most is marked.
q="from block where comm == 'blkio' and op == 'read' group by op, stage show count, sum(time) baseline '$tmp/base.snap'"
want=$("$BIN" report "$tmp/load.snap" -q "$q" --json | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
rows = [r for r in rows if r["sum(time)/base"] is not None]
print(max(rows, key=lambda r: r["sum(time)/base"])["stage"])')
tmux new-session -d -s "$S" -x 200 -y 30 "$BIN replay $tmp/load.snap -q \"$q\""
at_last_tick
marked=$(tmux capture-pane -e -p -t "$S" | python3 -c '
import re, sys
sgr = re.compile(r"\x1b\[[0-9;]*m")
out = [sgr.sub("", l).split()[1] for l in sys.stdin.read().split("\n")
       if re.search(r"\x1b\[1m(?:\x1b\[[0-9;]*m)*\s*[0-9.]+x", l)]
print(" ".join(out))')
[ -n "$want" ] && [ "$marked" = "$want" ]
ok $? "group by stage: the $want row's time ratio is marked, no other (marked '$marked')"
[ -n "$want" ] && [ "$marked" = "$want" ] || tmux capture-pane -p -t "$S" | sed 's/^/#  |/'
tmux send-keys -t "$S" q
done_testing
