#!/bin/bash
# What the nvme probe costs, in the only place NVMe/TCP runs here: Debian's
# 6.1 under qemu TCG (tests/vm/lib.sh), an nvmet-tcp target on null_blk and
# an nvme-tcp initiator over loopback in one guest.  Each round runs every
# configuration once, in an order that rotates: a dd of N 4K direct reads at
# queue depth 1 with no tracer, with `latop record -q 'from nvme'` (both
# sides), with the initiator side only, and with every I/O sent to user
# space as a single event (BUFFER).  Prints each configuration's
# median time per I/O and its ratio to none.  TCG makes every instruction
# dearer than on hardware, so the ratio is an upper bound of the overhead,
# not a figure for real hosts.  `make bench-nvme` runs it (as root).
#
# Environment (defaults in brackets):
#   BENCH_ROUNDS [5]     rounds
#   BENCH_IOS [2000]     4K reads per dd (about a second: the clock steps 10 ms)
#   BENCH_CONFIGS ["none latop latop-initiator latop-events"]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/lib.sh"
. "$top/tests/vm/lib.sh"
ROUNDS=${BENCH_ROUNDS:-5}
IOS=${BENCH_IOS:-2000}
CONFIGS=${BENCH_CONFIGS:-none latop latop-initiator latop-events}

vm_require
make -C "$top" --no-print-directory latop-static >/dev/null || exit 1
vm_init nvme-bench
vm_modules configfs nvme-core nvme-fabrics nvme-tcp nvmet nvmet-tcp || exit 1
vm_modules --noload null_blk || exit 1
vm_file "$top/.output/static/latop" /bin/latop
cat >"$VM_DIR/guest.sh" <<EOF
ROUNDS=$ROUNDS IOS=$IOS CONFIGS="$CONFIGS"
EOF
cat >>"$VM_DIR/guest.sh" <<'EOF'
NQN=nqn.2026-01.org.latop:bench
mount -t configfs none /sys/kernel/config 2>/dev/null
modprobe null_blk nr_devices=1 gb=1 bs=4096 queue_mode=2 || exit 1
vm_nvme_target $NQN || exit 1
vm_nvme_connect $NQN >/dev/null || { echo "no /dev/nvme0n1"; exit 1; }
sleep 2
now() { cut -d' ' -f1 /proc/uptime; }	# busybox date has no %N: 10 ms steps
run() {	# run CONFIG: print CONFIG, the dd's start and end (s) and its I/Os
	q=
	case $1 in
	latop) q="from nvme" ;;
	latop-events) q="from nvme buffer 100000" ;;
	latop-initiator) q="from nvme where side == 'initiator'" ;;
	esac
	if [ -n "$q" ]; then
		rm -f b.snap b.snap.tmp
		latop record -o b.snap --quiet -q "$q" 2>/dev/null & rec=$!
		i=0
		while [ ! -e b.snap.tmp ] && [ $i -lt 900 ]; do sleep 0.1; i=$((i + 1)); done
		sleep 0.5
	fi
	t0=$(now)
	dd if=/dev/nvme0n1 of=/dev/null bs=4k count=$IOS iflag=direct 2>/dev/null
	t1=$(now)
	[ -n "$q" ] && { kill -TERM $rec; wait $rec; }
	echo "$1 $t0 $t1 $IOS"
}
set -- $CONFIGS
n=$#
r=0
while [ $r -lt $ROUNDS ]; do
	k=0
	while [ $k -lt $n ]; do
		idx=$(( (r + k) % n + 1 ))
		eval "c=\${$idx}"
		run "$c" >>results.txt
		k=$((k + 1))
	done
	r=$((r + 1))
done
EOF
echo "bench-nvme: booting $VM_KVER under TCG; $ROUNDS rounds of ($CONFIGS), $IOS 4K reads each"
vm_run "$VM_DIR/guest.sh" 1800 || { echo "bench-nvme: the guest failed"; cat "$VM_SHARE/guest.out"; exit 1; }
python3 - "$VM_SHARE/results.txt" $CONFIGS <<'PY'
import statistics, sys
res = {}
for line in open(sys.argv[1]):
    c, t0, t1, n = line.split()
    res.setdefault(c, []).append((float(t1) - float(t0)) * 1e9 / int(n))
base = statistics.median(res["none"]) if "none" in res else None
print("%-18s %8s %12s %8s" % ("config", "runs", "median/IO", "ratio"))
for c in sys.argv[2:]:
    if c not in res:
        print("%-18s skipped" % c)
        continue
    m = statistics.median(res[c])
    print("%-18s %8d %10.1fus %7.3fx" % (c, len(res[c]), m / 1e3, m / base if base else float("nan")))
PY
