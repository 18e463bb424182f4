#!/bin/bash
# What the flows view adds to each TCP request/response: bench/pingpong (a
# 1-byte ping-pong over loopback, both ends pinned to one CPU) timed with
# no tracer, with the floor (empty programs on the flows probe's hooks),
# with `latop record -q 'from flows'`, and with bench/pcapmatch (libpcap
# capture of the port + the same matching in user space), in interleaved
# rounds whose order rotates.  Prints each configuration's median ns per
# round trip, the ns it adds, and ratios (to none's median, and the median of
# each round's ratio to that round's none run); checks that latop and
# pcapmatch counted every round trip.  `make bench-flows` runs it (as root).
#
# Environment (defaults in brackets):
#   BENCH_ROUNDS [7]       rounds; each round runs every configuration once
#   BENCH_SECONDS [1]      length of one timed ping-pong run
#   BENCH_CPU [1]          CPU both ping-pong ends are pinned to
#   BENCH_TRACER_CPU [0]   CPU the tracers are pinned to
#   BENCH_CONFIGS ["none floor latop pcap"]; latop_b runs $BENCH_LATOP_B, another
#                          latop binary (an older build), as latop runs ./latop
#   BENCH_RETRIES [2]      times a dirty run is tried again
#   BENCH_STAT [cpu_median_batch]  pingpong's figure: cpu_median_batch (the
#                          process's CPU time per round trip, median batch:
#                          time another tenant takes is not in it),
#                          ns_median_batch (wall), cpu_per_rt or ns_per_rt
#                          (plain means)
#   BENCH_BPF_STATS [0]    1: turn kernel.bpf_stats_enabled on for the runs and
#                          add "bpf ns" (the tracer's programs' run time per
#                          round trip, as the kernel times them) and the
#                          same beyond the floor's empty programs (the
#                          medians', and the median over rounds of each
#                          round's difference: "paired").  The
#                          stats add two clock reads to every program run
#                          (to the floor's too), so the other columns grow.
#
# The tracer's own CPU time during the run (user and system, from
# /proc/PID/stat) is divided by the round trips too: "tracer ns" is what it
# spends elsewhere (latop's ticks, pcapmatch's user-space matching).
#
# A run is dirty when BPF tracing links other than the tracer's own exist
# before it starts or after it stops (another latop, a test run, a tracer):
# their programs on the syscall, scheduler or network hooks slow the
# ping-pong.  Dirty runs are retried after a pause and left out of the
# medians when clean ones exist; the last column counts them.
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
ROUNDS=${BENCH_ROUNDS:-7} SECS=${BENCH_SECONDS:-1}
CPU=${BENCH_CPU:-1} TCPU=${BENCH_TRACER_CPU:-0} RETRIES=${BENCH_RETRIES:-2}
STAT=${BENCH_STAT:-cpu_median_batch}
BPF_STATS=${BENCH_BPF_STATS:-0}
read -r -a CONFIGS <<<"${BENCH_CONFIGS:-none floor latop pcap}"
OUT=.output/bench
[ "$(id -u)" -eq 0 ] || { echo "bench/flows.sh: needs root (BPF, packet capture)" >&2; exit 1; }
make --no-print-directory -s latop $OUT/pingpong $OUT/netfloor $OUT/pcapmatch || exit 1
WORK=$(mktemp -d)
TRACER=
STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
trap '[ -n "$TRACER" ] && kill -9 $TRACER 2>/dev/null; rm -rf "$WORK"
	[ "$BPF_STATS" = 1 ] && sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS"' EXIT
[ "$BPF_STATS" = 1 ] && sysctl -qw kernel.bpf_stats_enabled=1

# Wait up to 10 s for file $1 to exist.
wait_file() {
	for _ in $(seq 100); do [ -e "$1" ] && return 0; sleep 0.1; done
	return 1
}

# Print the latop binary configuration $1 runs.
latop_bin() {
	if [ "$1" = latop_b ]; then echo "${BENCH_LATOP_B:?latop_b needs BENCH_LATOP_B}"; else echo ./latop; fi
}

# Start configuration $1's tracer for a ping-pong on port $2; 1 if it failed.
start_tracer() {
	case $1 in
	none) TRACER= ;;
	floor)
		taskset -c "$TCPU" $OUT/netfloor -o $OUT/netfloor.bpf -r "$WORK/ready" -t 120 \
			2>"$WORK/floor.log" & TRACER=$!
		wait_file "$WORK/ready" ;;
	latop | latop_b)
		taskset -c "$TCPU" "$(latop_bin "$1")" record -o "$WORK/run.snap" --quiet \
			-q "from flows where lport == $2" 2>"$WORK/latop.log" & TRACER=$!
		wait_file "$WORK/run.snap.tmp" && sleep 1 ;;
	pcap)
		taskset -c "$TCPU" $OUT/pcapmatch -p "$2" -r "$WORK/ready" -t 120 \
			>"$WORK/pcap.out" 2>&1 & TRACER=$!
		wait_file "$WORK/ready" ;;
	esac
}

# Stop the tracer (all of them finish on SIGTERM) and wait for it.
stop_tracer() {
	[ -n "$TRACER" ] || return 0
	kill -TERM "$TRACER" 2>/dev/null
	wait "$TRACER" 2>/dev/null
	TRACER=
}

# Print the CPU time of process $1 so far, in ns (0 when there is none).
proc_cpu_ns() {
	[ -n "$1" ] && [ -r "/proc/$1/stat" ] || { echo 0; return; }
	awk -v hz="$(getconf CLK_TCK)" '{sub(/.*\) /, ""); print ($12 + $13) * 1e9 / hz}' "/proc/$1/stat"
}

# Print the run time (ns) of the BPF programs process $1 holds, as
# kernel.bpf_stats_enabled counts it (0 when there is none).
prog_run_ns() {
	[ "$BPF_STATS" = 1 ] && [ -n "$1" ] || { echo 0; return; }
	scripts/held-progs "$1" | awk '{n += $3} END {print n + 0}'
}

# Print how many BPF tracing links exist (tp_btf, raw tracepoints, perf events).
foreign_links() {
	bpftool link list 2>/dev/null | grep -c -E '^[0-9]+: (tracing|raw_tracepoint|perf_event|kprobe|uprobe)'
}

declare -A RES ROUND RATIO DIRTY DRES TNS DTNS BNS DBNS BROUND BPAIR
for ((r = 0; r < ROUNDS; r++)); do
	n=${#CONFIGS[@]}
	for ((i = 0; i < n; i++)); do
		c=${CONFIGS[$(((i + r) % n))]}
		for ((try = 0; try <= RETRIES; try++)); do
		port=$(free_ports 1)
		rm -f "$WORK/ready" "$WORK/run.snap" "$WORK/run.snap.tmp"
		before=$(foreign_links)
		if ! start_tracer "$c" $port; then
			echo "bench: $c did not start: $(tail -n 2 "$WORK"/*.log 2>/dev/null)" >&2
			stop_tracer; continue 2
		fi
		tc0=$(proc_cpu_ns "$TRACER")
		bp0=$(prog_run_ns "$TRACER")
		line=$(taskset -c "$CPU" $OUT/pingpong "$CPU" "$SECS" $port)
		bp1=$(prog_run_ns "$TRACER")
		case $c in latop*) sleep 1.5 ;; esac	# one more tick, so the last requests are recorded
		tc1=$(proc_cpu_ns "$TRACER")
		stop_tracer
		after=$(foreign_links)
		dirty=$((before + after))
		[ "$dirty" -eq 0 ] && break
		DIRTY[$c]=$((${DIRTY[$c]:-0} + 1))
		[ "$try" -lt "$RETRIES" ] && sleep 3
		done
		ns=$(echo "$line" | awk -v k="$STAT" '{for (i = 1; i < NF; i += 2) if ($i == k) print $(i + 1)}')
		rts=$(echo "$line" | awk '{print $6}')
		tns=$(awk -v a="$tc0" -v b="$tc1" -v n="$rts" 'BEGIN {printf "%.0f", n ? (b - a) / n : 0}')
		bns=$(awk -v a="$bp0" -v b="$bp1" -v n="$rts" 'BEGIN {printf "%.0f", n ? (b - a) / n : 0}')
		seen=
		case $c in
		latop*) seen=$(./latop report "$WORK/run.snap" -q "from flows show count" --json |
			      python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["count"])') ;;
		pcap) seen=$(awk '/^packets/ {print $4}' "$WORK/pcap.out") ;;
		esac
		[ -n "$seen" ] && [ "$seen" != "$rts" ] &&
			echo "bench: round $r: $c counted $seen of $rts round trips" \
			     "$([ "$c" = pcap ] && awk '/^packets/ {print "(capture dropped " $8 " packets)"}' "$WORK/pcap.out")" >&2
		if [ "$dirty" -eq 0 ]; then
			RES[$c]+="$ns "
			TNS[$c]+="$tns "
			BNS[$c]+="$bns "
			BROUND[$c]=$bns
			ROUND[$c]=$ns
		else
			DTNS[$c]+="$tns "
			DBNS[$c]+="$bns "
			DRES[$c]+="$ns "
		fi
	done
	# This round's ratios to its own none run: drifts between rounds cancel.
	for c in "${CONFIGS[@]}"; do
		[ -n "${ROUND[$c]:-}" ] && [ -n "${ROUND[none]:-}" ] &&
			RATIO[$c]+="$(awk -v a="${ROUND[$c]}" -v b="${ROUND[none]}" 'BEGIN {printf "%.4f", a / b}') "
	done
	# And the programs' time beyond this round's floor run.
	for c in "${CONFIGS[@]}"; do
		[ -n "${BROUND[$c]:-}" ] && [ -n "${BROUND[floor]:-}" ] &&
			BPAIR[$c]+="$((BROUND[$c] - BROUND[floor])) "
	done
	ROUND=() BROUND=()
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for c in "${CONFIGS[@]}"; do
	if [ -z "${RES[$c]:-}" ]; then	# no clean run: use the dirty ones
		RES[$c]=${DRES[$c]:-}
		TNS[$c]=${DTNS[$c]:-}
		BNS[$c]=${DBNS[$c]:-}
	fi
done
none=$(echo "${RES[none]:-}" | median)
floor=$(echo "${RES[floor]:-}" | median)
echo "ns per 1-byte round trip ($STAT), medians over rounds:"
printf '%-8s %10s %10s %8s %9s %9s %10s %6s   %s\n' config "median ns" "added ns" "x none" \
	"x floor+" "x paired" "tracer ns" dirty runs
for c in "${CONFIGS[@]}"; do
	m=$(echo "${RES[$c]:-}" | median)
	[ -n "$m" ] || { echo "$c: no runs"; continue; }
	pr=$(echo "${RATIO[$c]:-}" | median)
	tn=$(echo "${TNS[$c]:-}" | median)
	awk -v c="$c" -v m="$m" -v n="${none:-0}" -v f="${floor:-0}" -v runs="${RES[$c]}" \
		-v pr="${pr:--}" -v d="${DIRTY[$c]:-0}" -v tn="${tn:-0}" 'BEGIN {
		add = n ? m - n : 0; fadd = (f && n) ? f - n : 0
		ratio = n ? m / n : 0; xf = "-"
		if (fadd > 0) xf = sprintf("%.2f", add / fadd)
		printf "%-8s %10.0f %10.0f %8.3f %9s %9s %10.0f %6s   %s\n", c, m, add, ratio, xf, pr,
			tn, d, runs }'
done
if [ "$BPF_STATS" = 1 ]; then
	fb=$(echo "${BNS[floor]:-}" | median)
	echo "BPF programs' run time per round trip (kernel.bpf_stats_enabled), medians over rounds:"
	printf '%-8s %10s %14s %14s   %s\n' config "bpf ns" "beyond floor" "paired" runs
	for c in "${CONFIGS[@]}"; do
		case $c in none | pcap) continue ;; esac
		m=$(echo "${BNS[$c]:-}" | median)
		[ -n "$m" ] || continue
		pb=$(echo "${BPAIR[$c]:-}" | median)
		awk -v c="$c" -v m="$m" -v f="${fb:-}" -v pb="${pb:--}" -v runs="${BNS[$c]}" 'BEGIN {
			printf "%-8s %10.0f %14s %14s   %s\n", c, m, f == "" ? "-" : sprintf("%.0f", m - f),
				pb, runs }'
	done
fi
