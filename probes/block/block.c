/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The block probe, user side: choose hooks, load and attach block.bpf.c, and
 * turn its monotonic per-key totals into one frame of block per tick, with
 * the slow or sampled requests in block_events and their stages in
 * block_spans.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "../../core/clock.h"
#include "../../core/xalloc.h"
#include "../../core/hist.h"
#include "blkdev.h"
#include "../probe.h"
#include "../probe_util.h"
#include "../feature.h"
#include "block.h"
#include "block_schema.h"
#include "block.skel.h"

#define IDLE_TICKS 10		/* a key idle this many ticks leaves the map */
#define NAME_CACHE 64

/* Each stage boundary and its hooks, preferred first. */
static const struct hook_spec hook_specs[] = {
	{"bio queued (who, dev, op, size)", true, NULL,
	 {HOOK_TP_BTF("block_bio_queue", "bio_queue"),
	  HOOK_FENTRY("submit_bio_noacct_nocheck", "bio_queue_fentry")}},
	{"request allocated (alloc ends)", false, "none: alloc is 0, its time shows in plug",
	 {HOOK_TP_BTF("block_getrq", "rq_getrq"), HOOK_TP_BTF("block_io_start", "rq_io_start")}},
	{"inserted in scheduler (plug ends)", false, "none: sched is 0, its time shows in plug",
	 {HOOK_TP_BTF("block_rq_insert", "rq_insert")}},
	{"issued to driver (device begins)", true, NULL,
	 {HOOK_TP_BTF("block_rq_issue", "rq_issue"),
	  HOOK_FENTRY("blk_mq_start_request", "rq_issue_fentry")}},
	{"completed", true, NULL,
	 {HOOK_TP_BTF("block_rq_complete", "rq_complete"),
	  HOOK_FENTRY("blk_update_request", "rq_complete_fentry")}},
	{"requeued (count, back to sched)", false,
	 "none: requeues not counted; a requeued request's wait shows in device",
	 {HOOK_TP_BTF("block_rq_requeue", "rq_requeue")}},
	{"bio merged (count)", false,
	 "none: back merges not counted; merged bios stay followed until evicted",
	 {HOOK_TP_BTF("block_bio_backmerge", "bio_backmerge")}},
	{"bio front-merged (count)", false, "none: front merges not counted",
	 {HOOK_TP_BTF("block_bio_frontmerge", "bio_frontmerge")}},
	{"request merged in scheduler (count)", false,
	 "none: merged requests not counted; they stay followed until given up after 60 s",
	 {HOOK_TP_BTF("block_rq_merge", "rq_merge")}},
	{"bio split (each part followed)", false,
	 "none: split-off parts of large bios are not followed",
	 {HOOK_TP_BTF("block_split", "bio_split")}},
};
#define NSPECS (sizeof(hook_specs) / sizeof(hook_specs[0]))

/* Where each health counter goes in the frames' stats: single events over
 * the per-tick budget (BUFFER) are left out by design, dropped, not lost. */
static const enum probe_stat health_to[BH_N] = {
	[BH_DROPPED] = PSTAT_DROPPED, [BH_BUDGET] = PSTAT_DROPPED, [BH_LOST] = PSTAT_LOST,
	[BH_UNTRACKED] = PSTAT_EVICTED, [BH_OVERFLOW] = PSTAT_OVERFLOW,
	[BH_UNFINISHED] = PSTAT_EVICTED,
};

/* The totals of one key last tick. */
struct prev_ent {
	struct blk_key key;
	uint8_t state;		/* 0 free, 1 used, 2 deleted */
	uint32_t idle;
	struct blk_stats *st;
};

struct block_priv {
	struct block_bpf *skel;
	struct ring_buffer *rb;
	struct prev_ent *prev;	/* nprev slots */
	uint32_t nprev;		/* a power of 2, twice the stats map's keys or more */
	uint32_t max_keys;	/* the stats map's size: latoprc block_max */
	struct blk_stats *ovf_prev;	/* the overflow entry's totals last tick */
	struct blk_dev *devs;	/* the mapped devs array */
	struct blk_req *reqs;	/* the mapped request table */
	uint32_t max_reqs;	/* its slots: latoprc block_inflight_max */
	uint64_t ticks;		/* ticks collected */
	struct blk_stats *cur;
	uint32_t sample_n;
	int ncpus;
	struct probe_health health;
	uint64_t boot_offset_ns;
	struct frame *ev_frame, *span_frame;
	struct {
		uint32_t dev;
		char name[32];
	} names[NAME_CACHE];
	size_t nnames;
};

/* Return the name of dev, cached. */
static const char *dev_name(struct block_priv *bp, uint32_t dev)
{
	size_t i;

	for (i = 0; i < bp->nnames; i++)
		if (bp->names[i].dev == dev)
			return bp->names[i].name;
	i = bp->nnames < NAME_CACHE ? bp->nnames++ : dev % NAME_CACHE;
	bp->names[i].dev = dev;
	blkdev_name(dev, bp->names[i].name, sizeof(bp->names[i].name));
	return bp->names[i].name;
}

/* Write op's name into buf. */
static const char *op_name(uint32_t op, char *buf, size_t len)
{
	const char *n = blkdev_op_name(op);

	if (n)
		return n;
	snprintf(buf, len, "op%u", op);
	return buf;
}

/* The hook order LATOP_BLOCK_HOOKS asks for: "fentry" tries the fentry
 * alternatives first (the guest test that checks them runs it). */
static unsigned hook_flags(void)
{
	const char *v = getenv("LATOP_BLOCK_HOOKS");

	return v && !strcmp(v, "fentry") ? HOOK_FENTRY_FIRST : 0;
}

static const char *const stage_names[BS_N] = {"alloc", "plug", "sched", "device"};

/* Append one ring buffer record to this tick's events and spans frames. */
static int on_event(void *ctx, void *data, size_t size)
{
	struct block_priv *bp = ctx;
	const struct blk_event *e = data;
	char comm[BLK_COMM_LEN + 1], buf[16];
	uint64_t start;
	union cell *r;
	int s;

	if (size < sizeof(*e) || !bp->ev_frame)
		return 0;
	r = frame_add_row(bp->ev_frame);
	r[BE_TS].u = e->ts_ns + bp->boot_offset_ns;
	r[BE_ID].u = e->id;
	cell_set_str(&r[BE_DEV], dev_name(bp, e->dev));
	cell_set_str(&r[BE_OP], op_name(e->op, buf, sizeof(buf)));
	r[BE_SIZE].u = e->size;
	r[BE_PID].u = e->tgid;
	r[BE_TID].u = e->tid;
	memcpy(comm, e->comm, BLK_COMM_LEN);
	comm[BLK_COMM_LEN] = 0;
	cell_set_str(&r[BE_COMM], comm);
	probe_cgroup_cells(r + BE_CGROUP, e->cgroup);
	r[BE_SECTOR].u = e->sector;
	r[BE_LAT].u = e->lat;
	for (s = 0; s < BS_N; s++)
		r[BE_ALLOC + s].u = e->stage[s];
	r[BE_REQUEUES].u = e->requeues;
	r[BE_ERROR].u = (uint64_t)(int64_t)e->error;
	start = e->queue_ns + bp->boot_offset_ns;
	for (s = 0; s < BS_N; s++) {
		if (!e->stage[s])
			continue;
		r = frame_add_row(bp->span_frame);
		r[BS_COL_ID].u = e->id;
		cell_set_str(&r[BS_COL_ROW], "request");
		r[BS_COL_START].u = start;
		r[BS_COL_DUR].u = e->stage[s];
		cell_set_str(&r[BS_COL_KIND], stage_names[s]);
		cell_set_str(&r[BS_COL_LABEL], stage_names[s]);
		start += e->stage[s];
	}
	return 0;
}

/* Return the hash of a key. */
static uint32_t key_hash(const struct blk_key *k)
{
	uint64_t h = ((uint64_t)k->dev * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)k->op << 40) ^
		     ((uint64_t)k->tgid * 0xC2B2AE3D27D4EB4FULL) ^ ((uint64_t)k->size << 7);
	size_t i;

	for (i = 0; i < BLK_COMM_LEN && k->comm[i]; i++)
		h = (h ^ (uint8_t)k->comm[i]) * 1099511628211ULL;
	h ^= k->cgroup * 0xff51afd7ed558ccdULL;
	return (uint32_t)(h ^ (h >> 29));
}

/* Return key's entry in the prev table, adding it when absent (NULL when full). */
static struct prev_ent *prev_get(struct block_priv *bp, const struct blk_key *k)
{
	uint32_t i, mask = bp->nprev - 1, h = key_hash(k);
	struct prev_ent *tomb = NULL;

	for (i = 0; i < bp->nprev; i++) {
		struct prev_ent *p = &bp->prev[(h + i) & mask];

		if (p->state == 1 && !memcmp(&p->key, k, sizeof(*k)))
			return p;
		if (p->state == 2 && !tomb)
			tomb = p;
		if (p->state == 0) {
			if (!tomb)
				tomb = p;
			break;
		}
	}
	if (!tomb)
		return NULL;
	tomb->key = *k;
	tomb->state = 1;
	tomb->idle = 0;
	tomb->st = xcalloc(1, sizeof(*tomb->st));
	return tomb;
}

/* Append a row for key's requests since last tick (k NULL: the overflow
 * row, text keys "(other)" and numeric ones 0); return the requests counted. */
static uint64_t add_row(struct block_priv *bp, struct frame *f, const struct blk_key *k,
			const struct blk_stats *cur, const struct blk_stats *prev,
			const int64_t *dev_max)
{
	uint64_t n = bp->sample_n > 1 ? bp->sample_n : 1;
	uint64_t count = delta(cur->count, prev->count);
	char comm[BLK_COMM_LEN + 1], buf[16];
	union cell *r = frame_add_row(f);
	int s;

	if (k) {
		/* A field the key leaves out (the query reads nothing of it) is empty. */
		cell_set_str(&r[BC_DEV], k->masked & FILTER_NO_DEV_KEY ? "" : dev_name(bp, k->dev));
		cell_set_str(&r[BC_OP], k->masked & FILTER_NO_OP_KEY ? "" :
			     op_name(k->op, buf, sizeof(buf)));
		r[BC_SIZE].u = k->size;
		r[BC_PID].u = k->tgid;
		memcpy(comm, k->comm, BLK_COMM_LEN);
		comm[BLK_COMM_LEN] = 0;
		cell_set_str(&r[BC_COMM], comm);
		probe_cgroup_cells(r + BC_CGROUP, k->cgroup);
	} else {
		cell_set_str(&r[BC_DEV], "(other)");
		cell_set_str(&r[BC_OP], "(other)");
		r[BC_SIZE].u = 0;
		r[BC_PID].u = 0;
		cell_set_str(&r[BC_COMM], "(other)");
		cell_set_str(&r[BC_CGROUP], "(other)");
		cell_set_str(&r[BC_UNIT], "(other)");
		cell_set_str(&r[BC_CONTAINER], "(other)");
	}
	r[BC_COUNT].u = count * n;
	r[BC_ERRORS].u = delta(cur->errors, prev->errors) * n;
	r[BC_REQUEUES].u = delta(cur->requeues, prev->requeues) * n;
	r[BC_MERGES].u = delta(cur->merges, prev->merges) * n;
	r[BC_BYTES].u = delta(cur->bytes, prev->bytes) * n;
	const struct probe_extremes ex =
		probe_extremes_minmax(cur->lat_min, cur->lat_max, prev->lat_min, prev->lat_max,
				      prev->count);
	probe_cell_hist(&r[BC_LAT], cur->hist[0], prev->hist[0],
			 delta(cur->lat_sum, prev->lat_sum), &ex, n);
	r[BC_TIME].u = delta(cur->lat_sum, prev->lat_sum) * n;
	for (s = 0; s < BS_N; s++) {
		uint64_t t = delta(cur->stage[s], prev->stage[s]);

		r[BC_ALLOC + s].u = t * n;
		probe_cell_hist(&r[BC_ALLOC_LAT + s], cur->hist[1 + s], prev->hist[1 + s], t, NULL, n);
	}
	r[BC_INFLIGHT].u = dev_max[0] > 0 ? (uint64_t)dev_max[0] : 0;
	r[BC_QUEUED].u = dev_max[1] > 0 ? (uint64_t)dev_max[1] : 0;
	return count;
}

/* Read this tick's most in-flight and queued per device from the mapped devs
 * array, and start the next tick's maxima from what is outstanding now (a
 * request counted between the read and the write is lost to the maxima,
 * never to the counts).  Slots of one device add up. */
static size_t read_devs(struct block_priv *bp, uint32_t *devs, int64_t (*max)[2], size_t cap)
{
	size_t n = 0, i, j;

	for (i = 0; i < BLK_DEV_SLOTS; i++) {
		struct blk_dev *d = &bp->devs[i];
		int64_t q, fl, mq, mf;

		if (!__atomic_load_n(&d->used, __ATOMIC_ACQUIRE))
			continue;
		q = __atomic_load_n(&d->queued, __ATOMIC_RELAXED);
		fl = __atomic_load_n(&d->inflight, __ATOMIC_RELAXED);
		mq = __atomic_exchange_n(&d->max_queued, q, __ATOMIC_RELAXED);
		mf = __atomic_exchange_n(&d->max_inflight, fl, __ATOMIC_RELAXED);
		mq = mq > q ? mq : q;
		mf = mf > fl ? mf : fl;
		for (j = 0; j < n && devs[j] != d->dev; j++)
			;
		if (j == n) {
			if (n == cap)
				continue;
			devs[n] = d->dev;
			max[n][0] = max[n][1] = 0;
			n++;
		}
		max[j][0] += mf;
		max[j][1] += mq;
	}
	return n;
}

/* Append the overflow entry's row when it moved; return the requests counted. */
static uint64_t read_overflow(struct block_priv *bp, struct frame *f)
{
	static const int64_t zero[2];
	uint32_t k = 0;
	uint64_t n;

	if (bpf_map_lookup_elem(bpf_map__fd(bp->skel->maps.overflow), &k, bp->cur) ||
	    (bp->cur->count == bp->ovf_prev->count && bp->cur->merges == bp->ovf_prev->merges))
		return 0;
	n = add_row(bp, f, NULL, bp->cur, bp->ovf_prev, zero);
	memcpy(bp->ovf_prev, bp->cur, sizeof(*bp->cur));
	return n;
}

/* Fold every key of the stats map, and the overflow entry, into f; return
 * the requests counted. */
static uint64_t read_stats(struct block_priv *bp, struct frame *f)
{
	int fd = bpf_map__fd(bp->skel->maps.stats);
	struct blk_key key, next, *prevk = NULL;
	struct blk_key evict[64];
	uint32_t devs[BLK_DEV_SLOTS];
	int64_t dmax[BLK_DEV_SLOTS][2], zero[2] = {0, 0};
	size_t ndevs = read_devs(bp, devs, dmax, BLK_DEV_SLOTS), nevict = 0, i;
	uint64_t events = 0;

	while (!bpf_map_get_next_key(fd, prevk, &next)) {
		struct prev_ent *p;
		const int64_t *dm = zero;

		key = next;
		prevk = &key;
		if (bpf_map_lookup_elem(fd, &key, bp->cur))
			continue;
		p = prev_get(bp, &key);
		if (!p)
			continue;
		if (bp->cur->count == p->st->count && bp->cur->merges == p->st->merges) {
			if (++p->idle >= IDLE_TICKS && nevict < 64)
				evict[nevict++] = key;
			continue;
		}
		for (i = 0; i < ndevs; i++)
			if (devs[i] == key.dev)
				dm = dmax[i];
		events += add_row(bp, f, &key, bp->cur, p->st, dm);
		memcpy(p->st, bp->cur, sizeof(*p->st));
		p->idle = 0;
	}
	/* An idle key leaves the map; a request completing just as it goes
	 * may be lost, as a key evicted under a running update would be. */
	for (i = 0; i < nevict; i++) {
		struct prev_ent *p = prev_get(bp, &evict[i]);

		bpf_map_delete_elem(fd, &evict[i]);
		if (p) {
			free(p->st);
			p->st = NULL;
			p->state = 2;
		}
	}
	return events + read_overflow(bp, f);
}

/*
 * Free the request slots of bios queued more than BLK_REQ_STALE_NS ago: their
 * ends were never seen (an error path, a front merge, a driver that failed
 * them without completing).  Return how many.  A request that really takes
 * that long is lost, and counted with them.
 */
static uint64_t free_stale(struct block_priv *bp)
{
	uint64_t now = mono_ns(), n = 0;
	size_t i;

	if (now < BLK_REQ_STALE_NS)
		return 0;
	for (i = 0; i < bp->max_reqs; i++) {
		struct blk_req *r = &bp->reqs[i];
		uint64_t owner = __atomic_load_n(&r->owner, __ATOMIC_ACQUIRE);

		if (!owner || __atomic_load_n(&r->queue_ns, __ATOMIC_RELAXED) + BLK_REQ_STALE_NS > now)
			continue;
		if (__atomic_compare_exchange_n(&r->owner, &owner, 0, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			n++;
	}
	return n;
}

/* Read and fold this tick's totals and events into three frames of t. */
static int block_collect(struct probe *p, uint64_t t_ns, uint64_t dt_ns, struct tick *t,
			 char **cause)
{
	struct block_priv *bp = p->priv;
	struct frame *f = frame_new(&block_schema, t_ns, dt_ns);
	struct frame *ev = frame_new(&block_events_schema, t_ns, dt_ns);
	struct frame *sp = frame_new(&block_spans_schema, t_ns, dt_ns);
	int err;

	bp->ev_frame = ev;
	bp->span_frame = sp;
	err = ring_buffer__consume(bp->rb);
	bp->ev_frame = bp->span_frame = NULL;
	bp->skel->bss->events_used = 0;
	if (err < 0) {
		*cause = xasprintf("block: reading the events ring buffer: %s", strerror(-err));
		frame_free(f);
		frame_free(ev);
		frame_free(sp);
		return -1;
	}
	f->stats.events = read_stats(bp, f);
	probe_health_tick(&bp->health, &f->stats);
	if (++bp->ticks % IDLE_TICKS == 0)
		f->stats.evicted += free_stale(bp);
	ev->stats = f->stats;
	ev->stats.events = ev->nrows;
	sp->stats = ev->stats;
	tick_add(t, f);
	tick_add(t, ev);
	tick_add(t, sp);
	return 0;
}

/* Install f in the idle slot, then make it current. */
static int block_set_filter(struct probe *p, const struct filter_prog *f, char **cause)
{
	struct block_priv *bp = p->priv;
	uint32_t next, i, need = 0;

	if (probe_filter_check("block", f, probe_filter_leaf, cause))
		return -1;
	for (i = 0; i < f->n; i++)
		if (f->e[i].term == FTERM_UID)
			need |= FILTER_NEED_UID;
	need |= block_key_mask(f);
	next = (bp->skel->bss->filter_idx + 1) & 1;
	bp->skel->bss->filters[next] = *f;
	bp->skel->bss->filter_need[next] = need;
	__atomic_store_n(&bp->skel->bss->filter_idx, next, __ATOMIC_RELEASE);
	bp->sample_n = f->sample_n;
	return 0;
}

/* Free everything block_open made. */
static void block_close(struct probe *p)
{
	struct block_priv *bp = p->priv;
	size_t i;

	if (!bp)
		return;
	ring_buffer__free(bp->rb);
	if (bp->devs)
		munmap(bp->devs, BLK_DEV_SLOTS * sizeof(struct blk_dev));
	if (bp->reqs)
		munmap(bp->reqs, bp->max_reqs * sizeof(struct blk_req));
	block_bpf__destroy(bp->skel);
	if (bp->prev)
		for (i = 0; i < bp->nprev; i++)
			free(bp->prev[i].st);
	free(bp->prev);
	free(bp->cur);
	free(bp->ovf_prev);
	free(bp);
	p->priv = NULL;
}

/* A stats entry's kernel memory: its key and value, and the element header
 * and the allocator's share, about 64 bytes on 6.1. */
#define BLK_KEY_BYTES (sizeof(struct blk_key) + sizeof(struct blk_stats) + 64)

/* Return latoprc's block_max, or the default that fits this machine (said,
 * when it is bad). */
static uint32_t read_max_keys(void)
{
	return probe_size_option("block_max", BLK_KEYS_MIN, BLK_KEYS_MAX,
				 probe_size_fit(BLK_DEFAULT_KEYS, BLK_KEYS_DEFAULT_MIN, BLK_KEY_BYTES),
				 false, "keys");
}

/* Return latoprc's block_inflight_max, or the default that fits this machine. */
static uint32_t read_max_reqs(void)
{
	return probe_size_option("block_inflight_max", BLK_REQS_MIN, BLK_REQS_MAX,
				 probe_size_fit(BLK_DEFAULT_REQS, BLK_REQS_DEFAULT_MIN,
						sizeof(struct blk_req)),
				 true, "requests");
}

/* Fill c[0] and c[1] with the stats map's and the request table's capacity
 * and what happens when each is full. */
static void capacity_choices(struct hook_choice *c, uint32_t max_keys, uint32_t max_reqs)
{
	probe_capacity(&c[0], "keys counted at once (latoprc block_max)", max_keys, "keys",
		       BLK_KEY_BYTES, true,
		       "more are counted in the (other) row (overflow)");
	probe_capacity(&c[1], "requests in flight (latoprc block_inflight_max)", max_reqs,
		       "requests", sizeof(struct blk_req), true,
		       "more are not followed, counted as untracked (evicted)");
}

/* Choose hooks and load; block_attach starts counting. */
static int block_open(struct probe *p, char **cause)
{
	struct block_priv *bp = xcalloc(1, sizeof(*bp));
	char why[160];
	void *m;
	int err;

	p->priv = bp;
	if (!feature_btf(why, sizeof(why))) {
		*cause = xasprintf("block: %s", why);
		goto fail;
	}
	bp->skel = block_bpf__open();
	if (!bp->skel) {
		*cause = xasprintf("block: opening the BPF object: %s", strerror(errno));
		goto fail;
	}
	if (hook_choose_all("block", bp->skel->obj, hook_specs, NSPECS, p->hooks, NULL,
			    hook_flags(), cause))
		goto fail;
	bp->max_keys = read_max_keys();
	bp->max_reqs = read_max_reqs();
	capacity_choices(&p->hooks[NSPECS], bp->max_keys, bp->max_reqs);
	p->nhooks = NSPECS + 2;
	if (bpf_map__set_max_entries(bp->skel->maps.stats, bp->max_keys)) {
		*cause = xasprintf("block: sizing the stats map to %u: %s", bp->max_keys,
				   strerror(errno));
		goto fail;
	}
	if (bpf_map__set_max_entries(bp->skel->maps.reqs, bp->max_reqs)) {
		*cause = xasprintf("block: sizing the request table to %u: %s", bp->max_reqs,
				   strerror(errno));
		goto fail;
	}
	bp->skel->rodata->req_mask = bp->max_reqs - 1;
	bp->skel->rodata->self_tgid = getpid();
	err = block_bpf__load(bp->skel);
	if (err) {
		*cause = hook_load_cause("block", err);
		goto fail;
	}
	bp->rb = ring_buffer__new(bpf_map__fd(bp->skel->maps.events), on_event, bp, NULL);
	if (!bp->rb) {
		*cause = xasprintf("block: opening the events ring buffer: %s", strerror(errno));
		goto fail;
	}
	if (bpf_map__value_size(bp->skel->maps.devs) != sizeof(struct blk_dev)) {
		*cause = xasprintf("block: the devs array's values are not struct blk_dev");
		goto fail;
	}
	m = mmap(NULL, BLK_DEV_SLOTS * sizeof(struct blk_dev), PROT_READ | PROT_WRITE,
		 MAP_SHARED, bpf_map__fd(bp->skel->maps.devs), 0);
	if (m == MAP_FAILED) {
		*cause = xasprintf("block: mapping the devs array: %s", strerror(errno));
		goto fail;
	}
	bp->devs = m;
	if (bpf_map__value_size(bp->skel->maps.reqs) != sizeof(struct blk_req)) {
		*cause = xasprintf("block: the request table's values are not struct blk_req");
		goto fail;
	}
	m = mmap(NULL, bp->max_reqs * sizeof(struct blk_req), PROT_READ | PROT_WRITE,
		 MAP_SHARED, bpf_map__fd(bp->skel->maps.reqs), 0);
	if (m == MAP_FAILED) {
		*cause = xasprintf("block: mapping the request table: %s", strerror(errno));
		goto fail;
	}
	bp->reqs = m;
	bp->ncpus = libbpf_num_possible_cpus();
	bp->boot_offset_ns = boot_offset_ns();
	for (bp->nprev = 64; bp->nprev < 2 * bp->max_keys; bp->nprev *= 2)
		;
	bp->prev = xcalloc(bp->nprev, sizeof(*bp->prev));
	bp->cur = xcalloc(1, sizeof(*bp->cur));
	bp->ovf_prev = xcalloc(1, sizeof(*bp->ovf_prev));
	probe_health_init(&bp->health, bpf_map__fd(bp->skel->maps.health), bp->ncpus, health_to,
			  BH_N);
	return 0;
fail:
	block_close(p);
	return -1;
}

/* Attach the loaded programs. */
static int block_attach(struct probe *p, char **cause)
{
	struct block_priv *bp = p->priv;

	return probe_attach_skel("block", bp->skel->skeleton, cause);
}

/* What each stage would use here, every alternative tried. */
static size_t block_hooks(struct hook_choice *out, size_t max)
{
	if (max < NSPECS + 2)
		return 0;
	hook_choose_all("block", NULL, hook_specs, NSPECS, out, NULL,
			hook_flags() | HOOK_CHECK_ALL, NULL);
	capacity_choices(&out[NSPECS], read_max_keys(), read_max_reqs());
	return NSPECS + 2;
}

/* List the fds of the loaded programs. */
static size_t block_prog_fds(struct probe *p, int *out, size_t max)
{
	struct block_priv *bp = p->priv;

	return bp ? probe_prog_fds(bp->skel->obj, out, max) : 0;
}

static const struct schema *const block_tables[] = {
	&block_schema, &block_events_schema, &block_spans_schema,
};

/* The latoprc keys this probe reads. */
static const char *const rc_keys[] = {"block_max", "block_inflight_max", NULL};

const struct probe_ops block_probe_ops = {
	.name = "block",
	.config_keys = rc_keys,
	.help = "block I/O requests by device, operation, size and process, split into "
		"alloc, plug, sched and device stages",
	.ntables = 3,
	.tables = block_tables,
	.open = block_open,
	.attach = block_attach,
	.set_filter = block_set_filter,
	.collect = block_collect,
	.hooks = block_hooks,
	.close = block_close,
	.prog_fds = block_prog_fds,
};
