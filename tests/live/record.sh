#!/bin/bash
# latop record's files and faults: a link planted at FILE.tmp is neither
# followed nor truncated; every stop (a signal at any moment, or -d) keeps
# the partial last interval, so each file holds a tick or more; SIGHUP stays
# ignored under nohup; a full disk ends with where the ticks kept are.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
W=$LATOP_HELPERS/workload
[ -x "$W" ] || skip_all "no workload helper at $W (make tests-build)"
tmp=$(mktemp -d); rec_pid=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; umount "$tmp/full" 2>/dev/null; rm -rf "$tmp"' EXIT
# The workload runs under a name of its own: other tests' workloads may run
# on this machine at the same time.
comm=recwl$$
cp "$W" "$tmp/$comm"; W=$tmp/$comm
Q="from syscalls where comm == '$comm'"

# ticks FILE: how many ticks (FRAMES chunks) FILE holds, "torn" when it does
# not end on a whole chunk, "missing" when there is no FILE.
ticks() {
	[ -e "$1" ] || { echo missing; return; }
	python3 - "$1" <<'EOF'
import struct, sys
d = open(sys.argv[1], 'rb').read()
off = 20 + struct.unpack_from('<I', d, 12)[0] if len(d) >= 20 else len(d) + 1
n = 0
# Chunk heads: sync word, type, length, payload CRC, head CRC.
while off + 20 <= len(d):
    sync, kind, length = struct.unpack_from('<III', d, off)
    if sync != 0x4b48434c or off + 20 + length > len(d):
        break
    n += kind == 2
    off += 20 + length
print(n if off == len(d) else 'torn')
EOF
}

# wait_tmp FILE: wait (10 ms per try, 15 s at most) until FILE.tmp exists.
wait_tmp() {
	for _ in $(seq 1500); do [ -e "$1.tmp" ] && return 0; sleep 0.01; done
	return 1
}

# stop SIG: signal the recorder and reap it, SIGKILLed if still there after
# 5 s; the status is its exit status (124 when it had to be killed).
stop() {
	kill -"$1" $rec_pid
	for _ in $(seq 500); do kill -0 $rec_pid 2>/dev/null || break; sleep 0.01; done
	kill -0 $rec_pid 2>/dev/null && { kill -9 $rec_pid; wait $rec_pid 2>/dev/null; rec_pid=; return 124; }
	wait $rec_pid; local rc=$?; rec_pid=; return $rc
}

# getppids FILE: the workload's getppid calls FILE holds.
getppids() {
	"$L" report "$1" -q "$Q and syscall == getppid show count" --json 2>/dev/null |
		sed -n 's/{"count":\([0-9]*\)}/\1/p'
}

# A link planted at FILE.tmp (anyone who can write the directory can) is
# not followed: its target keeps its bytes and mode, the link stays, and the
# recording goes to a fresh FILE.XXXXXX.tmp that the start message names.
printf 'the victim file: keep me\n' > "$tmp/victim"; chmod 640 "$tmp/victim"
cp -p "$tmp/victim" "$tmp/victim.orig"
ln -s "$tmp/victim" "$tmp/p.snap.tmp"
out=$("$L" record -o "$tmp/p.snap" -d 1s -q "$Q" 2>&1); rc=$?
cmp -s "$tmp/victim" "$tmp/victim.orig" && [ "$(stat -c %a "$tmp/victim")" = 640 ] && [ -L "$tmp/p.snap.tmp" ]
ok $? "a link planted at FILE.tmp: its target keeps its bytes and mode 640, the link stays"
[ $rc -eq 0 ] && [ -f "$tmp/p.snap" ] && [ ! -L "$tmp/p.snap" ] &&
	echo "$out" | grep -q "p.snap.tmp exists .* written to $tmp/p.snap\.[A-Za-z0-9]\{6\}\.tmp until it ends" &&
	"$L" report "$tmp/p.snap" -q "$Q show count" >/dev/null
ok $? "the recording goes to a named FILE.XXXXXX.tmp, then to FILE, which reports ($out)"

# The partial last interval is kept: with a 1-hour interval no tick comes
# from the timer, so all the file holds is what the stop took.
"$L" record -o "$tmp/int.snap" -i 1h -q "$Q" --quiet & rec_pid=$!
wait_tmp "$tmp/int.snap"; echo g | "$W" sysload 100 >/dev/null
stop INT; rc=$?
n=$(getppids "$tmp/int.snap")
[ $rc -eq 0 ] && [ "$(ticks "$tmp/int.snap")" = 1 ] && [ "${n:-0}" -eq 100 ]
ok $? "SIGINT before the first tick: one tick with the workload's 100 getppid (exit $rc, $n)"
"$L" record -o "$tmp/dur.snap" -i 1h -d 2s -q "$Q" --quiet & rec_pid=$!
wait_tmp "$tmp/dur.snap"; echo g | "$W" sysload 100 >/dev/null
wait $rec_pid; rc=$?; rec_pid=
n=$(getppids "$tmp/dur.snap")
[ $rc -eq 0 ] && [ "$(ticks "$tmp/dur.snap")" = 1 ] && [ "${n:-0}" -eq 100 ]
ok $? "-d 2s ending before the first tick: one tick with the 100 getppid (exit $rc, $n)"

# Stopped at any moment after the file appears, a recording holds a tick or
# more and reports.
bad=
for i in $(seq 0 19); do
	f=$tmp/sig$i.snap
	"$L" record -o "$f" -q "$Q" --quiet 2>"$f.err" & rec_pid=$!
	if ! wait_tmp "$f"; then kill -9 $rec_pid; wait $rec_pid 2>/dev/null; rec_pid=; bad+=" $i:no-file"; continue; fi
	[ "$i" -gt 0 ] && sleep "$(printf '0.%03d' $((i * 50)))"
	stop INT; rc=$?
	n=$(ticks "$f")
	if [ $rc -ne 0 ] || [ "$n" = missing ] || [ "$n" = torn ] || [ "$n" -lt 1 ] ||
		! "$L" report "$f" -q "$Q show count" >/dev/null 2>&1; then
		bad+=" $((i * 50))ms:exit=$rc,ticks=$n"
	fi
done
[ -z "$bad" ]; ok $? "SIGINT 0, 50 ... 950 ms after FILE.tmp appears: all 20 files report, each with a tick or more${bad:+ (failed:$bad)}"

# Under nohup SIGHUP stays ignored; without it, SIGHUP ends the file whole.
nohup "$L" record -o "$tmp/hup.snap" -q "$Q" --quiet >"$tmp/hup.out" 2>&1 & rec_pid=$!
wait_tmp "$tmp/hup.snap" && sleep 0.3
kill -HUP $rec_pid; sleep 0.5
kill -0 $rec_pid 2>/dev/null; ok $? "under nohup, SIGHUP does not stop the recorder"
stop INT; rc=$?
[ $rc -eq 0 ] && "$L" report "$tmp/hup.snap" -q "$Q show count" >/dev/null
ok $? "and SIGINT then finishes the file (exit $rc)"
"$L" record -o "$tmp/hup2.snap" -q "$Q" --quiet & rec_pid=$!
wait_tmp "$tmp/hup2.snap" && sleep 0.3
stop HUP; rc=$?
[ $rc -eq 0 ] && "$L" report "$tmp/hup2.snap" -q "$Q show count" >/dev/null
ok $? "without nohup, SIGHUP finishes the file (exit $rc)"

# A full disk: record says what it kept and where, and exits 1; the file
# ends on its last whole tick and reads back whole, said to be cut short.
mkdir "$tmp/full"
if mount -t tmpfs -o size=256k tmpfs "$tmp/full" 2>"$tmp/mount.err"; then
	"$L" record -o "$tmp/full/x.snap" -i 10ms -d 60s -q "from syscalls" --quiet 2>"$tmp/full.err"; rc=$?
	err=$(cat "$tmp/full.err")
	kept=$(sed -n "s|^latop record: kept \([0-9]*\) ticks in $tmp/full/x.snap.tmp; 'latop report' and 'latop replay' read it$|\1|p" "$tmp/full.err")
	[ $rc -eq 1 ] && echo "$err" | grep -q "x.snap.tmp: write failed at offset [0-9]*: No space left on device" &&
		[ -n "$kept" ] && [ "$kept" -gt 0 ]
	ok $? "a full disk: exit 1, the write error, and how many ticks were kept where ($err)"
	n=$(ticks "$tmp/full/x.snap.tmp")
	"$L" report "$tmp/full/x.snap.tmp" -q "from syscalls show count" >/dev/null 2>"$tmp/rep.err"; rc=$?
	[ $rc -eq 0 ] && [ "$n" = "$kept" ] && grep -q "the recording was cut short" "$tmp/rep.err" &&
		grep -q "kept $kept of $kept ticks" "$tmp/rep.err" && ! grep -q truncated "$tmp/rep.err"
	ok $? "the partial file holds exactly those $kept ticks, whole: report says only that it was cut short (ticks $n, exit $rc $(head -c 300 "$tmp/rep.err"))"
	umount "$tmp/full"
else
	skip "mounting a small tmpfs is not permitted here: $(head -c 200 "$tmp/mount.err")"
	skip "mounting a small tmpfs is not permitted here"
fi
# A recorder that cannot run on time (stopped 2.5 s inside a 300 ms
# interval): record and report both say which tick came late and how late;
# the counts stay whole.
"$L" record -o "$tmp/late.snap" -i 300ms -d 4s -q "$Q" 2>"$tmp/late.err" & rec_pid=$!
wait_recording "$tmp/late.snap"
sleep 0.5; kill -STOP $rec_pid; sleep 2.5; kill -CONT $rec_pid
wait $rec_pid; rc=$?; rec_pid=
grep -Eq "^latop record: warning: 1 of [0-9]+ ticks came late \(the longest lasted (2\.[5-9]|3\.[0-9])[0-9]*s for an interval of 300ms\)" "$tmp/late.err"
ok $? "record names the late tick and its length (exit $rc: $(grep late "$tmp/late.err"))"
"$L" report "$tmp/late.snap" -q "$Q show count" >/dev/null 2>"$tmp/late-rep.err"
grep -Eq "^latop report: warning: 1 of [0-9]+ ticks came late \(the longest lasted (2\.[5-9]|3\.[0-9])[0-9]*s for an interval of 300ms\)" "$tmp/late-rep.err"
ok $? "report finds the same late tick in the file ($(cat "$tmp/late-rep.err"))"
"$L" record -o "$tmp/ontime.snap" -i 1s -d 3s -q "$Q" 2>"$tmp/ontime.err"
! grep -q "came late" "$tmp/ontime.err"
ok $? "a recorder left alone warns of no late tick ($(grep late "$tmp/ontime.err"))"
done_testing
