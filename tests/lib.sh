# Shell helpers for tests producing TAP: source it, call ok/skip_all, then done_testing.
tap_n=0 tap_nfail=0
ok() { # ok COND-EXIT-STATUS "description"
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $tap_n - $2"; else tap_nfail=$((tap_nfail + 1)); echo "not ok $tap_n - $2"; fi
}
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP $1"; }
skip_all() { echo "1..0 # SKIP $1"; echo "ok 1 # SKIP $1"; exit 0; }
need_root() { [ "$(id -u)" -eq 0 ] || skip_all "needs root (CAP_BPF and CAP_PERFMON) to load probes"; }
done_testing() { echo "1..$tap_n"; [ "$tap_nfail" -eq 0 ]; }
. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"	# free_ports N

# wait_recording FILE [TRIES]: wait (0.1 s per try, 150 by default) until a
# recorder has attached its probes, which it shows by creating FILE.tmp.
wait_recording() {
	for _ in $(seq "${2:-150}"); do [ -e "$1.tmp" ] && { sleep 0.5; return 0; }; sleep 0.1; done
	return 1
}
# fork_loop RATE: run /bin/true at most RATE times a second, in the
# background, until killed ($! is its pid).  A shell loop of /bin/true runs
# as fast as the machine forks, from about 70 to 1,000 times a second on
# machines of one type; a rate makes the load, and what a test can expect
# of it, the same everywhere.  The loop is perl's (perl-base, core only: the
# sleep is select's), not python's: where python3's library carries its
# debug info (pyenv's: 9 MB of .debug_info), the locks probe parses its line
# tables whenever a loop holds a kernel lock others wait on, megabytes a
# unit, and what a test of fork storms measured would depend on that.
fork_loop() {
	perl -e '
my $gap = 1 / $ARGV[0];
while (1) {
	system("/bin/true");
	select(undef, undef, undef, $gap);
}' "$1" &
}
# wait_ready FILE: wait until a test server's first output line says "ready".
wait_ready() {
	for _ in $(seq 50); do grep -q '^ready' "$1" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}
# Block completions no BPF program could see.  Some kernels (a sandbox's:
# measured on this project's CI machines) run no BPF program in the threads
# of PID 1, the sandbox's agent, nor in the interrupts that land on them,
# and count no missed run: a request that completes there is never seen to
# end.  tracefs sees it.  unseen_begin DEV starts counting, in a tracefs
# instance of its own (mounted privately, so latop's view of the machine is
# unchanged), DEV's completions; unseen_end stops and prints those that ran
# in a thread of PID 1 (one of its threads at either end, or made by one
# meanwhile) as JSON, {"OP SIZE": count} (op read, write or flush), {} where
# tracefs is missing.  Call it in the test's shell (not in $(...)), so that
# a second call, from a trap, prints {}.  A check of exact counts subtracts
# them: on other kernels they are none.  unseen_begin DEV FILE counts only
# the requests within FILE's blocks (FIEMAP, taken at the call: FILE is
# written before, in place), for a disk other programs write too.
unseen_begin() {
	local dev=/dev/$1
	unseen_dir=$(mktemp -d) unseen_i=
	if [ -n "${2:-}" ]; then
		# FILE's extents in the disk's 512-byte sectors (a partition's
		# requests are the disk's, from its start).
		python3 - "$2" "$(cat "/sys/class/block/$1/start" 2>/dev/null || echo 0)" \
			>"$unseen_dir/extents" <<'EOF' || return 1
import fcntl, os, struct, sys
fd, start = os.open(sys.argv[1], os.O_RDONLY), int(sys.argv[2])
n = 512
buf = bytearray(struct.pack("QQIIII", 0, 2**64 - 1, 1, 0, n, 0) + bytes(56 * n))
fcntl.ioctl(fd, 0xC020660B, buf)	# FS_IOC_FIEMAP, FIEMAP_FLAG_SYNC
mapped = struct.unpack_from("I", buf, 20)[0]
if mapped == n:
    sys.exit("unseen_begin: %s has %d extents or more" % (sys.argv[1], n))
for i in range(mapped):
    logical, physical, length = struct.unpack_from("QQQ", buf, 32 + 56 * i)
    print(start + physical // 512, start + (physical + length) // 512)
EOF
	fi
	unseen_instance 8192 || return 0
	echo "dev == $(( (0x$(stat -Lc %t "$dev") << 20) | 0x$(stat -Lc %T "$dev") ))" \
		>"$unseen_i/events/block/block_rq_complete/filter"
	echo 1 >"$unseen_i/events/block/block_rq_complete/enable"
}
# unseen_instance KB: the tracefs instance unseen_begin and unseen_rx_begin
# count in (unseen_i, KB a CPU, on one clock for all CPUs), following the
# threads PID 1 makes; 1, unseen_i empty, where tracefs is missing.
unseen_instance() {
	local t=$unseen_dir/tracefs
	mkdir "$t" && mount -t tracefs nodev "$t" 2>/dev/null || return 1
	unseen_i=$t/instances/latop-unseen-$$
	mkdir "$unseen_i" || { unseen_i=; return 1; }
	echo "$1" >"$unseen_i/buffer_size_kb"
	echo mono >"$unseen_i/trace_clock"
	echo "clone_flags & $((0x10000))" >"$unseen_i/events/task/task_newtask/filter"	# CLONE_THREAD
	echo 1 >"$unseen_i/events/task/task_newtask/enable"
	ls /proc/1/task >"$unseen_dir/agent"
}
# TCP's receive path runs in the same interrupts: a request whose segment
# the kernel took in (netif_receive_skb) in a thread of PID 1 is unseen by
# the flows probe's ingress hook, and its answer is counted unsolicited.
# unseen_rx_begin PORT follows the data segments to local port PORT (TCP's
# tcp_probe, matched to their netif_receive_skb by address); unseen_end
# prints those taken in there by remote port, each as its place among its
# connection's data segments from the first: {"RPORT": [N, ...]} (a request
# of one segment: its round).
unseen_rx_begin() {
	unseen_dir=$(mktemp -d) unseen_i=
	echo "$1" >"$unseen_dir/rx"
	unseen_instance 32768 || return 0	# 1,000 connections of 50 requests: 11 MB
	echo "sport == $1 && data_len > 0" >"$unseen_i/events/tcp/tcp_probe/filter"
	echo 1 >"$unseen_i/events/tcp/tcp_probe/enable"
	echo 1 >"$unseen_i/events/net/netif_receive_skb/enable"
}
unseen_end() {
	if [ -n "$unseen_i" ]; then
		echo 0 >"$unseen_i/tracing_on"
		echo 0 >"$unseen_i/events/enable"
		cat "$unseen_i"/per_cpu/cpu*/stats | grep -q '^overrun: [1-9]' &&
			echo "unseen_end: the tracefs buffer overran: the count is short" >&2
		ls /proc/1/task >>"$unseen_dir/agent"
		if [ -e "$unseen_dir/rx" ]; then
			python3 - "$unseen_i/trace" "$unseen_dir/agent" <<'EOF'
import collections, json, re, sys
agent = set(open(sys.argv[2]).read().split())
there = {}	# a segment's address: whether it was taken in in an agent's thread
segs, n = collections.Counter(), collections.defaultdict(list)
for l in open(sys.argv[1]):
    m = re.match(r"\s*.*-(\d+)\s+\[\d+\].*?(task_newtask|netif_receive_skb|tcp_probe): (.*)", l)
    if not m:
        continue
    tid, ev, rest = m.groups()
    if ev == "task_newtask":
        if tid in agent:
            agent.add(re.match(r"pid=(\d+)", rest).group(1))	# a thread an agent's thread made
        continue
    skb = re.search(r"skbaddr=(\S+)", rest).group(1)
    if ev == "netif_receive_skb":
        there[skb] = tid in agent
    else:
        rport = re.search(r"dest=\S*:(\d+) ", rest).group(1)
        segs[rport] += 1
        if there.pop(skb, False):
            n[rport].append(segs[rport])
print(json.dumps(n))
EOF
		else
			python3 - "$unseen_i/trace" "$unseen_dir/agent" "$unseen_dir/extents" <<'EOF'
import collections, json, os, re, sys
agent = set(open(sys.argv[2]).read().split())
extents = [tuple(map(int, l.split())) for l in open(sys.argv[3])] if os.path.exists(sys.argv[3]) else None
n = collections.Counter()
for l in open(sys.argv[1]):
    t = re.match(r"\s*.*-(\d+)\s+\[\d+\].*task_newtask: pid=(\d+)", l)
    if t:
        if t.group(1) in agent:
            agent.add(t.group(2))	# a thread an agent's thread made
        continue
    m = re.match(r"\s*.*-(\d+)\s+\[\d+\].*block_rq_complete: \d+,\d+ (\S+) \(\) (\d+) \+ (\d+)", l)
    if not m or m.group(1) not in agent:
        continue
    if extents is not None and not any(a <= int(m.group(3)) < b for a, b in extents):
        continue		# another program's request
    rwbs, size = m.group(2), int(m.group(4)) * 512
    if rwbs.startswith("FF"):
        continue		# the queue's own flush request: no one queued it
    op = "flush" if rwbs.startswith("F") and size == 0 else "write" if "W" in rwbs else "read" if "R" in rwbs else None
    if op:
        n["%s %d" % (op, size)] += 1
print(json.dumps(n))
EOF
		fi
		rmdir "$unseen_i"
		umount "$unseen_dir/tracefs"
	else
		echo '{}'
	fi
	rm -rf "$unseen_dir"
	unseen_i= unseen_dir=
}
