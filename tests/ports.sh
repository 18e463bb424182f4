# SPDX-License-Identifier: GPL-3.0-or-later
# free_ports N: print a port P such that P .. P+N-1 are unused now and lie
# below the kernel's ephemeral range (net.ipv4.ip_local_port_range), where
# no connect() ever takes one.  A listener's random port inside that range
# can be held by a client socket, or one in TIME_WAIT, left by an earlier
# test: bind then fails with "Address already in use".  Sourced by
# tests/lib.sh and bench/lib.sh.
free_ports() {
	local n=$1 lo base p _
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range
	base=10000
	[ "$lo" -gt $((base + n + 1000)) ] || base=1024
	for _ in $(seq 100); do
		p=$((base + RANDOM % (lo - base - n)))
		[ -z "$(ss -Htan "sport >= :$p and sport <= :$((p + n - 1))" 2>/dev/null)" ] && break
	done
	echo "$p"
}
