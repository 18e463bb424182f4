#!/bin/bash
# The paths view against a service whose paths are known: three tiers of
# tests/helpers/tiers (front -> mid -> back, front also -> back), several
# client connections and worker threads, replies split over many sends and
# receives.  Every tier writes the truth of each request it served; latop's
# recording must show the same path shapes with exact counts, the same
# downstream calls per request, and latencies that agree with the servers'.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
T=$LATOP_HELPERS/tiers
[ -x "$T" ] || skip_all "no tiers helper at $T (make tests-build)"
tmp=$(mktemp -d); pids=()
trap 'for p in "${pids[@]}"; do kill -9 $p 2>/dev/null; wait $p 2>/dev/null; done; rm -rf "$tmp"' EXIT
base=$(free_ports 4)
PB=$base PM=$((base + 1)) PF=$((base + 2)) PH=$((base + 3))

"$T" serve -p $PB -w 16 -d 2000 -t "$tmp/back.tsv" >/dev/null & pids+=($!); pb=$!
"$T" serve -p $PM -w 8 -d 1000 -c 127.0.0.1:$PB:1:2 -t "$tmp/mid.tsv" >/dev/null & pids+=($!); pm=$!
"$T" serve -p $PF -w 8 -d 500 -c 127.0.0.1:$PM:1:1 -c 127.0.0.1:$PB:0:1 -k 16384 \
	-t "$tmp/front.tsv" >/dev/null & pids+=($!); pf=$!
# A tier that hands each request to a second thread, which calls back and
# replies: the reply still pairs, the call is not attributed (see paths_recon.h).
"$T" serve -p $PH -w 2 -H -c 127.0.0.1:$PB:1 -t "$tmp/handoff.tsv" >/dev/null & pids+=($!); ph=$!
"$L" record -o "$tmp/run.lat" --quiet \
	-q "from paths where pid in ($pb, $pm, $pf, $ph) threshold 1ns buffer 100000" & rec=$!; pids+=($rec)
wait_recording "$tmp/run.lat"; ok $? "the recorder attaches"
timeout 120 "$T" client -c 127.0.0.1:$PF -C 4 -n 60 -f 3 -r 100000 -t "$tmp/client.tsv"
ok $? "4 clients x 60 requests through three tiers"
timeout 120 "$T" client -c 127.0.0.1:$PH -C 2 -n 25 -t "$tmp/hclient.tsv"
ok $? "2 clients x 25 requests to the tier that hands work to another thread"
sleep 2
kill -TERM $rec; wait $rec; ok $? "the recorder finishes on SIGTERM"

"$L" report "$tmp/run.lat" -q "from paths group by lport, path show count, calls, sum(down), sum(self), sum(time)" --json > "$tmp/paths.json"
pids=$("$L" report "$tmp/run.lat" -q "from paths group by pid show count" --csv | tail -n +2 | cut -d, -f1 | sort -n | tr '\n' ' ')
[ "$pids" = "$(printf '%s\n' $pb $pm $pf $ph | sort -n | tr '\n' ' ')" ]
ok $? "the pushed-down pid filter kept only the tiers (pids $pids; the clients are out)"
"$L" report "$tmp/run.lat" -q "from path_events show ts, id, path, lport, rport, nth, pid, tid, lat, calls, down, self, bytes_in, bytes_out" --json > "$tmp/events.json"
"$L" report "$tmp/run.lat" -q "from path_spans show id, row, start, dur, kind, label, n" --json > "$tmp/spans.json"

check() { python3 - "$tmp" "$PF" "$PM" "$PB" "$@" "$PH" <<'PY'
import collections, json, statistics, sys
tmp, pf, pm, pb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
what, ph = sys.argv[5], int(sys.argv[6])
load = lambda f: [json.loads(l) for l in open(f"{tmp}/{f}") if l.strip()]
truth = {}
for tier in ("front", "mid", "back"):
    for l in open(f"{tmp}/{tier}.tsv"):
        lport, rport, nth, t0, t1, lat, calls, shape = l.rstrip("\n").split(" ", 7)
        truth[(int(lport), int(rport), int(nth))] = dict(lat=int(lat), calls=int(calls), shape=shape)
paths, events, spans = load("paths.json"), load("events.json"), load("spans.json")
ports = (pf, pm, pb)
mine = [e for e in events if e["lport"] in ports]
if what == "shapes":
    want = collections.Counter(t["shape"] for t in truth.values())
    got = collections.Counter()
    for r in paths:
        if r["lport"] in ports:
            got[r["path"]] += r["count"]
    assert got == want, (got, want)
    print(f"# {len(want)} shapes, {sum(want.values())} requests")
elif what == "calls":
    got = {(e["lport"], e["rport"], e["nth"]): e for e in mine}
    assert set(got) == set(truth), (len(got), len(truth), sorted(set(truth) - set(got))[:5])
    bad = [(k, got[k]["path"], t["shape"]) for k, t in truth.items()
           if got[k]["calls"] != t["calls"] or got[k]["path"] != t["shape"]]
    assert not bad, bad[:5]
    print(f"# {len(got)} requests matched by connection and order")
elif what == "lat":
    got = {(e["lport"], e["rport"], e["nth"]): e for e in mine}
    err = sorted(abs(got[k]["lat"] - t["lat"]) for k, t in truth.items())
    close = sum(1 for k, t in truth.items()
                if abs(got[k]["lat"] - t["lat"]) <= max(200e3, 0.05 * t["lat"]))
    print(f"# |latop - truth|: median {statistics.median(err)/1e3:.1f} us, "
          f"p95 {err[int(0.95*len(err))]/1e3:.1f} us, max {err[-1]/1e3:.1f} us; "
          f"{close}/{len(err)} within max(200 us, 5%)")
    assert statistics.median(err) < 50e3, statistics.median(err)
    assert close >= 0.95 * len(err), close
elif what == "split":
    delay = {pf: 500e3, pm: 1000e3, pb: 2000e3}
    for e in mine:
        assert e["down"] + e["self"] == e["lat"], e
        assert e["self"] >= 0.98 * delay[e["lport"]], e
        assert (e["down"] == 0) == (e["calls"] == 0), e
    # A mid request waits on its back calls: down >= calls x the back delay.
    mids = [e for e in mine if e["lport"] == pm]
    assert all(e["down"] >= e["calls"] * 2000e3 for e in mids), mids[:3]
    for r in paths:
        if r["lport"] in ports:
            assert r["sum(down)"] + r["sum(self)"] == r["sum(time)"], r
    print(f"# self >= the tier's delay and down + self == lat for {len(mine)} requests")
elif what == "spans":
    by = collections.defaultdict(list)
    for s in spans:
        by[s["id"]].append(s)
    for e in mine:
        sp = by[e["id"]]
        req = [s for s in sp if s["kind"] == "request"]
        calls = [s for s in sp if s["kind"] == "call"]
        assert len(req) == 1 and req[0]["dur"] == e["lat"], (e, sp)
        assert len(calls) == e["calls"], (e, sp)
        assert all(req[0]["start"] <= c["start"] and c["start"] + c["dur"] <= req[0]["start"] + req[0]["dur"]
                   for c in calls), sp
    print(f"# {len(mine)} timelines: one request span, one span per call, calls inside the request")
elif what == "client":
    cl = {}
    for l in open(f"{tmp}/client.tsv"):
        cport, i, fan, lat = map(int, l.split())
        cl[(cport, i)] = lat
    got = {(e["rport"], e["nth"]): e["lat"] for e in mine if e["lport"] == pf}
    assert set(got) == set(cl), (len(got), len(cl))
    # The front's last send can return after the client has read the reply,
    # so "inside" allows the end of that syscall (preemption included).
    over = [(k, got[k], cl[k]) for k in cl if got[k] > cl[k]]
    assert len(over) <= 0.05 * len(cl) and all(g <= c + 2e6 for _, g, c in over), over[:5]
    print(f"# front requests ({len(got)}) fit inside their client-side round trips "
          f"({len(over)} end up to {max([g - c for _, g, c in over], default=0)/1e3:.0f} us after)")
elif what == "handoff":
    ht = [l.rstrip("\n").split(" ", 7) for l in open(f"{tmp}/handoff.tsv")]
    assert len(ht) == 50 and all(int(t[6]) == 1 for t in ht), ht[:2]
    rows = collections.Counter()
    for r in paths:
        if r["lport"] == ph or r["path"] == f"- → 127.0.0.1:{pb} ×1":
            rows[(r["lport"], r["path"])] += r["count"]
    assert rows == {(ph, f":{ph}"): 50, (0, f"- → 127.0.0.1:{pb} ×1"): 50}, rows
    got = {(e["rport"], e["nth"]): e["lat"] for e in events if e["lport"] == ph}
    err = [abs(got[(int(t[1]), int(t[2]))] - int(t[5])) for t in ht]
    assert statistics.median(err) < 50e3, statistics.median(err)
    print(f"# 50 requests answered by another thread: latency right (median error "
          f"{statistics.median(err)/1e3:.1f} us), their 50 calls stand alone as '- → back'")
PY
}
check shapes; ok $? "paths: counts per path shape equal the truth, on every tier"
check calls; ok $? "path_events: every request's path and downstream call count equal the truth"
check lat; ok $? "latencies agree with what the servers measured"
check split; ok $? "down + self == lat; self covers each tier's own delay; mid waits on back"
check spans; ok $? "path_spans: each request's timeline holds its calls"
check client; ok $? "the front tier's latency fits inside the client's round trip"
check handoff; ok $? "handoff: replies from another thread pair; its calls are paths of their own, not the request's"
done_testing
