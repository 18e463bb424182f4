#!/bin/bash
# What lock tracing costs a mutex-heavy program: `lockdemo bench` (threads
# taking 16 pthread mutexes in a tight loop) timed with no tracer, with
# `latop record -q 'from locks threshold 1us'` on the futex syscall
# tracepoints (tracefs mounted) and on the scheduler fallback (tracefs not
# mounted), with `perf lock record -a`, and with `perf lock contention -b`
# and bcc's klockstat where they run, in interleaved rounds whose order
# rotates.  Prints each configuration's median operations per second (wall)
# and per CPU-second of the benchmark (user + system time, which includes the
# BPF programs run in its threads: steadier than wall time on a shared
# machine), and their ratios to no tracer.  Tools that cannot run here are tried once each and
# reported with the reason.  `make bench-locks` runs it; it also runs alone
# (as root).
#
# Environment (defaults in brackets):
#   BENCH_ROUNDS [9]      rounds; each round runs every configuration once
#   BENCH_SECONDS [2]     length of one timed run of the benchmark
#   BENCH_THREADS [4]     benchmark threads
#   BENCH_CONFIGS ["none latop latop-sched perf-lock perf-lock-bpf klockstat"]
#   BENCH_CACHE [/var/tmp/latop-bench]  Debian 6.1 headers for bcc (bench/run.sh unpacks them)
set -u

cd "$(dirname "$0")/.." || exit 1
. bench/lib.sh
OUT=${OUTPUT:-.output}
ROUNDS=${BENCH_ROUNDS:-9}
SECS=${BENCH_SECONDS:-2}
THREADS=${BENCH_THREADS:-4}
read -r -a CONFIGS <<<"${BENCH_CONFIGS:-none latop latop-sched perf-lock perf-lock-bpf klockstat}"
CACHE=${BENCH_CACHE:-/var/tmp/latop-bench}
DEMO=$OUT/helpers/lockdemo
LATOP=${LATOP_BIN:-./latop}

WORK=$(mktemp -d /tmp/latop-bench-locks.XXXXXX) || exit 1
TRACER_PID=
MOUNTED=()
declare -A SKIP=() RESULTS=() CPU=()

[ "$(id -u)" -eq 0 ] || { echo "bench/locks.sh: needs root" >&2; exit 1; }
for f in "$DEMO" "$LATOP"; do
	[ -x "$f" ] || { echo "bench/locks.sh: $f is missing (make latop tests-build)" >&2; exit 1; }
done

# Stop the running tracer, if any: SIGTERM (perf and latop finish on it), then SIGKILL.
stop_tracer() {
	local pid=$TRACER_PID
	TRACER_PID=
	bench_stop "$pid" 100
}

# Mount tracefs (perf, bcc and latop's futex tracepoints need it).
mount_tracefs() {
	[ -e /sys/kernel/tracing/events ] && return 0
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null && MOUNTED+=(/sys/kernel/tracing)
	[ -e /sys/kernel/tracing/events ]
}

# Unmount tracefs if this script mounted it (latop-sched runs without it).
unmount_tracefs() {
	local m keep=()
	for m in "${MOUNTED[@]}"; do
		if [ "$m" = /sys/kernel/tracing ]; then umount "$m" 2>/dev/null || keep+=("$m"); else keep+=("$m"); fi
	done
	MOUNTED=("${keep[@]}")
	[ ! -e /sys/kernel/tracing/events ]
}

cleanup() {
	stop_tracer
	for m in "${MOUNTED[@]}"; do umount "$m" 2>/dev/null; done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Start tracer config $1 in the background; 0 when it is attached and counting.
start_tracer() {
	local c=$1 i
	case $c in
	none) return 0 ;;
	latop | latop-sched)
		if [ "$c" = latop ]; then mount_tracefs || { SKIP[$c]="cannot mount tracefs"; return 1; }
		else unmount_tracefs || { SKIP[$c]="tracefs is mounted by someone else"; return 1; }; fi
		rm -f "$WORK/l.snap" "$WORK/l.snap.tmp"
		"$LATOP" record -o "$WORK/l.snap" --quiet -q "from locks threshold 1us" \
			>"$WORK/$c.log" 2>&1 &
		TRACER_PID=$!
		for ((i = 0; i < 150; i++)); do
			[ -e "$WORK/l.snap.tmp" ] && { sleep 0.5; return 0; }
			kill -0 "$TRACER_PID" 2>/dev/null || break
			sleep 0.1
		done ;;
	perf-lock)
		mount_tracefs || { SKIP[$c]="cannot mount tracefs"; return 1; }
		perf lock record -a -o "$WORK/perf.data" >"$WORK/$c.log" 2>&1 &
		TRACER_PID=$!
		sleep 2
		kill -0 "$TRACER_PID" 2>/dev/null && return 0 ;;
	perf-lock-bpf)
		perf lock contention -b -a >"$WORK/$c.log" 2>&1 &
		TRACER_PID=$!
		sleep 2
		kill -0 "$TRACER_PID" 2>/dev/null && return 0 ;;
	klockstat)
		mount_tracefs
		[ -e /sys/kernel/debug/tracing ] || { mount -t debugfs nodev /sys/kernel/debug 2>/dev/null &&
			MOUNTED+=(/sys/kernel/debug); }
		if ! command -v klockstat-bpfcc >/dev/null; then
			SKIP[$c]="klockstat-bpfcc is not installed (apt-get install bpfcc-tools)"
			return 1
		fi
		[ -d "$CACHE/kheaders/merged" ] && export BCC_KERNEL_SOURCE=$CACHE/kheaders/merged
		klockstat-bpfcc -i 1 >"$WORK/$c.log" 2>&1 &
		TRACER_PID=$!
		for ((i = 0; i < 300; i++)); do
			grep -q "Tracing" "$WORK/$c.log" 2>/dev/null && { sleep 1; return 0; }
			kill -0 "$TRACER_PID" 2>/dev/null || break
			sleep 0.1
		done ;;
	esac
	SKIP[$c]="$(grep -v '^\s*$' "$WORK/$c.log" 2>/dev/null | tail -n 1 | sed 's/^\s*//' | cut -c1-150)"
	[ -n "${SKIP[$c]}" ] || SKIP[$c]="did not start"
	stop_tracer
	return 1
}

# Run the benchmark once; print its operations per second of wall and of CPU time.
run_bench() {
	echo g | "$DEMO" bench $((SECS * 1000)) "$THREADS" 2>/dev/null | sed 's/^r//' |
		python3 -c 'import json,sys; d = json.loads(sys.stdin.readline()); print(int(d["ops_per_s"]), int(d["ops_per_cpu_s"]))'
}

echo "bench/locks.sh: lockdemo bench ${SECS}s x $THREADS threads, $ROUNDS rounds, $(nproc) CPUs" \
	"(shared machine: medians and ratios only)"
for ((r = 0; r < ROUNDS; r++)); do
	n=${#CONFIGS[@]}
	for ((k = 0; k < n; k++)); do
		c=${CONFIGS[$(((k + r) % n))]}
		[ -n "${SKIP[$c]:-}" ] && continue
		start_tracer "$c" || { echo "  $c: cannot run: ${SKIP[$c]}"; continue; }
		read -r ops cpu < <(run_bench)
		stop_tracer
		[ -n "$ops" ] && RESULTS[$c]="${RESULTS[$c]:-} $ops" && CPU[$c]="${CPU[$c]:-} $cpu"
		printf '  round %d %-14s %10s ops/s %10s ops/cpu-s\n' "$r" "$c" "${ops:-?}" "${cpu:-?}"
	done
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]}'; }

# table NAME ARRAY: each configuration's median of ARRAY and its ratio to none.
table() {
	local -n vals=$2
	local base m ratio c
	base=$(echo "${vals[none]:-}" | median)
	echo
	printf '%-14s %16s %8s  %s\n' config "median $1" ratio runs
	for c in "${CONFIGS[@]}"; do
		if [ -n "${SKIP[$c]:-}" ] && [ -z "${vals[$c]:-}" ]; then
			printf '%-14s %16s %8s  %s\n' "$c" - - "cannot run here: ${SKIP[$c]}"
			continue
		fi
		m=$(echo "${vals[$c]:-}" | median)
		ratio=$([ -n "$base" ] && [ -n "$m" ] && awk -v a="$m" -v b="$base" 'BEGIN {printf "%.3f", a / b}')
		printf '%-14s %16s %8s  %s\n' "$c" "${m:--}" "${ratio:--}" "${vals[$c]:-}"
	done
}
table "ops/s" RESULTS
table "ops/cpu-s" CPU
