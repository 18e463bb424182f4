// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The flows probe: per TCP flow, the time from a request entering the host
 * to the response leaving it (Torp's host latency), matched per flow by
 * sequence and ack numbers (probes/flows/flowq.h), every request counted in the
 * flow's log-linear histogram.
 *
 * A flow is keyed by the socket that serves it, seen from that socket:
 * (local address, local port, remote address, remote port, netns).  The
 * flows map holds only passively opened (accepted) connections:
 * inet_sock_set_state adds one when SYN_RECV becomes ESTABLISHED, user
 * space adds the ones open before latop started (from /proc/net/tcp*).  So
 * on loopback, where each packet passes the egress hook as it leaves the
 * client and the ingress hook as it reaches the server, only the server's
 * view is counted: inbound data to an accepted socket is a request,
 * outbound data from it a response.  The client's socket is never in the
 * map, its packets miss the lookup.
 *
 * Ingress: tp_btf/netif_receive_skb, where skb->data is the network header
 * (or fentry on tcp_v4_rcv/tcp_v6_rcv, where skb->network_header is set:
 * every TCP segment passes there, whether the driver delivered it alone or
 * in a GRO list).  Egress: tp_btf/net_dev_queue (or fentry on
 * __dev_queue_xmit), where skb->network_header is set.
 * Each of these hooks has a twin (*_d) that reads the headers in place
 * rather than copying them; user space loads the twins where the kernel
 * allows it (bpf_rdonly_cast, 6.2+).
 * The owner (pid, comm, cgroup) comes from sock_recv_length: the process
 * that reads the requests, and the name and cgroup of its thread that read
 * last.  The filter runs where packets pass, in whatever task or softirq
 * that is, so the cgroup is not tested there (filter.bpf.h).
 *
 * A connection accepted when the flows map is full (latoprc flow_max) is
 * still followed: its matching state is kept on its socket (the spill
 * socket storage, which grows with the sockets), its requests are taken
 * where TCP has found the socket (fentry on tcp_filter, or tp_btf/tcp_probe)
 * with the time the ingress hook gave them, and its responses at the egress
 * hook above through the socket the segment carries; they are counted in
 * the overflow row (flow "(other)"), so every total stays exact.  User space
 * attaches that hook only while the flows map is at least half full.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "flows.h"
#include "../filter.bpf.h"
#include "../bits.bpf.h"

#define AF_INET 2
#define AF_INET6 10
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define IPPROTO_TCP 6
#define TCP_ESTABLISHED 1
#define TCP_SYN_SENT 2
#define TCP_SYN_RECV 3
#define TCP_CLOSE 7
#define TCP_CLOSE_WAIT 8
#define TCP_LISTEN 10

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u64 timeout_ns = FLOW_DEFAULT_TIMEOUT_NS;
const volatile __u32 nr_cpus = 1;	/* possible CPUs: the early slots set_state scans */
volatile __u64 flows_born = 0;		/* flows set_state made: ingress rechecks on a change */
const volatile bool spill_on = false;	/* the spill hook is attached: follow connections
					 * beyond the flows map on their sockets */
volatile __s64 spilled_n = 0;		/* connections followed in spill now */
volatile __u32 spill_live = 0;		/* user space: the spill hook is attached now */
volatile __u64 spill_wake_pending = 0;	/* a wake is on its way to user space */

/*
 * Where a connection finds the flows map full before the spill hook is
 * attached (the map went from under half full to full within a tick), a
 * record here wakes user space to attach it at once, not at the next tick:
 * until then the spilled connections' requests pass unseen.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} spill_wake SEC(".maps");
/*
 * Local ports a socket has listened on, in any network namespace, since
 * latop started (user space marks the ones listening before): a segment
 * whose local end is on no such port belongs to no accepted connection, so
 * the hooks pass it without a lookup (on loopback, half of them: the
 * connecting end's).  A mark is never cleared: a server may close its
 * listener and go on serving what it accepted.
 */
__u8 served[65536] = {};

/*
 * Return port's mark in served (set it first when mark).  The bound is
 * tested on the register that indexes: an older verifier (6.1) loses the
 * bound a mask gives when the compiler keeps the masked value elsewhere.
 */
static __always_inline bool port_served(__u32 port, bool mark)
{
	barrier_var(port);
	if (port >= sizeof(served))
		return false;
	if (mark && !served[port])
		served[port] = 1;	/* written once: CPUs share the line */
	return served[port];
}

#define PROBE_HEALTH_N FH_N
#define PROBE_HEALTH_BUDGET FH_BUDGET
#define PROBE_MAX_EVENTS FLOW_DEFAULT_MAX_EVENTS
#include "../probe.bpf.h"

volatile __u64 next_id = 0;

/*
 * A new flow's first value, made here whole (zero but for born_ns and sk)
 * so that the flow is never seen in the map without its socket: too big
 * for the stack, it is one per CPU, and only those two fields are written.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fl_stats);
} newborn SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FLOW_DEFAULT_KEYS);	/* set at load: latoprc flow_max */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fl_key);
	__type(value, struct fl_stats);
} flows SEC(".maps");

/*
 * A grouped query's totals (the key mask FLOW_AGG, flows.h): one entry per
 * group and CPU, each CPU adding to its own.  The connections stay in
 * flows, for their matching state.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FLOW_DEFAULT_KEYS);	/* set at load: latoprc flow_max */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fl_akey);
	__type(value, struct fl_stats);
} agg SEC(".maps");

/*
 * Connections that ended, moved here at their close (or when their 4-tuple
 * came back before the close was seen): kept whole under their key and
 * birth until user space reads their last totals and removes them.  User
 * space never removes a flows entry it did not see closed and still there,
 * so a 4-tuple that comes back at once (a client that reuses its port, the
 * server having closed first) finds its new connection's entry whole.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FLOW_DEFAULT_KEYS);	/* set at load: latoprc flow_max */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fl_dkey);
	__type(value, struct fl_stats);
} departed SEC(".maps");

/* Connections' totals at changes of their reader (flows.h, struct fl_rkey). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FLOW_RENAMED_KEYS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fl_rkey);
	__type(value, struct fl_stats);
} renamed SEC(".maps");

/* The query's key mask (flows_key_mask), one per filter slot, switched with
 * the filter. */
__u32 filter_keymask[2] = {};

/* A group's first value. */
static const struct fl_stats zero_stats;

/* Who read a socket last: its process, the reading thread's name and cgroup. */
struct reader_id {
	__u32 tgid;
	__u32 flags;			/* READER_CONNECTING */
	__u64 comm[FLOW_COMM_LEN / 8];	/* as the kernel keeps it, NUL-padded */
	__u64 cgroup;			/* cgroup v2 id */
};

/*
 * The socket opened a connection (connect()) from a served port, found at
 * its establishment: it is never a flow, and recv_len passes it at once.
 */
#define READER_CONNECTING 1

/*
 * The reader last seen on each socket, kept on the socket: recv() by the
 * same process under the same name in the same cgroup again, on a flow or
 * not, needs no lookup; a reader renamed (exec, prctl, pthread_setname_np)
 * or moved to another cgroup is learnt anew.  A socket with no entry has
 * never been read (recv_len adopts it when no flow has it).
 */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct reader_id);
} reader SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, FLOW_RINGBUF_BYTES);
} events SEC(".maps");

/* A connection the flows map had no room for: its matching state, and the
 * bytes it received not yet in its row (fl_stats.bytes_unmoved). */
struct fl_spill {
	struct flowq q;
	__u64 bytes_unmoved;
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct fl_spill);
} spill SEC(".maps");

/*
 * The overflow row: the totals of every spilled connection, one copy a CPU
 * (its requests are answered on any CPU), summed by user space.  Only the
 * counters and the histogram are used.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fl_stats);
} overflow SEC(".maps");

/* What one TCP segment says, parsed from its headers. */
struct seg {
	struct fl_key key;	/* as the receiver (ingress) or sender (egress) sees it */
	__u32 seq, ack, len;
	__u8 syn, fin, psh, rst;
};

/*
 * The last data segment this CPU received for no known flow.  When it is
 * the connection's first request -- it completed the handshake itself (the
 * client's ACK was overtaken, or carried data), or it arrived on another CPU
 * while that CPU was completing the handshake -- set_state finds it here and
 * queues it.  live says the slot holds a segment nobody has queued yet;
 * whoever turns it from 1 to 0 queues it, so it is queued once.
 */
struct early_seg {
	struct seg s;
	__u64 t_ns;
	__u64 live;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct early_seg);
} early SEC(".maps");

/* Return true when a and b name the same flow. */
static __always_inline bool key_eq(const struct fl_key *a, const struct fl_key *b)
{
	return a->laddr[0] == b->laddr[0] && a->laddr[1] == b->laddr[1] &&
	       a->raddr[0] == b->raddr[0] && a->raddr[1] == b->raddr[1] &&
	       a->lport == b->lport && a->rport == b->rport && a->netns == b->netns;
}

/* Store an IPv4 address (network order) in the filter.h form. */
static __always_inline void addr4(__u64 out[2], __u32 be)
{
	out[0] = 0;
	out[1] = 0x0000ffff00000000ULL | bpf_ntohl(be);
}

/* Store 16 bytes of an IPv6 address in the filter.h form. */
static __always_inline void addr6(__u64 out[2], const __u8 *a)
{
	__u64 hi, lo;

	__builtin_memcpy(&hi, a, 8);
	__builtin_memcpy(&lo, a + 8, 8);
	out[0] = bpf_be64_to_cpu(hi);
	out[1] = bpf_be64_to_cpu(lo);
}

/* The same from an address read in place, as two 8-byte words. */
static __always_inline void addr6_words(__u64 out[2], const __u64 *a)
{
	out[0] = bpf_be64_to_cpu(a[0]);
	out[1] = bpf_be64_to_cpu(a[1]);
}

/*
 * Since 6.2 the kernel lends any address as a typed read-only pointer
 * whose loads are inline and fault-safe (a faulting load reads 0): the
 * headers are then read in place, not copied by bpf_probe_read_kernel,
 * about 60 ns less a segment here.  Older kernels do not have it: the
 * programs that read in place (the *_d twins below) are then not loaded,
 * and this stays unresolved.
 */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/* The fields parse reads of an IPv4 and an IPv6 header, and a TCP header's. */
struct l3 {
	__u8 tcp, v4;		/* TCP, and IPv4 (else IPv6) */
	__u32 hdr, len;		/* header length, total length (IPv6: 0 for jumbo) */
	__u64 src[2], dst[2];	/* addresses in the filter.h form */
};

struct l4 {
	__u32 seq, ack;
	__u16 sport, dport;
	__u8 doff, flags;	/* header length in bytes; FIN, SYN, RST, PSH... */
};

/* Read the IPv4 (v4) or IPv6 header at nh and the fixed TCP header after
 * it into *l and *t, in place.  Return false when not TCP. */
static __always_inline bool read_in_place(unsigned char *nh, bool v4, struct l3 *l, struct l4 *t)
{
	const struct tcphdr *th;

	if (v4) {
		const struct iphdr *ip = bpf_rdonly_cast(nh, bpf_core_type_id_kernel(struct iphdr));
		__u8 vi = *(const __u8 *)ip;	/* version and ihl, bitfields */

		if (ip->protocol != IPPROTO_TCP || vi >> 4 != 4)
			return false;
		l->hdr = (vi & 15) * 4;
		l->len = bpf_ntohs(ip->tot_len);
		addr4(l->src, ip->saddr);
		addr4(l->dst, ip->daddr);
	} else {
		const struct ipv6hdr *ip = bpf_rdonly_cast(nh, bpf_core_type_id_kernel(struct ipv6hdr));

		if (ip->nexthdr != IPPROTO_TCP)
			return false;
		l->hdr = sizeof(struct ipv6hdr);
		l->len = bpf_ntohs(ip->payload_len);
		l->len = l->len ? l->len + sizeof(struct ipv6hdr) : 0;
		addr6_words(l->src, (const __u64 *)&ip->saddr);
		addr6_words(l->dst, (const __u64 *)&ip->daddr);
	}
	th = bpf_rdonly_cast(nh + l->hdr, bpf_core_type_id_kernel(struct tcphdr));
	t->seq = th->seq;
	t->ack = th->ack_seq;
	t->sport = th->source;
	t->dport = th->dest;
	t->doff = (((const __u8 *)th)[12] >> 4) * 4;
	t->flags = ((const __u8 *)th)[13];
	return true;
}

/* The same, copied with bpf_probe_read_kernel (every kernel). */
static __always_inline bool read_copied(unsigned char *nh, bool v4, struct l3 *l, struct l4 *t)
{
	struct tcphdr th;
	/* One read for the common cases: IPv4 without options or IPv6, and
	 * the fixed TCP header after it. */
	union {
		struct { struct iphdr ip; struct tcphdr th; } v4;
		struct { struct ipv6hdr ip; struct tcphdr th; } v6;
	} h;

	if (bpf_probe_read_kernel(&h, sizeof(h), nh))
		return false;
	if (v4) {
		if (h.v4.ip.protocol != IPPROTO_TCP || h.v4.ip.version != 4)
			return false;
		l->hdr = h.v4.ip.ihl * 4;
		l->len = bpf_ntohs(h.v4.ip.tot_len);
		addr4(l->src, h.v4.ip.saddr);
		addr4(l->dst, h.v4.ip.daddr);
		if (l->hdr == sizeof(struct iphdr))
			th = h.v4.th;
		else if (bpf_probe_read_kernel(&th, sizeof(th), nh + l->hdr))
			return false;
	} else {
		if (h.v6.ip.nexthdr != IPPROTO_TCP)
			return false;
		l->hdr = sizeof(struct ipv6hdr);
		l->len = bpf_ntohs(h.v6.ip.payload_len);
		l->len = l->len ? l->len + sizeof(struct ipv6hdr) : 0;
		addr6(l->src, (const __u8 *)&h.v6.ip.saddr);
		addr6(l->dst, (const __u8 *)&h.v6.ip.daddr);
		th = h.v6.th;
	}
	t->seq = th.seq;
	t->ack = th.ack_seq;
	t->sport = th.source;
	t->dport = th.dest;
	t->doff = th.doff * 4;
	t->flags = ((__u8 *)&th)[13];
	return true;
}

/*
 * Parse the IPv4/IPv6 + TCP headers of skb: the network header is at
 * skb->data when at_data, else at skb->network_header; read in place when
 * in_place (a *_d program), else copied.  The key is oriented as the
 * receiver sees it when ingress, else as the sender.  Return false for
 * anything but TCP.
 */
static __always_inline bool parse(struct sk_buff *skb, bool ingress, bool at_data, bool in_place,
				  struct seg *s)
{
	/* skb is a BTF pointer (tp_btf, fentry): its fields load directly. */
	unsigned char *head = skb->head;
	__u16 proto = bpf_ntohs(skb->protocol);
	__u32 skb_len = skb->len;
	__u32 data_off = skb->data - head;
	__u32 nh = at_data ? data_off : skb->network_header;
	__u32 l3len;
	struct l3 l;
	struct l4 t;
	bool v4;

	if (proto == ETH_P_IP)
		v4 = true;
	else if (proto == ETH_P_IPV6)
		v4 = false;
	else
		return false;
	if (!(in_place ? read_in_place(head + nh, v4, &l, &t) : read_copied(head + nh, v4, &l, &t)))
		return false;
	/* Bytes from the network header to the end of the skb. */
	l3len = skb_len - (nh - data_off);
	/* Ingress frames may carry link padding past the IP length (trimmed
	 * later by ip_rcv); GSO packets may exceed what the IP header says. */
	if (ingress && l.len && l.len < l3len)
		l3len = l.len;
	s->fin = t.flags & 0x01;
	s->syn = t.flags & 0x02;
	s->rst = t.flags & 0x04;
	s->psh = t.flags & 0x08;
	s->seq = bpf_ntohl(t.seq);
	s->ack = bpf_ntohl(t.ack);
	if (l3len < l.hdr + t.doff)
		return false;
	s->len = l3len - l.hdr - t.doff;
	if (ingress) {
		__builtin_memcpy(s->key.laddr, l.dst, 16);
		__builtin_memcpy(s->key.raddr, l.src, 16);
		s->key.lport = bpf_ntohs(t.dport);
		s->key.rport = bpf_ntohs(t.sport);
	} else {
		__builtin_memcpy(s->key.laddr, l.src, 16);
		__builtin_memcpy(s->key.raddr, l.dst, 16);
		s->key.lport = bpf_ntohs(t.sport);
		s->key.rport = bpf_ntohs(t.dport);
	}
	s->key.netns = skb->dev->nd_net.net->ns.inum;
	s->key.pad = 0;
	return true;
}

/* Build the key of socket sk as it sees itself; false if not TCP. */
static __always_inline bool sock_key(const struct sock *sk, struct fl_key *k)
{
	__u16 family = sk->__sk_common.skc_family;

	if (sk->sk_protocol != IPPROTO_TCP)
		return false;
	if (family == AF_INET) {
		addr4(k->laddr, sk->__sk_common.skc_rcv_saddr);
		addr4(k->raddr, sk->__sk_common.skc_daddr);
	} else if (family == AF_INET6) {
		struct in6_addr a;

		a = sk->__sk_common.skc_v6_rcv_saddr;
		addr6(k->laddr, (const __u8 *)&a);
		a = sk->__sk_common.skc_v6_daddr;
		addr6(k->raddr, (const __u8 *)&a);
	} else {
		return false;
	}
	k->lport = sk->__sk_common.skc_num;
	/* By the time a connection's close is traced TCP has given its port
	 * back (inet_put_port zeroes the number before the state is stored,
	 * which is when the tracepoint fires); its source port stays.  It
	 * lies past struct sock, where no direct load reaches. */
	if (!k->lport)
		k->lport = bpf_ntohs(BPF_CORE_READ((const struct inet_sock *)sk, inet_sport));
	k->rport = bpf_ntohs(sk->__sk_common.skc_dport);
	k->netns = sk->__sk_common.skc_net.net->ns.inum;
	k->pad = 0;
	return true;
}

/* Who serves a flow: the process that reads its requests, as last seen. */
struct who {
	__u32 pid;
	const char *comm;	/* FLOW_COMM_LEN bytes, NUL-padded */
	__u64 cgroup;
};

/* The server of tracked flow st. */
static __always_inline struct who who_of(const struct fl_stats *st)
{
	struct who w = {st->pid, st->comm, st->cgroup};

	return w;
}

/* What the filter reads of one request, by value (for filter_keep). */
struct keep_in {
	__u64 laddr[2];
	__u64 raddr[2];
	__u64 lat;
	__u32 pid, lport, rport, pad;
	__u64 comm[FLOW_COMM_LEN / 8];
};

/*
 * Return 1 when the installed filter keeps request a.  A global function,
 * so the verifier checks it once, not at every call in every path (the
 * egress path calls it for tracked and spilled connections alike).
 */
__noinline int filter_keep(struct keep_in *a)
{
	const struct filter_prog *f = &filters[filter_idx & 1];
	struct filter_input in = {};

	if (!a)
		return 1;
	in.pid = a->pid;
	in.lport = a->lport;
	in.rport = a->rport;
	in.laddr[0] = a->laddr[0];
	in.laddr[1] = a->laddr[1];
	in.raddr[0] = a->raddr[0];
	in.raddr[1] = a->raddr[1];
	in.lat = a->lat;
	in.comm = (const char *)a->comm;
	return filter_match(f, &in);
}

/* Return true when the installed filter keeps a request of flow k. */
static __always_inline bool keep(const struct fl_key *k, const struct who *w, __u64 lat)
{
	const struct filter_prog *f = &filters[filter_idx & 1];
	const __u64 *comm = (const __u64 *)w->comm;
	struct keep_in a;

	if (f->n == 0)
		return true;
	a.laddr[0] = k->laddr[0];
	a.laddr[1] = k->laddr[1];
	a.raddr[0] = k->raddr[0];
	a.raddr[1] = k->raddr[1];
	a.lat = lat;
	a.pid = w->pid;
	a.lport = k->lport;
	a.rport = k->rport;
	a.pad = 0;
	a.comm[0] = comm[0];
	a.comm[1] = comm[1];
	return filter_keep(&a);
}

/*
 * Return true when the flow's bytes, unanswered requests and unsolicited
 * responses count under the installed filter: a filter on latency selects
 * requests, not flows, so they then count; else the flow must pass it (pid
 * and comm are known once the server reads).
 */
static __always_inline bool keep_flow(const struct fl_key *k, const struct who *w)
{
	const struct filter_prog *f = &filters[filter_idx & 1];

	return f->n == 0 || f->needs_lat || keep(k, w, 0);
}

/* Send one single event, within the per-tick budget. */
static __always_inline void emit(const struct fl_key *k, const struct who *w,
				 __u32 kind, __u64 lat, __u32 count, __u64 now)
{
	struct fl_event *e;

	if (!budget_take())
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		health_inc(FH_LOST);
		return;
	}
	e->ts_ns = now;
	e->id = __sync_fetch_and_add(&next_id, 1);
	e->key = *k;
	e->lat = lat;
	e->pid = w->pid;
	e->kind = kind;
	e->count = count;
	e->pad = 0;
	__builtin_memcpy(e->comm, w->comm, FLOW_COMM_LEN);
	e->cgroup = w->cgroup;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

/* Return the key mask of the installed filter. */
static __always_inline __u32 keymask(void)
{
	return filter_keymask[filter_idx & 1];
}

/*
 * The row connection k (served by w) counts in under key mask m: own (its
 * flows entry, or the overflow row for a spilled connection), or under a
 * FLOW_AGG mask its group's entry in agg (the overflow row when agg has no
 * room for it; own should even that fail).
 */
static __always_inline struct fl_stats *row_of(const struct fl_key *k, const struct who *w,
					       __u32 m, struct fl_stats *own)
{
	struct fl_stats *row;
	struct fl_akey ak;
	bool over;

	if (!(m & FLOW_AGG))
		return own;
	fl_akey_make(k, w->pid, (const __u64 *)w->comm, w->cgroup, m,
		     bpf_get_smp_processor_id(), &ak);
	row = stats_or_overflow(&agg, &overflow, &ak, &zero_stats, &over);
	return row ? row : own;
}

/*
 * Add the bytes a connection received before its server was known, or
 * under a FLOW_AGG mask (*unmoved), to row, now that its server is known
 * (kept: the filter keeps the flow).
 * Ingress may add more on another CPU meanwhile: those wait for the next
 * move.
 */
static __always_inline void move_bytes(__u64 *unmoved, struct fl_stats *row, bool kept)
{
	__u64 n;

	if (!*unmoved)
		return;
	n = __sync_lock_test_and_set(unmoved, 0);
	if (n && kept)
		__sync_fetch_and_add(&row->bytes_in, n);
}

/* An answered request: count it in st (the flow's totals, or the overflow
 * row's), send it if slow or sampled.  kept: the filter keeps it. */
static __always_inline void count_request(const struct fl_key *k, struct fl_stats *st,
					  const struct who *w, __u64 lat, __u64 now, bool kept)
{
	const struct filter_prog *f = &filters[filter_idx & 1];

	if (!kept) {
		health_inc(FH_DROPPED);
		return;
	}
	st->count++;
	st->lat_sum += lat;
	if (st->count == 1 || lat < st->lat_min)
		st->lat_min = lat;
	if (lat > st->lat_max)
		st->lat_max = lat;
	lh_add(st->hist, lat);
	if (f->threshold_ns && lat >= f->threshold_ns)
		emit(k, w, FE_SLOW, lat, 1, now);
	else if (f->sample_n > 1 && bpf_get_prandom_u32() % f->sample_n == 0)
		emit(k, w, FE_SAMPLED, lat, 1, now);
}

/*
 * A response segment of flow k at now: match it in q and count what it
 * answered or evicted in st (the flow's totals, its group's, or the
 * overflow row's), with the bytes the connection received before its server
 * was known or under a FLOW_AGG mask (*unmoved).  The filter runs once,
 * unless it tests lat: then once for each latency.
 */
static __always_inline void respond(const struct fl_key *k, struct flowq *q, __u64 *unmoved,
				    struct fl_stats *st, const struct who *w, const struct seg *s,
				    __u64 now)
{
	const struct filter_prog *f = &filters[filter_idx & 1];
	bool kf = keep_flow(k, w);
	__u64 lat, age;
	__u32 nb, nev;

	move_bytes(unmoved, st, kf);
	switch (fq_response(q, s->seq, s->len, s->ack, s->psh || s->fin, now, timeout_ns,
			    &nb, &nev, &age, &lat)) {
	case FQ_MATCHED:
		count_request(k, st, w, lat, now, f->needs_lat ? keep(k, w, lat) : kf);
		break;
	case FQ_UNSOLICITED:
		if (kf)
			st->unsolicited++;
		break;
	default:
		break;
	}
	if (nb && kf)
		st->bytes_out += nb;
	if (nev && kf) {
		__sync_fetch_and_add(&st->evicted, nev);
		health_add(FH_EVICTED, nev);
		if (f->needs_lat ? keep(k, w, age) : kf)
			emit(k, w, FE_EVICTED, age, nev, now);
	}
}

/* The requests still pending in q when its connection closes, at now:
 * evicted, in st (the flow's totals, its group's, or the overflow row's). */
static __always_inline void close_pending(const struct fl_key *k, struct flowq *q,
					  struct fl_stats *st, const struct who *w)
{
	__u32 n = fq_pending(q);

	if (n && keep_flow(k, w)) {
		__u64 now = bpf_ktime_get_ns();
		__u64 t0 = q->e[q->head & (FQ_LEN - 1)].t_ns;

		__sync_fetch_and_add(&st->evicted, n);
		health_add(FH_EVICTED, n);
		if (keep(k, w, now - t0))
			emit(k, w, FE_EVICTED, now - t0, n, now);
	}
}

/* This CPU's copy of the overflow row. */
static __always_inline struct fl_stats *overflow_row(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&overflow, &zero);
}

/* The server of spilled socket sk, as recv_len last saw it (none yet: 0). */
static __always_inline struct who who_spilled(struct sock *sk, struct reader_id *none)
{
	struct reader_id *r = bpf_sk_storage_get(&reader, sk, 0, 0);
	struct who w;

	if (!r)
		r = none;
	w.pid = r->tgid;
	w.comm = (const char *)r->comm;
	w.cgroup = r->cgroup;
	return w;
}

/*
 * How far past the new connection's next expected byte (rcv_nxt, at its
 * establishment the first byte of data) an early segment may start.  One
 * left there by the connection its 4-tuple had before (its requests then
 * found no flow) starts before it: TCP's initial sequence numbers for one
 * 4-tuple grow with time (about 16 million a second), past any byte of an
 * earlier connection of it but for a gap of 2^32; an older one's lands
 * in this window 1 time in 2^16.
 */
#define EARLY_SEQ_SLACK (1U << 16)

/* Return true when early segment s is new flow k's (rcv_nxt: its next byte). */
static __always_inline bool early_is_flows(const struct seg *s, const struct fl_key *k,
					   __u32 rcv_nxt)
{
	return key_eq(&s->key, k) && s->seq - rcv_nxt < EARLY_SEQ_SLACK;
}

/*
 * Queue e's segment as the first request of the new flow k in q (adding
 * its bytes to *unmoved: its server is not known yet), unless it is
 * another flow's, an earlier connection's of the same 4-tuple (its
 * sequence number before rcv_nxt, the connection's next byte), or someone
 * else queued it first.
 */
static __always_inline void take_early(const struct fl_key *k, struct flowq *q, __u64 *unmoved,
				       __u32 rcv_nxt, struct early_seg *e)
{
	struct seg s;
	__u32 nb;

	if (!e->live || !early_is_flows(&e->s, k, rcv_nxt) ||
	    __sync_val_compare_and_swap(&e->live, 1, 0) != 1)
		return;
	s = e->s;
	if (!early_is_flows(&s, k, rcv_nxt)) {
		/* Its CPU reused the slot between the test and the claim. */
		__sync_lock_test_and_set(&e->live, 1);
		return;
	}
	if (fq_request(q, s.seq, s.len, s.psh && !s.fin, e->t_ns, &nb) == FQ_FULL)
		health_inc(FH_FULL);
	if (nb)
		__sync_fetch_and_add(unmoved, nb);
}

/*
 * Queue request segment s of flow k (served by w), arrived at now, in q;
 * count its new bytes in *own (the flow's totals, or the overflow row's)
 * when the filter keeps the flow.  Until its server is known, or under a
 * FLOW_AGG mask until its group is, they wait in *unmoved instead, judged
 * by the filter when its next response or its close moves them (a filter
 * on pid or comm cannot judge them before, nor count them as kept).
 */
static __always_inline void request(const struct fl_key *k, struct flowq *q, __u64 *own,
				    __u64 *unmoved, const struct who *w, const struct seg *s,
				    __u64 now)
{
	__u32 nb;

	if (fq_request(q, s->seq, s->len, s->psh && !s->fin, now, &nb) == FQ_FULL)
		health_inc(FH_FULL);
	if (!nb)
		return;
	if (!w->pid || (keymask() & FLOW_AGG))
		__sync_fetch_and_add(unmoved, nb);
	else if (keep_flow(k, w))
		__sync_fetch_and_add(own, nb);
}

/* A segment entering the host (network header at skb->data when at_data;
 * headers read in place when in_place). */
static __always_inline void on_ingress(struct sk_buff *skb, bool at_data, bool in_place)
{
	struct fl_stats *st;
	struct seg s;
	struct who w;
	__u64 born;

	if (!parse(skb, true, at_data, in_place, &s) || s.syn || s.len == 0 || !port_served(s.key.lport, false))
		return;
	born = flows_born;
	st = bpf_map_lookup_elem(&flows, &s.key);
	if (!st || st->closed) {
		__u32 zero = 0;
		struct early_seg *e = bpf_map_lookup_elem(&early, &zero);

		if (!e)
			return;
		__sync_lock_test_and_set(&e->live, 0);
		e->s = s;
		e->t_ns = bpf_ktime_get_ns();
		__sync_lock_test_and_set(&e->live, 1);
		/* A flow made on another CPU since the lookup may have missed
		 * this slot in its scan: then queue the segment here.  Only
		 * then is the map looked up again. */
		if (!st && flows_born != born) {
			st = bpf_map_lookup_elem(&flows, &s.key);
			/* The slot holds this segment: its own seq passes. */
			if (st && !st->closed)
				take_early(&s.key, &st->q, &st->bytes_unmoved, s.seq, e);
		}
		return;
	}
	w = who_of(st);
	request(&s.key, &st->q, &st->bytes_in, &st->bytes_unmoved, &w, &s, bpf_ktime_get_ns());
}

/*
 * When segment s arrived: the time the ingress hook gave it in this CPU's
 * early slot when it is still there (the segment went straight up the
 * stack to its socket), else now (a socket busy in its reader took it from
 * its backlog later; the slot holds a later segment).
 */
static __always_inline __u64 arrival(const struct seg *s)
{
	__u32 zero = 0;
	struct early_seg *e = bpf_map_lookup_elem(&early, &zero);
	__u64 t;

	if (!e || e->s.seq != s->seq || e->s.len != s->len || !key_eq(&e->s.key, &s->key))
		return bpf_ktime_get_ns();
	t = e->t_ns;
	/* A softirq on this CPU may have refilled the slot as it was read. */
	if (e->s.seq != s->seq || e->s.len != s->len || !key_eq(&e->s.key, &s->key))
		return bpf_ktime_get_ns();
	return t;
}

/*
 * A request segment of a spilled connection, where TCP found its socket sk
 * (the network header at skb->network_header).  Other sockets' segments
 * (tracked flows, clients, anything while none is spilled) pass.
 */
static __always_inline void on_ingress_spill(struct sock *sk, struct sk_buff *skb, bool in_place)
{
	struct reader_id none = {};
	struct fl_spill *sp;
	struct fl_stats *ovf;
	struct seg s;
	struct who w;

	if (spilled_n <= 0)
		return;
	sp = bpf_sk_storage_get(&spill, sk, 0, 0);
	if (!sp || !parse(skb, true, false, in_place, &s) || s.syn || s.len == 0)
		return;
	/* TCP has let go of skb->dev by now (tcp_probe sees it NULL): the
	 * namespace is the socket's. */
	s.key.netns = sk->__sk_common.skc_net.net->ns.inum;
	ovf = overflow_row();
	if (!ovf)
		return;
	w = who_spilled(sk, &none);
	request(&s.key, &sp->q, &ovf->bytes_in, &sp->bytes_unmoved, &w, &s, arrival(&s));
}

/* A segment leaving the host (headers read in place when in_place). */
static __always_inline void on_egress(struct sk_buff *skb, bool in_place)
{
	struct reader_id none = {};
	struct fl_spill *sp;
	struct fl_stats *st, *row;
	struct flowq *q;
	struct sock *sk;
	struct seg s;
	struct who w;
	__u64 *unmoved;

	/* The sending socket's port says it before the headers are read. */
	sk = skb->sk;
	if (sk && !port_served(sk->__sk_common.skc_num, false))
		return;
	if (!parse(skb, false, false, in_place, &s) || s.syn || s.len == 0 || !port_served(s.key.lport, false))
		return;
	st = bpf_map_lookup_elem(&flows, &s.key);
	if (st && !st->closed) {
		q = &st->q;
		unmoved = &st->bytes_unmoved;
		w = who_of(st);
		row = row_of(&s.key, &w, keymask(), st);
	} else {
		/* Not a tracked flow: a spilled connection's response goes
		 * out through its socket too. */
		if (!spill_on || spilled_n <= 0 || st)
			return;
		sp = sk ? bpf_sk_storage_get(&spill, sk, 0, 0) : NULL;
		row = overflow_row();
		if (!sp || !row)
			return;
		q = &sp->q;
		unmoved = &sp->bytes_unmoved;
		w = who_spilled(sk, &none);
		row = row_of(&s.key, &w, keymask(), row);
	}
	/* One call for both, so the verifier walks it once. */
	respond(&s.key, q, unmoved, row, &w, &s, bpf_ktime_get_ns());
}

/*
 * The segment hooks, each twice: the headers copied (every kernel), and
 * read in place (the *_d twin, loaded instead where the kernel has
 * bpf_rdonly_cast; "?": not loaded unless user space asks).
 */
SEC("tp_btf/netif_receive_skb")
int BPF_PROG(rx_tp, struct sk_buff *skb)
{
	on_ingress(skb, true, false);
	return 0;
}

SEC("?tp_btf/netif_receive_skb")
int BPF_PROG(rx_tp_d, struct sk_buff *skb)
{
	on_ingress(skb, true, true);
	return 0;
}

SEC("tp_btf/net_dev_queue")
int BPF_PROG(tx_tp, struct sk_buff *skb)
{
	on_egress(skb, false);
	return 0;
}

SEC("?tp_btf/net_dev_queue")
int BPF_PROG(tx_tp_d, struct sk_buff *skb)
{
	on_egress(skb, true);
	return 0;
}

SEC("fentry/tcp_v4_rcv")
int BPF_PROG(rx_tcp, struct sk_buff *skb)
{
	on_ingress(skb, false, false);
	return 0;
}

SEC("?fentry/tcp_v4_rcv")
int BPF_PROG(rx_tcp_d, struct sk_buff *skb)
{
	on_ingress(skb, false, true);
	return 0;
}

SEC("fentry/tcp_v6_rcv")
int BPF_PROG(rx_tcp6, struct sk_buff *skb)
{
	on_ingress(skb, false, false);
	return 0;
}

SEC("?fentry/tcp_v6_rcv")
int BPF_PROG(rx_tcp6_d, struct sk_buff *skb)
{
	on_ingress(skb, false, true);
	return 0;
}

SEC("fentry/__dev_queue_xmit")
int BPF_PROG(tx_dev, struct sk_buff *skb)
{
	on_egress(skb, false);
	return 0;
}

SEC("?fentry/__dev_queue_xmit")
int BPF_PROG(tx_dev_d, struct sk_buff *skb)
{
	on_egress(skb, true);
	return 0;
}

SEC("fentry/tcp_filter")
int BPF_PROG(rx_spill, struct sock *sk, struct sk_buff *skb)
{
	on_ingress_spill(sk, skb, false);
	return 0;
}

SEC("?fentry/tcp_filter")
int BPF_PROG(rx_spill_d, struct sock *sk, struct sk_buff *skb)
{
	on_ingress_spill(sk, skb, true);
	return 0;
}

/* Where fentry cannot load: every segment an established socket takes. */
SEC("tp_btf/tcp_probe")
int BPF_PROG(rx_spill_tp, struct sock *sk, struct sk_buff *skb)
{
	on_ingress_spill(sk, skb, false);
	return 0;
}

SEC("?tp_btf/tcp_probe")
int BPF_PROG(rx_spill_tp_d, struct sock *sk, struct sk_buff *skb)
{
	on_ingress_spill(sk, skb, true);
	return 0;
}

/*
 * The sequence number of the first byte connection sk received (or will
 * receive): the next byte it expects less every byte it took so far (the
 * FIN's too; at its establishment, none).
 */
static __always_inline __u32 sk_first_seq(struct sock *sk)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);

	return tp ? tp->rcv_nxt - (__u32)tp->bytes_received : 0;
}

/*
 * Queue the first request of new flow k, whose next expected byte is
 * rcv_nxt, in q when it waits in an early slot: this CPU's when its
 * segment made the connection, another's when it arrived there while this
 * CPU completed the handshake (kernels before 5.19 cannot look there).
 */
static __always_inline void take_early_any(const struct fl_key *k, struct flowq *q,
					   __u64 *unmoved, __u32 rcv_nxt)
{
	struct early_seg *e;
	__u32 zero = 0, cpu;

	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_map_lookup_percpu_elem)) {
		for (cpu = 0; cpu < nr_cpus && cpu < FLOW_MAX_CPUS; cpu++) {
			e = bpf_map_lookup_percpu_elem(&early, &zero, cpu);
			if (e)
				take_early(k, q, unmoved, rcv_nxt, e);
		}
	} else {
		e = bpf_map_lookup_elem(&early, &zero);
		if (e)
			take_early(k, q, unmoved, rcv_nxt, e);
	}
}

/*
 * Follow accepted connection sk (key k) that the flows map has no room
 * for on its socket, its requests counted in the overflow row; without the
 * spill hook, or memory for its state, it is untracked.
 */
static __always_inline void spill_new(struct sock *sk, const struct fl_key *k)
{
	struct fl_spill *sp = NULL;
	struct fl_stats *ovf = overflow_row();

	if (spill_on && ovf)
		sp = bpf_sk_storage_get(&spill, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!sp) {
		health_inc(FH_UNTRACKED);
		return;
	}
	__builtin_memset(sp, 0, sizeof(*sp));
	__sync_fetch_and_add(&spilled_n, 1);
	health_inc(FH_SPILLED);
	take_early_any(k, &sp->q, &sp->bytes_unmoved, sk_first_seq(sk));
	if (!spill_live && !spill_wake_pending &&
	    __sync_val_compare_and_swap(&spill_wake_pending, 0, 1) == 0) {
		__u64 *r = bpf_ringbuf_reserve(&spill_wake, sizeof(*r), 0);

		if (r) {
			*r = 1;
			bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
		} else {
			spill_wake_pending = 0;
		}
	}
}

/* The close of sk (key k), when it is a spilled connection: what it left
 * pending is evicted, in the overflow row, and its state freed. */
static __always_inline void spill_close(struct sock *sk, const struct fl_key *k)
{
	struct reader_id none = {};
	struct fl_spill *sp;
	struct fl_stats *row;
	struct who w;

	if (!spill_on || spilled_n <= 0)
		return;
	sp = bpf_sk_storage_get(&spill, sk, 0, 0);
	if (!sp)
		return;
	row = overflow_row();
	if (row) {
		w = who_spilled(sk, &none);
		row = row_of(k, &w, keymask(), row);
		move_bytes(&sp->bytes_unmoved, row, keep_flow(k, &w));
		close_pending(k, &sp->q, row, &w);
	}
	if (!bpf_sk_storage_delete(&spill, sk))
		__sync_fetch_and_add(&spilled_n, -1);
}

/*
 * The end of tracked flow k (st): the bytes it received join its row, the
 * requests it left pending are evicted, and it is closed.
 */
static __always_inline void flow_end(const struct fl_key *k, struct fl_stats *st)
{
	struct fl_stats *row;
	struct who w = who_of(st);

	row = row_of(k, &w, keymask(), st);
	move_bytes(&st->bytes_unmoved, row, keep_flow(k, &w));
	close_pending(k, &st->q, row, &w);
	st->closed = 1;
}

/*
 * Move closed flow k (st) to departed, where user space reads its last
 * totals.  When departed is full it stays in flows, closed, for user space
 * to read and remove.  Should its 4-tuple have come back meanwhile on
 * another CPU (the new connection's establishment moved this one to
 * departed and took its place), the entry under k is the new one's, and
 * stays.
 */
static __always_inline void flow_depart(const struct fl_key *k, struct fl_stats *st)
{
	struct fl_dkey dk = {.k = *k, .born_ns = st->born_ns};
	struct fl_stats *cur;

	if (bpf_map_update_elem(&departed, &dk, st, BPF_NOEXIST))
		return;
	cur = bpf_map_lookup_elem(&flows, k);
	if (cur && cur->born_ns == dk.born_ns)
		bpf_map_delete_elem(&flows, k);
}

/* The first value of a flow of socket sk, born now (this CPU's newborn),
 * or NULL. */
static __always_inline struct fl_stats *newborn_of(struct sock *sk)
{
	__u32 zero = 0;
	struct fl_stats *init = bpf_map_lookup_elem(&newborn, &zero);

	if (init) {
		init->born_ns = bpf_ktime_get_ns();
		init->sk = (__u64)sk;
	}
	return init;
}

/* Let the ingress hooks look again, and queue new flow k's first request
 * (st) when it waits in an early slot. */
static __always_inline void flow_born(struct sock *sk, const struct fl_key *k, struct fl_stats *st)
{
	__sync_fetch_and_add(&flows_born, 1);
	take_early_any(k, &st->q, &st->bytes_unmoved, sk_first_seq(sk));
}

/*
 * Follow accepted connection sk (key k), in no flow at its first read:
 * its establishment ran no program (this kernel skipped the run, counted
 * as lost, or ran none where it runs none, in some sandboxes' threads).
 * Its first request is queued when it still waits in an early slot; a
 * response to an earlier request no slot holds any more is unsolicited.
 * Sockets followed in spill, a full map and states past the peer's
 * close are left as they are.
 */
static __always_inline struct fl_stats *flow_adopt(struct sock *sk, const struct fl_key *k)
{
	struct fl_stats *st, *init;
	__u8 state = sk->__sk_common.skc_state;

	if (state != TCP_ESTABLISHED && state != TCP_CLOSE_WAIT)
		return NULL;
	if (spilled_n > 0 && bpf_sk_storage_get(&spill, sk, 0, 0))
		return NULL;
	init = newborn_of(sk);
	if (!init || bpf_map_update_elem(&flows, k, init, BPF_NOEXIST))
		return NULL;
	st = bpf_map_lookup_elem(&flows, k);
	if (st)
		flow_born(sk, k, st);
	return st;
}

/* Track accepted connections from establishment to close. */
SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(set_state, struct sock *sk, const int oldstate, const int newstate)
{
	struct fl_stats *st;
	struct fl_key k;

	if (!sock_key(sk, &k))
		return 0;
	if (newstate == TCP_LISTEN) {
		port_served(k.lport, true);
		return 0;
	}
	if (newstate == TCP_ESTABLISHED && oldstate == TCP_SYN_SENT) {
		/* A connection opened from a served port is no flow: its
		 * first read must not adopt it. */
		struct reader_id *r;

		if (!port_served(k.lport, false))
			return 0;
		r = bpf_sk_storage_get(&reader, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
		if (r)
			r->flags = READER_CONNECTING;
		return 0;
	}
	if (newstate == TCP_ESTABLISHED && oldstate == TCP_SYN_RECV) {
		struct fl_stats *init;

		/* A listener from before latop, in a namespace it did not
		 * look in. */
		port_served(k.lport, true);
		init = newborn_of(sk);
		if (!init)
			return 0;
		if (bpf_map_update_elem(&flows, &k, init, BPF_NOEXIST)) {
			st = bpf_map_lookup_elem(&flows, &k);
			if (!st) {
				/* The map is full. */
				spill_new(sk, &k);
				return 0;
			}
			/* The same 4-tuple again while the old connection is
			 * still here (its close went unseen, or departed was
			 * full at it): its totals wait in departed, whole, and
			 * the flow starts over (born_ns tells it apart).  With
			 * departed full, what user space had not read of the
			 * old one is lost, and counted so; already there, its
			 * close is moving it on another CPU. */
			struct fl_dkey dk = {.k = k, .born_ns = st->born_ns};
			long err;

			if (!st->closed)
				flow_end(&k, st);
			err = bpf_map_update_elem(&departed, &dk, st, BPF_NOEXIST);
			if (err && err != -PROBE_EEXIST)
				health_inc(FH_LOST);
			bpf_map_update_elem(&flows, &k, init, BPF_EXIST);
		}
		st = bpf_map_lookup_elem(&flows, &k);
		if (st)
			flow_born(sk, &k, st);
		return 0;
	}
	if (newstate != TCP_CLOSE)
		return 0;
	st = bpf_map_lookup_elem(&flows, &k);
	/*
	 * Only the flow's own socket ends it.  When the ACK that completes a
	 * handshake and the first request reach the listener on two CPUs at
	 * once, each makes a child socket with the flow's addresses and ports;
	 * the one that loses the race is closed from SYN_RECV (in
	 * inet_ehash_nolisten) while the winner's connection goes on.  A
	 * flow's own socket never closes from SYN_RECV, which covers the
	 * flows seeded from /proc too (no socket known).
	 */
	if (oldstate == TCP_SYN_RECV)
		return 0;
	if (!st || st->closed || (st->sk && st->sk != (__u64)sk)) {
		spill_close(sk, &k);
		return 0;
	}
	flow_end(&k, st);
	flow_depart(&k, st);
	return 0;
}

/* Changes of reader numbered, for the renamed map's keys. */
__u64 rename_seq = 0;

/*
 * The reader of flow k changes: keep its totals so far, under the reader
 * before, in renamed (flows.h, struct fl_rkey) for user space to show in a
 * row of their own, and number the change in st->rseq once it is there
 * (the caller names the new reader after it), so that user space knows
 * which change a flow it reads has passed.  A grouped query (FLOW_AGG)
 * needs none: each request joins its group under the reader of its answer.
 */
static __always_inline void flow_renamed(const struct fl_key *k, struct fl_stats *st)
{
	struct fl_rkey rk;

	if (keymask() & FLOW_AGG)
		return;
	__builtin_memset(&rk, 0, sizeof(rk));
	rk.k = *k;
	rk.born_ns = st->born_ns;
	rk.seq = __sync_fetch_and_add(&rename_seq, 1);
	if (bpf_map_update_elem(&renamed, &rk, st, BPF_NOEXIST)) {
		health_inc(FH_LOST);
		return;
	}
	st->rseq = rk.seq + 1;
}

/*
 * Learn the process serving a flow: the one reading its requests, named as
 * its reading thread is now.  The kernel pads a name with zeros, so two
 * loads read it whole.  A socket whose local port no one serves (the
 * client end of a connection) is no flow's, and passes before any helper
 * call; so does one that connected from a served port.  A socket's first
 * read that finds no flow adopts its connection (flow_adopt).
 */
SEC("tp_btf/sock_recv_length")
int BPF_PROG(recv_len, struct sock *sk, int ret, int flags)
{
	struct task_struct *task;
	const __u64 *comm;
	struct reader_id id;
	struct reader_id *seen;
	struct fl_stats *st;
	struct fl_key k;
	__u32 first;

	if (ret <= 0 || !port_served(sk->__sk_common.skc_num, false))
		return 0;
	task = bpf_get_current_task_btf();
	comm = (const __u64 *)task->comm;
	id = (struct reader_id){
		.tgid = task->tgid, .comm = {comm[0], comm[1]},
		.cgroup = task_cgroup_id(task),
	};
	seen = bpf_sk_storage_get(&reader, sk, 0, 0);
	first = !seen;
	barrier_var(first);	/* kept apart: the verifier refuses st | seen */
	if (seen && (seen->flags & READER_CONNECTING))
		return 0;
	if (seen && seen->tgid == id.tgid && seen->comm[0] == id.comm[0] &&
	    seen->comm[1] == id.comm[1] && seen->cgroup == id.cgroup)
		return 0;
	if (!sock_key(sk, &k))
		return 0;
	st = bpf_map_lookup_elem(&flows, &k);
	if (!st && first)
		st = flow_adopt(sk, &k);
	if (st) {
		const __u64 *was = (const __u64 *)st->comm;

		if (st->pid && (st->pid != id.tgid || was[0] != id.comm[0] ||
				was[1] != id.comm[1] || st->cgroup != id.cgroup))
			flow_renamed(&k, st);
		st->pid = id.tgid;
		__builtin_memcpy(st->comm, id.comm, sizeof(st->comm));
		st->cgroup = id.cgroup;
	}
	seen = bpf_sk_storage_get(&reader, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (seen)
		*seen = id;
	return 0;
}
