#!/bin/bash
# The paths probe on a kernel without the sock_*_length tracepoints:
# Debian's 6.1 under qemu, where it must fall back to fentry on
# security_socket_sendmsg and fexit on sock_recvmsg (both refused on the
# host).  Three tiers run in the guest; the host's latop reports the
# guest's recording and checks the path shapes and call counts against the
# tiers' truth.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
vm_latop_setup latop-static helpers-static

vm_init paths-fentry
vm_file "$top/.output/static/latop" /bin/latop
vm_file "$top/.output/static/tiers" /bin/tiers
cat >"$VM_DIR/guest.sh" <<'EOF2'
# Runs in the guest, cwd /share.
uname -r >uname
latop probes >probes.txt 2>&1
tiers serve -p 9302 -w 4 -d 2000 -t back.tsv >/dev/null & b=$!
tiers serve -p 9301 -w 4 -d 1000 -c 127.0.0.1:9302:1:2 -t mid.tsv >/dev/null & m=$!
tiers serve -p 9300 -w 4 -d 500 -c 127.0.0.1:9301:1:1 -t front.tsv >/dev/null & f=$!
latop record -o x.snap --quiet -q "from paths where pid in ($b, $m, $f) threshold 1ns buffer 100000" \
	2>record.err & rec=$!
vm_wait_file x.snap.tmp $rec || { echo "the recorder did not start"; kill $rec; exit 1; }
sleep 0.5
tiers client -c 127.0.0.1:9300 -C 2 -n 30 -f 6 -t client.tsv || echo "client failed"
sleep 2.5
kill -TERM $rec
wait $rec
echo $? >record.rc
kill $b $m $f
EOF2
vm_ok_run "$VM_DIR/guest.sh" 300
sed -n '/^paths:/,/^[a-z]/p' "$S/probes.txt" 2>/dev/null | sed 's/^/# probes: /' | head -n 8

grep -A1 -F "  TCP send " "$S/probes.txt" 2>/dev/null | head -n1 | grep -qF "fentry/security_socket_sendmsg" &&
	grep -A1 -F "  TCP receive " "$S/probes.txt" 2>/dev/null | head -n1 | grep -qF "fexit/sock_recvmsg"
ok $? "probes: fentry/security_socket_sendmsg and fexit/sock_recvmsg chosen where the tracepoints are missing"

[ "$(cat "$S/record.rc" 2>/dev/null)" = 0 ] && [ -s "$S/x.snap" ]
ok $? "latop record in the guest finished x.snap on SIGTERM ($(cat "$S/record.err" 2>/dev/null))"

"$L" report "$S/x.snap" -q "from paths group by lport, path show count, calls" --json > "$S/paths.json"
"$L" report "$S/x.snap" -q "from path_events show ts, id, lport, rport, nth, path, calls, lat" --json > "$S/events.json"
python3 - "$S" <<'PY'
import collections, json, sys
s = sys.argv[1]
truth, want = {}, collections.Counter()
for tier in ("front", "mid", "back"):
    for l in open(f"{s}/{tier}.tsv"):
        lport, rport, nth, t0, t1, lat, calls, shape = l.rstrip("\n").split(" ", 7)
        truth[(int(lport), int(rport), int(nth))] = (shape, int(calls), int(lat))
        want[shape] += 1
got = collections.Counter()
for r in map(json.loads, open(f"{s}/paths.json")):
    if r["lport"] in (9300, 9301, 9302):
        got[r["path"]] += r["count"]
assert got == want, (got, want)
ev = {(e["lport"], e["rport"], e["nth"]): e for e in map(json.loads, open(f"{s}/events.json"))}
bad = [k for k, t in truth.items() if k not in ev or ev[k]["path"] != t[0] or ev[k]["calls"] != t[1]]
assert not bad, bad[:5]
# TCG time is noisy (a vCPU can stall for ms between the hook and the
# tiers' own clock reads): only the median error is held to a bound.
rel = sorted(abs(ev[k]["lat"] - t[2]) / t[2] for k, t in truth.items())
assert rel[len(rel) // 2] < 0.15, rel[len(rel) // 2]
print(f"# {len(truth)} requests, {len(want)} shapes, as the truth says; median latency error {100 * rel[len(rel) // 2]:.1f}%")
PY
ok $? "the guest's paths: shapes, counts and calls per request equal the truth; median latency within 15%"
done_testing
