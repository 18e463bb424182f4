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
tmp=$(mktemp -d); rec_pid= loop=
R=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
HEX=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
A=/latop-test-$$-a
B=/latop-test-$$-b.slice/docker-$HEX.scope
cleanup() {
	[ -n "$rec_pid" ] && kill -9 $rec_pid 2>/dev/null
	[ -n "$loop" ] && losetup -d "$loop"
	rm -f /dev/shm/latop-test-$$.img
	for d in "$A/sub" "$A" "$B" "${B%/*}"; do [ -n "$R" ] && rmdir "$R$d" 2>/dev/null; done
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
	PA=$((20000 + RANDOM % 20000)); PB=$((PA + 1))
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
	QA=$((20000 + RANDOM % 20000)); QB=$((QA + 1))
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
done_testing
