// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The paths probe: every send and receive a thread makes on a TCP socket,
 * one compact record each on a ring buffer (user space drains it every
 * tick, and between ticks when woken at a quarter full).  Nothing is kept
 * per thread in the kernel: merging calls into messages and messages into
 * requests needs the order of events across threads (a request received by
 * one thread may be answered by another), which user space has from the
 * ring buffer.
 *
 * Hooks: the sock:sock_send_length / sock:sock_recv_length tracepoints
 * (6.3+), which fire in process context as sendmsg/recvmsg (and write/read
 * on a socket) return; on older kernels fentry on security_socket_sendmsg
 * and fexit on sock_recvmsg.
 *
 * A socket counts as the server end when it was accepted: an accepted socket
 * is a copy of its listener and keeps the listener's sk_max_ack_backlog (the
 * listen() backlog), which a connected socket never sets.  (SOCK_BINDPORT_LOCK
 * would not do: accept clears it on the copy.)  A listener made with
 * listen(fd, 0) gives accepted sockets a backlog of 0: they pass for clients.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "paths.h"
#include "../filter.bpf.h"

#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6
#define MSG_PEEK 2

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 self_tgid = 0;
/* Bytes of records that wake user space to drain the ring before the tick:
 * a quarter of the ring, set at load. */
const volatile __u64 wake_bytes = PATH_RINGBUF_BYTES / 4;
/* Set by the record that wakes user space, cleared by user space once it
 * has drained: one wakeup per quarter, not one per record after it. */
__u64 wake_pending;

#define PROBE_HEALTH_N PH_N
#include "../probe.bpf.h"

__u32 filter_need_comm[2] = {};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, PATH_RINGBUF_BYTES);
} records SEC(".maps");

/* Copy the socket's addresses into r (IPv4 as v4-mapped). */
static __always_inline void read_addrs(struct sock *sk, __u16 family, struct path_rec *r)
{
	if (family == AF_INET) {
		__u32 l = sk->__sk_common.skc_rcv_saddr, d = sk->__sk_common.skc_daddr;

		__builtin_memset(r->laddr, 0, 16);
		__builtin_memset(r->raddr, 0, 16);
		r->laddr[10] = r->laddr[11] = 0xff;
		r->raddr[10] = r->raddr[11] = 0xff;
		__builtin_memcpy(&r->laddr[12], &l, 4);
		__builtin_memcpy(&r->raddr[12], &d, 4);
		r->family = 4;
	} else {
		struct in6_addr a;

		a = sk->__sk_common.skc_v6_rcv_saddr;
		__builtin_memcpy(r->laddr, &a, 16);
		a = sk->__sk_common.skc_v6_daddr;
		__builtin_memcpy(r->raddr, &a, 16);
		r->family = 6;
	}
}

/* Return the flag to submit a record with: wake user space when the ring
 * holds wake_bytes and no wakeup is owed yet. */
static __always_inline __u64 ring_wake(void)
{
	if (wake_pending || bpf_ringbuf_query(&records, BPF_RB_AVAIL_DATA) < wake_bytes ||
	    __sync_val_compare_and_swap(&wake_pending, 0, 1) != 0)
		return BPF_RB_NO_WAKEUP;
	return BPF_RB_FORCE_WAKEUP;
}

/*
 * Record one send or receive of ret bytes on sk by the current thread.
 * before: called as the send starts (its first byte is at write_seq), not
 * as it returns (its last byte is just before write_seq).
 */
static __always_inline int on_io(struct sock *sk, int ret, int flags, __u8 dir, bool before)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tgid = task->tgid, idx = filter_idx & 1;
	const struct filter_prog *f = &filters[idx];
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	const __u64 *comm = (const __u64 *)task->comm;
	struct path_rec *r;
	__u16 family;
	__u32 seq;

	/* sk is a typed kernel pointer (tp_btf, fentry): its fields load
	 * directly, with no helper call. */
	if (ret <= 0 || !sk || tgid == self_tgid || (dir == PD_RECV && (flags & MSG_PEEK)))
		return 0;
	if (sk->sk_protocol != IPPROTO_TCP)
		return 0;
	family = sk->__sk_common.skc_family;
	if (family != AF_INET && family != AF_INET6)
		return 0;
	if (f->n) {
		struct filter_input in = {};
		__u64 c[2] = {comm[0], comm[1]};

		in.pid = tgid;
		in.tid = task->pid;
		if (filter_need_comm[idx])
			in.comm = (const char *)c;
		if (!filter_match(f, &in)) {
			health_inc(PH_DROPPED);
			return 0;
		}
	}
	r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);
	if (!r) {
		health_inc(PH_LOST);
		return 0;
	}
	r->ts_ns = bpf_ktime_get_ns();
	r->sk = (__u64)sk;
	r->tgid = tgid;
	r->tid = task->pid;
	r->bytes = ret;
	/* The tcp_sock's fields lie past struct sock, where the verifier
	 * lets no direct load reach. */
	seq = dir == PD_SEND ? BPF_CORE_READ(tp, write_seq) : BPF_CORE_READ(tp, copied_seq);
	r->seq = before ? seq : seq - (__u32)ret;
	r->lport = sk->__sk_common.skc_num;
	r->rport = __builtin_bswap16(sk->__sk_common.skc_dport);
	r->dir = dir;
	r->server = sk->sk_max_ack_backlog != 0;
	r->pad = 0;

	read_addrs(sk, family, r);
	/* The kernel pads a name with zeros: two loads read it whole. */
	((__u64 *)r->comm)[0] = comm[0];
	((__u64 *)r->comm)[1] = comm[1];
	r->cgroup = task_cgroup_id(task);
	bpf_ringbuf_submit(r, ring_wake());
	return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(tp_send, struct sock *sk, int ret, int flags)
{
	return on_io(sk, ret, flags, PD_SEND, false);
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(tp_recv, struct sock *sk, int ret, int flags)
{
	return on_io(sk, ret, flags, PD_RECV, false);
}

/*
 * Kernels before 6.3 have no sock_*_length tracepoints.  Every user send
 * passes security_socket_sendmsg (sock_sendmsg does not since 6.6, when
 * the syscalls moved to __sock_sendmsg): the record is taken as the send
 * starts, with the size asked for.  Every user receive returns through
 * sock_recvmsg.
 */
SEC("fentry/security_socket_sendmsg")
int BPF_PROG(fentry_send, struct socket *sock, struct msghdr *msg, int size)
{
	return on_io(sock->sk, size, 0, PD_SEND, true);
}

SEC("fexit/sock_recvmsg")
int BPF_PROG(fexit_recv, struct socket *sock, struct msghdr *msg, int flags, int ret)
{
	return on_io(sock->sk, ret, flags, PD_RECV, false);
}
