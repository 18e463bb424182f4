#!/bin/bash
# What the bench scripts share.  Source it from a bench script:
#   bench_stop PID [TENTHS]  stop PID: SIGTERM, and SIGKILL if it is still
#                            there after TENTHS tenths of a second (50); then
#                            wait for it (returns 0; no PID: nothing to do)
#   free_ports N             a port P with P .. P+N-1 free, outside the
#                            ephemeral range (tests/ports.sh)

. "$(dirname "${BASH_SOURCE[0]}")/../tests/ports.sh"

bench_stop() {
	local pid=$1 tenths=${2:-50} i sig
	[ -n "$pid" ] || return 0
	for sig in TERM KILL; do
		kill -s "$sig" "$pid" 2>/dev/null || break
		for ((i = 0; i < tenths; i++)); do
			kill -0 "$pid" 2>/dev/null || break 2
			sleep 0.1
		done
	done
	wait "$pid" 2>/dev/null
	return 0
}
