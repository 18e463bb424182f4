#!/bin/bash
# latop record --rotate/--keep: a ring of whole recordings that rotates at
# time boundaries or sizes without losing or doubling a tick, keeps what
# --keep says and nothing of other files, and reads back as one with
# report DIR; a cut file in the middle costs only its own lost ticks.
. "$(dirname "$0")/../lib.sh"
need_root
L=${LATOP_BIN:?}
W=$LATOP_HELPERS/workload
[ -x "$W" ] || skip_all "no workload helper at $W (make tests-build)"
tmp=$(mktemp -d); rec_pid=
trap '[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null; umount "$tmp/ro" "$tmp/full" 2>/dev/null; rm -rf "$tmp"' EXIT
# The workload runs under a name of its own: other tests' workloads may run
# on this machine at the same time.
comm=rotwl$$
cp "$W" "$tmp/$comm"; W=$tmp/$comm
Q="from syscalls where comm == '$comm'"
NAME='latop-[0-9]{8}T[0-9]{6}\.[0-9]{3}Z\.snap'

# getppids FILE|DIR...: the workload's getppid calls they hold (report's count).
getppids() {
	"$L" report "$@" -q "$Q and syscall == getppid show count" --json 2>/dev/null |
		sed -n 's/{"count":\([0-9]*\)}/\1/p'
}
# ring DIR: the ring's finished files, oldest first.
ring() { ls "$1" | grep -E "^$NAME\$" | sed "s|^|$1/|"; }
# wait_ring DIR: wait (15 s at most) until a recorder's first file appears in DIR.
wait_ring() {
	for _ in $(seq 150); do ls "$1" 2>/dev/null | grep -qE "^$NAME\.tmp\$" && { sleep 0.3; return 0; }; sleep 0.1; done
	return 1
}
# load SECONDS: run the workload (1000 getppid a run) every 0.1 s; print the runs.
load() {
	local n=0 end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do echo g | "$W" sysload 1000 >/dev/null; n=$((n + 1)); sleep 0.1; done
	echo $n
}
# stop: SIGINT the recorder and reap it; its exit status.
stop() {
	kill -INT $rec_pid
	for _ in $(seq 500); do kill -0 $rec_pid 2>/dev/null || break; sleep 0.01; done
	kill -0 $rec_pid 2>/dev/null && { kill -9 $rec_pid; wait $rec_pid 2>/dev/null; rec_pid=; return 124; }
	wait $rec_pid; local rc=$?; rec_pid=; return $rc
}

# Bad options: refused before the probes open, saying what is wrong.
expect() { # expect STATUS PATTERN DESCRIPTION -- CMD...
	local want=$1 pat=$2 desc=$3; shift 4
	out=$("$@" </dev/null 2>&1); rc=$?
	if [ "$rc" -eq "$want" ] && printf '%s' "$out" | grep -qE -- "$pat"; then ok 0 "$desc"
	else ok 1 "$desc (exit $rc, output: $(printf '%s' "$out" | head -3))"; fi
}
expect 2 "--rotate: '0' needs a unit: a duration \(1h, 30s\) or a size \(100M\)" "--rotate 0 is refused" -- "$L" record -o "$tmp/bad" --rotate 0
expect 2 "--rotate: 'abc' is not a duration \(1h, 30s\) or a size \(100M\)" "--rotate abc is refused" -- "$L" record -o "$tmp/bad" --rotate abc
expect 2 "--rotate: '0s' is shorter than the 1s minimum" "--rotate 0s is refused" -- "$L" record -o "$tmp/bad" --rotate 0s
expect 2 "--rotate: '1K' is smaller than the 4096-byte minimum" "--rotate 1K is refused" -- "$L" record -o "$tmp/bad" --rotate 1K
expect 2 "--keep: 'x' is not a duration \(24h, 90m\), a size \(10G\) or a number of files \(48\)" "--keep x is refused" -- "$L" record -o "$tmp/bad" --rotate 1h --keep x
expect 2 "--keep needs --rotate" "--keep without --rotate is refused" -- "$L" record -o "$tmp/bad" --keep 5
: > "$tmp/file"
expect 2 "-o: $tmp/file: is not a directory; --rotate writes a directory of recordings" "--rotate with -o FILE is refused" -- "$L" record -o "$tmp/file" --rotate 1h
mkdir "$tmp/ro"
if mount -t tmpfs -o ro tmpfs "$tmp/ro" 2>/dev/null; then
	expect 2 "-o: $tmp/ro: cannot write in the directory: Read-only file system" "an unwritable -o DIR is refused" -- "$L" record -o "$tmp/ro" --rotate 2s -d 1s
	umount "$tmp/ro"
else
	skip "mounting a read-only tmpfs is not permitted here"
fi
[ ! -e "$tmp/bad" ]; ok $? "a refused option makes no directory"

# Time rotation, nothing deleted: every 2 s a new file, and the files add
# up exactly to the workload (no tick lost or doubled at a boundary).
mkdir "$tmp/all"; echo keep > "$tmp/all/notes.txt"
"$L" record -o "$tmp/all" --rotate 2s --keep 100 -q "$Q" 2>"$tmp/all.err" & rec_pid=$!
wait_ring "$tmp/all" || { ok 1 "the recorder started"; done_testing; exit 1; }
runs=$(load 10)
sleep 1.2
stop; rc=$?
want=$((runs * 1000))
files=$(ring "$tmp/all"); nf=$(echo "$files" | wc -l)
started=$(sed -n 's/^latop: recorded [0-9]* ticks ([0-9.]*s) in \([0-9]*\) files to .*/\1/p' "$tmp/all.err")
[ $rc -eq 0 ] && [ "$nf" -ge 5 ] && [ "$nf" = "$started" ] && [ -z "$(ls "$tmp/all" | grep '\.tmp$')" ]
ok $? "12 s at --rotate 2s: $nf finished files (the recorder says $started), none left .tmp (exit $rc)"
# Each file but the first starts at the first 1 s tick at or after a 2 s boundary.
late=
for f in $(echo "$files" | tail -n +2); do
	ms=$(basename "$f" | sed -E 's/^latop-[0-9]{8}T[0-9]{4}([0-9]{2})\.([0-9]{3})Z\.snap$/\1\2/')
	[ $((10#$ms % 2000)) -lt 1500 ] || late+=" $(basename "$f")"
done
[ -z "$late" ]; ok $? "each file starts within a tick of a 2 s boundary${late:+ (not:$late)}"
sum=0 alone=
for f in $files; do
	n=$(getppids "$f")
	"$L" report "$f" -q "$Q show count" >/dev/null 2>"$tmp/one.err" && [ ! -s "$tmp/one.err" ] || alone+=" $(basename "$f")"
	sum=$((sum + ${n:-0}))
done
[ -z "$alone" ]; ok $? "each file reports alone, with no warning${alone:+ (not:$alone)}"
got=$(getppids "$tmp/all")
[ "$sum" -eq "$want" ] && [ "${got:-0}" -eq "$want" ]
ok $? "report DIR and the sum of the files both equal the workload's $want getppid (dir $got, files $sum)"
got=$(getppids $(echo "$files" | sort -r))
[ "${got:-0}" -eq "$want" ]; ok $? "the files given in any order read as one ($got)"
[ "$(cat "$tmp/all/notes.txt")" = keep ]; ok $? "a file not of the ring is left alone"

# A cut file in the middle: its whole ticks still count, a warning names it,
# the files after it read on.
mkdir "$tmp/cut"; cp $files "$tmp/cut/"
mid=$tmp/cut/$(basename "$(echo "$files" | sed -n 3p)")
truncate -s -300 "$mid"
cutn=$(getppids "$mid")
rest=0; for f in $(ring "$tmp/cut"); do [ "$f" = "$mid" ] || rest=$((rest + $(getppids "$f"))); done
got=$("$L" report "$tmp/cut" -q "$Q and syscall == getppid show count" --json 2>"$tmp/cut.err" | sed -n 's/{"count":\([0-9]*\)}/\1/p')
grep -q "warning: $mid: " "$tmp/cut.err" && [ "${got:-0}" -eq $((rest + ${cutn:-0})) ] && [ "${got:-0}" -lt "$want" ]
ok $? "a cut file in the middle: report DIR warns naming it, and counts the rest plus its whole ticks ($got = $rest + $cutn; $(head -c 200 "$tmp/cut.err"))"

# --keep 5: at most 5 files stay, the newest; report DIR equals their sum.
# An unfinished file a killed recorder left goes by the same rule.
mkdir "$tmp/keep"; echo keep > "$tmp/keep/notes.txt"; : > "$tmp/keep/latop-mine.snap"
stale=$tmp/keep/latop-20200101T000000.000Z.snap.tmp; echo cut > "$stale"
"$L" record -o "$tmp/keep" --rotate 2s --keep 5 -q "$Q" 2>"$tmp/keep.err" & rec_pid=$!
wait_ring "$tmp/keep" || { ok 1 "the recorder started"; done_testing; exit 1; }
"$L" record -o "$tmp/keep" --rotate 2s -d 2s -q "$Q" --quiet 2>"$tmp/second.err"; rc=$?
[ $rc -eq 1 ] && grep -qF "latop record: $tmp/keep: another latop record is writing a ring in this directory" "$tmp/second.err"
ok $? "a second recorder of the same directory is refused, naming it (exit $rc: $(head -c 200 "$tmp/second.err"))"
runs=$(load 12)
sleep 1.2
stop; rc=$?
files=$(ring "$tmp/keep"); nf=$(echo "$files" | wc -l)
started=$(sed -n 's/^latop: recorded [0-9]* ticks ([0-9.]*s) in \([0-9]*\) files to .*/\1/p' "$tmp/keep.err")
[ $rc -eq 0 ] && [ "$nf" -eq 5 ] && [ "${started:-0}" -gt 5 ]
ok $? "--keep 5: 5 files left of the $started written (exit $rc)"
sum=0; for f in $files; do sum=$((sum + $(getppids "$f"))); done
got=$(getppids "$tmp/keep")
[ "${got:-0}" -eq "$sum" ] && [ "$sum" -gt 0 ] && [ "$sum" -lt $((runs * 1000)) ]
ok $? "report DIR equals the kept files' sum ($got = $sum, of $((runs * 1000)) recorded)"
[ "$(cat "$tmp/keep/notes.txt")" = keep ] && [ -e "$tmp/keep/latop-mine.snap" ]
ok $? "--keep deletes only the ring's files"
[ ! -e "$stale" ]; ok $? "--keep deleted the unfinished file a killed recorder left"

# Size rotation: no file passes 8 KiB unless it holds a single tick, and
# the files add up exactly to the workload.
"$L" record -o "$tmp/size" --rotate 8K -i 100ms -q "$Q" --quiet 2>"$tmp/size.err" & rec_pid=$!
wait_ring "$tmp/size" || { ok 1 "the recorder started"; done_testing; exit 1; }
runs=$(load 4)
sleep 0.5
stop; rc=$?
files=$(ring "$tmp/size"); nf=$(echo "$files" | wc -l)
big=
for f in $files; do
	b=$(stat -c %s "$f")
	t=$("$L" report "$f" -q "$Q show count" --json 2>&1 | sed -n 's/.*"ticks": \([0-9]*\).*/\1/p')
	[ "$b" -le 8192 ] || [ "${t:-0}" -le 1 ] || big+=" $(basename "$f"):$b"
done
[ $rc -eq 0 ] && [ "$nf" -ge 2 ] && [ -z "$big" ]
ok $? "--rotate 8K: $nf files, none over 8192 bytes with more than a tick${big:+ (over:$big)} (exit $rc)"
got=$(getppids "$tmp/size")
[ "${got:-0}" -eq $((runs * 1000)) ]; ok $? "and report DIR gives the workload's $((runs * 1000)) getppid ($got)"

# A full disk: exit 1 naming the file and the error; the finished files
# stay whole, the current one keeps its whole ticks.
mkdir "$tmp/full"
if mount -t tmpfs -o size=256k tmpfs "$tmp/full" 2>"$tmp/mount.err"; then
	"$L" record -o "$tmp/full" --rotate 32K -i 10ms -d 60s -q "from syscalls" --quiet 2>"$tmp/full.err"; rc=$?
	err=$(cat "$tmp/full.err")
	[ $rc -eq 1 ] && echo "$err" | grep -Eq "^latop record: $tmp/full/$NAME\.tmp: (write failed at offset [0-9]+|cannot create): No space left on device" &&
		echo "$err" | grep -Eq "^latop record: [0-9]+ earlier files? of the ring in $tmp/full (is|are) finished"
	ok $? "a full disk: exit 1, the file and the error, and the finished files said ($err)"
	bad=
	for f in $(ring "$tmp/full"); do
		"$L" report "$f" -q "from syscalls show count" >/dev/null 2>"$tmp/one.err" && ! grep -q "$f" "$tmp/one.err" || bad+=" $(basename "$f")"
	done
	[ -n "$(ring "$tmp/full")" ] && [ -z "$bad" ]; ok $? "every finished file reads whole${bad:+ (not:$bad)}"
	"$L" report "$tmp/full" -q "from syscalls show count" >/dev/null 2>"$tmp/rep.err"; rc=$?
	[ $rc -eq 0 ]; ok $? "report DIR reads the ring, the cut file's whole ticks included (exit $rc: $(head -c 300 "$tmp/rep.err"))"
	umount "$tmp/full"
else
	skip "mounting a small tmpfs is not permitted here: $(head -c 200 "$tmp/mount.err")"
	skip "mounting a small tmpfs is not permitted here"
	skip "mounting a small tmpfs is not permitted here"
fi
done_testing
