#!/bin/bash
# latop record's own memory grows with what it keeps, not with what happens:
# under two fork loops of 200 /bin/true a second each (a row per short-lived
# process each tick, about 10,000 rows a tick) its heap stays small.  Read from /proc while it records: the peak of RssAnon (the
# heap; VmHWM adds the probes' ring buffers mapped from the kernel, whose
# pages count as they are touched).  Memory is measured on the build without
# sanitizers (ASan keeps freed memory in quarantine): $LATOP_TOP/latop.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_TOP:-.}/latop
[ -x "$L" ] || skip_all "no latop built without sanitizers at $L (make latop)"
BOUND_KB=$((48 * 1024))	# 29 MiB here; 58 MiB when exited threads' keys waited for the next tick

tmp=$(mktemp -d); rec_pid=; loops=()
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; [ ${#loops[@]} -gt 0 ] && kill "${loops[@]}" 2>/dev/null; rm -rf "$tmp"' EXIT

for _ in 1 2; do
	fork_loop 200
	loops+=($!)
done
"$L" record -o "$tmp/fork.snap" -d 10s --quiet 2>"$tmp/err" &
rec_pid=$!
peak=0 hwm=0
while kill -0 $rec_pid 2>/dev/null; do
	a=$(awk '/^RssAnon:/ { print $2 }' /proc/$rec_pid/status 2>/dev/null)
	h=$(awk '/^VmHWM:/ { print $2 }' /proc/$rec_pid/status 2>/dev/null)
	[ -n "$a" ] && [ "$a" -gt "$peak" ] && peak=$a
	[ -n "$h" ] && hwm=$h
	sleep 0.2
done
wait $rec_pid
rc=$?
rec_pid=
kill "${loops[@]}" 2>/dev/null
wait "${loops[@]}" 2>/dev/null
loops=()
ok $rc "latop record ran 10 s under two fork loops $(head -c 200 "$tmp/err")"
"$L" report "$tmp/fork.snap" -q 'from syscalls group by comm show count order by count desc' \
	>"$tmp/rep" 2>/dev/null && grep -q '^ *true ' "$tmp/rep"
ok $? "the recording has the loops' /bin/true processes"
# No table is near full at its default size: none may put counts in its
# (other) row.  The locks table did, a wait now and then, when the kernel's
# allocator had no element ready for a new key (the reserve takes those).
! grep -q "counted in overflow rows" "$tmp/err"
ok $? "no table counted anything in its (other) row $(grep -o '[a-z_]*: [0-9]* counted in overflow rows' "$tmp/err")"
echo "# peak RssAnon $((peak / 1024)) MiB, VmHWM $((hwm / 1024)) MiB"
[ "$peak" -gt 0 ] && [ "$peak" -le $BOUND_KB ]
ok $? "its heap stayed under $((BOUND_KB / 1024)) MiB (peak RssAnon $((peak / 1024)) MiB)"
done_testing
