#!/bin/bash
# The rc file and theme files as someone else may leave them: a bad rc is
# warned about once on stderr by `latop record` and in the TUI's status line,
# and the flows probe still records; a FIFO, /dev/zero or a password file as
# the theme (or a FIFO as the history file) is refused at once without
# quoting it, and q still quits; a history path from another user's rc
# file, or a link, is never written through.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"

S=latoprc-$$
tui_require
need_root

tmp=$(mktemp -d)
cleanup() {
	tui_end
	rm -rf "$tmp"
}
trap cleanup EXIT
rc=$tmp/config/latop/latoprc
mkdir -p "$tmp/config/latop"

count() { grep -c -- "$1" "$2"; } # count ERE FILE: lines of FILE matching

# ---- latop record with a bad rc file ----------------------------------------
printf 'theme = mono\nthis is not a setting\nflow_timeout = 0s\n' >"$rc"
XDG_CONFIG_HOME=$tmp/config timeout 60 "$BIN" record -o "$tmp/rec.snap" -d 2s >/dev/null 2>"$tmp/rec.err"
check $? "latop record runs with a bad rc file"
[ "$(count "^latop: warning: $rc:2: not a 'key = value' line; line ignored$" "$tmp/rec.err")" = 1 ]
check $? "the malformed line is a warning naming FILE:LINE, on stderr once"
[ "$(count "^latop: warning: $rc:3: flow_timeout: out of range (allowed from 1ms to 1h); using the default 1s$" \
	"$tmp/rec.err")" = 1 ]
check $? "flow_timeout = 0s is out of range, with the range and the default, once"
"$BIN" report "$tmp/rec.snap" -q 'from flows show count' >"$tmp/rep.out" 2>"$tmp/rep.err" &&
	grep -qE '^ *count *$' "$tmp/rep.out"
check $? "the recording has the flows table $(head -1 "$tmp/rep.err")"
! grep -q 'this is not' "$tmp/rec.err"
check $? "no text of the rc file is quoted"
[ -s "$tmp/rec.err" ] && sed 's/^/# /' "$tmp/rec.err" | head -10

printf 'flow_timeout = abc\n' >"$rc"
XDG_CONFIG_HOME=$tmp/config timeout 60 "$BIN" record -o "$tmp/abc.snap" -d 1s -q 'from flows' \
	>/dev/null 2>"$tmp/abc.err"
[ $? = 0 ] && [ "$(count "^latop: warning: $rc:1: flow_timeout: not a duration (like 500ms or 2s, from 1ms to 1h); using the default 1s$" \
	"$tmp/abc.err")" = 1 ]
check $? "flow_timeout = abc is not a duration: a warning with the default, and the probe records"

XDG_CONFIG_HOME=/dev/null timeout 60 "$BIN" record -o "$tmp/null.snap" -d 1s -q 'from flows' \
	>/dev/null 2>"$tmp/null.err"
check $? "latop record runs with XDG_CONFIG_HOME=/dev/null"
[ "$(count '^latop: warning: XDG_CONFIG_HOME=/dev/null is not a directory: no rc file read$' \
	"$tmp/null.err")" = 1 ]
check $? "... and says once that it is not a directory"
"$BIN" report "$tmp/null.snap" -q 'from flows show count' >/dev/null 2>&1
check $? "... and the flows table is recorded"

# ---- the TUI's status line ---------------------------------------------------
printf 'theme = mono\nthis is not a setting\nflow_timeout = 0s\n' >"$rc"
start -q "\"from flows\""
wait_for 'latoprc:3: flow_timeout: out of range \(allowed from 1ms to 1h\); using the default 1s' 30 &&
	[ "$(cap | grep -c "latoprc:2: not a 'key = value' line; line ignored")" = 1 ]
check $? "live: the TUI's status line shows each of the rc file's warnings"
wait_for '^ latop +LIVE ' 10 && keys q
st=$(exit_status)
[ "$st" = 0 ] && [ "$(count 'flow_timeout: out of range' "$tmp/stderr")" = 1 ]
check $? "live: q quits with status 0 (got $st), the warning said once on stderr"

printf 'theme = %s\n' "$tmp/fifo.theme" >"$rc"
mkfifo "$tmp/fifo.theme"
start replay "$tmp/rec.snap"
wait_for 'fifo\.theme: is a FIFO, not a regular file; using monochrome' 20
check $? "theme = a FIFO: refused at once, saying it is a FIFO"
keys q
st=$(exit_status)
[ "$st" = 0 ]
check $? "... and q quits (got $st)"

start replay -t /dev/zero "$tmp/rec.snap"
wait_for '/dev/zero: is a character device, not a regular file; using monochrome' 20
check $? "-t /dev/zero: refused without reading it"
keys q
st=$(exit_status)
[ "$st" = 0 ]
check $? "... and q quits (got $st)"

mkfifo "$tmp/history"
printf 'history = %s\n' "$tmp/history" >"$rc"
start replay "$tmp/rec.snap"
wait_for "latoprc:1: history: $tmp/history: is a FIFO, not a regular file; no query history kept" 20
check $? "history = a FIFO: refused at once, on the rc file's line"
keys q
st=$(exit_status)
[ "$st" = 0 ]
check $? "... and q quits (got $st)"

# latop under sudo keeping HOME: root reads a user's rc file.  A history
# path it names, or a link planted where the history goes, must never make
# root write over a file (write_history truncates what it writes to).
printf 'keep me\n' >"$tmp/victim"
printf 'history = %s\n' "$tmp/victim" >"$rc"
chown 65534 "$rc"
start replay "$tmp/rec.snap"
wait_for "history: $tmp/victim: named by an rc file that uid 65534 owns" 20
check $? "history named by another user's rc file: refused, on the rc file's line"
keys q
st=$(exit_status)
[ "$st" = 0 ] && [ "$(cat "$tmp/victim")" = "keep me" ]
check $? "... q quits (got $st) and the file it named is untouched"
chown 0 "$rc"
ln -s "$tmp/victim" "$tmp/hist-link"
printf 'history = %s\n' "$tmp/hist-link" >"$rc"
start replay "$tmp/rec.snap"
wait_for "latoprc:1: history: $tmp/hist-link: is a symbolic link; no query history kept" 20
check $? "a symbolic link as the history file: refused"
keys q
st=$(exit_status)
[ "$st" = 0 ] && [ "$(cat "$tmp/victim")" = "keep me" ]
check $? "... q quits (got $st) and the link's target is untouched"

printf 'root:$6$s3cr3tSALT$hash:19000:0:99999:7:::\nbin:*:19000:0:99999:7:::\n' >"$tmp/shadow"
printf 'sys:*:19000:0:99999:7:::\n' >>"$tmp/shadow"
printf 'theme = %s\n' "$tmp/shadow" >"$rc"
start replay "$tmp/rec.snap"
wait_for "$tmp/shadow" 20
screen=$(cap)
grep -qE 'shadow: not a theme file \(3 of its first 3 lines are not .role = color\.\.\.. lines\); using monochrome' \
	<<<"$screen"
check $? "theme = a password file: one message, 'not a theme file'"
! grep -qE 's3cr3t|root:|bin:' <<<"$screen"
check $? "... and none of its text on the screen while it is said"
keys q
st=$(exit_status)
[ "$st" = 0 ] && ! grep -q 'ERROR: \(Address\|Leak\)Sanitizer\|runtime error' "$tmp/stderr"
check $? "q quits with status 0 (got $st), no sanitizer report"

done_testing
