#!/bin/bash
# What a tracer adds to each syscall: bench/sysloop pinned to one CPU, timed
# with no tracer, with the floor (empty programs on the syscalls probe's
# hooks), with `latop record -q 'from syscalls'`, with bcc's `syscount -L`
# and with `perf trace -s` (on sysloop's pid, and system-wide), in
# interleaved rounds whose order rotates.
# Prints each configuration's median ns per syscall and its ratios, then runs
# bench/replay.sh.  `make bench` runs it; it also runs alone (as root).
#
# Environment (defaults in brackets):
#   BENCH_ROUNDS [7]        rounds; each round runs every configuration once
#   BENCH_SECONDS [1]       length of one timed run of sysloop
#   BENCH_MODE [getppid]    sysloop workload: getppid, or pipe (1-byte write+read)
#   BENCH_STAT [ns_median_batch]  sysloop's figure: ns_median_batch (the median
#                           1024-call batch: robust to a stolen vCPU) or ns_per_call (mean)
#   BENCH_WAIT_CLEAN [30]   seconds to wait for other BPF programs to leave the
#                           syscall hooks; a run with them there is kept apart
#   BENCH_RETRIES [2]       times a run kept apart is tried again
#   BENCH_MAX_WAIT [300]    after this many seconds of the run, no more waiting
#                           or retrying for a clean run
#   BENCH_CPU [1]           CPU sysloop is pinned to
#   BENCH_TRACER_CPU [0]    CPU the tracers are pinned to (empty: unpinned)
#   BENCH_CONFIGS ["none floor latop syscount perf perf-a"]
#                           perf: perf trace -s -p <sysloop>; perf-a: perf trace -s -a
#   BENCH_REPLAY [1]        0 skips bench/replay.sh
#   BENCH_INSTALL [1]       0: do not apt-get bpfcc-tools or the 6.1 headers
#   BENCH_CACHE [/var/tmp/latop-bench]  where the unpacked headers are kept
#   BENCH_JSON []           also write the results as JSON to this file
set -u

cd "$(dirname "$0")/.." || exit 1
. bench/lib.sh
OUT=${OUTPUT:-.output}
ROUNDS=${BENCH_ROUNDS:-7}
SECS=${BENCH_SECONDS:-1}
MODE=${BENCH_MODE:-getppid}
LOOP_CPU=${BENCH_CPU:-1}
TRACER_CPU=${BENCH_TRACER_CPU-0}
read -r -a CONFIGS <<<"${BENCH_CONFIGS:-none floor latop syscount perf perf-a}"
CACHE=${BENCH_CACHE:-/var/tmp/latop-bench}
STAT=${BENCH_STAT:-ns_median_batch}
MAX_WAIT_S=${BENCH_MAX_WAIT:-300}
SYSLOOP=$OUT/bench/sysloop
FLOOR=$OUT/bench/floor

WORK=$(mktemp -d /tmp/latop-bench.XXXXXX) || exit 1
TRACER_PID=
LOOP_PID=
LAST_NS=
MOUNTED=()
declare -A SKIP=()

# Stop the running tracer, if any: SIGTERM (all of them finish on it), then SIGKILL.
stop_tracer() {
	local pid=$TRACER_PID
	TRACER_PID=
	bench_stop "$pid" 50
}

# Stop any tracer, unmount what we mounted, remove the scratch directory.
cleanup() {
	[ -n "$LOOP_PID" ] && kill -KILL "$LOOP_PID" 2>/dev/null
	stop_tracer
	for m in "${MOUNTED[@]}"; do
		umount "$m" 2>/dev/null
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Run a command in the background on the tracer CPU, logging to $WORK/$1.log.
launch() {
	local name=$1
	shift
	if [ -n "$TRACER_CPU" ]; then
		taskset -c "$TRACER_CPU" "$@" >"$WORK/$name.log" 2>&1 &
	else
		"$@" >"$WORK/$name.log" 2>&1 &
	fi
	TRACER_PID=$!
}

# Wait up to $2 tenths of a second for the test "$1" to pass while the tracer lives.
wait_for() {
	local test=$1 tenths=$2 i
	for ((i = 0; i < tenths; i++)); do
		eval "$test" && return 0
		kill -0 "$TRACER_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# Print the last lines of a tracer's log, indented, as the reason it failed.
log_tail() {
	tail -n 3 "$WORK/$1.log" 2>/dev/null | sed 's/^/    /'
}

# Mount tracefs and debugfs if they are not (bcc reads tracepoint formats there).
ensure_tracefs() {
	if [ ! -e /sys/kernel/tracing/events ]; then
		mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null && MOUNTED+=(/sys/kernel/tracing)
	fi
	if [ ! -e /sys/kernel/debug/tracing ]; then
		mount -t debugfs nodev /sys/kernel/debug 2>/dev/null && MOUNTED+=(/sys/kernel/debug)
	fi
	[ -e /sys/kernel/tracing/events/raw_syscalls ]
}

# Find or unpack Debian's 6.1 kernel headers for bcc; print their directory.
bcc_headers() {
	local dir=$CACHE/kheaders pkg ver
	if [ -f "$dir/merged/include/linux/kconfig.h" ] && [ -f "$dir/merged/.config" ]; then
		echo "$dir/merged"
		return 0
	fi
	[ "${BENCH_INSTALL:-1}" = 1 ] || return 1
	pkg=$(apt-cache depends linux-headers-amd64 2>/dev/null |
		awk '/Depends: linux-headers-6\.1/ {print $2; exit}')
	[ -n "$pkg" ] || return 1
	ver=${pkg#linux-headers-}
	ver=${ver%-amd64}
	rm -rf "$dir" && mkdir -p "$dir/debs" || return 1
	(cd "$dir/debs" && timeout 120 apt-get download -q "$pkg" "linux-headers-$ver-common") \
		>/dev/null 2>&1 || return 1
	for deb in "$dir"/debs/*.deb; do
		dpkg -x "$deb" "$dir/root" || return 1
	done
	# bcc wants one tree: the common sources with the amd64 build files on top.
	mkdir -p "$dir/merged" &&
		cp -a "$dir/root/usr/src/linux-headers-$ver-common/." "$dir/merged/" &&
		cp -a "$dir/root/usr/src/$pkg/." "$dir/merged/" || return 1
	echo "$dir/merged"
}

# Check that syscount-bpfcc can run here; install it if allowed.  Sets SC_SRC.
prepare_syscount() {
	if ! command -v syscount-bpfcc >/dev/null; then
		if [ "${BENCH_INSTALL:-1}" != 1 ]; then
			SKIP[syscount]="syscount-bpfcc is not installed (BENCH_INSTALL=0)"
			return
		fi
		DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -q bpfcc-tools \
			>"$WORK/apt.log" 2>&1
		if ! command -v syscount-bpfcc >/dev/null; then
			SKIP[syscount]="apt-get install bpfcc-tools failed: $(tail -n 1 "$WORK/apt.log")"
			return
		fi
	fi
	if ! SC_SRC=$(bcc_headers); then
		SKIP[syscount]="no kernel headers for bcc (apt-get download linux-headers 6.1 failed)"
		return
	fi
	if ! ensure_tracefs; then
		SKIP[syscount]="tracefs is not mounted and cannot be"
	fi
}

# Warn when the floor's hooks are not the syscalls probe's any more.
check_floor_hooks() {
	local diff
	diff=$(diff <(sed -nE 's/^SEC\("([a-z_]+\/[a-z_0-9]+)"\).*/\1/p' probes/syscalls/syscalls.bpf.c | sort) \
		<(sed -nE 's/^EMPTY\("([a-z_]+\/[a-z_0-9]+)".*/\1/p' bench/floor.bpf.c | sort) |
		grep '^[<>]')
	[ -z "$diff" ] && return 0
	echo "bench: warning: bench/floor.bpf.c does not attach what probes/syscalls/syscalls.bpf.c does" \
		"(< probe only, > floor only):"
	echo "$diff" | sed 's/^/    /'
}

# Build what the benchmark runs; mark configurations that cannot run.
prepare() {
	check_floor_hooks
	make --no-print-directory -s "$SYSLOOP" >"$WORK/make-sysloop.log" 2>&1 || {
		echo "bench: cannot build $SYSLOOP:" >&2
		cat "$WORK/make-sysloop.log" >&2
		exit 1
	}
	for cfg in "${CONFIGS[@]}"; do
		case $cfg in
		none) ;;
		floor)
			make --no-print-directory -s "$FLOOR" >"$WORK/make-floor.log" 2>&1 ||
				SKIP[floor]="cannot build $FLOOR: $(tail -n 1 "$WORK/make-floor.log")" ;;
		latop)
			make --no-print-directory -s latop >"$WORK/make-latop.log" 2>&1 ||
				SKIP[latop]="cannot build latop: $(grep -m1 -E 'error|Error' "$WORK/make-latop.log")" ;;
		syscount) prepare_syscount ;;
		perf | perf-a)
			command -v perf >/dev/null || SKIP[$cfg]="perf is not installed (apt-get install linux-perf)" ;;
		*) echo "bench: unknown configuration '$cfg'" >&2; exit 2 ;;
		esac
	done
}

# Start configuration $1's tracer and wait until it is attached; 1 if it failed.
# $LOOP_PID is the sysloop that waits for the go file (traced by pid if needed).
start_config() {
	case $1 in
	none) return 0 ;;
	floor)
		rm -f "$WORK/floor.ready"
		launch floor "$FLOOR" -r "$WORK/floor.ready"
		wait_for '[ -e "$WORK/floor.ready" ]' 150 ;;
	latop)
		rm -f "$WORK/x.snap" "$WORK/x.snap.tmp"
		launch latop ./latop record -o "$WORK/x.snap" -q 'from syscalls'
		# Recording has begun once the file exists and the syscall hooks are
		# attached (latop attaches at its first read); a second lets it settle.
		wait_for '[ -e "$WORK/x.snap.tmp" ]' 200 &&
			wait_for '[ "$(syscall_links)" -ge 2 ]' 200 &&
			sleep 1 && kill -0 "$TRACER_PID" 2>/dev/null ;;
	syscount)
		launch syscount env BCC_KERNEL_SOURCE="$SC_SRC" syscount-bpfcc -L
		wait_for 'grep -q "^Tracing" "$WORK/syscount.log"' 900 ;;
	perf)
		launch perf perf trace -s -p "$LOOP_PID" -o "$WORK/perf.out"
		# perf trace says nothing when attached (it opens ~700 events): wait 3s.
		sleep 3 && kill -0 "$TRACER_PID" 2>/dev/null ;;
	perf-a)
		launch perf-a perf trace -s -a -o "$WORK/perf-a.out"
		sleep 3 && kill -0 "$TRACER_PID" 2>/dev/null ;;
	esac
}

# Print how many BPF links sit on the raw syscall tracepoints.
syscall_links() {
	bpftool link list 2>/dev/null | grep -c -E "tp '(sys_enter|sys_exit)'"
}

# Wait up to BENCH_WAIT_CLEAN seconds until no one else's BPF program is on the
# syscall tracepoints (another tracer or test run); print how many are left.
wait_clean() {
	local n=0 i
	for ((i = 0; i < ${BENCH_WAIT_CLEAN:-30} * 2; i++)); do
		n=$(syscall_links)
		[ "$n" -eq 0 ] || [ "$SECONDS" -ge "$MAX_WAIT_S" ] && break
		sleep 0.5
	done
	echo "$n"
}

# Run configuration $1 once: start sysloop waiting, start the tracer, let
# sysloop run, stop the tracer; append ns per syscall to $WORK/$1.ns, or to
# $WORK/$1.dirty when someone else's program was on the syscall hooks too.
run_once() {
	local cfg=$1 ns rc before after own=0
	case $cfg in floor | latop) own=2 ;; esac
	before=$(wait_clean)
	rm -f "$WORK/go" "$WORK/loop.out"
	"$SYSLOOP" -c "$LOOP_CPU" -d "$SECS" -m "$MODE" -g "$WORK/go" -j >"$WORK/loop.out" &
	LOOP_PID=$!
	if ! start_config "$cfg"; then
		SKIP[$cfg]="did not attach or exited early:
$(log_tail "$cfg")"
		stop_tracer
		kill "$LOOP_PID" 2>/dev/null
		wait "$LOOP_PID" 2>/dev/null
		return
	fi
	sleep 0.3
	touch "$WORK/go"
	wait_pid_bounded "$LOOP_PID" $((${SECS%.*} * 40 + 100))
	wait "$LOOP_PID"
	rc=$?
	after=$(($(syscall_links) - own))
	ns=$(sed -n "s/.*\"$STAT\":\([0-9.]*\).*/\1/p" "$WORK/loop.out")
	if [ "$rc" -ne 0 ] || [ -z "$ns" ]; then
		echo "bench: sysloop failed under $cfg (exit $rc)" >&2
	elif [ "$cfg" != none ] && [ "$cfg" != perf ] && ! kill -0 "$TRACER_PID" 2>/dev/null; then
		# (perf trace -p ends by itself with the process it follows.)
		SKIP[$cfg]="exited while measuring:
$(log_tail "$cfg")"
	elif [ "$before" -gt 0 ] || [ "$after" -gt 0 ]; then
		echo "$ns" >>"$WORK/$cfg.dirty"
		ns="$ns(dirty)"
	else
		echo "$ns" >>"$WORK/$cfg.ns"
	fi
	LAST_NS=$ns
	stop_tracer
	sleep 0.3
}

# Wait up to $2 tenths of a second for pid $1 to exit, then kill it.
wait_pid_bounded() {
	local i
	for ((i = 0; i < $2; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null
}

# Print the median of the numbers in file $1.
median() {
	sort -g "$1" | awk '{v[NR] = $1} END {
		if (NR == 0) exit 1
		if (NR % 2) printf "%.1f\n", v[(NR + 1) / 2]
		else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Print the file of clean samples of config $1, or of dirty ones if none is clean.
samples() {
	if [ -s "$WORK/$1.ns" ]; then
		echo "$WORK/$1.ns"
	elif [ -s "$WORK/$1.dirty" ]; then
		echo "$WORK/$1.dirty"
	else
		return 1
	fi
}

# Print the table of medians and ratios (and write BENCH_JSON if asked).
report() {
	local base="" floor_add="" med add ratio vs_floor spread f ndirty json="" sep=""
	f=$(samples none) && base=$(median "$f")
	if [ -n "$base" ] && f=$(samples floor); then
		floor_add=$(awk -v m="$(median "$f")" -v b="$base" 'BEGIN {printf "%.1f", m - b}')
	fi
	echo
	echo "syscall overhead: sysloop -m $MODE on CPU $LOOP_CPU, tracers on CPU ${TRACER_CPU:-any}," \
		"$ROUNDS interleaved rounds x ${SECS}s, $STAT"
	echo "host: $(nproc) CPUs, kernel $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC')"
	printf '%-9s %4s %10s %10s %8s %9s %14s %6s\n' config runs "median ns" "added ns" \
		"x none" "x floor+" "min..max ns" dirty
	for cfg in "${CONFIGS[@]}"; do
		if ! f=$(samples "$cfg"); then
			printf '%-9s skipped: %s\n' "$cfg" "${SKIP[$cfg]:-no measurement}"
			continue
		fi
		ndirty=0
		[ -f "$WORK/$cfg.dirty" ] && ndirty=$(wc -l <"$WORK/$cfg.dirty")
		[ "$f" = "$WORK/$cfg.dirty" ] && ndirty="$ndirty(used)"
		med=$(median "$f")
		spread=$(sort -g "$f" | awk 'NR == 1 {a = $1} {b = $1} END {printf "%.0f..%.0f", a, b}')
		add=- ratio=- vs_floor=-
		if [ -n "$base" ]; then
			add=$(awk -v m="$med" -v b="$base" 'BEGIN {printf "%.1f", m - b}')
			ratio=$(awk -v m="$med" -v b="$base" 'BEGIN {printf "%.2f", m / b}')
			if [ "$cfg" != none ] && [ -n "$floor_add" ] &&
				awk -v f="$floor_add" 'BEGIN {exit !(f > 0)}'; then
				vs_floor=$(awk -v a="$add" -v f="$floor_add" 'BEGIN {printf "%.2f", a / f}')
			fi
		fi
		printf '%-9s %4s %10s %10s %8s %9s %14s %6s\n' "$cfg" "$(wc -l <"$f")" \
			"$med" "$add" "$ratio" "$vs_floor" "$spread" "$ndirty"
		[ -n "${SKIP[$cfg]:-}" ] && echo "          (stopped early: ${SKIP[$cfg]%%$'\n'*})"
		json+="$sep{\"config\":\"$cfg\",\"median_ns\":$med,\"runs\":[$(paste -sd, "$f")]}"
		sep=,
	done
	echo "added ns = median - none's median; x none = median / none's median;"
	echo "x floor+ = added ns / the floor's added ns (1.00: no cost beyond enabling the hooks);"
	echo "dirty = runs left out because another BPF program sat on the syscall hooks"
	if [ -n "${BENCH_JSON:-}" ]; then
		printf '{"mode":"%s","stat":"%s","rounds":%s,"seconds":%s,"results":[%s]}\n' \
			"$MODE" "$STAT" "$ROUNDS" "$SECS" "$json" >"$BENCH_JSON"
	fi
}

# Build, run every configuration in rotated rounds, print the table, run replay.sh.
main() {
	local n=${#CONFIGS[@]} r i cfg try
	if [ "$(id -u)" -ne 0 ]; then
		echo "bench: needs root (BPF programs and tracers)" >&2
		exit 1
	fi
	prepare
	for cfg in "${CONFIGS[@]}"; do
		[ -n "${SKIP[$cfg]:-}" ] && echo "bench: skipping $cfg: ${SKIP[$cfg]}"
	done
	for ((r = 0; r < ROUNDS; r++)); do
		printf 'bench: round %d/%d:' $((r + 1)) "$ROUNDS"
		for ((i = 0; i < n; i++)); do
			cfg=${CONFIGS[$(((r + i) % n))]}
			[ -n "${SKIP[$cfg]:-}" ] && continue
			# A run another program disturbed is kept apart and tried again.
			for ((try = 0; try <= ${BENCH_RETRIES:-2}; try++)); do
				LAST_NS=-
				run_once "$cfg"
				printf ' %s=%s' "$cfg" "$LAST_NS"
				[[ $LAST_NS == *dirty* ]] && [ "$SECONDS" -lt "$MAX_WAIT_S" ] || break
			done
		done
		echo
	done
	report
	if [ "${BENCH_REPLAY:-1}" = 1 ]; then
		echo
		./bench/replay.sh
	fi
}

main "$@"
