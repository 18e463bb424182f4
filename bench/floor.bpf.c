// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The floor: empty programs on exactly the hooks probes/syscalls/syscalls.bpf.c
 * attaches, with the same program types.  What a tracer costs on top of this
 * is its own work; this much is the price of the hooks being enabled at all.
 * Keep the list in step with the SEC() lines of probes/syscalls/syscalls.bpf.c.
 */
#include "floor.bpf.h"

/* Syscall entry and exit. */
EMPTY("tp_btf/sys_enter", sys_enter)
EMPTY("tp_btf/sys_exit", sys_exit)

/* Where the time of a call goes. */
EMPTY("tp_btf/sched_switch", sched_switch)
EMPTY("tp_btf/softirq_entry", softirq_entry)
EMPTY("tp_btf/softirq_exit", softirq_exit)
EMPTY("tp_btf/contention_begin", lock_begin)
EMPTY("tp_btf/contention_end", lock_end)
EMPTY("tp_btf/mmap_lock_start_locking", mmap_lock_begin)
EMPTY("tp_btf/mmap_lock_acquire_returned", mmap_lock_end)
EMPTY("tp_btf/mm_vmscan_direct_reclaim_begin", reclaim_begin)
EMPTY("tp_btf/mm_vmscan_direct_reclaim_end", reclaim_end)
EMPTY("tp_btf/net_dev_start_xmit", xmit_begin)
EMPTY("tp_btf/net_dev_xmit", xmit_end)
EMPTY("tp_btf/page_fault_kernel", fault_kernel)

/* Optional, where fentry/fexit load (refused on some hosts). */
EMPTY("fentry/sock_recvmsg", sock_recv_begin)
EMPTY("fexit/sock_recvmsg", sock_recv_end)
EMPTY("fentry/security_socket_sendmsg", sock_send_begin)
EMPTY("fentry/handle_mm_fault", mm_fault_begin)
EMPTY("fexit/handle_mm_fault", mm_fault_end)
