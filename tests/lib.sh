# Shell helpers for tests producing TAP: source it, call ok/skip_all, then done_testing.
n=0 nfail=0
ok() { # ok COND-EXIT-STATUS "description"
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else nfail=$((nfail + 1)); echo "not ok $n - $2"; fi
}
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
skip_all() { echo "1..0 # SKIP $1"; echo "ok 1 # SKIP $1"; exit 0; }
need_root() { [ "$(id -u)" -eq 0 ] || skip_all "needs root (CAP_BPF and CAP_PERFMON) to load probes"; }
done_testing() { echo "1..$n"; [ "$nfail" -eq 0 ]; }
