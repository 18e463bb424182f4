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

/* Monotonic per-flow totals and matching state: the flows map's value. */
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
	__u32 pid;		/* the process that last read from the socket */
	__u32 closed;		/* the connection closed: user space removes it */
	__u64 sk;		/* the socket that made the flow (0 when seeded from
				 * /proc): only its close ends the flow */
	__u64 cgroup;		/* the cgroup v2 id of the thread that read last (0 until
				 * it reads) */
	char comm[FLOW_COMM_LEN];
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
