#!/bin/bash
# tests/live/locks.sh again, with tracefs mounted, so the locks probe hooks
# the futex syscalls' own tracepoints (tp/syscalls/sys_enter_futex and
# sys_exit_futex) instead of finding futex sleeps at sched_switch.  Skipped
# where tracefs is mounted already: locks.sh then runs on those tracepoints.
. "$(dirname "$0")/../lib.sh"
need_root
[ -e /sys/kernel/tracing/events/syscalls ] &&
	skip_all "tracefs is mounted: tests/live/locks.sh runs on the futex tracepoints already"
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
	skip_all "cannot mount tracefs on /sys/kernel/tracing"
trap 'umount /sys/kernel/tracing' EXIT
LOCKS_FUTEX_HOOK="tp/syscalls/sys_enter_futex+sys_exit_futex" bash "$(dirname "$0")/locks.sh"
