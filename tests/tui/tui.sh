#!/bin/bash
# The TUI under tmux: record a small workload, replay it and drive the keys
# (view switch, sort, query line with completion and errors, detail pane,
# drill-down and back, help, save, quit), then run it live for a few seconds.
# Every check reads the screen as tmux renders it.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"

S=latoptest-$$
tui_require
need_root

tmp=$(mktemp -d)
wl_pid=
cleanup() {
	tui_end
	[ -n "$wl_pid" ] && kill "$wl_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# A workload with a name nothing else has: dd copied as latoptuiwl.
cp "$(command -v dd)" "$tmp/latoptuiwl"
( while :; do "$tmp/latoptuiwl" if=/dev/zero of=/dev/null bs=64 count=20000 2>/dev/null; sleep 0.05; done ) &
wl_pid=$!

# The query as the header shows it, its wrapped lines joined (a space at a
# wrap is lost: tmux trims trailing blanks).
shown_query() { cap | sed -n '4,6p' | tr -d '\n' | tr -s ' '; }

# ---- a recording ---------------------------------------------------------
# Only the syscalls probe: with every probe, replay opens on the first view
# of the tab order (key 1...), and these checks drive the syscalls view.
timeout 60 "$BIN" record -o "$tmp/rec.snap" -d 3s -q 'from syscalls' >/dev/null 2>"$tmp/rec.err"
check $? "latop record makes a 3 s recording"
[ -s "$tmp/rec.snap" ] || { cat "$tmp/rec.err" >&2; done_testing; exit; }

# ---- replay ----------------------------------------------------------------
# Three ticks of 1 s, and the last partial one record takes when it stops
# (a few ms after the third, or none when the third came just then).
start replay "$tmp/rec.snap"
wait_for 'REPLAY [0-9:]+ \[([34])/\1\]' 30
check $? "replay plays to the last tick and says REPLAY hh:mm:ss [N/N], N 3 or 4"
n=$(cap | sed -n 's/.*REPLAY [0-9:]* \[[0-9]*\/\([0-9]*\)\].*/\1/p' | head -n 1)
cap | grep -qE '^pid +comm +syscall +count .*sum\(time\)▼'
check $? "the syscalls view shows its columns, sorted by sum(time) with a ▼"
[ "$(cap | grep -cE '^[0-9]+ +[^ ]+ +[a-z_0-9]+ +[0-9.]+K? ')" -ge 5 ]
check $? "the table has rows of pid, comm, syscall, count"

keys 1
wait_for "flows: no probe in this build/recording provides table 'flows'" 5
check $? "view 1 (flows) says no probe provides its table"
cap | grep -qE '^pid +comm +syscall'
check $? "... and the syscalls table stays"

keys '>'
wait_for 'sum\(oncpu\)▼' 5 && shown_query | grep -qE 'order by sum\(oncpu\) ?desc'
check $? "> sorts by the next column (sum(oncpu)▼, order by in the query line)"
keys I
wait_for 'sum\(oncpu\)▲' 5 && shown_query | grep -qE 'order by sum\(oncpu\) ?asc'
check $? "I inverts the order (▲, asc)"

keys :
type_text "where comm == 'latoptuiwl' and sysc"
keys Tab
wait_for "query: where comm == 'latoptuiwl' and syscall" 5
check $? "Tab completes a field name on the query line"
type_text " == 'read'"
keys Enter
wait_for "where comm == 'latoptuiwl' and syscall == 'read'" 5
rows=$(cap | sed -n '6,30p' | grep -cE '^[0-9]+ ')
others=$(cap | sed -n '6,30p' | grep -E '^[0-9]+ ' | grep -Ecv 'latoptuiwl +read')
[ "$rows" -gt 0 ] && [ "$others" -eq 0 ]
check $? "Enter applies the filter: $rows rows, all latoptuiwl read ($others others)"

keys Tab
wait_for "detail: pid == [0-9]+ and comm == 'latoptuiwl' and syscall == 'read'" 5
check $? "Tab opens the detail pane for the selected row's keys"
cap | grep -qE '◀ .*p50' && cap | grep -qE 'p99\.9 [0-9.]+[mun]?s'
check $? "the detail pane draws the histogram with percentile marks"
cap | grep -qE 'where the time \([0-9.]+[mun]?s\) went' && cap | grep -qE ' oncpu +[0-9.]+[mun]?s +[0-9.]+%'
check $? "the detail pane breaks the time down with shares"
keys Tab
wait_gone 'detail: pid' 5
check $? "Tab closes the detail pane"

keys Enter
wait_for '^pid +tid +comm +syscall' 5 && shown_query | grep -qE 'group by ?pid, ?tid, ?comm, ?syscall' && cap | grep -qE '^pid +tid +comm +syscall'
check $? "Enter drills down: the row's keys as filter, grouped by tid too"
depth=$(cap | grep -oE '^\[drill [0-9]+\]' | grep -oE '[0-9]+')
keys BSpace
wait_gone '^pid +tid' 5 && cap | grep -qE "^\[drill $((depth - 1))\]"
check $? "Backspace goes back one query (drill $depth -> $((depth - 1)))"

keys :
type_text "where dprot > 5"
keys Enter
wait_for "unknown field 'dprot'" 5
check $? "a bad field is reported on the prompt"
q_line=$(cap | grep -B1 -E '^ +\^+ *$' | head -1)
c_line=$(cap | grep -E '^ +\^+ *$' | head -1)
q_col=$(awk -v s="$q_line" 'BEGIN { print index(s, "dprot") }')
c_col=$(awk -v s="$c_line" 'BEGIN { print index(s, "^") }')
[ -n "$c_line" ] && [ "$q_col" -gt 0 ] && [ "$q_col" -eq "$c_col" ] &&
	[ "$(printf '%s' "$c_line" | tr -cd '^' | wc -c)" -eq 5 ]
check $? "the caret ^^^^^ sits under 'dprot' in the query (columns $q_col and $c_col)"
cap | grep -q 'query: where dprot > 5'
check $? "the text stays on the line for editing"
keys Escape
wait_gone "unknown field 'dprot'" 5
check $? "Esc cancels the query line"

# Over a recording the options that steer live probes do nothing: said.
keys :
type_text "threshold 8ms"
keys Enter
wait_for "threshold 8ms: steers the live probes; over a recording, nothing \\(select single events with where lat >= DUR\\)" 5
check $? "a THRESHOLD typed over a replay is said to do nothing there"
keys BSpace
for i in $(seq 50); do shown_query | grep -q 'threshold 10ms' && break; sleep 0.1; done
shown_query | grep -q 'threshold 10ms' && ! shown_query | grep -q 'threshold 8ms'
check $? "Backspace takes it back (the view's threshold 10ms)"

keys '?'
wait_for 'KEYS' 5 && cap | grep -q 'drill down' && cap | grep -q 'QUERIES'
check $? "? shows the keys and the query cheat sheet"
keys x
wait_gone 'QUERIES' 5
check $? "any key closes the help"

keys s
wait_for 'saved [0-9]+ ticks to ./latop-[0-9]{8}-[0-9]{6}\.snap' 5 && ls "$tmp"/latop-*.snap >/dev/null 2>&1
check $? "s saves the history as latop-DATE-TIME.snap"

keys g
wait_for "REPLAY [0-9:]+ \\[1/$n\\]" 5
check $? "g goes to the first tick"
keys .
wait_for "REPLAY [0-9:]+ \\[2/$n\\]" 5
check $? ". steps one tick forward"

keys q
st=$(exit_status)
[ "$st" = 0 ]
check $? "q quits with status 0 (got $st)"
! grep -q 'ERROR: \(Address\|Leak\)Sanitizer\|runtime error' "$tmp/stderr"
check $? "no sanitizer report on exit"
[ -s "$tmp/stderr" ] && sed 's/^/# /' "$tmp/stderr" | head -20

# ---- a recording with ticks that do not decode ------------------------------
# Made by an earlier latop that wrote torn histograms: ticks 5 and 6 of 10.
start replay "$(realpath tests/data/torn/syscalls.snap)"
wait_for 'REPLAY [0-9:]+ \[1/10\]' 20 && keys + + +
wait_for 'skipped (a tick: .*syscalls.snap: tick 5|2 ticks; the last: .*syscalls.snap: tick 6) of 10 at offset [0-9]+: corrupt FRAMES' 10
check $? "replay names the ticks it cannot decode (5, then 6: two in one message) and skips them"
wait_for 'skipped 2 ticks; the last: .*tick 6 of 10' 10 && keys -
sleep 0.5
cap | grep -q 'skipped 2 ticks; the last: .*tick 6 of 10' && ! cap | grep -q 'replay speed'
check $? "changing the speed (shown in the header) does not hide that warning"
wait_for 'REPLAY [0-9:]+ \[10/10\]' 15
check $? "... and plays on to the last tick"
keys , , , ,
wait_for 'REPLAY [0-9:]+ \[6/10\]' 5 &&
	wait_for '2 unreadable ticks left out of the window: .*: tick [56] of 10 at offset' 5
check $? "stepping back onto them says both are left out of the window"
keys q
st=$(exit_status)
[ "$st" = 0 ] && ! grep -q 'ERROR: \(Address\|Leak\)Sanitizer\|runtime error' "$tmp/stderr"
check $? "q quits with status 0 (got $st), no sanitizer report"

# ---- a recording cut short --------------------------------------------------
# Its last third cut off (the disk filled, the recorder was killed): replay
# says what report says, at once in the status line and for good in the header.
head -c $(($(stat -c %s "$tmp/rec.snap") * 2 / 3)) "$tmp/rec.snap" >"$tmp/cut.snap"
said=$("$BIN" report "$tmp/cut.snap" -q 'from syscalls' 2>&1 >/dev/null |
	sed -n 's/^latop report: warning: .*cut\.snap: //p' | head -1)
start replay "$tmp/cut.snap"
wait_for 'REPLAY [0-9:]+ \[[0-9]+/[0-9]+\]' 20
[ -n "$said" ] && [ "$(cap | grep -cF -- "$said")" = 2 ]
check $? "replay of a cut recording says report's warning in the status line and the header ($said)"
cap | sed -n 3p | grep -qF -- "damaged: $tmp/cut.snap: $said"
check $? "the header's third line says it, after 'damaged:'"
wait_gone 'REPLAY .*▶' 10 && [ "$(cap | grep -cF -- "$said")" = 2 ]
check $? "the warning stays when the replay reaches its end"
wait_for "^F1Help" 15 && [ "$(cap | grep -cF -- "$said")" = 1 ]
check $? "... and once the status line has moved on, the header still says it"
keys q
st=$(exit_status)
[ "$st" = 0 ] && ! grep -q 'ERROR: \(Address\|Leak\)Sanitizer\|runtime error' "$tmp/stderr"
check $? "q quits with status 0 (got $st), no sanitizer report"

# ---- themes ----------------------------------------------------------------
start replay -t light "$tmp/rec.snap"
wait_for 'theme light' 20
check $? "-t light: the tab line names the light theme"
keys t
wait_gone 'theme light' 5 && wait_for 'theme [a-z-]+' 5
check $? "t switches to the next theme ($(cap | grep -oE 'theme [a-z-]+' | head -1))"
keys q; exit_status >/dev/null
start replay --no-color "$tmp/rec.snap"
wait_for 'theme mono' 20
check $? "--no-color: monochrome"
keys q; exit_status >/dev/null
mkdir -p "$tmp/config/latop"
echo "theme = solarized-dark" >"$tmp/config/latop/latoprc"
start replay "$tmp/rec.snap"
wait_for 'theme solarized-dark' 20
check $? "the rc file's theme = solarized-dark applies"
keys q; exit_status >/dev/null
rm -f "$tmp/config/latop/latoprc"

# ---- live ----------------------------------------------------------------
start -q "\"from syscalls where comm == 'latoptuiwl'\""
wait_for '^ latop +LIVE ' 30 && wait_for '^[0-9]+ +latoptuiwl ' 20
check $? "live: the workload appears within seconds"
# latop's own memory, and the BPF maps mapped into it (the syscalls stats
# array: megabytes) apart from it.
wait_for 'rss [0-9.]+ ?[KMG]i?B? +\+bpf maps [0-9.]+ ?[MG]' 5
check $? "live: the header shows latop's rss and, beside it, the BPF maps' megabytes"
keys ' '
wait_for '^ latop +PAUSED' 5
check $? "Space freezes the live display (PAUSED)"
keys ' '
wait_for '^ latop +LIVE ' 5
check $? "Space resumes it (LIVE)"
keys q
st=$(exit_status)
[ "$st" = 0 ]
check $? "live: q quits with status 0 (got $st)"

done_testing
