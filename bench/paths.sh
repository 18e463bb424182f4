#!/bin/bash
# What the paths probe adds to each TCP message: 1-byte ping-pong round trips
# over loopback (tests/helpers/tiers pingpong against tiers echo, both pinned
# to one CPU), timed with no tracer, with the paths floor (empty programs on
# the probe's two tracepoints) and with `latop record -q 'from paths'`, in
# interleaved rounds whose order rotates.  Each round trip is four records
# (client send, server receive, server send, client receive).
# BENCH_MODE=tiers times requests through three tiers instead (front -> mid
# -> back: a request is 5 round trips, 20 records), as the client's median
# latency per request.  `make bench-paths` runs it (as root).
#
# Environment (defaults in brackets):
#   BENCH_ROUNDS [7]        rounds; each round runs every configuration once
#   BENCH_TRIPS [50000]     round trips per run (pingpong), requests per run / 10 (tiers)
#   BENCH_MODE [pingpong]   pingpong, or tiers
#   BENCH_CPU [1]           CPU the workload is pinned to
#   BENCH_TRACER_CPU [0]    CPU the tracer is pinned to
#   BENCH_CONFIGS ["none floor latop"]  (latop_b: the latop binary BENCH_LATOP_B,
#                           e.g. the build before a change, timed in the same rounds)
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUTPUT:-.output}
ROUNDS=${BENCH_ROUNDS:-7}
TRIPS=${BENCH_TRIPS:-50000}
MODE=${BENCH_MODE:-pingpong}
CPU=${BENCH_CPU:-1}
TCPU=${BENCH_TRACER_CPU:-0}
read -r -a CONFIGS <<<"${BENCH_CONFIGS:-none floor latop}"
T=$OUT/helpers/tiers
FLOOR=$OUT/bench/pathsfloor-bin
WORK=$(mktemp -d /tmp/latop-bench-paths.XXXXXX) || exit 1
SERVERS=() TRACER=
PORT=$((23000 + $$ % 2000 * 3))

cleanup() {
	[ -n "$TRACER" ] && kill -KILL "$TRACER" 2>/dev/null
	for p in "${SERVERS[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] || { echo "bench-paths: needs root" >&2; exit 1; }
make --no-print-directory -s latop "$T" "$FLOOR" || exit 1

# The links on the probe's two tracepoints (ours or anyone's).
links() { bpftool link list 2>/dev/null | grep -c -E "tp '(sock_send_length|sock_recv_length)'"; }

# Print the latop binary configuration $1 runs.
latop_bin() {
	if [ "$1" = latop_b ]; then echo "${BENCH_LATOP_B:?latop_b needs BENCH_LATOP_B}"; else echo ./latop; fi
}

# Start configuration $1 and wait until its programs are attached.
start() {
	rm -f "$WORK/ready" "$WORK/x.lat" "$WORK/x.lat.tmp"
	case $1 in
	none) return 0 ;;
	floor) taskset -c "$TCPU" "$FLOOR" -r "$WORK/ready" >"$WORK/tracer.log" 2>&1 & TRACER=$! ;;
	latop | latop_b) taskset -c "$TCPU" "$(latop_bin "$1")" record -o "$WORK/x.lat" --quiet -q 'from paths' \
		>"$WORK/tracer.log" 2>&1 & TRACER=$! ;;
	esac
	for _ in $(seq 200); do
		[ "$(links)" -ge "$((base + 2))" ] && { sleep 0.5; return 0; }
		sleep 0.1
	done
	echo "bench-paths: $1 did not attach: $(tail -n 2 "$WORK/tracer.log")" >&2
	return 1
}

stop() {
	[ -n "$TRACER" ] || return 0
	kill -TERM "$TRACER" 2>/dev/null
	wait "$TRACER" 2>/dev/null
	TRACER=
}

# One timed run of the workload; prints ns per round trip (or per request).
workload() {
	if [ "$MODE" = tiers ]; then
		rm -f "$WORK/client.tsv"
		taskset -c "$CPU" "$T" client -c 127.0.0.1:$((PORT + 2)) -C 1 -n $((TRIPS / 10)) -f 1 \
			-t "$WORK/client.tsv" || return 1
		cut -d' ' -f4 "$WORK/client.tsv" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
	else
		taskset -c "$CPU" "$T" pingpong -c 127.0.0.1:$PORT -n "$TRIPS" | cut -d' ' -f1
	fi
}

if [ "$MODE" = tiers ]; then
	taskset -c "$CPU" "$T" serve -p $((PORT + 1)) -w 2 >/dev/null & SERVERS+=($!)
	taskset -c "$CPU" "$T" serve -p $((PORT + 2)) -w 2 -c 127.0.0.1:$((PORT + 1)):4 >/dev/null & SERVERS+=($!)
	unit="ns per request, median (1 front request = 4 calls to back: 20 records)"
else
	taskset -c "$CPU" "$T" echo -p $PORT >/dev/null & SERVERS+=($!)
	unit="ns per 1-byte round trip (median batch of 256)"
fi
sleep 0.3
workload >/dev/null || { echo "bench-paths: the workload does not run" >&2; exit 1; }

n=${#CONFIGS[@]}
for ((r = 0; r < ROUNDS; r++)); do
	printf 'bench-paths: round %d/%d:' $((r + 1)) "$ROUNDS"
	for ((i = 0; i < n; i++)); do
		cfg=${CONFIGS[$(((r + i) % n))]}
		base=$(links)
		start "$cfg" || continue
		[ "$cfg" = none ] || sleep 0.5
		ns=$(workload)
		stop
		echo "$ns" >"$WORK/round.$r.$cfg"
		if [ "$base" -gt 0 ]; then
			echo "$ns" >>"$WORK/$cfg.dirty"; printf ' %s=%s(dirty)' "$cfg" "$ns"
		else
			echo "$ns" >>"$WORK/$cfg.ns"; printf ' %s=%s' "$cfg" "$ns"
		fi
	done
	echo
done

median() { sort -g "$1" | awk '{v[NR] = $1} END {if (NR % 2) printf "%.3f", v[(NR + 1) / 2];
	else printf "%.3f", (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
samples() { [ -s "$WORK/$1.ns" ] && echo "$WORK/$1.ns" || { [ -s "$WORK/$1.dirty" ] && echo "$WORK/$1.dirty"; }; }
echo
echo "paths overhead: $MODE, $unit; workload on CPU $CPU, tracer on CPU $TCPU, $ROUNDS interleaved rounds"
echo "host: $(nproc) CPUs, kernel $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC')"
printf '%-7s %4s %10s %10s %8s %9s %14s\n' config runs "median" "added" "x none" "x floor+" "min..max"
bmed= fadd=
f=$(samples none) && bmed=$(median "$f")
[ -n "$bmed" ] && f=$(samples floor) && fadd=$(awk -v m="$(median "$f")" -v b="$bmed" 'BEGIN {printf "%.1f", m - b}')
for cfg in "${CONFIGS[@]}"; do
	f=$(samples "$cfg") || { printf '%-7s no measurement\n' "$cfg"; continue; }
	med=$(median "$f")
	add=$(awk -v m="$med" -v b="${bmed:-0}" 'BEGIN {printf "%.1f", m - b}')
	ratio=$(awk -v m="$med" -v b="${bmed:-0}" 'BEGIN {if (b > 0) printf "%.2f", m / b; else print "-"}')
	vf=-
	[ "$cfg" != none ] && [ -n "$fadd" ] && awk -v f="$fadd" 'BEGIN {exit !(f > 0)}' &&
		vf=$(awk -v a="$add" -v f="$fadd" 'BEGIN {printf "%.2f", a / f}')
	spread=$(sort -g "$f" | awk 'NR == 1 {a = $1} {b = $1} END {printf "%.0f..%.0f", a, b}')
	d=""; [ "$f" = "$WORK/$cfg.dirty" ] && d=" (dirty: another program was on the hooks)"
	printf '%-7s %4s %10s %10s %8s %9s %14s%s\n' "$cfg" "$(wc -l <"$f")" "$med" "$add" "$ratio" "$vf" "$spread" "$d"
done
for cfg in latop latop_b; do
	if [ "$MODE" = pingpong ] && [ -n "$bmed" ] && f=$(samples $cfg); then
		awk -v m="$(median "$f")" -v b="$bmed" -v c=$cfg \
			'BEGIN {printf "%s per record (4 per round trip): %.0f ns\n", c, (m - b) / 4}'
	fi
done
echo "added = median - none's median; x floor+ = added / the floor's added (1.00: no cost beyond enabling the hooks)"
# Paired: each round's run divided by the same round's none, then the median
# over rounds (drifts of a shared machine cancel within a round).
for cfg in "${CONFIGS[@]}"; do
	[ "$cfg" = none ] && continue
	for ((r = 0; r < ROUNDS; r++)); do
		[ -s "$WORK/round.$r.$cfg" ] && [ -s "$WORK/round.$r.none" ] &&
			awk -v a="$(cat "$WORK/round.$r.$cfg")" -v b="$(cat "$WORK/round.$r.none")" \
				'BEGIN {printf "%.4f\n", a / b}'
	done >"$WORK/paired.$cfg"
	[ -s "$WORK/paired.$cfg" ] && printf 'paired %-6s x none: median %s over %s rounds (%s)\n' "$cfg" \
		"$(median "$WORK/paired.$cfg")" "$(wc -l <"$WORK/paired.$cfg")" \
		"$(sort -g "$WORK/paired.$cfg" | awk 'NR == 1 {a = $1} {b = $1} END {printf "%.2f..%.2f", a, b}')"
done
