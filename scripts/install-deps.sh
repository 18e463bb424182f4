#!/bin/sh
# Install the Debian packages latop needs to build, run and test.
# Idempotent: packages already present are skipped quickly.
set -eu
PKGS="make gcc clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev libzstd-dev \
libncurses-dev libreadline-dev pkg-config tmux"
[ "${1:-}" = "--test" ] && PKGS="$PKGS python3 linux-perf strace"
# --vm: what tests/vm/ needs to boot a second kernel (Debian's) under qemu.
[ "${1:-}" = "--vm" ] && PKGS="$PKGS qemu-system-x86 linux-image-amd64 busybox-static cpio kmod"
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
$SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends $missing >&2
