// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The block probe: each request of a blk-mq device followed from the moment
 * its bio is queued to its completion, its time split into stages (alloc,
 * plug, sched, device) that telescope: every hook charges the time since the
 * last one to the stage the request was in and moves it to the next, so the
 * stages sum to the request's latency exactly.
 *
 * A request is keyed by its first bio (struct bio *): the bio is all
 * block_bio_queue and block_getrq give, and rq->bio leads back to it from
 * every request hook.  Front merges put new first bios before it: the next
 * request hook finds the old one (rq->biotail, or bi_next) and moves the
 * state to the new first bio's slot.  A split gives the split-off bio a copy of its
 * parent's state.
 *
 * The hooks are tp_btf or fentry programs: their arguments are typed kernel
 * pointers, read directly (the verifier makes each load fault-safe).
 *
 * Per (dev, op, size, pid, comm) totals (keyed by the fields the query reads
 * of them) and log-linear histograms of the latency
 * and of each stage live in the stats hash, added atomically because any CPU
 * may complete a request; a key the full hash has no room for adds to the
 * one overflow entry instead.  Slow or sampled requests go to a ring buffer.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "block.h"
#include "../filter.bpf.h"

#define REQ_OP_MASK 0xff
#define OP_WRITE 1
#define OP_FLUSH 2

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 self_tgid = 0;
/* The request table's slots less one (a power of two less one): set at load. */
const volatile __u32 req_mask = BLK_DEFAULT_REQS - 1;

#define PROBE_HEALTH_N BH_N
#define PROBE_HEALTH_BUDGET BH_BUDGET
#define PROBE_MAX_EVENTS BLK_DEFAULT_MAX_EVENTS
#include "../probe.bpf.h"

__u32 filter_need[2] = {};
static const struct blk_stats zero_stats;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, BLK_DEFAULT_REQS);	/* set at load: latoprc block_inflight_max */
	__type(key, __u32);
	__type(value, struct blk_req);
} reqs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);	/* preallocated: a key made at a
						 * completion (an interrupt) must not wait on the allocator */
	__uint(max_entries, BLK_DEFAULT_KEYS);	/* set at load: latoprc block_max */
	__type(key, struct blk_key);
	__type(value, struct blk_stats);
} stats SEC(".maps");

/* The totals of the requests whose key found the stats map full. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct blk_stats);
} overflow SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, BLK_DEV_SLOTS);
	__type(key, __u32);
	__type(value, struct blk_dev);
} devs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, BLK_RINGBUF_BYTES);
} events SEC(".maps");

/*
 * Return the address p holds as a number the request table can hash.  The
 * verifier forbids arithmetic on typed pointers and tracks a pointer stored
 * to the stack as a pointer, but the bytes an atomic writes to the stack are
 * a number when read back.  The word is this run's own: a program that an
 * interrupt runs on this CPU between the write and the read (a completion
 * arriving during a queueing) cannot change it, as it could a per-CPU map's.
 */
static __always_inline __u64 addr_of(const void *p)
{
	__u64 w = 0;

	__sync_fetch_and_add(&w, (__u64)p);
	return *(volatile __u64 *)&w;
}

/* Return the slot bio address id owns, or NULL. */
static __always_inline struct blk_req *req_find(__u64 id)
{
	__u32 h = blk_req_hash(id), i, idx;
	struct blk_req *r;

	for (i = 0; i < BLK_REQ_PROBE; i++) {
		idx = (h + i) & req_mask;
		r = bpf_map_lookup_elem(&reqs, &idx);
		if (r && r->owner == id)
			return r;
	}
	return NULL;
}

/* Return a slot for bio address id: the one it owns (a reused bio whose
 * last request was never seen to end), else a free one; NULL when its
 * slots are all taken. */
static __always_inline struct blk_req *req_take(__u64 id)
{
	__u32 h = blk_req_hash(id), i, idx;
	struct blk_req *r = req_find(id);

	if (r)
		return r;
	for (i = 0; i < BLK_REQ_PROBE; i++) {
		idx = (h + i) & req_mask;
		r = bpf_map_lookup_elem(&reqs, &idx);
		if (r && !r->owner && __sync_val_compare_and_swap(&r->owner, 0, id) == 0)
			return r;
	}
	return NULL;
}

/* Give slot r back. */
static __always_inline void req_free(struct blk_req *r)
{
	__sync_lock_test_and_set(&r->owner, 0);
}

/* Return dev's slot of the devs array, taking a free one when create. */
static __always_inline struct blk_dev *dev_slot(__u32 dev, bool create)
{
	__u32 h = blk_dev_hash(dev), i, idx;
	struct blk_dev *d;

	for (i = 0; i < BLK_DEV_PROBE; i++) {
		idx = (h + i) & (BLK_DEV_SLOTS - 1);
		d = bpf_map_lookup_elem(&devs, &idx);
		if (!d)
			return NULL;
		if (d->used && d->dev == dev)
			return d;
		if (d->used || !create)
			continue;
		/* Two CPUs seeing a new device at once may each take a slot
		 * for it; user space adds such slots up. */
		if (__sync_val_compare_and_swap(&d->used, 0, 1) != 0)
			continue;
		d->dev = dev;
		return d;
	}
	return NULL;
}

/* Add one to d's queued (or, with inflight, in-flight) count and raise the
 * tick's maximum (racy between CPUs: it may come out a request short). */
static __always_inline void dev_inc(struct blk_dev *d, bool inflight)
{
	__s64 v = __sync_fetch_and_add(inflight ? &d->inflight : &d->queued, 1) + 1;

	if (inflight && v > d->max_inflight)
		d->max_inflight = v;
	else if (!inflight && v > d->max_queued)
		d->max_queued = v;
}

/* Charge the time since the last change to the current stage; enter next. */
static __always_inline void stage_to(struct blk_req *r, __u64 now, __u8 next)
{
	if (now > r->last_ns)
		r->stage[r->cur & (BS_N - 1)] += now - r->last_ns;
	r->last_ns = now;
	r->cur = next;
}

/* Start following bio: filter, sample, and record who queued it.  With
 * BPF_NOEXIST a bio already followed is left as it is. */
static __always_inline int on_queue(struct bio *bio, __u64 how)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), id = addr_of(bio);
	const struct filter_prog *f = filter_cur();
	__u32 need = filter_need[filter_idx & 1];
	struct filter_input in = {};
	struct blk_req r = {}, *slot;
	struct blk_dev *d;
	__u32 opf;

	if ((pid_tgid >> 32) == self_tgid)
		return 0;
	slot = req_find(id);
	if (how == BPF_NOEXIST && slot)
		return 0;
	/* Bio-based devices (dm, md) never make requests of their own. */
	if (!bio->bi_bdev->bd_disk->queue->mq_ops)
		return 0;
	/*
	 * A bio at the address of a request that went to the driver and was
	 * never seen to complete: that request is given up, counted, before
	 * its slot could be taken for this one (a split's remainder queued
	 * again was never issued, and goes on in its slot).
	 */
	if (slot && (slot->flags & BR_ISSUED)) {
		d = dev_slot(slot->dev, false);
		if (d) {
			__sync_fetch_and_add(&d->queued, -1);
			__sync_fetch_and_add(&d->inflight, -1);
		}
		health_inc(BH_UNFINISHED);
		req_free(slot);
	}
	r.dev = bio->bi_bdev->bd_dev;
	opf = bio->bi_opf;
	r.op = opf & REQ_OP_MASK;
	r.size = bio->bi_iter.bi_size;
	/* What fsync sends is an empty write that asks for a cache flush. */
	if (r.size == 0 && r.op == OP_WRITE &&
	    (opf & (1u << bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH))))
		r.op = OP_FLUSH;
	r.sector = bio->bi_iter.bi_sector;
	r.tgid = pid_tgid >> 32;
	r.tid = (__u32)pid_tgid;
	bpf_get_current_comm(r.comm, sizeof(r.comm));
	r.cgroup = bpf_get_current_cgroup_id();
	if (f->sample_n > 1) {
		if (bpf_get_prandom_u32() % f->sample_n)
			goto drop;
		r.flags |= BR_SAMPLED;
	}
	if (f->n && !f->needs_lat) {
		in.pid = r.tgid;
		in.tid = r.tid;
		in.dev = r.dev;
		in.op = r.op;
		in.size = r.size;
		in.comm = r.comm;
		if (need & FILTER_NEED_UID)
			in.uid = (__u32)bpf_get_current_uid_gid();
		if (!filter_match(f, &in))
			goto drop;
	}
	r.queue_ns = r.last_ns = bpf_ktime_get_ns();
	r.cur = BS_ALLOC;
	slot = req_take(id);
	if (!slot) {
		health_inc(BH_UNTRACKED);
		return 0;
	}
	r.owner = id;
	*slot = r;
	d = dev_slot(r.dev, true);
	if (d)
		dev_inc(d, false);
	return 0;
drop:
	health_inc(BH_DROPPED);
	return 0;
}

/* Return the followed request whose first bio is bio, or NULL. */
static __always_inline struct blk_req *req_of_bio(struct bio *bio)
{
	return bio ? req_find(addr_of(bio)) : NULL;
}

/*
 * Return the followed request of rq, or NULL.  Front merges put other bios
 * before the one the request was followed by, which then is the last of
 * them (rq->biotail) unless back merges came too, or the one after the
 * new first: the request's state moves to a slot of its new first bio.
 */
static __always_inline struct blk_req *req_of(struct request *rq)
{
	struct bio *bio = rq->bio, *was;
	struct blk_req *r, *old = NULL, copy;
	__u64 id;

	if (!bio)
		return NULL;
	id = addr_of(bio);
	r = req_find(id);
	if (r)
		return r;
	was = rq->biotail;
	if (was && was != bio)
		old = req_find(addr_of(was));
	was = bio->bi_next;
	if (!old && was && was != rq->biotail)
		old = req_find(addr_of(was));
	if (!old)
		return NULL;
	r = req_take(id);
	if (!r)
		return NULL;
	copy = *old;
	copy.owner = id;
	*r = copy;
	req_free(old);
	return r;
}

/* Fill key with r's: where, what, and who queued it under which name, as
 * far as the query reads them. */
static __always_inline void key_of(const struct blk_req *r, struct blk_key *key)
{
	blk_key_of(r, filter_need[filter_idx & 1], key);
}

/* Return key's totals, made when new, or the overflow entry's (probe.bpf.h). */
static __always_inline struct blk_stats *stats_of(const struct blk_key *key, bool *over)
{
	return stats_or_overflow(&stats, &overflow, key, &zero_stats, over);
}

/* Count r, a bio or request merged into another request, to its key, and
 * stop following it (the request it joined goes on). */
static __always_inline void merged(struct blk_req *r)
{
	struct blk_key key;
	struct blk_stats *v;
	struct blk_dev *d;
	bool over;

	if (!r)
		return;
	key_of(r, &key);
	d = dev_slot(r->dev, false);
	if (d) {
		__sync_fetch_and_add(&d->queued, -1);
		if (r->flags & BR_ISSUED)
			__sync_fetch_and_add(&d->inflight, -1);
	}
	v = stats_of(&key, &over);
	if (v)
		__sync_fetch_and_add(&v->merges, 1);
	req_free(r);
}

/* Send one request to the ring buffer, within the per-tick budget. */
static __always_inline void emit_event(const struct blk_req *r, __u64 id, __u64 now, __u64 lat,
				       int error)
{
	struct blk_event *e;

	if (!budget_take())
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		health_inc(BH_LOST);
		return;
	}
	e->ts_ns = now;
	e->id = id;
	e->queue_ns = r->queue_ns;
	e->sector = r->sector;
	e->lat = lat;
	__builtin_memcpy(e->stage, r->stage, sizeof(e->stage));
	e->dev = r->dev;
	e->op = r->op;
	e->tgid = r->tgid;
	e->tid = r->tid;
	e->size = r->size;
	e->requeues = r->requeues;
	e->error = error;
	e->pad = 0;
	__builtin_memcpy(e->comm, r->comm, sizeof(e->comm));
	e->cgroup = r->cgroup;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

/* Add one atomically to a histogram bucket. */
static __always_inline void hist_inc(__u32 *hist, __u64 v)
{
	__u32 idx = lh_bucket(v);

	asm volatile("" : "+r"(idx));
	if (idx >= LH_NBUCKETS)
		return;
	__sync_fetch_and_add(&hist[idx], 1);
}

/* Add one finished request to its key's totals. */
static __always_inline void account(const struct blk_req *r, __u64 lat, int error)
{
	struct blk_key key;
	struct blk_stats *v;
	bool over;
	__u32 s;

	key_of(r, &key);
	v = stats_of(&key, &over);
	if (!v)
		return;
	if (over)
		health_inc(BH_OVERFLOW);
	/* min and max race only between CPUs completing one key at once. */
	if (v->count == 0 || lat < v->lat_min)
		v->lat_min = lat;
	if (lat > v->lat_max)
		v->lat_max = lat;
	if (error)
		__sync_fetch_and_add(&v->errors, 1);
	if (r->requeues)
		__sync_fetch_and_add(&v->requeues, r->requeues);
	__sync_fetch_and_add(&v->bytes, r->size);
	__sync_fetch_and_add(&v->lat_sum, lat);
	hist_inc(v->hist[0], lat);
	for (s = 0; s < BS_N; s++) {
		__sync_fetch_and_add(&v->stage[s], r->stage[s]);
		hist_inc(v->hist[1 + s], r->stage[s]);
	}
	/* count last: user space reads a key's totals once count moved. */
	__sync_fetch_and_add(&v->count, 1);
}

/* A split: the split-off bio goes on as a request of its own. */
static __always_inline void on_split(struct bio *split)
{
	struct bio *parent = BPF_CORE_READ(split, bi_private);
	struct blk_req *r = req_of_bio(parent), *slot, copy;
	struct blk_dev *d;
	__u64 id = addr_of(split);

	if (!r || parent == split)
		return;
	slot = req_take(id);
	if (!slot) {
		health_inc(BH_UNTRACKED);
		return;
	}
	copy = *r;
	copy.owner = id;
	copy.size = split->bi_iter.bi_size;
	copy.sector = split->bi_iter.bi_sector;
	*slot = copy;
	d = dev_slot(copy.dev, false);
	if (d)
		dev_inc(d, false);
}

/* The request of bio was allocated. */
static __always_inline void on_getrq(struct bio *bio)
{
	struct blk_req *r = req_of_bio(bio);

	if (r && r->cur == BS_ALLOC)
		stage_to(r, bpf_ktime_get_ns(), BS_PLUG);
}

/* rq entered the I/O scheduler or a dispatch list. */
static __always_inline void on_insert(struct request *rq)
{
	struct blk_req *r = req_of(rq);

	if (r && r->cur != BS_DEVICE)
		stage_to(r, bpf_ktime_get_ns(), BS_SCHED);
}

/* rq went to the driver. */
static __always_inline void on_issue(struct request *rq)
{
	struct blk_req *r = req_of(rq);
	struct blk_dev *d;
	__u32 dev;

	if (!r) {
		/* The queue's own flush request carries no bio: remember when
		 * it went out, for the flushes waiting on it. */
		if ((rq->cmd_flags & REQ_OP_MASK) != OP_FLUSH)
			return;
		dev = rq->q->disk->part0->bd_dev;
		d = dev_slot(dev, true);
		if (d)
			d->flush_issue_ns = bpf_ktime_get_ns();
		return;
	}
	stage_to(r, bpf_ktime_get_ns(), BS_DEVICE);
	r->size = rq->__data_len;
	if (!(r->flags & BR_ISSUED)) {
		r->flags |= BR_ISSUED;
		d = dev_slot(r->dev, false);
		if (d)
			dev_inc(d, true);
	}
}

/* rq came back from the driver to be issued again. */
static __always_inline void on_requeue(struct request *rq)
{
	struct blk_req *r = req_of(rq);
	struct blk_dev *d;

	if (!r)
		return;
	stage_to(r, bpf_ktime_get_ns(), BS_SCHED);
	r->requeues++;
	if (r->flags & BR_ISSUED) {
		r->flags &= ~BR_ISSUED;
		d = dev_slot(r->dev, false);
		if (d)
			__sync_fetch_and_add(&d->inflight, -1);
	}
}

/* rq completed nr_bytes: account it once all of it is done. */
static __always_inline void on_complete(struct request *rq, int error, unsigned int nr_bytes)
{
	struct blk_req *r = req_of(rq);
	const struct filter_prog *f;
	struct blk_dev *d, *disk;
	__u64 now, lat, id;

	if (!r)
		return;
	id = r->owner;
	if (nr_bytes < rq->__data_len)
		return;		/* a partial completion: more of rq follows */
	now = bpf_ktime_get_ns();
	/* A flush without data never issues: the queue's flush request does
	 * its device work, issued on the whole disk (a partition's flush is
	 * the disk's). */
	if (r->cur != BS_DEVICE) {
		disk = dev_slot(rq->q->disk->part0->bd_dev, false);
		if (disk && disk->flush_issue_ns > r->last_ns && disk->flush_issue_ns < now)
			stage_to(r, disk->flush_issue_ns, BS_DEVICE);
	}
	stage_to(r, now, BS_DEVICE);
	d = dev_slot(r->dev, false);
	lat = now - r->queue_ns;
	if (d) {
		__sync_fetch_and_add(&d->queued, -1);
		if (r->flags & BR_ISSUED)
			__sync_fetch_and_add(&d->inflight, -1);
	}
	f = filter_cur();
	if (f->n && f->needs_lat) {
		struct filter_input in = {
			.pid = r->tgid, .tid = r->tid, .dev = r->dev, .op = r->op,
			.size = r->size, .lat = lat, .comm = r->comm,
		};

		if (!filter_match(f, &in)) {
			health_inc(BH_DROPPED);
			goto out;
		}
	}
	account(r, lat, error);
	if ((r->flags & BR_SAMPLED) || (f->threshold_ns && lat >= f->threshold_ns))
		emit_event(r, id, now, lat, error);
out:
	req_free(r);
}

SEC("tp_btf/block_bio_queue")
int BPF_PROG(bio_queue, struct bio *bio)
{
	return on_queue(bio, BPF_ANY);
}

SEC("fentry/submit_bio_noacct_nocheck")
int BPF_PROG(bio_queue_fentry, struct bio *bio)
{
	/* The tracepoint fires once per bio; a split's remainder comes back
	 * through here, and keeps the state it has. */
	return on_queue(bio, BPF_NOEXIST);
}

SEC("tp_btf/block_split")
int BPF_PROG(bio_split, struct bio *bio, unsigned int new_sector)
{
	on_split(bio);
	return 0;
}

SEC("tp_btf/block_bio_backmerge")
int BPF_PROG(bio_backmerge, struct bio *bio)
{
	merged(req_of_bio(bio));
	return 0;
}

SEC("tp_btf/block_bio_frontmerge")
int BPF_PROG(bio_frontmerge, struct bio *bio)
{
	merged(req_of_bio(bio));
	return 0;
}

/* A request merged into the one before or after it in the scheduler. */
SEC("tp_btf/block_rq_merge")
int BPF_PROG(rq_merge, struct request *rq)
{
	merged(req_of(rq));
	return 0;
}

SEC("tp_btf/block_getrq")
int BPF_PROG(rq_getrq, struct bio *bio)
{
	on_getrq(bio);
	return 0;
}

SEC("tp_btf/block_io_start")
int BPF_PROG(rq_io_start, struct request *rq)
{
	on_getrq(rq->bio);
	return 0;
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(rq_insert, struct request *rq)
{
	on_insert(rq);
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(rq_issue, struct request *rq)
{
	on_issue(rq);
	return 0;
}

SEC("fentry/blk_mq_start_request")
int BPF_PROG(rq_issue_fentry, struct request *rq)
{
	on_issue(rq);
	return 0;
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(rq_requeue, struct request *rq)
{
	on_requeue(rq);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(rq_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	on_complete(rq, error, nr_bytes);
	return 0;
}

SEC("fentry/blk_update_request")
int BPF_PROG(rq_complete_fentry, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	on_complete(rq, error, nr_bytes);
	return 0;
}
