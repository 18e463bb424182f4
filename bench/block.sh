#!/bin/bash
# What a block tracer costs: IOPS of a fio 4K random-read job (libaio,
# iodepth 16, pinned to one CPU) on a loop device over a tmpfs file, with
# no tracer, with `latop record -q 'from block'`, with a bpftrace script
# equivalent to biolatency on the block_rq_issue/complete tracepoints, and
# with bcc's biolatency when it runs; interleaved rounds whose order
# rotates.  Prints each configuration's median IOPS and its ratio to none.
# `make bench-block` runs it (as root).
#
# Environment (defaults in brackets):
#   BENCH_ROUNDS [5]      rounds; each runs every configuration once
#   BENCH_SECONDS [3]     length of one fio run
#   BENCH_CPU [1]         CPU fio is pinned to
#   BENCH_TRACER_CPU [0]  CPU the tracers are pinned to
#   BENCH_CONFIGS ["none latop bpftrace biolatency"]
#   BENCH_JSON []         also write the results as JSON to this file
set -u
cd "$(dirname "$0")/.." || exit 1
ROUNDS=${BENCH_ROUNDS:-5}
SECS=${BENCH_SECONDS:-3}
CPU=${BENCH_CPU:-1}
TCPU=${BENCH_TRACER_CPU:-0}
read -r -a CONFIGS <<<"${BENCH_CONFIGS:-none latop bpftrace biolatency}"
LATOP=${LATOP_BIN:-./latop}
WORK=$(mktemp -d /tmp/latop-bench-block.XXXXXX) || exit 1
IMG=/dev/shm/latop-bench-block-$$.img
LOOP= TPID=
declare -A SKIP=() RES=()

cleanup() {
	stop_tracer
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	rm -rf "$WORK" "$IMG"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

stop_tracer() {
	local i
	[ -n "$TPID" ] || return 0
	kill -INT "$TPID" 2>/dev/null
	for ((i = 0; i < 50; i++)); do kill -0 "$TPID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$TPID" 2>/dev/null
	wait "$TPID" 2>/dev/null
	TPID=
}

command -v fio >/dev/null || { echo "bench-block: no fio (scripts/install-deps.sh --bench)" >&2; exit 1; }
truncate -s 1G "$IMG"
dd if=/dev/zero of="$IMG" bs=1M count=1024 conv=notrunc status=none
LOOP=$(losetup -f --show "$IMG") || exit 1
DEV=$(basename "$LOOP")

cat > "$WORK/bio.bt" <<'BT'
tracepoint:block:block_rq_issue { @start[args->dev, args->sector] = nsecs; }
tracepoint:block:block_rq_complete /@start[args->dev, args->sector]/ {
	@usecs = hist((nsecs - @start[args->dev, args->sector]) / 1000);
	delete(@start[args->dev, args->sector]);
}
BT

# Start configuration $1's tracer; return 1 (and say why once) when it cannot run.
start_tracer() {
	local c=$1 i
	case $c in
	none) return 0 ;;
	latop) taskset -c "$TCPU" "$LATOP" record -o "$WORK/rec.snap" -d 1h --quiet \
		-q "from block" >"$WORK/$c.log" 2>&1 & TPID=$!
		for ((i = 0; i < 100; i++)); do [ -e "$WORK/rec.snap.tmp" ] && break; sleep 0.1; done ;;
	bpftrace) # Its tracepoint probes read formats from tracefs, which this
		# host leaves unmounted: mount it in a private mount namespace.
		taskset -c "$TCPU" unshare -m sh -c 'mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; exec bpftrace "$1"' sh "$WORK/bio.bt" >"$WORK/$c.log" 2>&1 & TPID=$!
		for ((i = 0; i < 100; i++)); do grep -q Attaching "$WORK/$c.log" && break; sleep 0.1; done ;;
	biolatency) # Needs kprobes on blk_account_io_*, and kernel headers.
		taskset -c "$TCPU" biolatency-bpfcc >"$WORK/$c.log" 2>&1 & TPID=$!
		for ((i = 0; i < 100; i++)); do grep -q Tracing "$WORK/$c.log" && break
			kill -0 $TPID 2>/dev/null || break; sleep 0.1; done ;;
	esac
	sleep 0.5
	if ! kill -0 "$TPID" 2>/dev/null; then
		SKIP[$c]="$( (grep -iE 'unable|kprobe' "$WORK/$c.log"; grep -iE 'error|exception|cannot|fail' "$WORK/$c.log") | grep -v RLIMIT_MEMLOCK | head -1 | cut -c1-160)"
		wait "$TPID" 2>/dev/null; TPID=
		return 1
	fi
}

# Run fio once; print its read IOPS.
run_fio() {
	taskset -c "$CPU" fio --name=rr --filename="$LOOP" --rw=randread --bs=4k --direct=1 \
		--ioengine=libaio --iodepth=16 --runtime="$SECS" --time_based --numjobs=1 \
		--output-format=json 2>/dev/null |
		python3 -c 'import json,sys; print(round(json.load(sys.stdin)["jobs"][0]["read"]["iops"]))'
}

for ((r = 0; r < ROUNDS; r++)); do
	n=${#CONFIGS[@]}
	for ((k = 0; k < n; k++)); do
		c=${CONFIGS[$(((k + r) % n))]}
		[ -n "${SKIP[$c]+x}" ] && continue
		start_tracer "$c" || continue
		iops=$(run_fio)
		stop_tracer
		RES[$c]="${RES[$c]:-} $iops"
	done
	echo "round $((r + 1)): $(for c in "${CONFIGS[@]}"; do printf '%s=%s ' "$c" "$(echo ${RES[$c]:-} | awk '{print $NF}')"; done)" >&2
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {if (NR) print (NR % 2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
base=$(echo ${RES[none]:-} | median)
printf '%-12s %10s %8s   %s\n' config "IOPS(med)" ratio runs
json="{\"device\":\"$DEV\",\"seconds\":$SECS,\"rounds\":$ROUNDS,\"configs\":{"
sep=
for c in "${CONFIGS[@]}"; do
	if [ -n "${SKIP[$c]+x}" ]; then
		printf '%-12s %10s %8s   cannot run here: %s\n' "$c" - - "${SKIP[$c]}"
		json+="$sep\"$c\":{\"skipped\":$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "${SKIP[$c]}")}"
	else
		m=$(echo ${RES[$c]:-} | median)
		ratio=$(awk -v a="$m" -v b="$base" 'BEGIN {printf "%.3f", b ? a / b : 0}')
		printf '%-12s %10s %8s   %s\n' "$c" "$m" "$ratio" "${RES[$c]}"
		json+="$sep\"$c\":{\"iops_median\":$m,\"ratio\":$ratio,\"runs\":[$(echo ${RES[$c]} | tr ' ' ',')]}"
	fi
	sep=,
done
json+="}}"
[ -n "${BENCH_JSON:-}" ] && echo "$json" > "$BENCH_JSON"
exit 0
