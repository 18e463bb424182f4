#!/bin/bash
# The VM test bed: boot a second kernel (Debian's linux-image-amd64, not the
# host's) under qemu TCG with a busybox initramfs, a chosen module closure
# and chosen files, run one guest script, and hand its results back through
# a 9p share.  KVM does not work on these machines; TCG boots in ~8 s.
#
# Source it after tests/lib.sh, then:
#   vm_require                     skip_all unless root, VM!=0 and packages install
#   vm_latop_setup TARGET...       vm_require; $top; the host latop in $L
#                                  (skip_all without one); make TARGET...
#                                  (latop-static, helpers-static) as one test
#   vm_init NAME                   pick the kernel; make $VM_DIR (root/, share/)
#   vm_modules [--noload] MOD...   add MODs and their dependencies to the
#                                  initramfs; loaded at boot unless --noload
#                                  (then the guest script may `modprobe MOD ARGS`)
#   vm_file SRC DEST               copy a host file into the initramfs at DEST
#   vm_run SCRIPT [SECONDS]        boot and run SCRIPT (sh) in the guest; returns
#                                  its exit status (124 when qemu timed out)
#   vm_ok_run SCRIPT SECS [WHAT]   vm_run as a test point ("the guest booted,
#                                  WHAT and powered off"); S=$VM_SHARE
#   vm_ok_kver                     test that the guest ran a 6.1 kernel
# After vm_run: $VM_SHARE holds what the guest wrote (its /share, also its
# cwd), $VM_SHARE/guest.out the script's output, $VM_DIR/console.log the
# serial console.  vm_cleanup runs on EXIT (VM_KEEP=1 keeps $VM_DIR).
# Guest: busybox in /bin, proc, sysfs, devtmpfs, tmpfs /tmp, debugfs, tracefs
# and bpffs mounted, lo up, PATH=/bin:/sbin, the script runs as root, with
#   vm_wait_file FILE PID          wait (60 s at most) for FILE while PID runs;
#                                  true once FILE exists
#   vm_nvme_target NQN             export /dev/nullb0 as NQN from an nvmet-tcp
#                                  port on 127.0.0.1:4420 (configfs mounted)
#   vm_nvme_connect NQN [,OPTS]    connect to it over loopback; print the
#                                  fabrics reply; true once /dev/nvme0n1 is there
# Environment: VM=0 skips, VM_KVER=6.1.0-…-amd64 picks another installed
# kernel, VM_SMP and VM_MEM size the guest, VM_APPEND adds to the kernel
# command line (loglevel=7 puts soft-lockup stacks in console.log).
# VM_TCG_THREAD=multi runs each vCPU in its own host thread; the default,
# single, runs them in one.  Under multi, Debian's 6.1 guest livelocks in
# about one boot in seven when latop attaches its syscall tracepoints: both
# vCPUs spin at the jump label being patched in syscall_trace_enter
# (int3 and sync IPIs of text_poke_bp in flight), "soft lockup" until
# qemu's timeout.  Single was 25 of 25 clean runs of syscalls-fentry and
# no slower (21-26 s a run).  vm/flows-handshake runs under multi unless
# told otherwise: its race needs two vCPUs running at once.  Under single
# a thread's on-CPU time includes the other vCPU's turns: vm/syscalls-fentry,
# which checks where a call's time went, runs one vCPU.
set -u
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	echo "1..0 # SKIP tests/vm/lib.sh is the library the vm tests source, not a test"
	exit 0
fi
VM_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
declare -F ok >/dev/null || . "$VM_TOP/tests/lib.sh"
VM_DIR= VM_SHARE= VM_KVER=${VM_KVER:-} VM_KERNEL= VM_QEMU_PID=

# Skip the whole test (with its reason) unless this machine can run the VM.
vm_require() {
	[ "${VM:-1}" = 0 ] && skip_all "VM=0 in the environment"
	[ "$(id -u)" -eq 0 ] || skip_all "needs root to install qemu and the guest kernel"
	local log
	log=$(mktemp)
	if ! timeout 600 "$VM_TOP/scripts/install-deps.sh" --vm >"$log" 2>&1; then
		sed 's/^/# /' "$log" | tail -n 5
		rm -f "$log"
		skip_all "cannot install qemu-system-x86 linux-image-amd64 busybox-static cpio kmod (scripts/install-deps.sh --vm failed)"
	fi
	rm -f "$log"
	command -v qemu-system-x86_64 >/dev/null || skip_all "qemu-system-x86_64 is not on PATH after install"
	[ -x /bin/busybox ] || skip_all "no /bin/busybox after installing busybox-static"
}

# The set-up of a test that runs latop in the guest and reports on the host:
# vm_require, $top, the host's latop in $L, and the guest's static binaries
# built by make TARGET... as one test point (bail out when the build fails).
vm_latop_setup() {
	local log rc what="static binaries"
	vm_require
	top=$VM_TOP
	L=${LATOP_BIN:-$top/.output/san/latop}
	[ -x "$L" ] || L=$top/latop
	[ -x "$L" ] || skip_all "no host latop (make latop tests-build)"
	trap 'exit 143' TERM INT
	[ "$*" = latop-static ] && what="a static latop"
	log=$(mktemp)
	make -C "$top" --no-print-directory "$@" >"$log" 2>&1
	rc=$?
	ok $rc "make $* builds $what for the guest"
	[ $rc -eq 0 ] || { sed 's/^/# /' "$log" | tail -n 20; rm -f "$log"; done_testing; exit 1; }
	rm -f "$log"
}

# Print the kernel version linux-image-amd64 depends on (6.1.0-N-amd64).
vm_default_kver() {
	dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
		sed -n 's/.*linux-image-\([0-9][^ ,]*\).*/\1/p'
}

# Pick the guest kernel and make the work directory .output/vm/NAME.XXXX.
vm_init() {
	local name=${1:-vm}
	[ -n "$VM_KVER" ] || VM_KVER=$(vm_default_kver)
	[ -n "$VM_KVER" ] || skip_all "cannot tell which kernel linux-image-amd64 installed"
	VM_KERNEL=/boot/vmlinuz-$VM_KVER
	[ -r "$VM_KERNEL" ] || skip_all "no guest kernel at $VM_KERNEL"
	[ -d "/lib/modules/$VM_KVER" ] || skip_all "no modules at /lib/modules/$VM_KVER"
	mkdir -p "$VM_TOP/.output/vm"
	VM_DIR=$(mktemp -d "$VM_TOP/.output/vm/$name.XXXXXX") || return 1
	VM_SHARE=$VM_DIR/share
	mkdir -p "$VM_SHARE" "$VM_DIR/root"/{bin,sbin,dev,proc,sys,tmp,share,etc,root}
	mkdir -p "$VM_DIR/root/lib/modules/$VM_KVER"
	cp /bin/busybox "$VM_DIR/root/bin/busybox"
	: >"$VM_DIR/root/etc/vm-modules"
	trap vm_cleanup EXIT
	vm_modules 9p 9pnet_virtio virtio_pci
}

# Copy one module file into the initramfs, uncompressed; print its guest path.
vm_copy_module() {
	local src=$1 dst=$VM_DIR/root${1%.xz}
	dst=${dst%.zst}
	dst=${dst%.gz}
	mkdir -p "$(dirname "$dst")"
	case $src in
	*.xz) xz -dc "$src" >"$dst" ;;
	*.zst) zstd -qdc "$src" >"$dst" ;;
	*.gz) gzip -dc "$src" >"$dst" ;;
	*) cp "$src" "$dst" ;;
	esac || return 1
	echo "${dst#"$VM_DIR/root"}"
}

# Add modules and their dependency closure; list them for loading at boot.
vm_modules() {
	local load=1 m line path guest
	[ "${1:-}" = --noload ] && { load=0; shift; }
	for m in "$@"; do
		if ! line=$(modprobe -S "$VM_KVER" --show-depends "$m" 2>&1); then
			echo "# vm: module $m: $line"
			return 1
		fi
		while read -r kind path _; do
			[ "$kind" = insmod ] || continue
			guest=$(vm_copy_module "$path") || return 1
			[ $load = 1 ] || continue
			grep -qxF "$guest" "$VM_DIR/root/etc/vm-modules" ||
				echo "$guest" >>"$VM_DIR/root/etc/vm-modules"
		done <<<"$line"
	done
}

# Copy a host file into the initramfs at DEST (a guest path).
vm_file() {
	mkdir -p "$VM_DIR/root$(dirname "$2")"
	cp "$1" "$VM_DIR/root$2"
}

# Write the guest's /init: mounts, modules, 9p share, the script, power off.
vm_write_init() {
	cat >"$VM_DIR/root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t bpf bpf /sys/fs/bpf
exec </dev/null >/dev/console 2>&1
ip link set lo up
while read -r m; do insmod "$m" || echo "vm: insmod $m failed"; done </etc/vm-modules
if mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 host0 /share; then
	echo "vm: $(uname -r) up, running the guest script"
	cd /share && sh /guest.sh >/share/guest.out 2>&1
	echo $? >/share/guest.rc
	cd /
	sync
	umount /share
else
	echo "vm: cannot mount the 9p share"
fi
echo "vm: powering off"
poweroff -f
EOF
	chmod 755 "$VM_DIR/root/init"
}

# Pack the initramfs (uncompressed newc cpio: the fastest to unpack under TCG).
vm_pack() {
	local base=/lib/modules/$VM_KVER f
	for f in modules.order modules.builtin modules.builtin.modinfo; do
		[ -e "$base/$f" ] && cp "$base/$f" "$VM_DIR/root$base/"
	done
	depmod -b "$VM_DIR/root" "$VM_KVER" 2>/dev/null
	vm_write_init
	(cd "$VM_DIR/root" && find . | cpio -o -H newc --quiet) >"$VM_DIR/initramfs.cpio"
}

# The functions every guest script has (busybox sh), put before it.
vm_guest_lib() {
	cat <<'EOF'
vm_wait_file() {
	local i=0
	while [ ! -e "$1" ] && [ $i -lt 600 ] && kill -0 "$2" 2>/dev/null; do
		sleep 0.1; i=$((i + 1))
	done
	[ -e "$1" ]
}
vm_nvme_target() {
	local S=/sys/kernel/config/nvmet/subsystems/$1 P=/sys/kernel/config/nvmet/ports/1
	mkdir $S && echo 1 >$S/attr_allow_any_host && mkdir $S/namespaces/1 &&
		echo /dev/nullb0 >$S/namespaces/1/device_path && echo 1 >$S/namespaces/1/enable || return 1
	mkdir $P && echo ipv4 >$P/addr_adrfam && echo tcp >$P/addr_trtype &&
		echo 127.0.0.1 >$P/addr_traddr && echo 4420 >$P/addr_trsvcid &&
		ln -s $S $P/subsystems/$1
}
vm_nvme_connect() {
	local i=0
	exec 3<>/dev/nvme-fabrics
	echo "transport=tcp,traddr=127.0.0.1,trsvcid=4420,nqn=$1,nr_io_queues=2${2:-}" >&3
	head -n1 <&3
	exec 3<&-
	while [ ! -b /dev/nvme0n1 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ -b /dev/nvme0n1 ]
}
EOF
}

# Boot the guest on SCRIPT; wait at most SECONDS; return the script's status.
vm_run() {
	local script=$1 secs=${2:-240} rc
	{ vm_guest_lib; cat "$script"; } >"$VM_DIR/root/guest.sh"
	rm -f "$VM_SHARE/guest.rc" "$VM_SHARE/guest.out"
	vm_pack || { echo "# vm: packing the initramfs failed"; return 1; }
	timeout --kill-after=5 "$secs" qemu-system-x86_64 \
		-accel "tcg,thread=${VM_TCG_THREAD:-single}" -cpu max -smp "${VM_SMP:-2}" -m "${VM_MEM:-1024}" \
		-nographic -no-reboot -nic none \
		-kernel "$VM_KERNEL" -initrd "$VM_DIR/initramfs.cpio" \
		-append "console=ttyS0 panic=-1 quiet ${VM_APPEND:-}" \
		-virtfs "local,path=$VM_SHARE,mount_tag=host0,security_model=none" \
		</dev/null >"$VM_DIR/console.log" 2>&1 &
	VM_QEMU_PID=$!
	wait "$VM_QEMU_PID"
	rc=$?
	VM_QEMU_PID=
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "# vm: qemu timed out after ${secs}s; console tail:"
		tail -n 20 "$VM_DIR/console.log" | sed 's/^/#   /'
		return 124
	fi
	if [ ! -s "$VM_SHARE/guest.rc" ]; then
		echo "# vm: the guest script did not finish (qemu status $rc); console tail:"
		tail -n 20 "$VM_DIR/console.log" | sed 's/^/#   /'
		return 1
	fi
	return "$(cat "$VM_SHARE/guest.rc")"
}

# vm_run as a test point, with the guest's output on failure; S is the share.
vm_ok_run() {
	local t0 rc
	t0=$(date +%s)
	vm_run "$1" "$2"
	rc=$?
	ok $rc "the guest booted $VM_KVER, ${3:-ran the script} and powered off ($(( $(date +%s) - t0 ))s)"
	S=$VM_SHARE
	[ $rc -eq 0 ] || sed 's/^/# guest: /' "$S/guest.out" 2>/dev/null | tail -n 20
	return $rc
}

# Test that the guest ran a 6.1 kernel (its script wrote uname -r to uname).
vm_ok_kver() {
	local kver r
	kver=$(cat "$VM_SHARE/uname" 2>/dev/null)
	case $kver in 6.1.*) r=0 ;; *) r=1 ;; esac
	ok $r "the guest kernel is 6.1 ($kver), not the host's $(uname -r)"
}

# Stop a qemu still running and remove the work directory (VM_KEEP=1 keeps it).
vm_cleanup() {
	if [ -n "$VM_QEMU_PID" ]; then
		kill "$VM_QEMU_PID" 2>/dev/null
		wait "$VM_QEMU_PID" 2>/dev/null
		VM_QEMU_PID=
	fi
	if [ -n "$VM_DIR" ] && [ "${VM_KEEP:-0}" != 1 ]; then
		rm -rf "$VM_DIR"
	elif [ -n "$VM_DIR" ]; then
		echo "# vm: kept $VM_DIR"
	fi
}
