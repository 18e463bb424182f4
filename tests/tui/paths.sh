#!/bin/bash
# The paths view in the TUI: replay a recording of three tiers, see one row
# per path shape, open the detail pane on the mid tier's row and see the
# slowest request's timeline: the request and each of its calls.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
T=$LATOP_HELPERS/tiers
S=latoppaths-$$
tui_require
[ -x "$T" ] || skip_all "no tiers helper at $T (make tests-build)"
need_root
tmp=$(mktemp -d); pids=()
cleanup() {
	tui_end
	for p in "${pids[@]}"; do kill -9 $p 2>/dev/null; wait $p 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

base=$(free_ports 3)
PB=$base PM=$((base + 1)) PF=$((base + 2))
"$T" serve -p $PB -w 8 -d 3000 >/dev/null & pids+=($!); pb=$!
"$T" serve -p $PM -w 8 -d 1000 -c 127.0.0.1:$PB:2 >/dev/null & pids+=($!); pm=$!
"$T" serve -p $PF -w 8 -d 500 -c 127.0.0.1:$PM:1 >/dev/null & pids+=($!); pf=$!
"$BIN" record -o "$tmp/rec.lat" --quiet -q "from paths where pid in ($pb, $pm, $pf) threshold 1ms" & rec=$!
pids+=($rec)
for _ in $(seq 150); do [ -e "$tmp/rec.lat.tmp" ] && break; sleep 0.1; done
sleep 0.5
timeout 60 "$T" client -c 127.0.0.1:$PF -C 2 -n 30 >/dev/null
sleep 1.5
kill -TERM $rec; wait $rec
check $? "a recording of three tiers"

tmux new-session -d -s "$S" -x 160 -y 48 -c "$tmp" \
	"env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color XDG_CONFIG_HOME=$tmp/config $BIN replay $tmp/rec.lat 2>$tmp/stderr; sleep 600"
wait_for 'REPLAY [0-9:]+ \[([0-9]+)/\1\]' 30
check $? "replay plays to the last tick"
cap | grep -qE '^path +comm +count .*sum\(calls\) +sum\(down\) +sum\(self\)'
check $? "the paths view opens first, with count, calls, down and self"
cap | grep -qE "^:$PM → 127\.0\.0\.1:$PB ×2 +tiers +60 " &&
	cap | grep -qE "^:$PF → 127\.0\.0\.1:$PM ×1 +tiers +60 " && cap | grep -qE "^:$PB +tiers +120 "
check $? "one row per path shape with its exact count (60, 60 and 120 requests)"
# Move the selection (on the first row) down to the mid tier's row.
row=$(cap | grep -nE "^:$PM " | head -n1 | cut -d: -f1)
sel=$(cap | grep -nE '^(:|-)' | head -n1 | cut -d: -f1)
for ((i = sel; i < row; i++)); do keys Down; done
keys Tab
wait_for "detail: path == ':$PM → 127.0.0.1:$PB ×2'" 5
check $? "Tab opens the detail pane on the mid tier's row"
wait_for "timeline of event" 5 && cap | grep -qE "request :$PM " &&
	cap | grep -qE "call 1 127\.0\.0\.1:$PB" && cap | grep -qE "call 2 127\.0\.0\.1:$PB"
check $? "the pane draws a request's timeline: the request and its two calls"
cap | grep -qE ' down +[0-9.]+[mun]?s +[0-9.]+%' && cap | grep -qE ' self +[0-9.]+[mun]?s +[0-9.]+%'
check $? "the time splits into down and self"
keys q
done_testing
