/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The paths probe: structs shared by paths.bpf.c and paths.c (__u32/__u64
 * only).  Include <linux/types.h> (user space) or vmlinux.h (BPF) first.
 *
 * The kernel side sends one compact record per TCP send or receive a thread
 * makes (which socket, its 4-tuple, when, how many bytes, where in the TCP
 * byte stream); user space (probes/paths/paths_recon.c) merges them into messages
 * and messages into requests and downstream calls.
 */
#ifndef LATOP_PATHS_H
#define LATOP_PATHS_H

#define PATH_COMM_LEN 16
/* The records ring: latoprc paths_ring_mb, in MiB (a power of two).  User
 * space is woken to drain it at a quarter full, so it holds what comes
 * while user space wakes, not a whole tick. */
#define PATH_RINGBUF_BYTES (16 << 20)	/* ~160k records */
#define PATH_RING_MB_MIN 1
#define PATH_RING_MB_MAX 1024

enum path_dir {
	PD_RECV = 0,
	PD_SEND = 1,
};

/* Health counters, one per-CPU array slot each. */
enum path_health {
	PH_DROPPED,	/* send/recv the pushdown filter dropped */
	PH_LOST,	/* ring buffer full: a record lost */
	PH_N,
};

/* One send or receive on a TCP socket, as the thread saw it return. */
struct path_rec {
	__u64 ts_ns;		/* CLOCK_MONOTONIC when the call returned */
	__u64 sk;		/* the socket (identity while it lives) */
	__u32 tgid;
	__u32 tid;
	__u32 bytes;		/* bytes moved by this call */
	__u32 seq;		/* TCP sequence number of the first byte moved */
	__u16 lport;		/* host order */
	__u16 rport;
	__u8 dir;		/* enum path_dir */
	__u8 server;		/* the socket was accepted (this end is the server) */
	__u8 family;		/* 4 or 6 */
	__u8 pad;
	__u8 laddr[16];		/* IPv4 as ::ffff:a.b.c.d */
	__u8 raddr[16];
	char comm[PATH_COMM_LEN];
	__u64 cgroup;		/* the thread's cgroup v2 id */
};

#endif
