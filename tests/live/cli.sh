#!/bin/bash
# Bad input on the command line gets a clear error naming what and where,
# and a non-zero exit; nothing is written where it should not be.
. "$(dirname "$0")/../lib.sh"
L=${LATOP_BIN:?}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

expect() { # expect STATUS PATTERN DESCRIPTION -- CMD...
	local want=$1 pat=$2 desc=$3; shift 4
	out=$("$@" </dev/null 2>&1); rc=$?
	if [ "$rc" -eq "$want" ] && printf '%s' "$out" | grep -qE -- "$pat"; then ok 0 "$desc"
	else ok 1 "$desc (exit $rc, output: $(printf '%s' "$out" | head -3))"; fi
}

expect 0 'usage: latop' "--help prints the usage" -- "$L" --help
expect 0 '^latop [0-9]+\.[0-9]+' "--version prints the version" -- "$L" --version
expect 2 "unrecognized option '--bogus'" "an unknown option is named" -- "$L" --bogus
expect 2 "unknown command 'frobnicate'" "an unknown command is named" -- "$L" frobnicate
expect 2 "ambiguous command 're'" "an ambiguous prefix says so" -- "$L" re x
expect 2 "needs -o FILE" "record without -o says what is missing" -- "$L" record
expect 2 "unknown unit 'x' in duration '5x'" "a bad duration names the unit" -- "$L" record -o "$tmp/a.snap" -d 5x
expect 2 "-d: 'inf' is not a finite duration: the limit is 10 years \\(87600h\\)" "-d inf is refused, naming the limit" -- timeout 10 "$L" record -o "$tmp/a.snap" -d inf
expect 2 "-d: '99999999h' is longer than the limit of 10 years \\(87600h\\)" "-d 99999999h is refused, naming the limit" -- timeout 10 "$L" record -o "$tmp/a.snap" -d 99999999h
expect 2 "-d: '1e400s' is not a finite duration" "-d 1e400s (past a double) is refused" -- timeout 10 "$L" record -o "$tmp/a.snap" -d 1e400s
expect 2 "-d: 'nan' is not a duration: it must be a number of 0 or more" "-d nan is refused" -- timeout 10 "$L" record -o "$tmp/a.snap" -d nan
expect 2 "-d: '-1s' is not a duration: it must be a number of 0 or more" "a negative -d is refused" -- timeout 10 "$L" record -o "$tmp/a.snap" -d -1s
expect 2 "-d: '0.1ns' is shorter than 1ns" "a -d under 1ns is refused, not taken as 0" -- timeout 10 "$L" record -o "$tmp/a.snap" -d 0.1ns
expect 2 "-i: 'inf' is not a finite duration: the limit is 10 years" "-i inf is refused, naming the limit" -- timeout 10 "$L" record -o "$tmp/a.snap" -i inf
expect 2 "-i: '999999999h' is longer than the limit of 10 years" "the live view's -i names the limit" -- timeout 10 "$L" -i 999999999h
[ ! -e "$tmp/a.snap" ] && [ ! -e "$tmp/a.snap.tmp" ]; ok $? "a refused duration leaves no file behind"

# -o takes only a new or regular file, checked before the probes open.
mkfifo "$tmp/fifo"; mkdir "$tmp/dir"; ln -s fifo "$tmp/fifolink"; ln -s a.snap "$tmp/filelink"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$tmp/sock"
expect 2 "-o: $tmp/fifo: is a FIFO; a recording replaces only a regular file" "-o FIFO is refused" -- "$L" record -o "$tmp/fifo" -d 1s
expect 0 "recording to $tmp/dir \\(latop-\\*\\.snap, one file\\)" "-o DIRECTORY records one file in it" -- "$L" record -o "$tmp/dir" -d 1s
n=$(ls "$tmp/dir" | grep -cE '^latop-[0-9]{8}T[0-9]{6}\.[0-9]{3}Z\.snap$'); [ "$n" = 1 ]; ok $? "... named by its start (latop-YYYYMMDDTHHMMSS.mmmZ.snap: $n)"
rm -f "$tmp/dir"/latop-*
expect 2 "-o: $tmp/sock: is a socket" "-o SOCKET is refused" -- "$L" record -o "$tmp/sock" -d 1s
expect 2 "-o: $tmp/fifolink: is a symbolic link; .*links are not followed" "-o LINK (to a FIFO) is refused" -- "$L" record -o "$tmp/fifolink" -d 1s
expect 2 "-o: $tmp/filelink: is a symbolic link" "-o LINK (to a file) is refused" -- "$L" record -o "$tmp/filelink" -d 1s
expect 2 "-o: the output path is empty" "-o '' is refused" -- "$L" record -o '' -d 1s
expect 2 "-o: $tmp/nodir/x.snap: cannot write in directory $tmp/nodir: No such file or directory" "-o in a missing directory is refused" -- "$L" record -o "$tmp/nodir/x.snap" -d 1s
expect 0 "recording to $tmp/dir/ \\(latop-\\*\\.snap, one file\\)" "-o DIRECTORY/ records one file in it" -- "$L" record -o "$tmp/dir/" -d 1s
rm -f "$tmp/dir"/latop-*
[ -p "$tmp/fifo" ] && [ -d "$tmp/dir" ] && [ -S "$tmp/sock" ] && [ -L "$tmp/fifolink" ] && [ -L "$tmp/filelink" ] &&
	[ -z "$(find "$tmp" -name '*.tmp')" ]
ok $? "the refused targets are left as they were, and no .tmp file is made"
if [ "$(id -u)" -eq 0 ]; then
	mknod "$tmp/null" c 1 3
	expect 2 "-o: $tmp/null: is a character device" "-o DEVICE (a /dev/null node) is refused" -- "$L" record -o "$tmp/null" -d 1s
	[ -c "$tmp/null" ]; ok $? "the device node is still a device node"
else
	skip "making a device node needs root"; skip "making a device node needs root"
fi

# The same recording given twice, as one file or as a copy, would count twice.
d=$(dirname "$0")/../data/nvme-vm
cp "$d/init.snap" "$tmp/copy.snap"; ln "$tmp/copy.snap" "$tmp/hard.snap"
expect 2 "'$d/init.snap' and '$d/init.snap' are the same file: each tick would count twice" "report A A is refused, naming both" -- "$L" report "$d/init.snap" "$d/init.snap" -q 'from nvme show count'
expect 2 "'$tmp/copy.snap' and '$tmp/hard.snap' are the same file" "report A (hard link to A) is refused" -- "$L" report "$tmp/copy.snap" "$d/target.snap" "$tmp/hard.snap" -q 'from nvme show count'
expect 2 "'$d/init.snap' and '$tmp/copy.snap' are the same recording \\(host .*, started 2026-.*\\): each tick would count twice" "report A (copy of A) is refused, naming both" -- "$L" report "$d/init.snap" "$tmp/copy.snap" -q 'from nvme show count'
expect 0 "880" "two recordings made at the same time on two hosts still report together" -- "$L" report "$d/init.snap" "$d/target.snap" -q 'from nvme show count'
expect 2 "needs a terminal" "the live view refuses a non-terminal" -- "$L"
expect 1 "$tmp/missing.snap" "a missing file is named" -- "$L" report "$tmp/missing.snap" -q 'from syscalls'
printf 'hello, this is not a snapshot at all\n' > "$tmp/junk.snap"
expect 1 "not a latop snapshot.*offset 0" "a foreign file is refused at offset 0" -- "$L" report "$tmp/junk.snap"
torn=$(dirname "$0")/../data/torn/syscalls.snap   # ticks 5 and 6 of 10 do not decode
out=$("$L" report "$torn" -q "from syscalls where syscall == 'getppid' show count" 2>"$tmp/err"); rc=$?
[ "$rc" -eq 0 ] && [ "$(grep -c 'skipped that tick' "$tmp/err")" -eq 2 ] &&
	grep -q "tick 5 of 10 at offset 12745: corrupt FRAMES payload: malformed histogram" "$tmp/err" &&
	grep -q "tick 6 of 10 at offset 14094" "$tmp/err" && printf '%s\n' "$out" | grep -qE '^ *[0-9.]+M$'
st=$?
ok $st "report warns of each tick it cannot decode, by number and offset, and counts the others"
[ $st -eq 0 ] || { echo "# exit $rc, result: $out"; sed 's/^/# /' "$tmp/err"; }
expect 2 "column 21: unknown field 'dprot'" "a bad query names the column" -- "$L" record -o "$tmp/b.snap" -q 'from syscalls where dprot == 1'
[ ! -e "$tmp/b.snap" ] && [ ! -e "$tmp/b.snap.tmp" ]; ok $? "a refused query leaves no file behind"

if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	# The user's own HOME: root's is not theirs to read, and an rc file that
	# cannot be read is rightly warned of.
	nobody() { env HOME="$tmp/pub" XDG_CONFIG_HOME= setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all "$@"; }
	chmod 755 "$tmp"; mkdir -m 1777 "$tmp/pub"; mkdir -m 755 "$tmp/ro"
	out=$(nobody "$L" record -o "$tmp/pub/c.snap" -d 1s 2>&1 </dev/null); rc=$?
	[ $rc -eq 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && [ ${#out} -lt 200 ] &&
		[ "$(printf '%s' "$out" | grep -o CAP_BPF | wc -l)" -eq 1 ] &&
		printf '%s' "$out" | grep -q "^latop: the probes need root, or CAP_BPF and CAP_PERFMON, and this process (uid 65534) has neither; run latop as root, e.g. with sudo$"
	ok $? "without privilege: one short line saying what is missing and what to do (exit $rc, ${#out} chars: $out)"
	[ -z "$(ls -A "$tmp/pub")" ]; ok $? "and no file is left behind"
	expect 1 "and this process \\(uid 65534\\) lacks CAP_PERFMON; run latop as root" "with CAP_BPF alone it names the one missing" -- \
		env HOME="$tmp/pub" XDG_CONFIG_HOME= setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+bpf --ambient-caps=+bpf "$L" record -o "$tmp/pub/c.snap" -d 1s
	expect 2 "-o: $tmp/ro/c.snap: cannot write in directory $tmp/ro: Permission denied" "an unwritable directory is refused before the probes open" -- nobody "$L" record -o "$tmp/ro/c.snap" -d 1s
	expect 2 "-o: $tmp/fifo: is a FIFO" "so is a FIFO (before the privilege check)" -- nobody "$L" record -o "$tmp/fifo" -d 1s
else
	skip "unprivileged checks need root and setpriv to drop privileges"
	skip "unprivileged checks need root and setpriv to drop privileges"
	skip "unprivileged checks need root and setpriv to drop privileges"
	skip "unprivileged checks need root and setpriv to drop privileges"
	skip "unprivileged checks need root and setpriv to drop privileges"
fi
# report --json's health line covers the SINCE/UNTIL stretch, not every tick
# read: the 2-tick recording, from its second tick.
out=$(TZ=UTC "$L" report "$LATOP_TOP/tests/data/sweep/syscalls.snap" --json \
	-q "from syscalls show count since '2026-11-25 18:11:18'" 2>&1)
echo "$out" | grep -q '^{"health": {"table": "syscalls", "events": 1080, .*"ticks": 1, "ticks_late": 0,'
ok $? "report --json: the health line counts the stretch's ticks (1 of 2) and events ($out)"
# The options that steer live probes do nothing over a recording: report
# says so (and the same count comes out), and says nothing without them.
sweep=$LATOP_TOP/tests/data/sweep/syscalls.snap
plain=$("$L" report "$sweep" -q "from syscalls show count" 2>"$tmp/plain.err")
opts=$("$L" report "$sweep" -q "from syscalls show count sample 1/4 threshold 8ms every 2s" 2>"$tmp/opts.err")
[ "$plain" = "$opts" ] && [ ! -s "$tmp/plain.err" ] &&
	grep -qx "latop report: warning: sample 1/4, threshold 8ms: these choose what the probes send while recording, and nothing over a recording, which holds what its own query kept; select single events by latency with WHERE lat >= DUR" "$tmp/opts.err" &&
	grep -qx "latop report: warning: every 2s: the live probes' tick interval; a recording's ticks are as recorded (GROUP BY time(DUR) groups them)" "$tmp/opts.err" &&
	[ "$(wc -l <"$tmp/opts.err")" -eq 2 ]
ok $? "report: sample, threshold and every are said to do nothing over a recording; the count is the same ($(cat "$tmp/opts.err" | head -c 300))"
"$L" report "$sweep" -q "from syscalls show count buffer 100 window 5s" >/dev/null 2>"$tmp/buf.err"
grep -q "^latop report: warning: buffer 100: this chooses what" "$tmp/buf.err" && [ "$(wc -l <"$tmp/buf.err")" -eq 1 ]
ok $? "report: buffer is named alone, window (which a report applies) is not ($(cat "$tmp/buf.err"))"
# ... and record says the same of the options only a report acts on.
if [ "$(id -u)" -eq 0 ]; then
	timeout 20 "$L" record -o "$tmp/w.snap" -d 1s -q "from syscalls where comm == 'nomatch' window 3s baseline 'idle.snap' until '23:59'" >/dev/null 2>"$tmp/w.err"
	rc=$?
	[ $rc -eq 0 ] && [ -s "$tmp/w.snap" ] &&
		grep -qx "latop record: warning: window 3s, baseline 'idle.snap', until '23:59': these choose what a report or replay shows, and nothing while recording, which keeps every row the filter passes; give them to latop report" "$tmp/w.err"
	ok $? "record: window, baseline and until are said to choose only what a report shows; it records (exit $rc: $(grep warning "$tmp/w.err"))"
else
	skip "record needs root"
fi
# latoprc: every key latop reads passes; a misspelt one is named, once.
mkdir -p "$tmp/cfg/latop"
cat > "$tmp/cfg/latop/latoprc" <<'RC'
theme = default
history = /dev/null
history_mb = 64
realtime = yes
serve_metrics = calls=from syscalls show count
flow_timeout = 2s
flow_max = 65536
flow_spill = auto
syscall_max = 65536
block_max = 8192
block_inflight_max = 16384
lock_max = 65536
lock_wait_max = 16384
lock_stack_copies = 512
nvme_max = 65536
nvme_inflight_max = 16384
paths_ring_mb = 16
flow_maxx = 100
RC
out=$(XDG_CONFIG_HOME=$tmp/cfg "$L" probes 2>&1 >/dev/null)
[ "$out" = "latop: warning: $tmp/cfg/latop/latoprc:18: flow_maxx: not a latoprc key; ignored (did you mean 'flow_max'?)" ]
ok $? "latoprc: each key latop reads is known; a misspelt one is named with its line and the key meant ($out)"
out=$(XDG_CONFIG_HOME=$tmp/cfg "$L" report "$LATOP_TOP/tests/data/sweep/syscalls.snap" -q "from syscalls show count" 2>&1 >/dev/null)
[ -z "$out" ]; ok $? "report, which reads no latoprc, does not check it ($out)"
done_testing
