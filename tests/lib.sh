# Shell helpers for tests producing TAP: source it, call ok/skip_all, then done_testing.
tap_n=0 tap_nfail=0
ok() { # ok COND-EXIT-STATUS "description"
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $tap_n - $2"; else tap_nfail=$((tap_nfail + 1)); echo "not ok $tap_n - $2"; fi
}
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP $1"; }
skip_all() { echo "1..0 # SKIP $1"; echo "ok 1 # SKIP $1"; exit 0; }
need_root() { [ "$(id -u)" -eq 0 ] || skip_all "needs root (CAP_BPF and CAP_PERFMON) to load probes"; }
done_testing() { echo "1..$tap_n"; [ "$tap_nfail" -eq 0 ]; }
. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"	# free_ports N

# wait_recording FILE [TRIES]: wait (0.1 s per try, 150 by default) until a
# recorder has attached its probes, which it shows by creating FILE.tmp.
wait_recording() {
	for _ in $(seq "${2:-150}"); do [ -e "$1.tmp" ] && { sleep 0.5; return 0; }; sleep 0.1; done
	return 1
}
# fork_loop RATE: run /bin/true at most RATE times a second, in the
# background, until killed ($! is its pid).  A shell loop of /bin/true runs
# as fast as the machine forks, from about 70 to 1,000 times a second on
# machines of one type; a rate makes the load, and what a test can expect
# of it, the same everywhere.  The loop is perl's (perl-base, core only: the
# sleep is select's), not python's: where python3's library carries its
# debug info (pyenv's: 9 MB of .debug_info), the locks probe parses its line
# tables whenever a loop holds a kernel lock others wait on, megabytes a
# unit, and what a test of fork storms measured would depend on that.
fork_loop() {
	perl -e '
my $gap = 1 / $ARGV[0];
while (1) {
	system("/bin/true");
	select(undef, undef, undef, $gap);
}' "$1" &
}
# wait_ready FILE: wait until a test server's first output line says "ready".
wait_ready() {
	for _ in $(seq 50); do grep -q '^ready' "$1" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}
