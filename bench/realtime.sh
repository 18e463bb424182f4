#!/bin/bash
# What latop's real-time collector costs a workload that saturates the
# machine: the crowd helper (BENCH_THREADS threads, each 8 getppid then a
# 1 ms sleep, in a loop) runs BENCH_SECS seconds alone ("none"), under
# `latop record -q 'from syscalls'` ("fifo", the default SCHED_FIFO 1) and
# under `latop record --no-realtime` ("other"); BENCH_ROUNDS rounds, each
# running the three in an order that rotates by one each round.  Per run it
# prints the crowd's loops (its throughput), latop's CPU seconds and the
# ticks recorded and late; then each configuration's median loops and its
# ratio to none.  Run it alone on the machine, as root, after `make latop
# tests-build`; it refuses to start while the 1-minute load average is over
# BENCH_MAX_LOAD (1.5):
#   ./bench/realtime.sh
#   BENCH_THREADS=200 BENCH_SECS=10 BENCH_ROUNDS=3 ./bench/realtime.sh
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
THREADS=${BENCH_THREADS:-200}
SECS=${BENCH_SECS:-10}
ROUNDS=${BENCH_ROUNDS:-3}
L=$PWD/latop
C=$PWD/.output/helpers/crowd
[ -x "$L" ] && [ -x "$C" ] || { echo "realtime.sh: needs ./latop and $C (make latop tests-build)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "realtime.sh: needs root" >&2; exit 2; }
load=$(cut -d' ' -f1 /proc/loadavg)
awk -v l="$load" -v m="${BENCH_MAX_LOAD:-1.5}" 'BEGIN {exit !(l > m)}' &&
	{ echo "realtime.sh: the load average is $load: something else is running; not measuring" >&2; exit 3; }
tmp=$(mktemp -d); rec_pid= crowd_pid=
trap 'bench_stop "$crowd_pid" 10; bench_stop "$rec_pid" 10; rm -rf "$tmp"' EXIT
declare -A loops

# cpu_ticks: the recorder's user + system time so far, in clock ticks.
cpu_ticks() {
	sed 's/^.*) //' /proc/$rec_pid/stat | awk '{print $12 + $13}'
}

# run CONFIG: one run; prints "CONFIG loops cpu_s ticks late".
run() {
	local cfg=$1 cpu=- cpu0=0 ticks=- late=0 n
	rm -f "$tmp/r.snap" "$tmp/r.err"
	if [ "$cfg" != none ]; then
		"$L" record -o "$tmp/r.snap" -i 1s -q 'from syscalls' \
			$([ "$cfg" = other ] && echo --no-realtime) 2>"$tmp/r.err" & rec_pid=$!
		for _ in $(seq 300); do [ -e "$tmp/r.snap.tmp" ] && break; sleep 0.1; done
		sleep 1
		cpu0=$(cpu_ticks)
	fi
	n=$(timeout $((SECS + 20)) "$C" "$THREADS" "$SECS" sys)
	if [ -n "$rec_pid" ]; then
		cpu=$(echo "$(cpu_ticks) $cpu0 $(getconf CLK_TCK)" | awk '{printf "%.2f", ($1 - $2) / $3}')
		kill -INT $rec_pid; wait $rec_pid; rec_pid=
		ticks=$(sed -n 's/^latop: recorded \([0-9]*\) ticks.*/\1/p' "$tmp/r.err")
		late=$(sed -n 's/.*warning: \([0-9]*\) of [0-9]* ticks came late.*/\1/p' "$tmp/r.err")
	fi
	loops[$cfg]+="$n "
	printf '%-6s %10s %8s %6s %5s\n' "$cfg" "$n" "$cpu" "$ticks" "${late:-0}"
}

echo "# $THREADS threads x ${SECS}s, $ROUNDS rounds; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %10s %8s %6s %5s\n' config loops latop_s ticks late
# (latop_s: the recorder's CPU seconds while the crowd ran)
configs=(none fifo other)
for ((r = 0; r < ROUNDS; r++)); do
	for ((i = 0; i < 3; i++)); do
		run "${configs[(r + i) % 3]}"
	done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
base=$(echo "${loops[none]}" | median)
for cfg in "${configs[@]}"; do
	m=$(echo "${loops[$cfg]}" | median)
	printf 'median %-6s %10s loops, %.3f of none\n' "$cfg" "$m" "$(echo "$m / $base" | bc -l)"
done
