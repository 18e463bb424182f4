#!/bin/bash
# The TUI's history is bounded by memory, not by ticks: under two fork loops
# of 150 /bin/true a second each (a row per short-lived process each tick),
# latoprc's history_mb = 1 keeps the history to the newest ticks, and the
# header says how far back it reaches; with the default bound it spans
# every tick since the start.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"

S=history-$$
tui_require
need_root

tmp=$(mktemp -d)
loops=()
cleanup() {
	[ ${#loops[@]} -gt 0 ] && kill "${loops[@]}" 2>/dev/null
	tui_end
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/config/latop"

# span: the header's "history" value in seconds (empty when not shown).
span() {
	cap | sed -n 's/.* history \([0-9.]*[a-z]*\).*/\1/p' | head -1 | awk '
		/^[0-9.]+ms$/ { print $0 / 1000; next }
		/^[0-9.]+s$/ { print $0 + 0; next }
		/^[0-9]+m[0-9]+s$/ { split($0, a, "m"); print a[1] * 60 + a[2]; next }'
}

for _ in 1 2; do
	fork_loop 150
	loops+=($!)
done

# ---- history_mb = 1: far less than the fork loops' ticks of 12 s -----------
printf 'history_mb = 1\n' >"$tmp/config/latop/latoprc"
start
wait_for ' history [0-9]' 20
check $? "the header says how far back the history reaches"
sleep 12
s=$(span)
awk -v s="$s" 'BEGIN { exit !(s != "" && s <= 4) }'
check $? "history_mb = 1 keeps the newest ticks only (history ${s:-none}s after 12 s)"
grep -q 'history_mb' "$tmp/stderr"
[ $? -ne 0 ]
check $? "a valid history_mb is no warning"
keys q
[ "$(exit_status)" = 0 ]
check $? "q quits"

# ---- the default bound holds every tick of 8 s ------------------------------
rm -f "$tmp/config/latop/latoprc"
start
wait_for ' history [0-9]' 20
sleep 8
s=$(span)
awk -v s="$s" 'BEGIN { exit !(s != "" && s >= 7) }'
check $? "the default history_mb holds every tick so far (history ${s:-none}s after 8 s)"
keys q
[ "$(exit_status)" = 0 ]
check $? "q quits"

# ---- a bad value is said, and the default used ------------------------------
printf 'history_mb = 0\n' >"$tmp/config/latop/latoprc"
start
wait_for ' history [0-9]' 20
keys q
exit_status >/dev/null
grep -q "latoprc:1: history_mb: not a count of MiB from 1 to 1048576; using the default 64" \
	"$tmp/stderr"
check $? "history_mb = 0 is a warning naming the range and the default"
done_testing
