#!/bin/bash
# latop serve: /metrics counts a known workload exactly, its histogram is
# cumulative and ends at +Inf = _count; a real Prometheus scrapes it and
# its _count and histogram_quantile agree with latop; bad requests (unknown
# path, POST, a 100 KB header, 200 idle connections, a client sending a
# byte a second) are answered or refused while the collector keeps counting
# exactly; /snapshot?last= gives a recording latop report reads; SIGTERM
# stops it cleanly; a port in use and a bad metric are said at startup.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
W=$LATOP_HELPERS/workload
[ -x "$W" ] || skip_all "no workload helper at $W (make tests-build)"
PROM=/usr/bin/prometheus
tmp=$(mktemp -d); srv_pid=; prom_pid=
trap '[ -n "$srv_pid" ] && kill -9 $srv_pid 2>/dev/null; [ -n "$prom_pid" ] && kill -9 $prom_pid 2>/dev/null; rm -rf "$tmp"' EXIT
comm=srvwl$$
cp "$W" "$tmp/$comm"; W=$tmp/$comm
port=$(free_ports 2); pport=$((port + 1))
URL=http://127.0.0.1:$port

# A bad metric is refused at startup, naming it; so is a port in use.
out=$(timeout 60 "$L" serve --listen 127.0.0.1:$port --metric 'oops=from syscalls group by nope' 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q "metric oops: bad query: .*unknown field 'nope'"
ok $? "a bad --metric: exit 2 naming it ($rc: $out)"
python3 -c 'import socket,sys,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); print("ready", flush=True); time.sleep(60)' $port > "$tmp/busy" & busy=$!
wait_ready "$tmp/busy"
out=$(timeout 60 "$L" serve --listen 127.0.0.1:$port 2>&1); rc=$?
kill $busy; wait $busy 2>/dev/null
[ $rc -eq 1 ] && echo "$out" | grep -q "cannot listen on 127.0.0.1 port $port: Address already in use"
ok $? "a port in use: exit 1 saying where and why ($rc: $out)"

# Prometheus first (it takes a while), scraping serve every second.
[ -x "$PROM" ] || { ok 1 "prometheus is not installed at $PROM (install-deps.sh --test installs it)"; done_testing; exit; }
cat > "$tmp/prom.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: latop
    static_configs:
      - targets: ['127.0.0.1:$port']
EOF
"$PROM" --config.file="$tmp/prom.yml" --storage.tsdb.path="$tmp/tsdb" \
	--web.listen-address=127.0.0.1:$pport >"$tmp/prom.log" 2>&1 & prom_pid=$!

"$L" serve --listen 127.0.0.1:$port --no-defaults \
	--metric "wl=from syscalls where comm == '$comm' group by comm, syscall show count, dist(lat)" \
	2>"$tmp/serve.log" & srv_pid=$!
for _ in $(seq 600); do grep -q serving "$tmp/serve.log" && break; sleep 0.1; done
grep -q serving "$tmp/serve.log"; ok $? "serve starts ($(head -c 300 "$tmp/serve.log"))"
ready=1
for _ in $(seq 300); do curl -sf http://127.0.0.1:$pport/-/ready >/dev/null && { ready=0; break; }; sleep 0.1; done
ok $ready "prometheus starts on 127.0.0.1:$pport ($(tail -n 3 "$tmp/prom.log" | tr '\n' ' '))"

echo g | "$W" sysload 1000 >/dev/null
sleep 2.5

# check N [ACCEPT]: scrape /metrics; the workload's getppid, write and read
# counted N times each, its getppid histogram cumulative with +Inf = _count
# = N; prints what differs.
check() {
	curl -s -m 20 -H "Accept: ${2:-text/plain}" $URL/metrics > "$tmp/scrape"
	python3 - "$tmp/scrape" "$comm" "$1" <<'EOF'
import re, sys
text = open(sys.argv[1]).read().split('\n')
comm, n = sys.argv[2], int(sys.argv[3])
bad = []
# getppid exactly; the loader and the handshake add a few reads and a write
runs = 1 + (n > 1000)
for sc, more in (('getppid', 0), ('write', runs), ('read', 9 * runs)):
    want = 'latop_wl_events_total{comm="%s",syscall="%s"}' % (comm, sc)
    got = [int(l.split()[-1]) for l in text if l.startswith(want + ' ')]
    if len(got) != 1 or not n <= got[0] <= n + more:
        bad.append('%s count %s' % (sc, got))
lab = 'comm="%s",syscall="getppid"' % comm
buckets = []
for l in text:
    m = re.match(r'latop_wl_lat_seconds_bucket\{%s,le="([^"]+)"\} (\d+)$' % re.escape(lab), l)
    if m:
        buckets.append((float(m.group(1)), int(m.group(2))))
count = [int(l.split()[-1]) for l in text if l.startswith('latop_wl_lat_seconds_count{%s}' % lab)]
if not buckets or buckets[-1][0] != float('inf'):
    bad.append('no +Inf bucket')
elif any(b[1] > a[1] for b, a in zip(buckets, buckets[1:])) or \
     any(b[0] >= a[0] for b, a in zip(buckets, buckets[1:])):
    bad.append('buckets not cumulative')
elif count != [buckets[-1][1]] or count != [n]:
    bad.append('+Inf %d, _count %s' % (buckets[-1][1], count))
print(' '.join(bad))
EOF
}
# check_until N [ACCEPT]: check until it passes, 20 s at most (ticks can come late).
check_until() {
	for _ in $(seq 20); do res=$(check "$@"); [ -z "$res" ] && return 0; sleep 1; done
	return 1
}
check_until 1000
[ -z "$res" ]; ok $? "/metrics: 1000 getppid exactly (write, read: 1000 and the loader's); the histogram is cumulative, +Inf = _count = 1000 ${res:+($res)}"
check_until 1000 'application/openmetrics-text;version=1.0.0'
[ -z "$res" ] && tail -n 1 "$tmp/scrape" | grep -qx '# EOF' &&
	grep -q '^# UNIT latop_wl_lat_seconds seconds$' "$tmp/scrape"
ok $? "OpenMetrics when asked for: the same counts, # UNIT, # EOF ${res:+($res)}"

# Prometheus: once it scraped the workload, its _count and p99 agree with
# latop's (the p99 within the bucket latop's own p99 is in).
sel="latop_wl_lat_seconds_count{comm=\"$comm\",syscall=\"getppid\"}"
pq() { curl -s -m 10 http://127.0.0.1:$pport/api/v1/query --data-urlencode "query=$1" |
	python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "none")'; }
got=none
for _ in $(seq 100); do got=$(pq "$sel"); [ "$got" = 1000 ] && break; sleep 0.2; done
[ "$got" = 1000 ]; ok $? "prometheus scraped it: $sel = 1000 (got $got)"
p99=$(pq "histogram_quantile(0.99, latop_wl_lat_seconds_bucket{comm=\"$comm\",syscall=\"getppid\"})")
curl -s -m 60 -o "$tmp/last.snap" "$URL/snapshot?last=5m"
own=$("$L" report "$tmp/last.snap" -q "from syscalls where comm == '$comm' and syscall == getppid show p99(lat)" --json 2>/dev/null |
	sed -n 's/.*"p99(lat)":\([0-9]*\).*/\1/p')
python3 - "$tmp/scrape" "$comm" "$p99" "${own:-0}" <<'EOF'
import re, sys
text = open(sys.argv[1]).read().split('\n')
comm, p99, own = sys.argv[2], float(sys.argv[3]), int(sys.argv[4]) / 1e9
b = [(float(m.group(1)), int(m.group(2))) for m in
     (re.match(r'latop_wl_lat_seconds_bucket\{comm="%s",syscall="getppid",le="([^"]+)"\} (\d+)$' % comm, l) for l in text) if m]
n = b[-1][1]
lo = 0.0
for le, c in b:
    if c >= 0.99 * n:
        break
    lo = le
# the bucket holds (lo, le]; values are whole ns, the next bound is le + 1ns
ok = lo <= p99 <= le + 1e-9 and lo <= own <= le + 1e-9
print('bucket (%g, %g]: prometheus p99 %g, latop p99 %g' % (lo, le, p99, own))
sys.exit(0 if ok else 1)
EOF
ok $? "prometheus's histogram_quantile(0.99) is in the bucket of latop's own p99 ($p99, $own ns)"

# Bad requests, answered while the collector keeps counting.
code() { curl -s -m 60 -o /dev/null -w '%{http_code}' "$@"; }
c=$(code $URL/nowhere); [ "$c" = 404 ]; ok $? "an unknown path: 404 ($c)"
c=$(code -X POST -d x=1 $URL/metrics); [ "$c" = 405 ]; ok $? "POST: 405 ($c)"
c=$(code -H "X-Big: $(head -c 100000 /dev/zero | tr '\0' a)" $URL/metrics)
[ "$c" = 431 ] || [ "$c" = 413 ] || [ "$c" = 400 ]; ok $? "a 100 KB header: refused ($c)"
c=$(code "$URL/snapshot?last=soon"); msg=$(curl -s -m 10 "$URL/snapshot?last=soon")
[ "$c" = 400 ] && echo "$msg" | grep -q "last=soon: 'soon' is not a duration"
ok $? "a bad last=: 400 with a message ($c: $msg)"

python3 - "$port" > "$tmp/slow" <<'EOF' & slow=$!
import socket, sys, time
s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
for b in b'GET / HTTP/1.0\r\n\r\n':
    s.send(bytes([b])); time.sleep(1)
s.settimeout(10)
print(s.recv(100).split(b'\r\n')[0].decode())
EOF
python3 - "$port" > "$tmp/idle" <<'EOF' & idle=$!
import socket, sys, time
socks = [socket.create_connection(('127.0.0.1', int(sys.argv[1]))) for _ in range(200)]
time.sleep(14)
closed = 0
for s in socks:
    s.settimeout(1)
    try:
        closed += s.recv(10) == b''
    except (socket.timeout, ConnectionResetError):
        pass
print(closed)
EOF
sleep 2
echo g | "$W" sysload 500 >/dev/null
sleep 2.5
check_until 1500
[ -z "$res" ]; ok $? "with 200 idle connections and a slow client on, the counts go on exactly: 1500 getppid ${res:+($res)}"
wait $idle; n=$(cat "$tmp/idle")
[ "${n:-0}" -eq 200 ]; ok $? "the 200 idle connections are closed after the timeout ($n)"
wait $slow; line=$(cat "$tmp/slow")
echo "$line" | grep -q "200"; ok $? "the client sending a byte a second is answered ($line)"

# /snapshot: a recording of the recent ticks that report reads.
c=$(curl -s -m 60 -o "$tmp/s.snap" -w '%{http_code}' "$URL/snapshot?last=5m")
n=$("$L" report "$tmp/s.snap" -q "from syscalls where comm == '$comm' and syscall == getppid show count" --json 2>/dev/null |
	sed -n 's/{"count":\([0-9]*\)}/\1/p')
[ "$c" = 200 ] && [ "${n:-0}" -eq 1500 ]; ok $? "/snapshot?last=5m: a recording with the 1500 getppid ($c, $n)"
c=$(curl -s -m 60 -o "$tmp/s2.snap" -w '%{http_code}' "$URL/snapshot?last=1s")
n=$("$L" report "$tmp/s2.snap" -q "from syscalls where comm == '$comm' show count" --json 2>/dev/null |
	sed -n 's/{"count":\([0-9]*\)}/\1/p')
[ "$c" = 200 ] && [ "${n:-0}" -eq 0 ]; ok $? "/snapshot?last=1s: only the last ticks, without the workload ($c, ${n:-0})"

kill -TERM $srv_pid; wait $srv_pid; rc=$?; srv_pid=
[ $rc -eq 0 ] && grep -q "stopped after" "$tmp/serve.log"; ok $? "SIGTERM stops it cleanly (exit $rc)"
kill $prom_pid; wait $prom_pid 2>/dev/null; prom_pid=

# latoprc's serve_metrics: a ';' inside a query's string does not cut the
# list.  --max-series 2: the workload's syscalls past the first two go to
# one overflow series, and every series together still counts them all.
mkdir -p "$tmp/xdg/latop"
printf '%s\n' "serve_metrics = semi=from syscalls where comm == 'a;b' show count; \
ov=from syscalls where comm == '$comm' group by syscall show count; \
all=from syscalls where comm == '$comm' show count" > "$tmp/xdg/latop/latoprc"
XDG_CONFIG_HOME=$tmp/xdg "$L" serve --listen 127.0.0.1:$port --no-defaults --max-series 2 \
	2>"$tmp/serve2.log" & srv_pid=$!
for _ in $(seq 600); do grep -q serving "$tmp/serve2.log" && break; sleep 0.1; done
echo g | "$W" sysload 1000 >/dev/null
res=1
for _ in $(seq 20); do
	sleep 1
	curl -s -m 20 $URL/metrics > "$tmp/scrape2"
	res=$(python3 - "$tmp/scrape2" <<'EOF2'
import sys
text = open(sys.argv[1]).read().split('\n')
def series(name):
    return {l.rsplit(' ', 1)[0]: int(l.rsplit(' ', 1)[1]) for l in text
            if l.startswith(name + '{') or l.startswith(name + ' ')}
ov, al = series('latop_ov_events_total'), series('latop_all_events_total')
bad = []
if not any(l.startswith('# TYPE latop_semi_events_total') for l in text):
    bad.append('no semi metric')
other = [k for k in ov if 'syscall="(other)"' in k]
total = sum(al.values())
if len(ov) != 3 or len(other) != 1 or total < 1010 or sum(ov.values()) != total:
    bad.append('ov %s, all %s' % (ov, al))
print(' '.join(bad))
EOF2
)
	[ -z "$res" ] && break
done
[ -z "$res" ]; ok $? "serve_metrics with ';' in a string; --max-series 2: 2 series and (other), summing to the workload's own total ${res:+($res; $(head -c 300 "$tmp/serve2.log"))}"
kill -TERM $srv_pid; wait $srv_pid; srv_pid=
done_testing
