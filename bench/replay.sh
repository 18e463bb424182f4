#!/bin/bash
# How fast `latop report` reads a recording: bench/mksnap writes a syscalls
# recording of TICKS one-second ticks x ROWS rows (with latency histograms)
# through core/snapshot.h, then the report below runs 3 times; prints the
# median wall time, rows/s and ticks/s, and the peak memory.
# bench/run.sh runs it after the overhead table; it also runs alone.
#
# Environment (defaults in brackets):
#   BENCH_TICKS [600]   ticks in the recording (10 minutes at 1s)
#   BENCH_ROWS [1000]   rows per tick
#   BENCH_RUNS [3]      report runs; the median is quoted
#   BENCH_QUERY ['from syscalls group by syscall show count, p99(lat)']
set -u

cd "$(dirname "$0")/.." || exit 1
OUT=${OUTPUT:-.output}
TICKS=${BENCH_TICKS:-600}
ROWS=${BENCH_ROWS:-1000}
RUNS=${BENCH_RUNS:-3}
QUERY=${BENCH_QUERY:-from syscalls group by syscall show count, p99(lat)}
MKSNAP=$OUT/bench/mksnap

WORK=$(mktemp -d /tmp/latop-replay.XXXXXX) || exit 1
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# Print the median of the numbers in file $1.
median() {
	sort -g "$1" | awk '{v[NR] = $1} END {
		if (NR == 0) exit 1
		if (NR % 2) print v[(NR + 1) / 2]
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Run latop report once; append wall seconds and peak KB to $WORK/{sec,kb}.
time_report() {
	local start end
	if [ -x /usr/bin/time ]; then
		timeout 600 /usr/bin/time -f '%e %M' -o "$WORK/time.out" \
			./latop report "$WORK/big.snap" -q "$QUERY" >"$WORK/report.out" 2>"$WORK/report.err" ||
			return 1
		awk '{print $1 >> "'"$WORK/sec"'"; print $2 >> "'"$WORK/kb"'"}' "$WORK/time.out"
	else
		start=$(date +%s.%N)
		timeout 600 ./latop report "$WORK/big.snap" -q "$QUERY" >"$WORK/report.out" \
			2>"$WORK/report.err" || return 1
		end=$(date +%s.%N)
		awk -v a="$start" -v b="$end" 'BEGIN {printf "%.3f\n", b - a}' >>"$WORK/sec"
	fi
}

# Build, write the recording, time the reports and print the rates.
main() {
	local sec kb bytes
	if ! make --no-print-directory -s latop "$MKSNAP" >"$WORK/make.log" 2>&1; then
		echo "replay: skipped: cannot build latop or $MKSNAP:"
		grep -m 3 -E 'error|Error' "$WORK/make.log" | sed 's/^/    /'
		return 0
	fi
	if ! timeout 600 "$MKSNAP" -o "$WORK/big.snap" -t "$TICKS" -r "$ROWS"; then
		echo "replay: skipped: mksnap failed"
		return 0
	fi
	bytes=$(stat -c %s "$WORK/big.snap")
	for ((i = 0; i < RUNS; i++)); do
		if ! time_report; then
			echo "replay: latop report failed:"
			sed 's/^/    /' "$WORK/report.err" | tail -n 5
			return 1
		fi
	done
	if [ ! -s "$WORK/report.out" ]; then
		echo "replay: latop report printed nothing"
		return 1
	fi
	sec=$(median "$WORK/sec")
	kb=$( [ -s "$WORK/kb" ] && median "$WORK/kb" || echo "")
	echo "replay/report speed: latop report -q '$QUERY'"
	echo "recording: $TICKS ticks x $ROWS rows = $((TICKS * ROWS)) rows, $((bytes / 1024 / 1024)) MiB (bench/mksnap)"
	awk -v s="$sec" -v t="$TICKS" -v r="$ROWS" -v kb="$kb" -v n="$RUNS" 'BEGIN {
		printf "median of %d runs: %.2f s  |  %.0f rows/s  |  %.1f ticks/s", n, s, t * r / s, t / s
		if (kb != "") printf "  |  peak RSS %.0f MiB", kb / 1024
		printf "\n" }'
	echo "runs (s): $(paste -sd' ' "$WORK/sec")"
}

main "$@"
