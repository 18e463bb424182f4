/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The nvme probe (NVMe/TCP, initiator and target): structs shared by
 * nvme.bpf.c and nvme.c (__u32/__u64 only).  Include <linux/types.h> (user
 * space) or vmlinux.h (BPF) first.
 */
#ifndef LATOP_NVME_H
#define LATOP_NVME_H

#include "../../core/lhist.h"

/* (side, session, op, size) keys of the stats map (of them, the fields the
 * query reads: struct nvme_key): latoprc nvme_max, from
 * NVME_KEYS_MIN to NVME_KEYS_MAX; the map's entries are allocated as keys
 * come, and an I/O whose key finds it full is counted in the overflow entry. */
#define NVME_DEFAULT_KEYS 65536
#define NVME_KEYS_MIN 1
#define NVME_KEYS_MAX 1048576
/* The stats map's default fits the machine's memory down to this. */
#define NVME_KEYS_DEFAULT_MIN 1024
/* I/Os followed at once, per side: preallocated hashes of latoprc
 * nvme_inflight_max entries, from NVME_INFLIGHT_MIN to NVME_INFLIGHT_MAX, by
 * default NVME_DEFAULT_INFLIGHT or what fits the machine's memory.  An I/O
 * that finds its side's full is not followed (H_EVICTED); user space gives up
 * I/Os that started more than NVME_STALE_NS ago, and counts them there too.
 * The bios' queueing times are an LRU hash of the same size: one pushed out
 * leaves its I/O counted as a misfit. */
#define NVME_DEFAULT_INFLIGHT 16384
#define NVME_INFLIGHT_DEFAULT_MIN 1024
#define NVME_INFLIGHT_MIN 1
#define NVME_INFLIGHT_MAX 1048576
#define NVME_STALE_NS (60ULL * 1000000000)
#define NVME_RINGBUF_BYTES (1 << 21)
#define NVME_DEFAULT_MAX_EVENTS 8192	/* single I/Os per tick when BUFFER is 0 */

/*
 * SAMPLE 1/N by command slot: an I/O is kept when the hash of its queue id
 * and command id is 0 modulo N.  Both sides see the same (qid, cid) for one
 * command on the wire, so they keep the same I/Os, every use of a kept slot
 * and none of the others, and nvme_joined pairs them exactly.  Command ids
 * cycle through their slots, so about 1 in N I/Os are kept.
 */
static inline __u32 nvme_sample_hash(__u32 qid, __u32 cid)
{
	__u32 h = qid << 16 | (cid & 0xffff);

	/* murmur3's finaliser: every input bit reaches the low bits */
	h ^= h >> 16;
	h *= 0x85ebca6b;
	h ^= h >> 13;
	h *= 0xc2b2ae35;
	h ^= h >> 16;
	return h;
}

/* Return true when the I/O on (qid, cid) is kept by SAMPLE 1/n (always for n <= 1). */
static inline int nvme_sample_keep(__u32 n, __u32 qid, __u32 cid)
{
	return n <= 1 || nvme_sample_hash(qid, cid) % n == 0;
}

enum nvme_side {
	SIDE_INITIATOR = 1,
	SIDE_TARGET = 2,
};

/*
 * Stages.  An initiator I/O passes through QUEUE..COMPLETE, a target
 * command through T_RECV..T_SEND; each sums to its latency exactly.  Order
 * matches the schema's stage columns.
 */
enum nvme_stage {
	NS_QUEUE,	/* bio queued -> nvme_tcp_queue_rq: block layer submission */
	NS_SUBMIT,	/* queue_rq -> command capsule (and in-capsule data) handed to TCP */
	NS_R2T,		/* capsule sent -> R2T received (large writes) */
	NS_DATA_OUT,	/* R2T received -> H2C data handed to TCP (large writes) */
	NS_REMOTE,	/* last send -> response arrives on the socket: network + target */
	NS_RX,		/* response arrives -> nvme_complete_rq: receive and completion handling */
	NS_COMPLETE,	/* nvme_complete_rq -> block_rq_complete: block completion */
	NS_T_RECV,	/* target: capsule parsed -> backing I/O starts (incl. R2T + data in) */
	NS_T_EXEC,	/* target: backing device executes the command */
	NS_T_SEND,	/* target: completion -> response PDU goes out (incl. C2H data) */
	NS_N,
};

/* Initiator boundaries, timestamps of one I/O. */
enum nvme_ibound {
	IB_BIO,		/* block_bio_queue of the request's first bio */
	IB_QRQ,		/* nvme_tcp_queue_rq (or nvme:nvme_setup_cmd) */
	IB_CMD_SENT,	/* nvme_tcp_try_send returns with the capsule sent */
	IB_R2T,		/* nvme_tcp_setup_h2c_data_pdu */
	IB_DATA_SENT,	/* nvme_tcp_try_send returns with the H2C data sent */
	IB_RX,		/* nvme_tcp_data_ready on the request's queue, last before completion */
	IB_NCMPL,	/* nvme:nvme_complete_rq */
	IB_BCMPL,	/* block:block_rq_complete */
	IB_N,
};

/* Target boundaries. */
enum nvme_tbound {
	TB_INIT,	/* nvmet:nvmet_req_init */
	TB_EXEC,	/* nvmet_bdev_execute_rw / nvmet_file_execute_rw */
	TB_CMPL,	/* nvmet:nvmet_req_complete */
	TB_RSP,		/* nvmet_setup_response_pdu */
	TB_N,
};

/* Which optional boundaries have a live hook (rodata; bit = 1 << boundary). */
#define HAVE_I(b) (1u << (b))
#define HAVE_T(b) (1u << (16 + (b)))

/* Health counters, one per-CPU array slot each. */
enum nvme_health {
	H_DROPPED,	/* I/Os the pushdown filter or sampling left untracked */
	H_LOST,		/* ring buffer full */
	H_EVICTED,	/* in-flight map full */
	H_BUDGET,	/* single events over the per-tick budget (BUFFER) */
	H_OVERFLOW,	/* stats map full: an I/O counted in the overflow entry */
	H_N,
};

/* Sequences an I/O can follow (event field seq). */
enum nvme_seq {
	SEQ_READ = 1,		/* read (and any op without data out) */
	SEQ_WRITE_INLINE,	/* write with in-capsule data */
	SEQ_WRITE_R2T,		/* write whose data follows an R2T */
	SEQ_TARGET,		/* target command */
};

/*
 * An I/O's key.  A key of the stats map leaves as 0 the fields the query
 * reads nothing of (nvme_key_mask), so I/Os that differ only in them share
 * a row; the in-flight I/Os and the single events keep every field.
 */
struct nvme_key {
	__u32 side;		/* enum nvme_side */
	__u32 instance;		/* initiator: nvme%d; target: 0 */
	__u32 cntlid;		/* controller id, the same on both sides */
	__u32 qid;		/* queue id, 1.. for I/O queues */
	__u32 op;		/* NVMe opcode: 1 write, 2 read, 0 flush ... */
	__u32 size;		/* bytes */
	__u32 masked;		/* a stats key's NVME_NO_*_KEY flags, else 0 */
	__u32 pad;
};

/* Fields of the stats key the query reads nothing of: nvme_key_mask's flags. */
#define NVME_NO_SIDE_KEY 1
#define NVME_NO_INSTANCE_KEY 2
#define NVME_NO_CNTLID_KEY 4
#define NVME_NO_QID_KEY 8
#define NVME_NO_OP_KEY 16
#define NVME_NO_SIZE_KEY 32

/* Fill out with k, zeroing the fields mask's NVME_NO_*_KEY flags name, and
 * saying so in out->masked. */
static inline void nvme_key_masked(const struct nvme_key *k, __u32 mask, struct nvme_key *out)
{
	out->side = mask & NVME_NO_SIDE_KEY ? 0 : k->side;
	out->instance = mask & NVME_NO_INSTANCE_KEY ? 0 : k->instance;
	out->cntlid = mask & NVME_NO_CNTLID_KEY ? 0 : k->cntlid;
	out->qid = mask & NVME_NO_QID_KEY ? 0 : k->qid;
	out->op = mask & NVME_NO_OP_KEY ? 0 : k->op;
	out->size = mask & NVME_NO_SIZE_KEY ? 0 : k->size;
	out->masked = mask;
	out->pad = 0;
}

/* An initiator I/O followed (the ios map's value; key: its struct request). */
struct nvme_iio {
	__u64 t[IB_N];
	struct nvme_key key;
	__u32 cid;
	__u32 pad;
};

/* A target command followed: its key (queue, command id) and value. */
struct nvme_tkey {
	__u64 sq;
	__u32 cid;
	__u32 pad;
};

struct nvme_tio {
	__u64 t[TB_N];
	struct nvme_key key;
	__u32 cid;
	__u32 pad;
};

/* Monotonic totals of one key; user space computes per-tick deltas. */
struct nvme_stats {
	__u64 count;
	__u64 misfit;
	__u64 lat_sum;
	__u64 stage[NS_N];
	__u32 hist[NS_N + 1][LH_NBUCKETS];	/* per stage, then end to end */
};

/* One finished I/O or command, sent through the ring buffer. */
struct nvme_event {
	__u64 ts_ns;		/* CLOCK_MONOTONIC at its end */
	__u64 id;		/* per-side sequence number */
	struct nvme_key key;
	__u32 cid;		/* NVMe command id */
	__u32 seq;		/* enum nvme_seq */
	__u64 lat;
	__u64 stage[NS_N];
};

#endif
