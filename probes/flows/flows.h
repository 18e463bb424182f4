/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The flows probe: structs shared by flows.bpf.c and flows.c (__u32/__u64
 * only).  Include <linux/types.h> (user space) or vmlinux.h (BPF) first.
 */
#ifndef LATOP_FLOWS_H
#define LATOP_FLOWS_H

#include "../../core/lhist.h"
#include "flowq.h"

#define FLOW_COMM_LEN 16
/* Connections tracked at once, each a row: latoprc flow_max, from
 * FLOW_KEYS_MIN to FLOW_KEYS_MAX; the map's entries are allocated as
 * connections come.  Connections beyond are followed on their sockets and
 * counted in the overflow row. */
#define FLOW_DEFAULT_KEYS 65536
#define FLOW_KEYS_MIN 64
#define FLOW_KEYS_MAX 4194304
#define FLOW_MAX_CPUS 1024		/* CPUs whose early slot set_state scans */
#define FLOW_RINGBUF_BYTES (1 << 20)
#define FLOW_DEFAULT_MAX_EVENTS 4096	/* single events per tick when BUFFER is 0 */
#define FLOW_DEFAULT_TIMEOUT_NS 1000000000ULL	/* Φ: a request unanswered this long is evicted */

/* Health counters, one per-CPU array slot each. */
enum flow_health {
	FH_DROPPED,	/* requests the pushdown filter dropped */
	FH_LOST,	/* ring buffer full */
	FH_EVICTED,	/* requests never answered within Φ, or pending at close */
	FH_BUDGET,	/* single events over the per-tick budget (BUFFER) */
	FH_UNTRACKED,	/* connections not followed: the flows map was full, and
			 * their sockets could not hold their state */
	FH_FULL,	/* requests not queued: FQ_LEN already pending */
	FH_SPILLED,	/* connections the flows map was full for, followed on
			 * their sockets: their requests go to the overflow row */
	FH_N,
};

/* Why a single event was sent. */
enum flow_event_kind {
	FE_SLOW,	/* latency at or above THRESHOLD */
	FE_SAMPLED,	/* picked by SAMPLE 1/N */
	FE_EVICTED,	/* requests never answered (lat: the oldest one's age) */
};

/*
 * A flow as the serving socket sees it.  Addresses are the 16 bytes of the
 * IPv6 (or v4-mapped ::ffff:a.b.c.d) address as two host-order halves, the
 * form the pushdown filter compares (probes/filter.h).
 */
struct fl_key {
	__u64 laddr[2];
	__u64 raddr[2];
	__u32 lport;
	__u32 rport;
	__u32 netns;		/* network namespace inode */
	__u32 pad;
};

/*
 * A connection that ended, whose last totals wait for user space: its key
 * and birth (fl_stats.born_ns), the departed map's key.
 */
struct fl_dkey {
	struct fl_key k;
	__u64 born_ns;
};

/*
 * A connection's totals when its reader changed (renamed by an exec, prctl
 * or pthread_setname_np; another process or cgroup), under the reader
 * before: the renamed map's key is the connection's key and birth and the
 * change's number, one for every change however many there are.  User
 * space reads and removes them at its next tick, so that each request shows
 * under the name its server had when it read it.  A flow's rseq numbers its
 * last change, and each change's totals (their rseq) the one before: a
 * flow read past a change whose totals user space has not read yet waits
 * for them.  At most FLOW_RENAMED_KEYS wait at once (2.7 KB each, taken as
 * they come): a change beyond is counted as lost, and its requests show
 * under the later name.
 */
struct fl_rkey {
	struct fl_key k;
	__u64 born_ns;
	__u64 seq;
};
#define FLOW_RENAMED_KEYS 65536

/*
 * The key fields a query reads nothing of (flows_key_mask's flags).  With
 * FLOW_AGG set the query reads neither flow nor rport, so no row is one
 * connection's: a request counts under its connection's key with those
 * fields cleared, in the agg map, one entry per group and CPU, not in the
 * connection's own entry.  0: every connection its own row.
 */
#define FLOW_AGG 1
#define FLOW_NO_LADDR 2
#define FLOW_NO_LPORT 4
#define FLOW_NO_RADDR 8
#define FLOW_RNET_ONLY 16	/* raddr cut to its network: /24 of IPv4, /64 of IPv6 */
#define FLOW_NO_NETNS 32
#define FLOW_NO_PID 64
#define FLOW_NO_COMM 128
#define FLOW_NO_CGROUP 256

/* A group's key in the agg map: a connection's key and server, masked. */
struct fl_akey {
	struct fl_key k;	/* rport always 0 */
	__u32 pid;
	__u32 cpu;		/* the CPU that counted: each adds to its own entry */
	__u64 comm[FLOW_COMM_LEN / 8];
	__u64 cgroup;
	__u32 masked;		/* flows_key_mask's flags, FLOW_AGG among them */
	__u32 pad;
};

/* Return true when address a (the fl_key form) is IPv4 (::ffff:a.b.c.d). */
static inline int fl_addr_v4(const __u64 a[2])
{
	return a[0] == 0 && (a[1] >> 32) == 0xffff;
}

/* Fill out with the group key of connection k served by pid (comm, cgroup)
 * under mask, counted on cpu. */
static inline void fl_akey_make(const struct fl_key *k, __u32 pid, const __u64 *comm,
				__u64 cgroup, __u32 mask, __u32 cpu, struct fl_akey *out)
{
	int v4 = fl_addr_v4(k->raddr);

	out->k.laddr[0] = mask & FLOW_NO_LADDR ? 0 : k->laddr[0];
	out->k.laddr[1] = mask & FLOW_NO_LADDR ? 0 : k->laddr[1];
	out->k.raddr[0] = mask & FLOW_NO_RADDR ? 0 : k->raddr[0];
	out->k.raddr[1] = mask & FLOW_NO_RADDR ? 0 : k->raddr[1];
	if (mask & FLOW_RNET_ONLY)
		out->k.raddr[1] = v4 ? out->k.raddr[1] & ~0xffULL : 0;
	out->k.lport = mask & FLOW_NO_LPORT ? 0 : k->lport;
	out->k.rport = 0;
	out->k.netns = mask & FLOW_NO_NETNS ? 0 : k->netns;
	out->k.pad = 0;
	out->pid = mask & FLOW_NO_PID ? 0 : pid;
	out->cpu = cpu;
	out->comm[0] = mask & FLOW_NO_COMM ? 0 : comm[0];
	out->comm[1] = mask & FLOW_NO_COMM ? 0 : comm[1];
	out->cgroup = mask & FLOW_NO_CGROUP ? 0 : cgroup;
	out->masked = mask;
	out->pad = 0;
}

/* Monotonic per-flow totals and matching state: the flows map's value, and
 * the agg map's (a group's totals: only the counters and histogram). */
struct fl_stats {
	__u64 born_ns;		/* when the connection was established (or first seen) */
	__u64 count;		/* requests answered and counted */
	__u64 lat_sum;
	__u64 lat_min;
	__u64 lat_max;
	__u64 bytes_in;		/* payload received (retransmissions once) */
	__u64 bytes_out;	/* payload sent (retransmissions once) */
	__u64 evicted;		/* requests never answered */
	__u64 unsolicited;	/* responses with no request to answer */
	__u64 bytes_unmoved;	/* payload received before the flow's server is known,
				 * or under a FLOW_AGG mask, not yet added to its row:
				 * its next response or its close moves them */
	__u32 pid;		/* the process that last read from the socket */
	__u32 closed;		/* the connection closed: user space removes it */
	__u64 sk;		/* the socket that made the flow (0 when seeded from
				 * /proc): only its close ends the flow */
	__u64 cgroup;		/* the cgroup v2 id of the thread that read last (0 until
				 * it reads) */
	char comm[FLOW_COMM_LEN];
	__u64 rseq;		/* the last change of reader kept in renamed, its seq + 1
				 * (0: none); after comm, which a copy reads first */
	struct flowq q;
	__u32 hist[LH_NBUCKETS];
};

/* One slow, sampled or unanswered request, sent through the ring buffer. */
struct fl_event {
	__u64 ts_ns;		/* CLOCK_MONOTONIC at the response (or eviction) */
	__u64 id;
	struct fl_key key;
	__u64 lat;
	__u32 pid;
	__u32 kind;		/* enum flow_event_kind */
	__u32 count;		/* FE_EVICTED: requests evicted; else 1 */
	__u32 pad;
	char comm[FLOW_COMM_LEN];
	__u64 cgroup;		/* the cgroup v2 id of the thread that read last */
};

#endif
