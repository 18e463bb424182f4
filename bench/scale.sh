#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# make bench-scale: does latop count everything at a busy host's scale, and
# at what cost?  One `latop record` (or live TUI) per row, over a workload
# that knows its own truth:
#   flows N     reqsrv many: N keep-alive loopback connections open at once,
#               BENCH_ROUNDS_FLOWS rounds of one 8-byte request on each
#               (truth: N x rounds); recorded: from flows
#   flows/port N the same, recorded grouped by port (from flows where lport
#               in (...) group by lport show count, p99(lat)): counted in the
#               kernel per port, not per connection
#   churn N     reqsrv churn: N short loopback connections, one after
#               another, BENCH_ROUNDS_CHURN requests each, the server closing
#               first (truth: N x rounds); recorded: from flows.  Beyond
#               flow_max connections in all, each is still its own row: a
#               closed one leaves the map
#   threads N   workload crowd: N threads alive at once, each making 8 cheap
#               syscalls BENCH_CALLS times (truth: N x calls of each);
#               recorded: from syscalls
#   forks N     N shell loops running /bin/true for BENCH_FORK_S seconds
#               (truth: the loops' own count of runs; latop: exit_group
#               calls of processes named true); recorded: from syscalls
#   tui forks N the same N loops under the live TUI instead of record:
#               `latop` with no arguments (every view, its default view) in
#               a detached 160x50 tmux session, TERM=xterm-256color, an
#               empty XDG_CONFIG_HOME (no latoprc), attached once its header
#               says LIVE; counted over the history the TUI saves (key s)
#               after the measurement, the ticks that fit in its history_mb
#   tui h1G N   the same with latoprc history_mb = 1024: the history holds
#               the whole run, so its coverage is the TUI's
# Columns: truth, counted (under the workload's own keys), coverage (counted /
# truth), overflow (events of the whole table counted in its overflow rows
# because a table was full: in every total, in no key), latop's CPU from its
# probes' attach to a second after the workload (% of one core: user +
# system time / wall time; loading and attaching are left out), its peak RSS
# (VmHWM, which includes the BPF maps mapped into latop), its own peak RSS
# (all but the anon_inode:bpf mappings) and the BPF mappings' peak RSS
# (both sampled from /proc/PID/smaps every 0.5 s), ticks written and ticks
# that came late (over 1.5 intervals).
# Environment: BENCH_FLOWS="1000 10000 100000", BENCH_FLOWS_PORT="10000 100000",
# BENCH_CHURN=100000, BENCH_ROUNDS_CHURN=2,
# BENCH_THREADS="100 1000 10000",
# BENCH_FORKS="1 2 4", BENCH_TUI_FORKS=2, BENCH_ROUNDS_FLOWS=20, BENCH_CALLS=20,
# BENCH_FORK_S=10, LATOP (default ./latop), HELPERS (default .output/helpers).
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
L=${LATOP:-$PWD/latop}
H=${HELPERS:-$PWD/.output/helpers}
FLOWS=${BENCH_FLOWS:-1000 10000 100000}
FLOWS_PORT=${BENCH_FLOWS_PORT:-10000 100000}
CHURN=${BENCH_CHURN:-100000}
ROUNDS_CHURN=${BENCH_ROUNDS_CHURN:-2}
THREADS=${BENCH_THREADS:-100 1000 10000}
FORKS=${BENCH_FORKS:-1 2 4}
TUI_FORKS=${BENCH_TUI_FORKS:-2}
ROUNDS=${BENCH_ROUNDS_FLOWS:-20}
CALLS=${BENCH_CALLS:-20}
FORK_S=${BENCH_FORK_S:-10}
[ "$(id -u)" -eq 0 ] || { echo "bench/scale.sh: needs root to load probes" >&2; exit 2; }
for b in "$L" "$H/reqsrv" "$H/workload"; do
	[ -x "$b" ] || { echo "bench/scale.sh: no $b (make latop tests-build)" >&2; exit 2; }
done
tmp=$(mktemp -d); rec=
smp=
tui=latopbench-$$
# The TUI runs in a tmux server of its own (its socket in $tmp), without a
# tmux.conf.
tm() { tmux -S "$tmp/tmux" -f /dev/null "$@"; }
trap 'bench_stop "$smp" 5; bench_stop "$rec" 20; tm kill-server 2>/dev/null; rm -rf "$tmp"' EXIT
hz=$(getconf CLK_TCK)

# mem PID: PID's resident memory now in kB, its own and the BPF maps' (its
# anon_inode:bpf mappings), from one read of its smaps.
mem() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / {bpf = /anon_inode:bpf/; next}
		/^Rss:/ {if (bpf) b += $2; else o += $2}
		END {if (NR) print o + 0, b + 0}' /proc/"$1"/smaps 2>/dev/null
}

# measuring: latop ($rec) is attached; note its CPU time and start sampling
# its memory every 0.5 s in the background, into $tmp/mem.
measuring() {
	t0=$(date +%s.%N)
	st0=$(cut -d' ' -f14,15 "/proc/$rec/stat" 2>/dev/null)
	: >"$tmp/mem"
	( while kill -0 "$rec" 2>/dev/null; do mem "$rec" >>"$tmp/mem"; sleep 0.5; done ) & smp=$!
}

# workload_done: wait for the workload's background jobs (all but the
# recorder and the sampler).
workload_done() {
	wait $(jobs -p | grep -vx -e "$rec" -e "$smp")
}

# start QUERY: start the recorder and wait until its probes are attached.
start() {
	rm -f "$tmp/r.snap" "$tmp/r.snap.tmp"
	"$L" record -o "$tmp/r.snap" --quiet -q "$1" 2>"$tmp/r.err" & rec=$!
	while [ ! -e "$tmp/r.snap.tmp" ] && kill -0 $rec 2>/dev/null; do sleep 0.1; done
	measuring
}

# measure: a second after the workload, read latop's CPU time and peak RSS
# and stop sampling its memory; sets cpu (% of a core), rss (VmHWM, MB), own
# and bpf (the peaks of its own RSS and of the BPF mappings' RSS, MB).
measure() {
	local st hwm t1
	sleep 1
	t1=$(date +%s.%N)
	st=$(cut -d' ' -f14,15 /proc/$rec/stat 2>/dev/null)
	hwm=$(awk '/^VmHWM/ {print $2}' /proc/$rec/status 2>/dev/null)
	bench_stop "$smp" 5; smp=
	mem "$rec" >>"$tmp/mem"
	cpu=$(awk -v s="$st" -v s0="$st0" -v hz=$hz -v a=$t0 -v b=$t1 \
		'BEGIN {split(s, f, " "); split(s0, g, " ");
			printf "%.1f", 100 * (f[1] + f[2] - g[1] - g[2]) / hz / (b - a)}')
	rss=$(awk -v k="${hwm:-0}" 'BEGIN {printf "%.0f", k / 1024}')
	own=$(awk '$1 > o {o = $1} $2 > b {b = $2} END {printf "%.0f %.0f", o / 1024, b / 1024}' "$tmp/mem")
	bpf=${own#* } own=${own% *}
}

# finish: measure, then stop the recorder.
finish() {
	measure
	bench_stop $rec 100; rec=
}

# line COLUMN...: print a line of the table.
line() {
	printf '%-10s %7s %12s %12s %9s %10s %8s %8s %8s %8s %6s %5s\n' "$@"
}

# row NAME N TRUTH QUERY [SNAP]: print one row, counting with QUERY over the
# recording SNAP ($tmp/r.snap).
row() {
	local counted ticks late snap=${5:-$tmp/r.snap}
	counted=$("$L" report "$snap" --json -q "$4" 2>/dev/null | sed -n 's/.*"count":\([0-9]*\).*/\1/p' | head -1)
	ticks=$("$L" report "$snap" --json -q "$4" 2>&1 | sed -n 's/.*"ticks": \([0-9]*\), "ticks_late": \([0-9]*\).*/\1 \2/p' | head -1)
	late=${ticks#* }; ticks=${ticks% *}
	over=$("$L" report "$snap" --json -q "$4" 2>&1 | sed -n 's/.*"overflow": \([0-9]*\).*/\1/p' | head -1)
	line "$1" "$2" "$3" "${counted:-0}" \
		"$(awk -v c="${counted:-0}" -v t="$3" 'BEGIN {printf "%.2f%%", t ? 100 * c / t : 0}')" \
		"${over:-0}" "$cpu" "$rss" "$own" "$bpf" "${ticks:-?}" "${late:-?}"
}

# forks N: run N shell loops of /bin/true for FORK_S seconds; wait for them
# and set truth to the runs they made.
forks() {
	local i
	for ((i = 0; i < $1; i++)); do
		( c=0; end=$((SECONDS + FORK_S)); while [ $SECONDS -lt $end ]; do /bin/true; c=$((c + 1)); done
		  echo $c > "$tmp/forks.$i" ) &
	done
	workload_done
	truth=$(cat "$tmp"/forks.* | awk '{s += $1} END {print s}')
	rm -f "$tmp"/forks.*
}

# tui_start: start the live TUI as an operator would, `latop` alone, in a
# 160x50 tmux session with an empty XDG_CONFIG_HOME, from $tmp (where it
# saves), and wait (60 s at most) until its header says LIVE: its probes are
# attached.  Sets rec to its PID; fails, with why saying why, if it does not
# start.
tui_start() {
	local i cmd
	mkdir -p "$tmp/config/latop"; rm -f "$tmp"/latop-*.snap "$tmp/tui.err"
	printf '%s' "${1:-}" >"$tmp/config/latop/latoprc"
	cmd="exec env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color"
	cmd+=" XDG_CONFIG_HOME=$(printf %q "$tmp/config") $(printf %q "$L") 2>$(printf %q "$tmp/tui.err")"
	tm new-session -d -s "$tui" -x 160 -y 50 -c "$tmp" "$cmd"
	rec=$(tm display-message -p -t "$tui" '#{pane_pid}' 2>/dev/null)
	for ((i = 0; i < 600; i++)); do
		tm capture-pane -p -t "$tui" 2>/dev/null | grep -qE '^ latop +LIVE ' && { measuring; return 0; }
		if [ -z "$rec" ] || ! kill -0 "$rec" 2>/dev/null; then break; fi
		sleep 0.1
	done
	why="the TUI did not come up in 60 s: $(head -1 "$tmp/tui.err" 2>/dev/null)"
	tui_stop
	return 1
}

# tui_stop: save its history (key s, 30 s at most), quit it (key q, 10 s at
# most, then the session is killed) and wait for it to be gone.
tui_stop() {
	local i
	tm send-keys -t "$tui" s 2>/dev/null
	for ((i = 0; i < 300; i++)); do
		tm capture-pane -p -t "$tui" 2>/dev/null | grep -qE 'saved [0-9]+ ticks to|cannot save|nothing to save' && break
		kill -0 "$rec" 2>/dev/null || break
		sleep 0.1
	done
	tm send-keys -t "$tui" q 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		kill -0 "$rec" 2>/dev/null || break
		sleep 0.1
	done
	tm kill-session -t "$tui" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		kill -0 "$rec" 2>/dev/null || break
		sleep 0.1
	done
	rec=
}

echo "latop $("$L" --version 2>/dev/null | head -1), $(uname -r), $(nproc) CPUs"
line what n truth counted coverage overflow "cpu%" rss_mb own_mb bpf_mb ticks late

# One reqsrv holds both ends of its connections (two descriptors each), so
# N is split over processes of at most (open-file hard limit - 64) / 2
# connections, running at once on ports of their own.
per=$(( ($(ulimit -Hn) - 64) / 2 ))
# Each reqsrv answers its connections in turn, one thread: with 100,000
# connections on 2 CPUs an answer can come more than flow_timeout's default
# 1 s after its request, and latop would count that request as unanswered
# (evicted).  A user with such a server raises flow_timeout; so does this.
mkdir -p "$tmp/flowcfg/latop"
echo "flow_timeout = 30s" >"$tmp/flowcfg/latop/latoprc"
# flows_row NAME N GROUP: N connections recorded from flows on their ports,
# GROUP after the WHERE (empty: a row per connection).
flows_row() {
	local n=$2 k ports= base i c
	k=$(( (n + per - 1) / per ))
	base=$(free_ports "$k")
	for ((i = 0; i < k; i++)); do ports="${ports:+$ports, }$((base + i))"; done
	# The connections beyond flow_max are counted in the (other) row,
	# whose lport is 0: the ports are chosen when recording, not after.
	XDG_CONFIG_HOME=$tmp/flowcfg start "from flows where lport in ($ports)${3:+ $3}"
	for ((i = 0; i < k; i++)); do
		c=$(( n / k + (i < n % k ? 1 : 0) ))
		"$H/reqsrv" many $((base + i)) $c "$ROUNDS" >"$tmp/many.$i" 2>&1 &
	done
	workload_done
	finish
	truth=$(cat "$tmp"/many.* | awk '/^requests / {s += $2} END {print s + 0}')
	if [ "$truth" -ne $((n * ROUNDS)) ]; then
		echo "$1 $n: reqsrv many failed: $(grep -hv '^requests' "$tmp"/many.* | head -1)"
		rm -f "$tmp"/many.*; return
	fi
	rm -f "$tmp"/many.*
	row "$1" "$n" "$truth" "from flows show count"
}

for n in $FLOWS; do
	flows_row flows "$n" ""
done
for n in $FLOWS_PORT; do
	flows_row flows/port "$n" "group by lport show count, p99(lat)"
done

for n in $CHURN; do
	p=$(free_ports 1)
	XDG_CONFIG_HOME=$tmp/flowcfg start "from flows where lport == $p"
	"$H/reqsrv" churn "$p" "$n" "$ROUNDS_CHURN" >"$tmp/churn" 2>&1
	finish
	truth=$(awk '/^requests / {print $2}' "$tmp/churn")
	if [ "${truth:-0}" -ne $((n * ROUNDS_CHURN)) ]; then
		echo "churn $n: reqsrv churn failed: $(head -1 "$tmp/churn")"; continue
	fi
	row churn "$n" "$truth" "from flows show count"
done

for n in $THREADS; do
	start "from syscalls"
	"$H/workload" crowd "$n" "$CALLS" >/dev/null 2>"$tmp/w.err" || { echo "threads $n: $(cat "$tmp/w.err")"; finish; continue; }
	finish
	row threads "$n" $((n * CALLS * 8)) "from syscalls where comm == 'crowd' and syscall in (getppid, getpid, gettid, getuid, geteuid, getgid, getegid, getpgrp) show count"
done

for n in $FORKS; do
	start "from syscalls"
	forks "$n"
	finish
	row forks "$n" "$truth" "from syscalls where comm == 'true' and syscall == exit_group show count"
done

# Each N twice: `tui forks`, with no latoprc (its CPU and memory as a user
# gets them; its 64 MB history may keep only the last seconds of the run,
# and counted is over those), then `tui h1G`, with history_mb = 1024, which
# keeps the whole run, for coverage.
for run in $(for n in $TUI_FORKS; do echo "d:$n h:$n"; done); do
	n=${run#*:} what="tui forks" rc=
	[ "${run%%:*}" = h ] && what="tui h1G" rc=$'history_mb = 1024\n'
	command -v tmux >/dev/null || { echo "$what $n: not run: no tmux"; continue; }
	tui_start "$rc" || { echo "$what $n: $why"; continue; }
	forks "$n"
	measure
	# The TUI saves the ticks it has: let one more tick (1 s) read the
	# loops' last calls first, as record's last tick does at SIGTERM.
	sleep 1.5
	tui_stop
	snap=("$tmp"/latop-*.snap)
	if [ ! -e "${snap[0]}" ]; then
		line "$what" "$n" "$truth" - - - "$cpu" "$rss" "$own" "$bpf" - -
		continue
	fi
	row "$what" "$n" "$truth" "from syscalls where comm == 'true' and syscall == exit_group show count" "${snap[0]}"
	rm -f "${snap[@]}"
done
