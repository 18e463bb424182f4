#!/bin/bash
# Cgroup identity: workloads moved into cgroups of their own before their
# counted part are counted exactly per cgroup, with the systemd unit and
# container their paths name; -c CGROUP and a WHERE on cgroup narrow the
# kernel (what a recording holds is what the kernel kept, so the other
# cgroup is absent, not filtered after); a recording names the cgroups after
# they are gone.
. "$(dirname "$0")/../lib.sh"
L=${LATOP_BIN:?}
W=$LATOP_HELPERS/workload
tmp=$(mktemp -d); rec_pid= loop= demo_pid=
R=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
HEX=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
A=/latop-test-$$-a
B=/latop-test-$$-b.slice/docker-$HEX.scope
TH=/latop-test-$$-t	# a threaded subtree: one process's threads in TH and TH/x
cleanup() {
	[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null
	[ -n "$loop" ] && losetup -d "$loop"
	rm -f /dev/shm/latop-test-$$.img
	[ -n "$demo_pid" ] && kill -9 $demo_pid 2>/dev/null
	for d in "$A/sub" "$A" "$B" "${B%/*}" "$TH/x" "$TH" /latop-test-$$-pa /latop-test-$$-pb; do [ -n "$R" ] && rmdir "$R$d" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

out=$("$L" record -c /latop-test-$$-none -o "$tmp/bad.snap" -d 1s 2>&1); rc=$?
[ $rc -eq 2 ] && printf '%s' "$out" | grep -q -- "-c: no cgroup '/latop-test-$$-none'"
ok $? "-c with a cgroup that does not exist is refused, naming it (exit $rc: $(printf '%s' "$out" | head -1))"
# A recording made before the cgroup fields reads them empty.
old=${LATOP_TOP:?}/tests/data/sweep/syscalls.snap
got=$("$L" report "$old" -q "from syscalls group by cgroup, unit, container show count" --csv 2>&1)
want=$("$L" report "$old" -q "from syscalls show count" --csv 2>&1 | tail -1)
[ "$got" = "cgroup,unit,container,count
,,,$want" ]; ok $? "an older recording groups by cgroup, unit, container: one row, empty (got: $(echo $got))"
need_root
[ -x "$W" ] || skip_all "no workload helper at $W (make tests-build)"
[ -n "$R" ] || skip_all "no cgroup2 mount"
mkdir -p "$R$A/sub" "$R$B" || skip_all "cannot make cgroups under $R"
cp "$W" "$tmp/cgw$$"
got=$("$L" complete 2 latop -c "/latop-test-$$-" | LC_ALL=C sort -r | tr '\n' ' ')
[ "$got" = "words ${B%/*} $A " ]; ok $? "-c completes cgroup paths (got: $got)"
got=$("$L" complete 3 latop record -c "$A/" | tr '\n' ' ')
[ "$got" = "words $A/sub " ]; ok $? "-c completes below a cgroup (got: $got)"
C=cgw$$

# run CGROUP N: N getppid, write and read calls (workload sysload) by a
# process that moved itself into CGROUP before it started counting.
run() { echo g | sh -c "echo \$\$ > '$R$1/cgroup.procs' && exec '$tmp/$C' sysload $2" >/dev/null; }
# rec FILE ARGS...: record syscalls until the workloads ran (A: 1000, A/sub: 500, B: 2000).
rec() {
	local f=$1; shift
	"$L" record -o "$tmp/$f" -d 60s --quiet "$@" 2>"$tmp/$f.err" & rec_pid=$!
	wait_recording "$tmp/$f" || return 1
	run "$A" 1000 && run "$A/sub" 500 && run "$B" 2000 || return 1
	sleep 1.5
	kill -TERM $rec_pid; wait $rec_pid; local rc=$?; rec_pid=
	return $rc
}
# rows FILE QUERY: the CSV rows of a report, without the header.
rows() { "$L" report "$tmp/$1" -q "$2" --csv 2>/dev/null | tail -n +2; }

rec all.snap -q "from syscalls where comm == '$C' group by cgroup, unit, container, syscall show count"
ok $? "record with a WHERE on comm ($(head -c 300 "$tmp/all.snap.err"))"
rec ev.snap -q "from syscall_events where comm == '$C' and syscall == getppid threshold 1ns buffer 100000"
ok $? "record single events ($(head -c 300 "$tmp/ev.snap.err"))"
rec only.snap -c "$A" -q "from syscalls"
ok $? "record -c $A ($(head -c 300 "$tmp/only.snap.err"))"
rec where.snap -q "from syscalls where cgroup == '$B'"
ok $? "record with WHERE cgroup == '$B' ($(head -c 300 "$tmp/where.snap.err"))"
rec glob.snap -q "from syscalls where cgroup ~ '$A/*'"
ok $? "record with WHERE cgroup ~ '$A/*' ($(head -c 300 "$tmp/glob.snap.err"))"
rec full.snap -c "$R$B" -q "from syscalls"
ok $? "record -c with the full path $R$B ($(head -c 300 "$tmp/full.snap.err"))"

# Block: a loop device of its own; reads queued from A, writes from B.
BIO=$LATOP_HELPERS/blkio
blk=
if [ -x "$BIO" ] && truncate -s 64M /dev/shm/latop-test-$$.img &&
   loop=$(losetup -f --show /dev/shm/latop-test-$$.img); then
	D=$(basename "$loop")
	udevadm settle 2>/dev/null; sleep 0.5
	"$L" record -o "$tmp/blk.snap" -d 120s --quiet \
		-q "from block_events where dev == '$D' threshold 1ns buffer 100000" 2>"$tmp/blk.err" & rec_pid=$!
	wait_recording "$tmp/blk.snap" &&
		echo g | sh -c "echo \$\$ > '$R$A/cgroup.procs' && exec '$BIO' read '$loop' 4096 300 1" >/dev/null &&
		echo g | sh -c "echo \$\$ > '$R$B/cgroup.procs' && exec '$BIO' write '$loop' 131072 40 1" >/dev/null
	sleep 1; kill -TERM $rec_pid; wait $rec_pid; ok $? "record block I/O from two cgroups ($(head -c 300 "$tmp/blk.err"))"
	rec_pid=; blk=1
else
	skip "no loop device for the block view"
fi

# Flows: a loopback TCP server in A answers 120 requests, one in B 80; the
# clients stay where the test runs (a flow is the serving end's).
RQ=$LATOP_HELPERS/reqsrv
flw=
if [ -x "$RQ" ]; then
	PA=$(free_ports 2); PB=$((PA + 1))
	"$L" record -o "$tmp/flw.snap" -d 120s -i 250ms --quiet \
		-q "from flows where lport in ($PA, $PB) threshold 1ns buffer 100000" 2>"$tmp/flw.err" & rec_pid=$!
	wait_recording "$tmp/flw.snap" &&
		{ sh -c "echo \$\$ > '$R$A/cgroup.procs' && exec '$RQ' server 127.0.0.1 $PA 1 1" >"$tmp/srva" & sa=$!; } &&
		{ sh -c "echo \$\$ > '$R$B/cgroup.procs' && exec '$RQ' server 127.0.0.1 $PB 1 1" >"$tmp/srvb" & sb=$!; } &&
		wait_ready "$tmp/srva" && wait_ready "$tmp/srvb" &&
		"$RQ" client 127.0.0.1 $PA 120 >/dev/null && "$RQ" client 127.0.0.1 $PB 80 >/dev/null &&
		wait $sa $sb
	sleep 1; kill -TERM $rec_pid; wait $rec_pid; ok $? "record flows served from two cgroups ($(head -c 300 "$tmp/flw.err"))"
	rec_pid=; flw=1
	"$L" record -o "$tmp/flwc.snap" -d 1s --quiet -c "$A" -q "from flows" 2>"$tmp/flwc.err"
	ok $? "record flows alone with -c $A ($(head -c 300 "$tmp/flwc.err"))"
	grep -aq -- "-c $A: flows not narrowed" "$tmp/flwc.snap"
	ok $? "the status of a recording -c did not narrow at all says so"
else
	skip "no reqsrv helper for the flows view"
fi

# Paths: a tier in A serves 40 requests, one in B 25; the clients stay
# where the test runs (their calls are paths of their own, lport 0).
T=$LATOP_HELPERS/tiers
pth=
if [ -x "$T" ]; then
	QA=$(free_ports 2); QB=$((QA + 1))
	sh -c "echo \$\$ > '$R$A/cgroup.procs' && exec '$T' serve -p $QA -w 2" >/dev/null & ta=$!
	sh -c "echo \$\$ > '$R$B/cgroup.procs' && exec '$T' serve -p $QB -w 2" >/dev/null & tb=$!
	# prec FILE ARGS...: record paths while a client sends 40 requests to A, 25 to B.
	prec() {
		local f=$1; shift
		"$L" record -o "$tmp/$f" -d 120s --quiet "$@" 2>"$tmp/$f.err" & rec_pid=$!
		wait_recording "$tmp/$f" &&
			timeout 60 "$T" client -c 127.0.0.1:$QA -C 1 -n 40 -t /dev/null &&
			timeout 60 "$T" client -c 127.0.0.1:$QB -C 1 -n 25 -t /dev/null || return 1
		sleep 2; kill -TERM $rec_pid; wait $rec_pid; local rc=$?; rec_pid=
		return $rc
	}
	prec pth.snap -q "from paths where comm == 'tiers' threshold 1ns buffer 100000"
	ok $? "record paths served from two cgroups ($(head -c 300 "$tmp/pth.snap.err"))"
	prec pthc.snap -c "$A" -q "from paths"
	ok $? "record paths with -c $A ($(head -c 300 "$tmp/pthc.snap.err"))"
	kill $ta $tb; wait $ta $tb 2>/dev/null
	pth=1
else
	skip "no tiers helper for the paths view"
fi

# Locks: lockdemo's one thread waits 40 times on each of 3 futex words from
# A, then 30 times on each of 2 from B (200 us timeouts, nobody wakes it).
LD=$LATOP_HELPERS/lockdemo
lck=
if [ -x "$LD" ]; then
	# words CGROUP N K OUT: lockdemo words N K, moved into CGROUP first.
	words() { echo g | sh -c "echo \$\$ > '$R$1/cgroup.procs' && exec '$LD' words $2 $3" | sed 's/^r//' > "$4"; }
	# lrec FILE ARGS...: record locks while lockdemo waits from A, then from B
	# (the recorder run through the command in pre, if any).
	pre=()
	lrec() {
		local f=$1; shift
		"${pre[@]}" "$L" record -o "$tmp/$f" -d 120s --quiet "$@" 2>"$tmp/$f.err" & rec_pid=$!
		wait_recording "$tmp/$f" || return 1
		words "$A" 3 40 "$tmp/$f.a" && words "$B" 2 30 "$tmp/$f.b" || return 1
		sleep 1.5; kill -TERM $rec_pid; wait $rec_pid; local rc=$?; rec_pid=
		return $rc
	}
	lrec lck.snap -q "from locks threshold 1ns buffer 100000"
	ok $? "record locks waited on from two cgroups ($(head -c 300 "$tmp/lck.snap.err"))"
	lrec lckc.snap -c "$A" -q "from locks"
	ok $? "record locks with -c $A ($(head -c 300 "$tmp/lckc.snap.err"))"
	lrec lckw.snap -q "from locks where cgroup == '$B'"
	ok $? "record locks with WHERE cgroup == '$B' ($(head -c 300 "$tmp/lckw.snap.err"))"
	lrec lckl.snap -q "from locks where cgroup == '$B' and wait > 100us"
	ok $? "record locks with WHERE cgroup == '$B' and wait > 100us ($(head -c 300 "$tmp/lckl.snap.err"))"
	# The same, its futex waits found by the scheduler (in a mount namespace
	# of its own without tracefs, however often it is mounted, nor debugfs,
	# below which tracefs mounts itself again when looked up), where a wait
	# ends in the context of another task: the one leaving the CPU.
	pre=(unshare -m --propagation private sh -c 'for d in tracing debug/tracing debug; do
		while umount /sys/kernel/$d 2>/dev/null; do :; done; done; exec "$@"' sh)
	by_sched=
	if "${pre[@]}" "$L" probes 2>/dev/null | grep "futex waits and wakes" | grep -q "tp_btf/sched_switch"; then
		lrec lcksch.snap -q "from locks where cgroup == '$B' and wait > 100us"
		ok $? "record it again, futex waits found by the scheduler ($(head -c 300 "$tmp/lcksch.snap.err"))"
		by_sched=lcksch
	else
		skip "no mount namespace without tracefs: futex waits found by the scheduler"
	fi
	pre=()
	# Key split: one process's threads in T and T/x wait on one mutex.
	mkdir "$R$TH" "$R$TH/x" && echo threaded > "$R$TH/x/cgroup.type" &&
		rm -f "$tmp/go" && mkfifo "$tmp/go" &&
		{ sh -c "echo \$\$ > '$R$TH/cgroup.procs' && exec '$LD' snapshot 1500 '$tmp'" < "$tmp/go" > "$tmp/snap.out" & demo_pid=$!; } &&
		exec 3> "$tmp/go"
	ok $? "lockdemo snapshot starts in the threaded cgroup $TH"
	for _ in $(seq 50); do [ -s "$tmp/snap.out" ] && break; sleep 0.1; done
	"$L" record -o "$tmp/lcks1.snap" -d 60s --quiet -q "from locks where pid == $demo_pid group by sym show count" 2>"$tmp/lcks1.err" & r1=$!
	"$L" record -o "$tmp/lcks2.snap" -d 60s --quiet -q "from locks where pid == $demo_pid group by sym, cgroup show count" 2>"$tmp/lcks2.err" & r2=$!
	wait_recording "$tmp/lcks1.snap" && wait_recording "$tmp/lcks2.snap"
	ok $? "two recorders of the threaded lockdemo start"
	echo g >&3; exec 3>&-
	# Its first request thread goes to T/x as soon as it is named.
	moved=
	for _ in $(seq 100); do
		for t in /proc/$demo_pid/task/*; do
			[ "$(cat "$t/comm" 2>/dev/null)" = req-0 ] && echo "${t##*/}" > "$R$TH/x/cgroup.threads" && moved=1
		done
		[ -n "$moved" ] && break; sleep 0.02
	done
	[ -n "$moved" ]; ok $? "lockdemo's req-0 moved to $TH/x"
	wait $demo_pid; demo_pid=
	sleep 1.5; kill -TERM $r1 $r2; wait $r1; rc1=$?; wait $r2; rc2=$?
	[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ]; ok $? "the threaded lockdemo recorded ($(head -c 300 "$tmp/lcks1.err"))"
	rmdir "$R$TH/x" "$R$TH"; ok $? "the threaded cgroups are removed"
	lck=1
else
	skip "no lockdemo helper for the locks view"
fi

# Every cgroup is gone before any report: the names come from the files.
cleanup_dirs() { for d in "$A/sub" "$A" "$B" "${B%/*}"; do rmdir "$R$d" || return 1; done; }
cleanup_dirs; ok $? "the test cgroups are removed before the reports"

got=$(rows all.snap "from syscalls where syscall == getppid group by cgroup show count order by cgroup")
want="$A,1000
$A/sub,500
$B,2000"
[ "$got" = "$want" ]; ok $? "exact getppid counts per cgroup, named after the cgroups are gone (got: $(echo $got))"
got=$(rows all.snap "from syscalls where syscall == getppid group by unit, container show count" | sort)
want=",,1500
docker-$HEX.scope,${HEX:0:12},2000"
[ "$got" = "$want" ]; ok $? "group by unit, container: the docker scope and its 12-digit id (got: $(echo $got))"
got=$(rows all.snap "from syscalls where syscall == getppid and cgroup ~ '$A/*' group by cgroup show count")
[ "$got" = "$A/sub,500" ]; ok $? "a glob on a path (starting with /) matches below it (got: $(echo $got))"

got=$(rows ev.snap "from syscall_events group by cgroup, container show count" | sort)
want="$A,,1000
$A/sub,,500
$B,${HEX:0:12},2000"
[ "$got" = "$want" ]; ok $? "single events carry the cgroup: exact counts (got: $(echo $got))"

# What the kernel kept: the recordings hold the raw table, no WHERE applied after.
got=$(rows only.snap "from syscalls where syscall == getppid group by cgroup show count order by cgroup")
want="$A,1000
$A/sub,500"
[ "$got" = "$want" ]; ok $? "-c $A: the kernel counts $A and below it only, no overflow row (got: $(echo $got))"
got=$(rows only.snap "from syscalls group by cgroup show count" | cut -d, -f1 | sort -u | tr '\n' ' ')
[ "$got" = "$A $A/sub " ]; ok $? "-c $A: no other cgroup's call of any kind is in the table (got: $got)"
grep -aq -- "-c $A: syscalls count only this cgroup" "$tmp/only.snap"
ok $? "the recording's status says what -c narrowed"
got=$(rows where.snap "from syscalls group by cgroup show count" | cut -d, -f1 | sort -u | tr '\n' ' ')
[ "$got" = "$B " ]; ok $? "WHERE cgroup == '$B' is tested in the kernel: nothing else counted (got: $got)"
got=$(rows where.snap "from syscalls where syscall == getppid show count")
[ "$got" = "2000" ]; ok $? "and its count is exact (got: $got)"
got=$(rows glob.snap "from syscalls group by cgroup show count" | cut -d, -f1 | sort -u | tr '\n' ' ')
[ "$got" = "$A $A/sub " ]; ok $? "WHERE cgroup ~ '$A/*' is a subtree test in the kernel (got: $got)"
got=$(rows full.snap "from syscalls where syscall == getppid group by cgroup show count")
[ "$got" = "$B,2000" ]; ok $? "-c with the full path under the mount (got: $(echo $got))"
if [ -n "$blk" ]; then
	got=$(rows blk.snap "from block where comm == 'blkio' group by cgroup, container, op show count" | sort)
	want="$A,,read,300
$B,${HEX:0:12},write,40"
	[ "$got" = "$want" ]; ok $? "block: exact requests per queueing cgroup (got: $(echo $got))"
	got=$(rows blk.snap "from block_events where comm == 'blkio' group by cgroup, op show count" | sort)
	want="$A,read,300
$B,write,40"
	[ "$got" = "$want" ]; ok $? "block_events: each request carries its cgroup (got: $(echo $got))"
fi
if [ -n "$flw" ]; then
	got=$(rows flw.snap "from flows group by cgroup, unit, container show count" | sort)
	want="$A,,,120
$B,docker-$HEX.scope,${HEX:0:12},80"
	[ "$got" = "$want" ]; ok $? "flows: exact requests per serving cgroup (got: $(echo $got))"
	got=$(rows flw.snap "from flow_events group by cgroup, container show count" | sort)
	want="$A,,120
$B,${HEX:0:12},80"
	[ "$got" = "$want" ]; ok $? "flow_events: each request carries the server's cgroup (got: $(echo $got))"
fi
if [ -n "$pth" ]; then
	got=$(rows pth.snap "from paths where lport in ($QA, $QB) group by cgroup, unit, container show count" | sort)
	want="$A,,,40
$B,docker-$HEX.scope,${HEX:0:12},25"
	[ "$got" = "$want" ]; ok $? "paths: exact requests per serving cgroup (got: $(echo $got))"
	got=$(rows pth.snap "from path_events where lport in ($QA, $QB) group by cgroup, container show count" | sort)
	want="$A,,40
$B,${HEX:0:12},25"
	[ "$got" = "$want" ]; ok $? "path_events: each request carries its cgroup (got: $(echo $got))"
	got=$(rows pthc.snap "from paths group by cgroup, lport show count")
	[ "$got" = "$A,$QA,40" ]; ok $? "paths -c $A: the kernel keeps $A's tier only, clients and B out (got: $(echo $got))"
	grep -aq -- "-c $A: paths count only this cgroup" "$tmp/pthc.snap"
	ok $? "the paths recording's status says -c narrowed it"
fi
if [ -n "$lck" ]; then
	pa=$(sed -n 's/.*"pid": \([0-9]*\).*/\1/p' "$tmp/lck.snap.a")
	pb=$(sed -n 's/.*"pid": \([0-9]*\).*/\1/p' "$tmp/lck.snap.b")
	# With the futex syscall hooks every call is a wait; found by the
	# scheduler, a wait is a sleep (lockdemo counts both).
	truth() { sed -n "s/.*\"$1\": \([0-9]*\).*/\1/p" "$2"; }
	# counted REC GOT WANT: GOT and WANT are rows KEY...,COUNT with the same
	# keys in the same order, WANT's counts lockdemo's own; each count in GOT
	# is at most WANT's, and all they fall short is at most what REC says it
	# gave up (evicted: a wait whose end the kernel ran no program for, and
	# counted no missed run for, as this machine's now and then, is given
	# up when its thread waits again, comes back on a CPU outside the futex
	# call or exits; latop(1) lock_wait_max).
	# (report --json gives the figures as the last line of its standard
	# error, not with the rows).
	counted() {
		python3 - "$2" "$3" "$("$L" report "$tmp/$1" --json -q 'from locks show count' 2>&1 >/dev/null |
			sed -n 's/^{"health": .*"evicted": \([0-9]*\).*/\1/p' | tail -1)" <<'EOF'
import sys
got = [l.rsplit(",", 1) for l in sys.argv[1].split("\n") if l]
want = [l.rsplit(",", 1) for l in sys.argv[2].split("\n") if l]
assert sys.argv[3], "report --json gave no health line"
evicted = int(sys.argv[3])
assert [k for k, _ in got] == [k for k, _ in want], (got, want)
short = sum(int(w) - int(g) for (_, g), (_, w) in zip(got, want))
assert all(int(g) <= int(w) for (_, g), (_, w) in zip(got, want)) and short <= evicted, \
    (got, want, evicted)
EOF
	}
	n=calls; "$L" probes | grep "futex waits and wakes" | grep -q "tp_btf/sched_switch" && n=slept
	got=$(rows lck.snap "from locks where pid in ($pa, $pb) and kind == 'futex' group by cgroup, unit, container show count" | sort)
	bypid=$(rows lck.snap "from locks where pid in ($pa, $pb) and kind == 'futex' group by pid show count" | sort)
	want="$A,,,$(truth $n "$tmp/lck.snap.a")
$B,docker-$HEX.scope,${HEX:0:12},$(truth $n "$tmp/lck.snap.b")"
	counted lck.snap "$got" "$want" && [ "$(echo "$bypid" | grep "^$pa," | cut -d, -f2),$(echo "$bypid" | grep "^$pb," | cut -d, -f2)" = \
		"$(echo "$got" | head -1 | cut -d, -f4),$(echo "$got" | tail -1 | cut -d, -f4)" ]
	ok $? "locks: each waiter's cgroup gets its process's waits, every one counted or said given up (got: $(echo $got); want: $(echo $want); by pid: $(echo $bypid))"
	got=$(rows lck.snap "from lock_events where pid in ($pa, $pb) and kind == 'futex' group by cgroup, container show count" | sort)
	want="$A,,$(truth $n "$tmp/lck.snap.a")
$B,${HEX:0:12},$(truth $n "$tmp/lck.snap.b")"
	counted lck.snap "$got" "$want"
	ok $? "lock_events: each wait carries its waiter's cgroup (got: $(echo $got); want: $(echo $want))"
	pa=$(sed -n 's/.*"pid": \([0-9]*\).*/\1/p' "$tmp/lckc.snap.a")
	got=$(rows lckc.snap "from locks where kind == 'futex' group by cgroup, pid show count")
	all=$(rows lckc.snap "from locks group by cgroup show count" | cut -d, -f1 | sort -u | tr '\n' ' ')
	counted lckc.snap "$got" "$A,$pa,$(truth $n "$tmp/lckc.snap.a")" && [ "$all" = "$A " ]
	ok $? "locks -c $A: the kernel counts $A's waits only, no other cgroup's lock at all (got: $(echo $got); cgroups: $all)"
	grep -aq -- "-c $A: .*locks.* count only this cgroup" "$tmp/lckc.snap"
	ok $? "the locks recording's status says -c narrowed it"
	for f in lckw lckl $by_sched; do
		pb=$(sed -n 's/.*"pid": \([0-9]*\).*/\1/p' "$tmp/$f.snap.b")
		m=$n; [ $f = lcksch ] && m=slept
		got=$(rows $f.snap "from locks where kind == 'futex' group by cgroup, pid show count")
		all=$(rows $f.snap "from locks group by cgroup show count" | cut -d, -f1 | sort -u | tr '\n' ' ')
		counted $f.snap "$got" "$B,$pb,$(truth $m "$tmp/$f.snap.b")" && [ "$all" = "$B " ]
		ok $? "locks $f: a WHERE on cgroup is tested in the kernel, no other cgroup's waits counted (got: $(echo $got); cgroups: $all)"
	done
	# Key split: the query that reads no cgroup field keys the mutex once.
	got=$(rows lcks1.snap "from locks where sym == 'state_lock' group by cgroup show count")
	want=$(rows lcks2.snap "from locks where sym == 'state_lock' show count")
	[ "$got" = ",$want" ]
	ok $? "a query reading no cgroup: one key per lock whatever the waiters' cgroups (got: $(echo $got), all: $want)"
	got=$(rows lcks2.snap "from locks where sym == 'state_lock' group by cgroup show count" | cut -d, -f1 | sort | tr '\n' ' ')
	[ "$got" = "$TH $TH/x " ]
	ok $? "a query reading cgroup: the waiters of TH and TH/x counted apart (got: $got)"
fi
# -p and -c together: only the given processes that are in the cgroup (or
# below) are counted.  Both processes exist before the recording (blocked
# opening their fifo), move into PA and PB, then make their calls.
PA=/latop-test-$$-pa PB=/latop-test-$$-pb
mkdir -p "$R$PA" "$R$PB"; mkfifo "$tmp/ga" "$tmp/gb"
sh -c "echo \$\$ > '$R$PA/cgroup.procs' && exec '$tmp/$C' sysload 700" < "$tmp/ga" >/dev/null & pa=$!
sh -c "echo \$\$ > '$R$PB/cgroup.procs' && exec '$tmp/$C' sysload 900" < "$tmp/gb" >/dev/null & pb=$!
"$L" record -o "$tmp/pc.snap" -d 60s --quiet -p "$pa,$pb" -c "$PA" -q "from syscalls" 2>"$tmp/pc.err" & rec_pid=$!
if wait_recording "$tmp/pc.snap"; then
	echo g > "$tmp/ga"; echo g > "$tmp/gb"
	wait $pa $pb; sleep 1.5
	kill -TERM $rec_pid; wait $rec_pid; rc=$?; rec_pid=
	got=$(rows pc.snap "from syscalls where syscall == getppid group by pid show count" | tr '\n' ' ')
	[ $rc -eq 0 ] && [ "$got" = "$pa,700 " ]
	ok $? "-p $pa,$pb -c $PA: only $pa (in $PA) counted, 700 getppid; $pb (in $PB) not at all (got: $got; exit $rc: $(head -c 200 "$tmp/pc.err"))"
else
	kill $rec_pid 2>/dev/null; rec_pid=
	echo g > "$tmp/ga" & echo g > "$tmp/gb" & wait $pa $pb
	ok 1 "-p with -c: the recorder did not start ($(head -c 300 "$tmp/pc.err"))"
fi
done_testing
