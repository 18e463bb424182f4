// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The nvme probe: each NVMe/TCP I/O's latency split into stages, on the
 * initiator (nvme_tcp) and on the target (nvmet_tcp), on a stock kernel.
 *
 * Initiator: an I/O is keyed by its struct request.  Its boundaries are
 * stamped as the hooks see it (nvme.h, enum nvme_ibound); the bio's queueing
 * time is found through rq->bio at queue_rq.  The send path runs one request
 * at a time per queue: nvme_tcp_try_send's entry works out which request it
 * is about to send (the one in progress, else the oldest queued, as
 * nvme_tcp_fetch_request takes it) and its exit sees whether that request's
 * capsule or data went out.  Responses are noticed per queue at
 * nvme_tcp_data_ready; an I/O's response arrival is its queue's last one
 * before nvme_complete_rq.
 *
 * Target: a command is keyed by (queue, command id) from nvmet_req_init to
 * the response PDU.
 *
 * At its end an I/O is checked against its op's sequence (nvme.h, enum
 * nvme_seq): boundaries whose hook is live must be present and ordered;
 * those without a live hook take the previous boundary's time (their stage
 * is 0).  An I/O that does not fit is counted as a misfit, not split.
 *
 * The nvme types live in module BTF (nvme_core, nvme_tcp, nvmet, nvmet_tcp),
 * not vmlinux: they are declared here with only the fields used, and CO-RE
 * relocates them against the running kernel's modules.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "nvme.h"
#include "../filter.bpf.h"
#include "../bits.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define PAI __attribute__((preserve_access_index))

struct nvme_ctrl_ops___l {
	const char *name;
} PAI;

struct nvme_ctrl___l {
	const struct nvme_ctrl_ops___l *ops;
	int instance;
	u16 cntlid;
} PAI;

struct nvme_request___l {
	void *cmd;
	struct nvme_ctrl___l *ctrl;
} PAI;

enum nvme_tcp_send_state___l {
	NVME_TCP_SEND_CMD_PDU___l = 0,
};

struct nvme_tcp_queue___l;

struct nvme_tcp_request___l {
	struct nvme_tcp_queue___l *queue;
	struct list_head entry;
	struct llist_node lentry;
	enum nvme_tcp_send_state___l state;
} PAI;

struct nvme_tcp_queue___l {
	struct llist_head req_list;
	struct list_head send_list;
	struct nvme_tcp_request___l *request;
} PAI;

struct nvmet_ctrl___l {
	u16 cntlid;
} PAI;

struct nvmet_sq___l {
	struct nvmet_ctrl___l *ctrl;
	u16 qid;
	bool sqhd_disabled;
} PAI;

struct nvmet_fabrics_ops___l {
	unsigned int type;
} PAI;

struct nvmet_req___l {
	void *cmd;
	struct nvmet_sq___l *sq;
	size_t transfer_len;
	const struct nvmet_fabrics_ops___l *ops;
} PAI;

struct nvmet_tcp_cmd___l {
	struct nvmet_req___l req;
} PAI;

#define NVMF_TRTYPE_TCP 3
#define NVME_OP_WRITE 1
#define NVME_OP_READ 2
#define MAX_WALK 32		/* queued requests walked to find the oldest */

/* Which boundaries have a live hook (set by user space before load). */
const volatile __u32 have = 0;

#define PROBE_HEALTH_N H_N
#define PROBE_HEALTH_BUDGET H_BUDGET
#define PROBE_MAX_EVENTS NVME_DEFAULT_MAX_EVENTS
#include "../probe.bpf.h"

volatile __u64 next_id = 0;
/* Per filter slot: the stats key fields the query reads nothing of (NVME_NO_*_KEY). */
__u32 filter_keymask[2] = {};

struct sending {
	__u64 req;
	__u32 state;
	__u32 pad;
};

/* Queueing times of bios of nvme disks (PCIe ones too, never taken): an
 * LRU hash, where one pushed out leaves its I/O a misfit, counted. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, NVME_DEFAULT_INFLIGHT);	/* set at load: nvme_inflight_max */
	__type(key, __u64);
	__type(value, __u64);
} bio_ts SEC(".maps");

/* The I/Os followed, per side: preallocated hashes (an I/O starts and ends
 * in softirqs, where the allocator must not be waited on), sized at load.
 * A full one refuses the new I/O, counted; it never drops an old one unseen. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NVME_DEFAULT_INFLIGHT);	/* set at load: nvme_inflight_max */
	__type(key, __u64);
	__type(value, struct nvme_iio);
} ios SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NVME_DEFAULT_INFLIGHT);	/* set at load: nvme_inflight_max */
	__type(key, struct nvme_tkey);
	__type(value, struct nvme_tio);
} tios SEC(".maps");

/* Per queue (queues are few): LRU hashes, where an entry pushed out leaves a
 * boundary unstamped and its I/O a misfit, counted. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct sending);
} sends SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, __u64);
} rx_ts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NVME_DEFAULT_KEYS);	/* set at load: latoprc nvme_max */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct nvme_key);
	__type(value, struct nvme_stats);
} stats SEC(".maps");

/* The totals of the I/Os whose key found the stats map full. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct nvme_stats);
} overflow SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct nvme_stats);
} zero_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, NVME_RINGBUF_BYTES);
} events SEC(".maps");

/* Run f on an I/O's key (lat 0 before its end). */
static __always_inline bool filter_io(const struct filter_prog *f, const struct nvme_key *k,
				      __u64 lat)
{
	struct filter_input in = {};

	/* FTERM_OP speaks the block layer's REQ_OP codes (read 0, write 1, flush 2). */
	in.op = k->op == NVME_OP_READ ? 0 : k->op == NVME_OP_WRITE ? 1 : k->op == 0 ? 2 : 0xff;
	in.size = k->size;
	in.qid = k->qid;
	in.side = k->side;
	in.lat = lat;
	return filter_match(f, &in);
}

/*
 * Decide at an I/O's start whether it is tracked (filter, SAMPLE 1/N by its
 * command slot, nvme.h: nvme_sample_keep).  cid is NULL when the command id
 * is not known yet (the initiator's queue_rq): setup_cmd samples it then.
 */
static __always_inline bool track_start(const struct nvme_key *k, const __u32 *cid)
{
	const struct filter_prog *f = filter_cur();

	if ((cid && !nvme_sample_keep(f->sample_n, k->qid, *cid)) ||
	    (f->n && !f->needs_lat && !filter_io(f, k, 0))) {
		health_inc(H_DROPPED);
		return false;
	}
	return true;
}

/* Read the NVMe opcode and command id of the command at cmd. */
static __always_inline void read_cmd(const void *cmd, __u32 *op, __u32 *cid)
{
	__u8 opcode = 0;
	__u16 id = 0;

	bpf_probe_read_kernel(&opcode, sizeof(opcode), cmd);
	bpf_probe_read_kernel(&id, sizeof(id), cmd + 2);
	*op = opcode;
	*cid = id;
}

/* Return the nvme_request behind rq (blk_mq_rq_to_pdu). */
static __always_inline struct nvme_request___l *nvme_req(struct request *rq)
{
	return (void *)rq + bpf_core_type_size(struct request);
}

/* Return true when rq belongs to an nvme-tcp controller; fill its key. */
static __always_inline bool tcp_request(struct request *rq, struct nvme_key *k)
{
	struct nvme_request___l *nr = nvme_req(rq);
	struct nvme_ctrl___l *ctrl = BPF_CORE_READ(nr, ctrl);
	const char *name;
	char tcp[4] = {};

	if (!ctrl || !BPF_CORE_READ(rq, q, queuedata))
		return false;
	name = BPF_CORE_READ(ctrl, ops, name);
	if (!name || bpf_probe_read_kernel_str(tcp, sizeof(tcp), name) != 4 ||
	    tcp[0] != 't' || tcp[1] != 'c' || tcp[2] != 'p')
		return false;
	k->side = SIDE_INITIATOR;
	k->instance = BPF_CORE_READ(ctrl, instance);
	k->cntlid = BPF_CORE_READ(ctrl, cntlid);
	k->qid = BPF_CORE_READ(rq, mq_hctx, queue_num) + 1;
	k->size = BPF_CORE_READ(rq, __data_len);
	return true;
}

/* Stamp boundary b of the I/O rq now (the first time only). */
static __always_inline void stamp(struct request *rq, int b)
{
	__u64 key = (__u64)rq;
	struct nvme_iio *io = bpf_map_lookup_elem(&ios, &key);

	if (io && b >= 0 && b < IB_N && !io->t[b])
		io->t[b] = bpf_ktime_get_ns();
}

/* Start tracking rq at queue_rq time (or at nvme_setup_cmd when that is the hook). */
static __always_inline void start_io(struct request *rq, __u64 now)
{
	struct nvme_iio io = {};
	__u64 key = (__u64)rq, bio, *bt;
	__u32 op;

	if (bpf_map_lookup_elem(&ios, &key) || !tcp_request(rq, &io.key))
		return;
	op = BPF_CORE_READ(rq, cmd_flags) & 0xff;	/* REQ_OP_*, until nvme_setup_cmd */
	io.key.op = op == 0 ? NVME_OP_READ : op == 1 ? NVME_OP_WRITE : op == 2 ? 0 : 0xff;
	if (!track_start(&io.key, NULL))
		return;
	io.t[IB_QRQ] = now;
	bio = (__u64)BPF_CORE_READ(rq, bio);
	bt = bio ? bpf_map_lookup_elem(&bio_ts, &bio) : NULL;
	if (bt) {
		io.t[IB_BIO] = *bt;
		bpf_map_delete_elem(&bio_ts, &bio);
	}
	if (bpf_map_update_elem(&ios, &key, &io, BPF_NOEXIST))
		health_inc(H_EVICTED);
}

SEC("tp_btf/block_bio_queue")
int BPF_PROG(bio_queue, struct bio *bio)
{
	struct gendisk *disk = BPF_CORE_READ(bio, bi_bdev, bd_disk);
	char name[5] = {};
	__u64 key = (__u64)bio, now;

	if (!disk)
		return 0;
	bpf_probe_read_kernel(name, 4, &disk->disk_name);
	if (name[0] != 'n' || name[1] != 'v' || name[2] != 'm' || name[3] != 'e')
		return 0;
	now = bpf_ktime_get_ns();
	bpf_map_update_elem(&bio_ts, &key, &now, BPF_ANY);
	return 0;
}

/*
 * A bio split to the queue's limits: the front part goes on as a new bio
 * chained to the original (its bi_private), which is resubmitted without a
 * second block_bio_queue.  The front inherits the original's queueing time.
 */
SEC("tp_btf/block_split")
int BPF_PROG(bio_split, struct bio *split, unsigned int new_sector)
{
	__u64 parent = (__u64)BPF_CORE_READ(split, bi_private), key = (__u64)split;
	__u64 *t = parent ? bpf_map_lookup_elem(&bio_ts, &parent) : NULL;

	if (t) {
		__u64 ts = *t;

		bpf_map_update_elem(&bio_ts, &key, &ts, BPF_ANY);
	}
	return 0;
}

SEC("fentry/nvme_tcp_queue_rq")
int BPF_PROG(queue_rq, struct blk_mq_hw_ctx *hctx, const struct blk_mq_queue_data *bd)
{
	start_io(BPF_CORE_READ(bd, rq), bpf_ktime_get_ns());
	return 0;
}

/* nvme_setup_cmd: the command id and opcode; the I/O's start without queue_rq. */
SEC("tp_btf/nvme_setup_cmd")
int BPF_PROG(setup_cmd, struct request *rq, void *cmd)
{
	__u64 key = (__u64)rq;
	struct nvme_iio *io;

	if (!(have & HAVE_I(IB_QRQ)))
		start_io(rq, bpf_ktime_get_ns());
	io = bpf_map_lookup_elem(&ios, &key);
	if (io) {
		__u32 op;

		read_cmd(cmd, &op, &io->cid);
		io->key.op = op;
		/* SAMPLE 1/N: the command id is known from here */
		if (!nvme_sample_keep(filter_cur()->sample_n, io->key.qid, io->cid)) {
			bpf_map_delete_elem(&ios, &key);
			health_inc(H_DROPPED);
		}
	}
	return 0;
}

/* Return the request nvme_tcp_try_send is about to send on queue q. */
static __always_inline struct nvme_tcp_request___l *next_send(struct nvme_tcp_queue___l *q)
{
	struct nvme_tcp_request___l *req = BPF_CORE_READ(q, request);
	struct list_head *head, *first;
	struct llist_node *node, *next;
	int i;

	if (req)
		return req;
	head = (void *)q + bpf_core_field_offset(q->send_list);
	first = BPF_CORE_READ(q, send_list.next);
	if (first && first != head)
		return (void *)first - bpf_core_field_offset(req->entry);
	/* The req_list llist is newest first: the oldest is its last node. */
	node = BPF_CORE_READ(q, req_list.first);
	if (!node)
		return NULL;
	for (i = 0; i < MAX_WALK; i++) {
		next = BPF_CORE_READ(node, next);
		if (!next)
			break;
		node = next;
	}
	return (void *)node - bpf_core_field_offset(req->lentry);
}

/* Return the struct request of an nvme_tcp_request (its blk-mq pdu). */
static __always_inline struct request *tcp_rq(struct nvme_tcp_request___l *req)
{
	return (void *)req - bpf_core_type_size(struct request);
}

SEC("fentry/nvme_tcp_try_send")
int BPF_PROG(try_send_enter, struct nvme_tcp_queue___l *q)
{
	struct nvme_tcp_request___l *req = next_send(q);
	__u64 key = (__u64)q, rq;
	struct sending s = {}, *prev = bpf_map_lookup_elem(&sends, &key);

	rq = req ? (__u64)tcp_rq(req) : 0;
	if (!rq || !bpf_map_lookup_elem(&ios, &rq)) {
		bpf_map_delete_elem(&sends, &key);
		return 0;
	}
	/* A request sent in several calls keeps the state of the first. */
	if (prev && prev->req == (__u64)req)
		return 0;
	s.req = (__u64)req;
	s.state = BPF_CORE_READ(req, state);
	bpf_map_update_elem(&sends, &key, &s, BPF_ANY);
	return 0;
}

SEC("fexit/nvme_tcp_try_send")
int BPF_PROG(try_send_exit, struct nvme_tcp_queue___l *q, int ret)
{
	__u64 key = (__u64)q, rq;
	struct sending *s = bpf_map_lookup_elem(&sends, &key);
	struct nvme_iio *io;

	if (!s)
		return 0;
	/* Still the queue's request: part of it remains to be sent. */
	if ((__u64)BPF_CORE_READ(q, request) == s->req)
		return 0;
	rq = (__u64)tcp_rq((void *)s->req);
	io = bpf_map_lookup_elem(&ios, &rq);
	if (io) {
		__u64 now = bpf_ktime_get_ns();

		/* The state at entry tells the capsule from data sent after an R2T. */
		if (s->state != NVME_TCP_SEND_CMD_PDU___l && !io->t[IB_DATA_SENT])
			io->t[IB_DATA_SENT] = now;
		else if (s->state == NVME_TCP_SEND_CMD_PDU___l && !io->t[IB_CMD_SENT])
			io->t[IB_CMD_SENT] = now;
	}
	bpf_map_delete_elem(&sends, &key);
	return 0;
}

SEC("fentry/nvme_tcp_setup_h2c_data_pdu")
int BPF_PROG(setup_h2c, struct nvme_tcp_request___l *req)
{
	stamp(tcp_rq(req), IB_R2T);
	return 0;
}

SEC("fentry/nvme_tcp_data_ready")
int BPF_PROG(data_ready, struct sock *sk)
{
	__u64 q = (__u64)BPF_CORE_READ(sk, sk_user_data), now = bpf_ktime_get_ns();

	if (q)
		bpf_map_update_elem(&rx_ts, &q, &now, BPF_ANY);
	return 0;
}

/* nvme_complete_rq: the response was handled; take its queue's arrival time. */
static __always_inline void ncomplete(struct request *rq)
{
	__u64 key = (__u64)rq, q, *rx;
	struct nvme_iio *io = bpf_map_lookup_elem(&ios, &key);

	if (!io || io->t[IB_NCMPL])
		return;
	io->t[IB_NCMPL] = bpf_ktime_get_ns();
	q = (__u64)BPF_CORE_READ(rq, mq_hctx, driver_data);
	rx = bpf_map_lookup_elem(&rx_ts, &q);
	if (rx)
		io->t[IB_RX] = *rx;
}

SEC("tp_btf/nvme_complete_rq")
int BPF_PROG(complete_rq_tp, struct request *rq)
{
	ncomplete(rq);
	return 0;
}

SEC("fentry/nvme_complete_rq")
int BPF_PROG(complete_rq_fentry, struct request *rq)
{
	ncomplete(rq);
	return 0;
}

/* Add one finished I/O to its key's totals (the key as far as the query reads it). */
static __always_inline void account(const struct nvme_key *io_key, const __u64 *stage, __u64 lat,
				    bool misfit)
{
	struct nvme_stats *st, *z;
	struct nvme_key key, *k = &key;
	__u32 zero = 0;
	bool over;
	int i;

	nvme_key_masked(io_key, filter_keymask[filter_idx & 1], &key);
	st = bpf_map_lookup_elem(&stats, k);
	if (!st) {
		z = bpf_map_lookup_elem(&zero_stats, &zero);
		if (!z)
			return;
		/* No room for k: its figures go to the overflow entry. */
		st = stats_or_overflow(&stats, &overflow, k, z, &over);
		if (!st)
			return;
		if (over)
			health_inc(H_OVERFLOW);
	}
	if (misfit) {
		__sync_fetch_and_add(&st->misfit, 1);
		return;
	}
	__sync_fetch_and_add(&st->count, 1);
	__sync_fetch_and_add(&st->lat_sum, lat);
	for (i = 0; i < NS_N; i++) {
		if (!stage[i])
			continue;
		__sync_fetch_and_add(&st->stage[i], stage[i]);
		lh_add(st->hist[i], stage[i]);
	}
	lh_add(st->hist[NS_N], lat);
}

/* Send one finished I/O to the ring buffer, within the per-tick budget. */
static __always_inline void emit(const struct nvme_key *k, __u32 cid, __u32 seq, __u64 now,
				 __u64 lat, const __u64 *stage)
{
	const struct filter_prog *f = filter_cur();
	struct nvme_event *e;

	/* Single I/Os cross only when asked: SAMPLE 1/N, THRESHOLD or BUFFER. */
	if (f->sample_n <= 1 && !f->threshold_ns && !f->max_events)
		return;
	if (f->threshold_ns && lat < f->threshold_ns)
		return;
	if (!budget_take())
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		health_inc(H_LOST);
		return;
	}
	e->ts_ns = now;
	e->id = __sync_fetch_and_add(&next_id, 1) + 1;
	e->key = *k;
	e->cid = cid;
	e->seq = seq;
	e->lat = lat;
	__builtin_memcpy(e->stage, stage, sizeof(e->stage));
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

/* Finish an I/O: apply the late filter (lat), count it, send it. */
static __always_inline void finish(const struct nvme_key *k, __u32 cid, __u32 seq, __u64 now,
				   __u64 lat, const __u64 *stage, bool misfit)
{
	const struct filter_prog *f = filter_cur();

	if (f->n && f->needs_lat && !filter_io(f, k, lat)) {
		health_inc(H_DROPPED);
		return;
	}
	account(k, stage, lat, misfit);
	if (!misfit)
		emit(k, cid, seq, now, lat, stage);
}

/* t[b] when set; the previous boundary's time when b has no live hook; 0 when missed. */
static __always_inline __u64 bound(__u64 *t, int b, __u64 prev)
{
	if (b < 0 || b >= IB_N)
		return 0;
	if (!(have & HAVE_I(b)))
		return prev;
	return t[b];
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(block_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns(), b[IB_N], stage[NS_N] = {};
	struct nvme_iio *io = bpf_map_lookup_elem(&ios, &key);
	bool misfit = false, r2t;
	__u32 seq;
	__u64 sent;
	int i;

	if (!io)
		return 0;
	io->t[IB_BCMPL] = now;
	r2t = io->t[IB_R2T] || io->t[IB_DATA_SENT];
	seq = r2t ? SEQ_WRITE_R2T : io->key.op == NVME_OP_WRITE ? SEQ_WRITE_INLINE : SEQ_READ;
	/* Without a live bio hook the I/O starts at queue_rq. */
	b[IB_BIO] = (have & HAVE_I(IB_BIO)) ? io->t[IB_BIO] : io->t[IB_QRQ];
	b[IB_QRQ] = io->t[IB_QRQ];
	b[IB_CMD_SENT] = bound(io->t, IB_CMD_SENT, b[IB_QRQ]);
	if (r2t) {
		b[IB_R2T] = bound(io->t, IB_R2T, b[IB_CMD_SENT]);
		b[IB_DATA_SENT] = bound(io->t, IB_DATA_SENT, b[IB_R2T]);
	} else {
		b[IB_R2T] = b[IB_DATA_SENT] = b[IB_CMD_SENT];
	}
	b[IB_NCMPL] = io->t[IB_NCMPL];
	sent = b[IB_DATA_SENT];
	/* The queue's last arrival may predate this I/O's send only if it was missed. */
	b[IB_RX] = bound(io->t, IB_RX, b[IB_NCMPL]);
	if (b[IB_RX] < sent || b[IB_RX] > b[IB_NCMPL])
		misfit = true;
	b[IB_BCMPL] = now;
	for (i = 0; i < IB_N; i++)
		if (!b[i] || (i && b[i] < b[i - 1]))
			misfit = true;
	if (!misfit) {
		stage[NS_QUEUE] = b[IB_QRQ] - b[IB_BIO];
		stage[NS_SUBMIT] = b[IB_CMD_SENT] - b[IB_QRQ];
		stage[NS_R2T] = b[IB_R2T] - b[IB_CMD_SENT];
		stage[NS_DATA_OUT] = b[IB_DATA_SENT] - b[IB_R2T];
		stage[NS_REMOTE] = b[IB_RX] - b[IB_DATA_SENT];
		stage[NS_RX] = b[IB_NCMPL] - b[IB_RX];
		stage[NS_COMPLETE] = b[IB_BCMPL] - b[IB_NCMPL];
	}
	finish(&io->key, io->cid, seq, now, misfit ? 0 : now - b[IB_BIO], stage, misfit);
	bpf_map_delete_elem(&ios, &key);
	return 0;
}

/* Target: the key of request req (its queue and command id). */
static __always_inline void tkey_of(struct nvmet_req___l *req, struct nvmet_sq___l *sq,
				    struct nvme_tkey *tk, __u32 *op)
{
	__u32 cid = 0;

	read_cmd(BPF_CORE_READ(req, cmd), op, &cid);
	tk->sq = (__u64)sq;
	tk->cid = cid;
	tk->pad = 0;
}

/* A command arrived on sq: start tracking it when it is a TCP I/O command. */
static __always_inline void tstart(struct nvmet_req___l *req, struct nvmet_sq___l *sq,
				   const struct nvmet_fabrics_ops___l *ops)
{
	struct nvmet_ctrl___l *ctrl = BPF_CORE_READ(sq, ctrl);
	struct nvme_tio io = {};
	struct nvme_tkey tk;
	__u32 op;

	if (!ctrl || BPF_CORE_READ(ops, type) != NVMF_TRTYPE_TCP || !BPF_CORE_READ(sq, qid))
		return;
	tkey_of(req, sq, &tk, &op);
	io.key.side = SIDE_TARGET;
	io.key.cntlid = BPF_CORE_READ(ctrl, cntlid);
	io.key.qid = BPF_CORE_READ(sq, qid);
	io.key.op = op;
	io.cid = tk.cid;
	if (!track_start(&io.key, &io.cid))
		return;
	io.t[TB_INIT] = bpf_ktime_get_ns();
	/* One there already is a command that never ended: given up, counted. */
	if (bpf_map_lookup_elem(&tios, &tk))
		health_inc(H_EVICTED);
	if (bpf_map_update_elem(&tios, &tk, &io, BPF_ANY))
		health_inc(H_EVICTED);
}

SEC("tp_btf/nvmet_req_init")
int BPF_PROG(req_init_tp, struct nvmet_req___l *req, void *cmd)
{
	tstart(req, BPF_CORE_READ(req, sq), BPF_CORE_READ(req, ops));
	return 0;
}

SEC("fentry/nvmet_req_init")
int BPF_PROG(req_init_fentry, struct nvmet_req___l *req, void *cq, struct nvmet_sq___l *sq,
	     const struct nvmet_fabrics_ops___l *ops)
{
	tstart(req, sq, ops);
	return 0;
}

/* Stamp target boundary b of req now (the first time only); return its record. */
static __always_inline struct nvme_tio *tstamp(struct nvmet_req___l *req, int b)
{
	struct nvme_tkey tk;
	struct nvme_tio *io;
	__u32 op;

	tkey_of(req, BPF_CORE_READ(req, sq), &tk, &op);
	io = bpf_map_lookup_elem(&tios, &tk);
	if (io && b >= 0 && b < TB_N && !io->t[b])
		io->t[b] = bpf_ktime_get_ns();
	return io;
}

SEC("fentry/nvmet_bdev_execute_rw")
int BPF_PROG(bdev_execute, struct nvmet_req___l *req)
{
	tstamp(req, TB_EXEC);
	return 0;
}

SEC("fentry/nvmet_file_execute_rw")
int BPF_PROG(file_execute, struct nvmet_req___l *req)
{
	tstamp(req, TB_EXEC);
	return 0;
}

static __always_inline void tfinish(struct nvmet_req___l *req);

/* The command completed on the backing device: its size is known by now. */
static __always_inline void tcomplete(struct nvmet_req___l *req)
{
	struct nvme_tio *io = tstamp(req, TB_CMPL);

	if (!io)
		return;
	io->key.size = BPF_CORE_READ(req, transfer_len);
	/*
	 * Without a response hook the command ends at its completion; so does
	 * a read on a queue without SQ flow control (the host's disable_sqflow):
	 * its last C2H data PDU carries the success flag, and no response PDU
	 * follows.
	 */
	if (!(have & HAVE_T(TB_RSP)) ||
	    (io->key.op == NVME_OP_READ && BPF_CORE_READ(req, sq, sqhd_disabled))) {
		io->t[TB_RSP] = io->t[TB_CMPL];
		tfinish(req);
	}
}

SEC("tp_btf/nvmet_req_complete")
int BPF_PROG(req_complete_tp, struct nvmet_req___l *req)
{
	tcomplete(req);
	return 0;
}

SEC("fentry/nvmet_req_complete")
int BPF_PROG(req_complete_fentry, struct nvmet_req___l *req, u16 status)
{
	tcomplete(req);
	return 0;
}

/* The response PDU goes out: the command's end. */
static __always_inline void tfinish(struct nvmet_req___l *req)
{
	__u64 stage[NS_N] = {}, now, t0, t1, t2, t3;
	struct nvme_tkey tk;
	struct nvme_tio *io;
	bool misfit = false, rw;
	__u32 op;

	tkey_of(req, BPF_CORE_READ(req, sq), &tk, &op);
	io = bpf_map_lookup_elem(&tios, &tk);
	if (!io || !io->t[TB_CMPL])
		return;		/* an R2T, or a command not tracked */
	now = bpf_ktime_get_ns();
	if (!io->t[TB_RSP])
		io->t[TB_RSP] = now;
	rw = io->key.op == NVME_OP_READ || io->key.op == NVME_OP_WRITE;
	t0 = io->t[TB_INIT];
	t1 = (have & HAVE_T(TB_EXEC)) && rw ? io->t[TB_EXEC] : t0;
	t2 = io->t[TB_CMPL];
	t3 = io->t[TB_RSP];
	misfit = !t0 || !t1 || t1 < t0 || t2 < t1 || t3 < t2;
	if (!misfit) {
		stage[NS_T_RECV] = t1 - t0;
		stage[NS_T_EXEC] = t2 - t1;
		stage[NS_T_SEND] = t3 - t2;
	}
	finish(&io->key, io->cid, SEQ_TARGET, now, misfit ? 0 : t3 - t0, stage, misfit);
	bpf_map_delete_elem(&tios, &tk);
}

SEC("fentry/nvmet_setup_response_pdu")
int BPF_PROG(setup_response, struct nvmet_tcp_cmd___l *cmd)
{
	tfinish((void *)cmd + bpf_core_field_offset(cmd->req));
	return 0;
}
