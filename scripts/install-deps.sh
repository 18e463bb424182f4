#!/bin/sh
# Install the Debian packages latop needs to build and run; with --test also
# what its tests use; with --vm what tests/vm/ needs to boot a second kernel
# (Debian's) under qemu; with --bench the peer tools bench/ compares against.
# Idempotent: packages already present are skipped quickly.
set -eu
PKGS="make gcc clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev libzstd-dev \
libncurses-dev libreadline-dev libdw-dev pkg-config tmux libmicrohttpd-dev"
for arg in "$@"; do
	case $arg in
	--test) PKGS="$PKGS python3 iproute2 fio curl prometheus" ;;
	--vm) PKGS="$PKGS qemu-system-x86 linux-image-amd64 busybox-static cpio kmod libbz2-dev liblzma-dev" ;;
	--bench) PKGS="$PKGS linux-perf libpcap-dev fio bpftrace bpfcc-tools" ;;
	*) echo "install-deps.sh: unknown option '$arg' (--test, --vm, --bench)" >&2; exit 2 ;;
	esac
done
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
else
	SUDO=
fi
echo "latop: installing Debian packages:$missing" >&2
log=$(mktemp)
if ! { $SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq &&
       DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=300 \
		install -y -qq --no-install-recommends $missing; } >"$log" 2>&1; then
	tail -n 30 "$log" >&2
	rm -f "$log"
	echo "latop: installing Debian packages failed (see above)" >&2
	exit 1
fi
rm -f "$log"
