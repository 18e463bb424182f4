/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The block probe: structs shared by block.bpf.c and block.c (__u32/__u64
 * only).  Include <linux/types.h> (user space) or vmlinux.h (BPF) first.
 */
#ifndef LATOP_BLOCK_H
#define LATOP_BLOCK_H

#include "../../core/lhist.h"

#define BLK_COMM_LEN 16
/* (dev, op, size, pid, comm) keys the stats map holds (of them, the fields
 * the query reads: struct blk_key): latoprc block_max,
 * from BLK_KEYS_MIN to BLK_KEYS_MAX, by default BLK_DEFAULT_KEYS or what fits
 * the machine's memory (at least BLK_KEYS_DEFAULT_MIN); the map is allocated
 * at load, and a request whose key finds it full is counted in the overflow
 * entry. */
#define BLK_DEFAULT_KEYS 8192
#define BLK_KEYS_DEFAULT_MIN 1024
#define BLK_KEYS_MIN 1
#define BLK_KEYS_MAX 1048576
/* Slots of the request table (requests followed at once): latoprc
 * block_inflight_max, a power of two from BLK_REQS_MIN to BLK_REQS_MAX, by
 * default BLK_DEFAULT_REQS or what fits the machine's memory; a request that
 * finds its slots taken is not followed (BH_UNTRACKED). */
#define BLK_DEFAULT_REQS 16384
#define BLK_REQS_DEFAULT_MIN 1024
#define BLK_REQS_MIN BLK_REQ_PROBE
#define BLK_REQS_MAX 1048576
#define BLK_REQ_PROBE 8		/* slots a request may take, from its hash on */
#define BLK_REQ_STALE_NS (60ULL * 1000000000)	/* a request older than this is given up */
#define BLK_RINGBUF_BYTES (1 << 20)
#define BLK_DEFAULT_MAX_EVENTS 4096	/* single events per tick when BUFFER is 0 */

/*
 * Where a request's time goes, in the order it passes the stages.  Each
 * nanosecond from the bio's queueing to the request's completion is in
 * exactly one stage, so the stages sum to its latency.  Order matches the
 * schema's alloc..device columns.
 */
enum blk_stage {
	BS_ALLOC,	/* bio queued -> request allocated (waits for a tag) */
	BS_PLUG,	/* allocated -> inserted, or issued when never inserted */
	BS_SCHED,	/* inserted (or requeued) -> issued to the driver */
	BS_DEVICE,	/* issued -> completed: driver and device */
	BS_N,
};

/* Health counters, one per-CPU array slot each. */
enum blk_health {
	BH_DROPPED,	/* requests the pushdown filter or sampling dropped */
	BH_LOST,	/* ring buffer full */
	BH_BUDGET,	/* single events over the per-tick budget (BUFFER) */
	BH_UNTRACKED,	/* request table full: a request could not be followed */
	BH_OVERFLOW,	/* stats map full: a request counted in the overflow entry */
	BH_UNFINISHED,	/* a request issued and never seen to complete, given up
			 * when its bio's address was queued again */
	BH_N,
};

#define FILTER_NEED_COMM 1
#define FILTER_NEED_UID 2
/* Key fields the query reads nothing of, zeroed in keys (block_key_mask): */
#define FILTER_NO_CGROUP_KEY 4	/* the cgroup id */
#define FILTER_NO_DEV_KEY 8	/* dev */
#define FILTER_NO_OP_KEY 16	/* op */
#define FILTER_NO_PID_KEY 32	/* tgid */
#define FILTER_NO_SIZE_KEY 64	/* size */
#define FILTER_NO_COMM_KEY 128	/* comm */

/* Flags of a followed request. */
#define BR_SAMPLED 1	/* picked by SAMPLE 1/N: also send as an event */
#define BR_ISSUED 2	/* counted in its device's in-flight */

/*
 * A followed request: one slot of the mmapable request table, owned by the
 * request's first bio (struct bio *).  A bio may take any of the
 * BLK_REQ_PROBE slots from blk_req_hash(bio) on; lookups scan all of them,
 * so freeing a slot (owner 0) needs no tombstone.
 */
struct blk_req {
	__u64 owner;		/* the bio, or 0 for a free slot */
	__u64 queue_ns;		/* bio queued */
	__u64 last_ns;		/* the last stage change */
	__u64 stage[BS_N];
	__u64 sector;
	__u64 cgroup;		/* the queueing thread's cgroup v2 id */
	__u32 dev;		/* dev_t as the kernel keeps it (major << 20 | minor) */
	__u32 op;		/* REQ_OP_* */
	__u32 tgid;
	__u32 tid;
	__u32 size;		/* bytes: the bio's when queued, the request's when issued */
	__u32 requeues;
	__u8 cur;		/* enum blk_stage now */
	__u8 flags;		/* BR_* */
	__u8 pad[6];
	char comm[BLK_COMM_LEN];
};

/* Return the first slot of the request table to try for bio address id. */
static __always_inline __u32 blk_req_hash(__u64 id)
{
	return (__u32)(((id >> 6) * 0x9E3779B97F4A7C15ULL) >> 40);
}

/*
 * A row: the requests of one size and op on one device that one process
 * queued under one thread name (the queueing thread's, NUL-padded), so a
 * thread renamed (exec, prctl, pthread_setname_np) queues into a new row.
 * A field the query reads nothing of is 0 (its FILTER_NO_*_KEY flag), so
 * the requests that differ only in it share a row.
 */
struct blk_key {
	__u32 dev;
	__u32 op;
	__u32 tgid;
	__u32 size;
	char comm[BLK_COMM_LEN];
	__u64 cgroup;		/* the queueing thread's cgroup v2 id */
	__u32 masked;		/* the FILTER_NO_*_KEY flags of the fields left 0 */
	__u32 pad;
};

/* Fill key with r's fields, zeroing those need's FILTER_NO_*_KEY flags name
 * (and saying so in key->masked). */
static __always_inline void blk_key_of(const struct blk_req *r, __u32 need, struct blk_key *key)
{
	key->dev = need & FILTER_NO_DEV_KEY ? 0 : r->dev;
	key->op = need & FILTER_NO_OP_KEY ? 0 : r->op;
	key->tgid = need & FILTER_NO_PID_KEY ? 0 : r->tgid;
	key->size = need & FILTER_NO_SIZE_KEY ? 0 : r->size;
	if (need & FILTER_NO_COMM_KEY)
		__builtin_memset(key->comm, 0, sizeof(key->comm));
	else
		__builtin_memcpy(key->comm, r->comm, sizeof(key->comm));
	key->cgroup = need & FILTER_NO_CGROUP_KEY ? 0 : r->cgroup;
	key->masked = need & (FILTER_NO_CGROUP_KEY | FILTER_NO_DEV_KEY | FILTER_NO_OP_KEY |
			      FILTER_NO_PID_KEY | FILTER_NO_SIZE_KEY | FILTER_NO_COMM_KEY);
	key->pad = 0;
}

/*
 * Monotonic per-key totals; user space computes per-tick deltas.  Several
 * CPUs complete requests of one key, so BPF adds atomically.
 */
struct blk_stats {
	__u64 count;
	__u64 errors;
	__u64 requeues;
	__u64 merges;		/* bios of this key merged into another request */
	__u64 bytes;
	__u64 lat_sum;
	__u64 lat_min;
	__u64 lat_max;
	__u64 stage[BS_N];
	__u32 hist[BS_N + 1][LH_NBUCKETS];	/* [0]: latency, [1 + s]: stage s */
};

/*
 * One device's slot of the mmapable devs array (BLK_DEV_SLOTS, found by a
 * hash of dev with a short linear probe): requests between queueing and
 * completion, and at the driver.  BPF owns the counters; user space reads
 * them through the mapping and writes only the maxima, resetting them to
 * the current counts every tick.
 */
struct blk_dev {
	__u64 used;		/* 1 once the slot belongs to dev */
	__u32 dev;
	__u32 pad;
	__s64 queued;
	__s64 inflight;
	__s64 max_queued;	/* the most at once this tick */
	__s64 max_inflight;
	__u64 flush_issue_ns;	/* the queue's own flush request was last issued */
};

#define BLK_DEV_SLOTS 256	/* a power of 2 */
#define BLK_DEV_PROBE 4		/* slots tried from a device's hash */

/* Return the first slot to try for dev. */
static __always_inline __u32 blk_dev_hash(__u32 dev)
{
	return (dev ^ (dev >> 20) ^ (dev >> 8)) * 2654435761u >> 24;
}

/* One slow or sampled request, sent through the ring buffer. */
struct blk_event {
	__u64 ts_ns;		/* CLOCK_MONOTONIC at completion */
	__u64 id;		/* the request's first bio, as the kernel addressed it */
	__u64 queue_ns;
	__u64 sector;
	__u64 lat;
	__u64 stage[BS_N];
	__u32 dev;
	__u32 op;
	__u32 tgid;
	__u32 tid;
	__u32 size;
	__u32 requeues;
	__s32 error;		/* blk_status_t, 0 on success */
	__u32 pad;
	char comm[BLK_COMM_LEN];
	__u64 cgroup;		/* the queueing thread's cgroup v2 id */
};

#endif
