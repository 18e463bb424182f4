#!/bin/bash
# -p PID,... narrows every probe that knows an event's process to those
# processes, in the kernel: a recording made with it and no query holds no
# other process's syscalls, and a query's own WHERE still applies on top,
# as much of it as fits beside the pids.
. "$(dirname "$0")/../lib.sh"
L=${LATOP_BIN:?}
W=$LATOP_HELPERS/workload
tmp=$(mktemp -d); a= b=
trap '[ -n "$a" ] && kill $a 2>/dev/null; [ -n "$b" ] && kill $b 2>/dev/null; rm -rf "$tmp"' EXIT

for bad in 1,x 0 , 1, 1,2,3,4,5,6,7,8,9; do
	out=$("$L" record -p "$bad" -o "$tmp/bad.snap" -d 1s 2>&1); rc=$?
	[ $rc -eq 2 ] && printf '%s' "$out" | grep -q -- "-p: '$bad'"
	ok $? "-p '$bad' is refused, naming it (exit $rc: $(printf '%s' "$out" | head -1))"
done
need_root
[ -x "$W" ] || skip_all "no workload helper at $W (make tests-build)"

# Two busy processes under names of their own (other tests may run too).
cp "$W" "$tmp/pida$$"; cp "$W" "$tmp/pidb$$"
"$tmp/pida$$" spin 2000000000 >/dev/null & a=$!
"$tmp/pidb$$" spin 2000000000 >/dev/null & b=$!

# pids FILE [QUERY-WHERE]: the syscalls table's pids in FILE, sorted, one a line.
pids() {
	"$L" report "$1" -q "from syscalls ${2:-} group by pid show count" --csv 2>/dev/null |
		tail -n +2 | cut -d, -f1 | sort -u
}

"$L" record -p "$a" -o "$tmp/a.snap" -d 2s --quiet 2>"$tmp/a.err"
ok $? "record -p $a records ($(head -1 "$tmp/a.err"))"
got=$(pids "$tmp/a.snap")
[ "$got" = "$a" ]
ok $? "with no query, the only process recorded is $a (got: $(printf '%s' "$got" | tr '\n' ' '))"

"$L" record -p "$a,$b" -o "$tmp/ab.snap" -d 2s --quiet \
	-q "from syscalls where comm == 'pidb$$'" 2>"$tmp/ab.err"
ok $? "record -p $a,$b with a query records ($(head -1 "$tmp/ab.err"))"
got=$(pids "$tmp/ab.snap")
[ "$got" = "$b" ]
ok $? "the query's WHERE applies within -p: only $b (got: $(printf '%s' "$got" | tr '\n' ' '))"

# Eight pids and a WHERE too long to fit beside them in the kernel filter:
# its first conjunct (the comm test) stays there, the rest is left out.
"$L" record -p "$a,$b,1,2,3,4,5,6" -o "$tmp/long.snap" -d 2s --quiet \
	-q "from syscalls where comm == 'pidb$$' and syscall in (read, write, getppid, openat, close, fstat, mmap, brk, ioctl, pread64, futex)" \
	2>"$tmp/long.err"
ok $? "record -p with 8 pids and a long WHERE records ($(head -1 "$tmp/long.err"))"
got=$(pids "$tmp/long.snap")
[ "$got" = "$b" ]
ok $? "the WHERE's leading conjunct still applies in the kernel: only $b (got: $(printf '%s' "$got" | tr '\n' ' '))"
done_testing
