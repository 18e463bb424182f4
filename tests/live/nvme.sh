#!/bin/bash
# The nvme view on a host without NVMe/TCP: the probe must refuse to open
# with the reason while the other probes run on, and recordings made where
# NVMe/TCP runs (tests/data/nvme-vm, from tests/vm/nvme-tcp.sh) must report,
# compare and join here as they did there.
set -u
. "$(dirname "$0")/../lib.sh"
top=${LATOP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
L=${LATOP_BIN:-$top/.output/san/latop}
[ -x "$L" ] || L=$top/latop
[ -x "$L" ] || skip_all "no latop binary (make latop tests-build)"
D=$top/tests/data/nvme-vm
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

json() { "$L" report "$@" --json; }

out=$(json "$D/all.snap" -q "from nvme group by side, op, size show count, misfit")
echo "$out" | python3 -c '
import json, sys
got = {(r["side"], r["op"], r["size"]): (r["count"], r["misfit"]) for r in map(json.loads, sys.stdin)}
want = {}
for side in ("initiator", "target"):
    want.update({(side, "read", 4096): (200, 0), (side, "write", 4096): (200, 0),
                 (side, "read", 131072): (40, 0), (side, "write", 131072): (40, 0)})
assert got == want, got
'
ok $? "replay: a 6.1 guest's nvme recording reports the I/O it recorded, per side, op and size"

out=$(json "$D/all.snap" -q "from nvme_events where side == 'initiator' group by seq show count")
echo "$out" | python3 -c '
import json, sys
got = {r["seq"]: r["count"] for r in map(json.loads, sys.stdin)}
assert got == {"read": 240, "write_inline": 200, "write_r2t": 40}, got
'
ok $? "replay: single I/Os keep their stage sequence (read, write_inline, write_r2t)"

out=$(json "$D/all.snap" -q "from nvme where op == 'write' and size == 128K group by side, stage show sum(time)")
tot=$(json "$D/all.snap" -q "from nvme where op == 'write' and size == 128K group by side show sum(time)")
printf '%s\n--\n%s\n' "$out" "$tot" | python3 -c '
import json, sys
a, b = sys.stdin.read().split("--\n")
st = {}
for r in map(json.loads, a.split("\n")[:-1]):
    st.setdefault(r["side"], {})[r["stage"]] = r["sum(time)"]
tot = {r["side"]: r["sum(time)"] for r in map(json.loads, b.split())}
assert set(st["initiator"]) == {"queue", "submit", "r2t", "data_out", "remote", "rx", "complete"}, st
assert set(st["target"]) == {"t_recv", "t_exec", "t_send"}, st
for side in tot:
    assert sum(st[side].values()) == tot[side], (side, st, tot)
'
ok $? "replay: group by stage gives a 128K write's seven initiator and three target stages, adding up to its time"

out=$(json "$D/all.snap" -q "from nvme where side == 'initiator' and op == 'read' and size == 4K group by op show p50(remote), p99(remote), max(remote), avg(remote), sum(remote), count")
echo "$out" | python3 -c '
import json, sys
r = json.loads(sys.stdin.readline())
assert 0 < r["p50(remote)"] <= r["p99(remote)"] <= r["max(remote)"], r
assert abs(r["avg(remote)"] - r["sum(remote)"] / r["count"]) <= 0.01 * r["avg(remote)"], r
'
ok $? "replay: percentiles of one stage from its own histogram ($(echo $out | head -c 200))"

out=$(json "$D/init.snap" -q "from nvme where side == 'initiator' and op == 'read' and size == 4K group by op show count, p50(lat), avg(remote) baseline '$D/all.snap'")
echo "$out" | python3 -c '
import json, sys
r = json.loads(sys.stdin.readline())
assert r["count"] == 400 and r["count/base"] == 2, r
assert r["p50(lat)/base"] > 1 and r["avg(remote)/base"] > 0, r
'
ok $? "replay: BASELINE gives the loaded run's LAD against the unloaded one ($(echo $out | head -c 300))"

out=$(json "$D/init.snap" "$D/target.snap" -q "from nvme_joined group by op, size show count, unmatched, sum(lat), sum(queue), sum(submit), sum(net), sum(t_recv), sum(t_exec), sum(t_send), sum(rx), sum(complete)")
echo "$out" | python3 -c '
import json, sys
rows = {(r["op"], r["size"]): r for r in map(json.loads, sys.stdin)}
assert {k: r["count"] for k, r in rows.items()} == {("read", 4096): 400, ("write", 131072): 40}, rows
for r in rows.values():
    parts = sum(r["sum(%s)" % p] for p in ["queue", "submit", "net", "t_recv", "t_exec", "t_send", "rx", "complete"])
    assert r["unmatched"] == 0 and parts == r["sum(lat)"] and r["sum(net)"] > 0, r
'
ok $? "replay: an initiator's and a target's recordings join, network split out"

# Live, on a kernel without the NVMe/TCP modules.
if [ "$(id -u)" -ne 0 ]; then
	skip "live part: needs root"
	skip "live part: needs root"
	skip "live part: needs root"
elif [ -e /sys/kernel/btf/nvme_tcp ] || [ -e /sys/kernel/btf/nvmet_tcp ]; then
	skip "live part: this kernel has NVMe/TCP loaded (tests/vm/nvme-tcp.sh covers it)"
	skip "live part: this kernel has NVMe/TCP loaded"
	skip "live part: this kernel has NVMe/TCP loaded"
else
	out=$("$L" probes 2>&1)
	echo "$out" | sed -n '/^nvme:/,/^  initiator: bio/p' | grep -q "off: no nvme_tcp in this kernel"
	ok $? "probes: the nvme probe says the kernel has no nvme_tcp"

	"$L" record -o "$tmp/n.snap" -d 1s --quiet -q "from nvme" 2>"$tmp/err"
	rc=$?
	[ $rc -ne 0 ] && grep -q "no nvme_tcp/nvmet_tcp in this kernel" "$tmp/err"
	ok $? "record from nvme: refused with the reason ($(head -c 200 "$tmp/err"))"

	# The host may be idle: a known workload makes what syscalls must see.
	# It runs under a name of its own (a link's), so that the workloads of
	# tests running at the same time are not counted with it.
	"$L" record -o "$tmp/all.snap" -d 4s --quiet 2>"$tmp/err2" & rec_pid=$!
	W=${LATOP_HELPERS:-$top/.output/helpers}/workload
	ln -s "$W" "$tmp/nvme-others"
	if wait_recording "$tmp/all.snap" && [ -x "$W" ]; then echo g | "$tmp/nvme-others" sysload 1000 >/dev/null; fi
	wait $rec_pid; rc=$?
	n=$("$L" report "$tmp/all.snap" -q "from syscalls where comm == 'nvme-others' and syscall == getppid show count" --json 2>"$tmp/err3")
	[ $rc -eq 0 ] && echo "$n" | python3 -c 'import json,sys; assert json.loads(sys.stdin.readline())["count"] == 1000'
	ok $? "record of every view: the others run on without nvme (the workload's 1000 getppid: $n; $(head -c 200 "$tmp/err2") $(head -c 200 "$tmp/err3"))"
fi
done_testing
