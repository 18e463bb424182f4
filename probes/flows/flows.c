/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The flows probe, user side: choose hooks, load and attach flows.bpf.c,
 * add the connections accepted before latop started, and turn the flows
 * map's monotonic per-flow totals into one frame of flows and one of
 * flow_events per tick.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "../../core/clock.h"
#include "../../core/xalloc.h"
#include "../../core/hist.h"
#include "../../core/config.h"
#include "../probe.h"
#include "../probe_util.h"
#include "../feature.h"
#include "flows.h"
#include "flows_schema.h"
#include "flows.skel.h"

#define FLOW_DEFAULT_TIMEOUT_TEXT "1s"		/* FLOW_DEFAULT_TIMEOUT_NS, as said */
#define FLOW_TIMEOUT_MIN_NS 1000000ULL		/* flow_timeout's range: 1ms ... */
#define FLOW_TIMEOUT_MAX_NS 3600000000000ULL	/* ... to 1h */
#define FLOW_BATCH 256		/* flows read in one call: 256 x 2.6 KB of totals */
#define PREV_BUCKETS 65536	/* user-side table of last tick's totals (a power of 2) */
#define AGG_IDLE_ROUNDS 10	/* a group's entry unchanged this many reads is removed */

/* Each stage and its hooks, preferred first. */
static const struct hook_spec hook_specs[] = {
	{"ingress (request in)", true, NULL,
	 {{"fentry", NULL, {"tcp_v4_rcv", "tcp_v6_rcv"}, {"rx_tcp", "rx_tcp6"},
	   "fentry/tcp_v4_rcv+tcp_v6_rcv"},
	  HOOK_TP_BTF("netif_receive_skb", "rx_tp")}},
	{"egress (response out)", true, NULL,
	 {HOOK_FENTRY("__dev_queue_xmit", "tx_dev"), HOOK_TP_BTF("net_dev_queue", "tx_tp")}},
	{"accepted connections", true, NULL, {HOOK_TP_BTF("inet_sock_set_state", "set_state")}},
	{"serving process (pid, comm)", false, NULL,
	 {HOOK_TP_BTF("sock_recv_length", "recv_len")}},
	{"connections beyond flow_max (request in)", false,
	 "none: such connections are untracked (evicted)",
	 {HOOK_FENTRY("tcp_filter", "rx_spill"), HOOK_TP_BTF("tcp_probe", "rx_spill_tp")}},
};
#define SPEC_SPILL 4	/* hook_specs' index of the spill hook */
#define NSPECS (sizeof(hook_specs) / sizeof(hook_specs[0]))

/* Where each health counter goes in the frames' stats: single events over
 * the per-tick budget (BUFFER) are left out by design, dropped, not lost. */
static const enum probe_stat health_to[FH_N] = {
	[FH_DROPPED] = PSTAT_DROPPED, [FH_BUDGET] = PSTAT_DROPPED, [FH_LOST] = PSTAT_LOST,
	[FH_EVICTED] = PSTAT_EVICTED, [FH_UNTRACKED] = PSTAT_EVICTED, [FH_FULL] = PSTAT_EVICTED,
	/* Their requests are the overflow row's: flows_collect counts those. */
	[FH_SPILLED] = PSTAT_NONE,
};

/*
 * What the last row of one flow (or group, FLOW_AGG) counted, kept for the
 * next row's deltas.  A flow's key is its fl_key with the rest zero
 * (masked 0) and its birth (born_ns: a 4-tuple that comes back is another
 * connection); a group's, its agg map key and born_ns 0.
 * Its latency histogram is kept sparse, as the buckets that hold requests
 * (bucket << 32 | cumulative count): most flows fill a few of the 592
 * buckets, and a dense copy was 2.6 KB a flow, touched every tick.
 */
struct prev_ent {
	struct prev_ent *next;
	struct fl_akey key;
	uint64_t seen;		/* the collect round that last saw it */
	uint32_t idle;		/* a group's reads in a row that found it unchanged */
	uint32_t closed;	/* a flow's reads that found it closed, still in flows */
	uint64_t born_ns, count, lat_sum, lat_min, lat_max;
	uint64_t bytes_in, bytes_out, evicted, unsolicited;
	uint64_t *hist;		/* nhist sparse buckets, room for hcap */
	uint32_t nhist, hcap;
	/* A flow's totals at each change of its reader read from the renamed
	 * map (struct fl_rkey) and not folded yet: nren of rcap. */
	struct ren_ent *ren;
	uint32_t nren, rcap;
	uint64_t rseq;		/* the last change folded: its seq + 1 (0: none) */
	/* Its totals as read past a change whose totals renamed had not
	 * given yet (fl_stats.rseq): folded once it has, in this read
	 * (read_flows); pend_departed when they were its last. */
	struct fl_stats *pend;
	bool pend_departed;
};

/* A flow's totals at a change of its reader, and the change's number. */
struct ren_ent {
	uint64_t seq;
	struct fl_stats st;
};

struct flows_priv {
	struct flows_bpf *skel;
	struct ring_buffer *rb;
	struct prev_ent *prev[PREV_BUCKETS];
	uint64_t round;
	int ncpus;
	uint64_t timeout_ns;
	uint32_t max_keys;	/* the flows map's size */
	struct probe_health health;
	uint64_t boot_offset_ns;
	struct frame *ev_frame;	/* the events frame being filled by the ring callback */
	struct fl_stats cur;	/* one flow's totals, copied out */
	struct fl_stats *ovf_cpu;	/* the overflow row's copies, one a CPU */
	struct prev_ent ovf_prev;	/* the overflow row's totals at its last row */
	uint32_t prevh[LH_NBUCKETS];	/* a prev_ent's histogram, dense; zero between uses */
	/* A batch of flows read in one call (bpf_map_lookup_batch). */
	struct fl_key *bkeys;
	struct fl_stats *bvals;
	uint32_t bcap;		/* entries each batch buffer holds */
	struct fl_akey *akeys;	/* a batch of the agg map's keys (bvals: their totals) */
	struct fl_dkey *dkeys;	/* a batch of the departed map's keys */
	struct fl_rkey *rkeys;	/* a batch of the renamed map's keys */
	struct fl_akey *idle;	/* groups to remove after this read: nidle of icap */
	size_t nidle, icap;
	/* The spill hook (connections beyond the map): its program, loaded,
	 * attached while the map is at least half full (flow_spill auto) or
	 * always; NULL prog when this kernel has none. */
	struct bpf_program *spill_prog;
	struct bpf_link *spill_link;
	struct ring_buffer *wake_rb;	/* spill_wake: the kernel asks for the spill hook */
	int wake_epfd;			/* watches it (-1: no spill hook) */
	bool spill_always;
	uint64_t nflows;	/* flows in the map at the last read */
	uint64_t seeded;	/* connections open at start added to the map */
	uint64_t unseeded;	/* connections open at start the map had no room for:
				 * said once, in the first tick's evicted */
	struct fl_dkey *dead;	/* closed flows seen this round: ndead of dcap */
	size_t ndead, dcap;
	struct prev_ent **pending;	/* flows whose fold waits (prev_ent.pend): npend of pcap */
	size_t npend, pcap;
};

/* Convert a key address to the table's struct ipaddr. */
static void key_ip(const __u64 a[2], struct ipaddr *ip)
{
	uint64_t hi = htobe64(a[0]), lo = htobe64(a[1]);

	memcpy(ip->a, &hi, 8);
	memcpy(ip->a + 8, &lo, 8);
	ip->v4 = fl_addr_v4(a);
	ip->prefix = ip->v4 ? 32 : 128;
}

/* The remote network of ip: /24 of IPv4, /64 of IPv6. */
static void net_of(const struct ipaddr *ip, struct ipaddr *net)
{
	*net = *ip;
	if (ip->v4) {
		net->a[15] = 0;
		net->prefix = 24;
	} else {
		memset(net->a + 8, 0, 8);
		net->prefix = 64;
	}
}

/* Format one end as a.b.c.d:port or [v6]:port. */
static void fmt_end(const struct ipaddr *ip, uint32_t port, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (ip->v4) {
		inet_ntop(AF_INET, ip->a + 12, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, port);
	} else {
		inet_ntop(AF_INET6, ip->a, a, sizeof(a));
		snprintf(buf, len, "[%s]:%u", a, port);
	}
}

/* Fill the key columns shared by both tables, starting at the given indexes. */
static void key_cells(union cell *r, const struct fl_key *k, int flow, int laddr, int lport,
		      int raddr, int rport, int rnet, int netns)
{
	struct ipaddr l, rem, net;
	char le[64], re[64], fl[136];

	key_ip(k->laddr, &l);
	key_ip(k->raddr, &rem);
	net_of(&rem, &net);
	fmt_end(&l, k->lport, le, sizeof(le));
	fmt_end(&rem, k->rport, re, sizeof(re));
	snprintf(fl, sizeof(fl), "%s<%s", le, re);
	cell_set_str(&r[flow], fl);
	cell_set_ip(&r[laddr], &l);
	r[lport].u = k->lport;
	cell_set_ip(&r[raddr], &rem);
	r[rport].u = k->rport;
	cell_set_ip(&r[rnet], &net);
	r[netns].u = k->netns;
}

/* Fill the key columns of the overflow row: text ones "(other)", numeric
 * ones 0, addresses empty (left unset). */
static void other_cells(union cell *r)
{
	cell_set_str(&r[FC_FLOW], TABLE_OTHER);
	r[FC_LPORT].u = r[FC_RPORT].u = r[FC_NETNS].u = r[FC_PID].u = 0;
	cell_set_str(&r[FC_COMM], TABLE_OTHER);
	cell_set_str(&r[FC_CGROUP], TABLE_OTHER);
	cell_set_str(&r[FC_UNIT], TABLE_OTHER);
	cell_set_str(&r[FC_CONTAINER], TABLE_OTHER);
}

/* Copy a kernel comm into a terminated string. */
static void comm_str(const char *src, char out[FLOW_COMM_LEN + 1])
{
	memcpy(out, src, FLOW_COMM_LEN);
	out[FLOW_COMM_LEN] = 0;
}

/* Return the prev table bucket of key k. */
static uint32_t key_hash(const struct fl_akey *k)
{
	const uint8_t *p = (const uint8_t *)k;
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 16777619u;
	return h & (PREV_BUCKETS - 1);
}

/* Find (or add, zeroed) the prev entry of k born at born_ns. */
static struct prev_ent *prev_get(struct flows_priv *fp, const struct fl_akey *k,
				 uint64_t born_ns)
{
	struct prev_ent **b = &fp->prev[key_hash(k)], *p;

	for (p = *b; p; p = p->next)
		if (p->born_ns == born_ns && !memcmp(&p->key, k, sizeof(*k)))
			return p;
	p = xcalloc(1, sizeof(*p));
	p->key = *k;
	p->born_ns = born_ns;
	p->next = *b;
	*b = p;
	return p;
}

/* Forget prev entries not seen this round (their flows left the map). */
static void prev_sweep(struct flows_priv *fp, bool all)
{
	size_t i;

	for (i = 0; i < PREV_BUCKETS; i++) {
		struct prev_ent **pp = &fp->prev[i], *p;

		while ((p = *pp)) {
			if (all || p->seen != fp->round) {
				*pp = p->next;
				free(p->hist);
				free(p->ren);
				free(p->pend);
				free(p);
			} else {
				pp = &p->next;
			}
		}
	}
}

/* Append one ring buffer record to the events frame of this tick. */
static int on_event(void *ctx, void *data, size_t size)
{
	static const char *const kinds[] = {"slow", "sampled", "evicted"};
	struct flows_priv *fp = ctx;
	const struct fl_event *e = data;
	char comm[FLOW_COMM_LEN + 1];
	union cell *r;

	if (size < sizeof(*e) || !fp->ev_frame)
		return 0;
	r = frame_add_row(fp->ev_frame);
	r[FE_COL_TS].u = e->ts_ns + fp->boot_offset_ns;
	r[FE_COL_ID].u = e->id;
	key_cells(r, &e->key, FE_COL_FLOW, FE_COL_LADDR, FE_COL_LPORT, FE_COL_RADDR,
		  FE_COL_RPORT, FE_COL_RNET, FE_COL_NETNS);
	r[FE_COL_PID].u = e->pid;
	comm_str(e->comm, comm);
	cell_set_str(&r[FE_COL_COMM], comm);
	probe_cgroup_cells(r + FE_COL_CGROUP, e->cgroup);
	cell_set_str(&r[FE_COL_KIND], e->kind < 3 ? kinds[e->kind] : "other");
	r[FE_COL_LAT].u = e->lat;
	r[FE_COL_COUNT].u = e->count;
	return 0;
}

/*
 * Keep cur's histogram in p, sparse: the buckets p kept and those of the
 * tick d (cur - p's, in bucket order), with cur's counts.  A cumulative
 * bucket only ever gains, so no other bucket of cur holds any.
 */
static void prev_keep_hist(struct prev_ent *p, const uint32_t *cur, const struct shist *d)
{
	uint64_t merged[LH_NBUCKETS];
	uint32_t i = 0, j = 0, n = 0, idx;

	while (i < p->nhist || j < d->n) {
		uint32_t a = i < p->nhist ? (uint32_t)(p->hist[i] >> 32) : LH_NBUCKETS;
		uint32_t b = j < d->n ? d->bin[j].idx : LH_NBUCKETS;

		idx = a < b ? a : b;
		i += a == idx;
		j += b == idx;
		merged[n++] = (uint64_t)idx << 32 | cur[idx];
	}
	if (n > p->hcap) {
		p->hcap = n < 8 ? 8 : n;
		p->hist = xreallocarray(p->hist, p->hcap, sizeof(*p->hist));
	}
	memcpy(p->hist, merged, (size_t)n * sizeof(*merged));
	p->nhist = n;
}

/*
 * Set c to the requests answered since p's last row.  The latency
 * totals (count, sum, extremes, buckets) move in p together, and only when
 * the count moved: a bucket read ahead of its count, as the kernel adds
 * one, is shown with that count at a later row, never twice.
 */
static void lat_delta(struct flows_priv *fp, union cell *c, const struct fl_stats *cur,
		      struct prev_ent *p)
{
	uint32_t i;

	if (cur->count == p->count) {
		cell_take_shist(c, shist_new());
		return;
	}
	for (i = 0; i < p->nhist; i++)
		fp->prevh[p->hist[i] >> 32] = (uint32_t)p->hist[i];
	const struct probe_extremes ex =
		probe_extremes_minmax(cur->lat_min, cur->lat_max, p->lat_min, p->lat_max,
				      p->count);
	probe_cell_hist(c, cur->hist, fp->prevh, delta(cur->lat_sum, p->lat_sum), &ex, 1);
	for (i = 0; i < p->nhist; i++)
		fp->prevh[p->hist[i] >> 32] = 0;
	prev_keep_hist(p, cur->hist, c->h);
	p->count = cur->count;
	p->lat_sum = cur->lat_sum;
	p->lat_min = cur->lat_min;
	p->lat_max = cur->lat_max;
}

/*
 * Fill the key columns of a group's row (FLOW_AGG): those its key leaves out
 * are empty (text, addresses) or 0, as are flow and rport.
 */
static void group_cells(union cell *r, const struct fl_akey *ak)
{
	struct ipaddr a, net;
	char comm[FLOW_COMM_LEN + 1];

	cell_set_str(&r[FC_FLOW], "");
	if (!(ak->masked & FLOW_NO_LADDR)) {
		key_ip(ak->k.laddr, &a);
		cell_set_ip(&r[FC_LADDR], &a);
	}
	r[FC_LPORT].u = ak->k.lport;
	if (!(ak->masked & FLOW_NO_RADDR)) {	/* raddr, or with FLOW_RNET_ONLY its network */
		key_ip(ak->k.raddr, &a);
		net_of(&a, &net);
		cell_set_ip(&r[FC_RNET], &net);
		if (!(ak->masked & FLOW_RNET_ONLY))
			cell_set_ip(&r[FC_RADDR], &a);
	}
	r[FC_RPORT].u = 0;
	r[FC_NETNS].u = ak->k.netns;
	r[FC_PID].u = ak->pid;
	comm_str((const char *)ak->comm, comm);
	cell_set_str(&r[FC_COMM], comm);
	if (ak->masked & FLOW_NO_CGROUP) {
		cell_set_str(&r[FC_CGROUP], "");
		cell_set_str(&r[FC_UNIT], "");
		cell_set_str(&r[FC_CONTAINER], "");
	} else {
		probe_cgroup_cells(r + FC_CGROUP, ak->cgroup);
	}
}

/* Append a row for a flow's or group's activity since p's last row (ak
 * NULL: the overflow row's), and keep cur in p; return requests counted. */
static uint64_t add_row(struct flows_priv *fp, struct frame *f, const struct fl_akey *ak,
			const struct fl_stats *cur, struct prev_ent *p)
{
	uint64_t in = delta(cur->bytes_in, p->bytes_in);
	uint64_t out = delta(cur->bytes_out, p->bytes_out);
	char comm[FLOW_COMM_LEN + 1];
	union cell *r = frame_add_row(f);

	if (ak && ak->masked) {
		group_cells(r, ak);
	} else if (ak) {
		key_cells(r, &ak->k, FC_FLOW, FC_LADDR, FC_LPORT, FC_RADDR, FC_RPORT, FC_RNET,
			  FC_NETNS);
		r[FC_PID].u = cur->pid;
		comm_str(cur->comm, comm);
		cell_set_str(&r[FC_COMM], comm);
		probe_cgroup_cells(r + FC_CGROUP, cur->cgroup);
	} else {
		other_cells(r);
	}
	r[FC_COUNT].u = delta(cur->count, p->count);
	lat_delta(fp, &r[FC_LAT], cur, p);
	r[FC_BYTES].u = in + out;
	r[FC_BYTES_IN].u = in;
	r[FC_BYTES_OUT].u = out;
	r[FC_EVICTED].u = delta(cur->evicted, p->evicted);
	r[FC_UNSOLICITED].u = delta(cur->unsolicited, p->unsolicited);
	p->bytes_in = cur->bytes_in;
	p->bytes_out = cur->bytes_out;
	p->evicted = cur->evicted;
	p->unsolicited = cur->unsolicited;
	return r[FC_COUNT].u;
}

/* Return true when cur moved since p's last row (a row is due). */
static bool moved(const struct fl_stats *cur, const struct prev_ent *p)
{
	return cur->count != p->count || cur->bytes_in != p->bytes_in ||
	       cur->bytes_out != p->bytes_out || cur->evicted != p->evicted ||
	       cur->unsolicited != p->unsolicited;
}

/* Order two ren_ents by their change's number. */
static int ren_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct ren_ent *)a)->seq, y = ((const struct ren_ent *)b)->seq;

	return x < y ? -1 : x > y;
}

/* Keep the totals of renamed entry key (an fl_rkey) in its flow's prev
 * entry, for fold_renames; count nothing yet.  The entry stays to the next
 * read at least: its flow may be newer than this read of flows. */
static uint64_t stash_renamed(struct flows_priv *fp, struct frame *f, const void *key,
			      const struct fl_stats *cur)
{
	const struct fl_rkey *rk = key;
	struct fl_akey ak = {.k = rk->k};
	struct prev_ent *p = prev_get(fp, &ak, rk->born_ns);

	(void)f;
	p->seen = fp->round;
	if (p->nren == p->rcap) {
		p->rcap = p->rcap ? 2 * p->rcap : 2;
		p->ren = xreallocarray(p->ren, p->rcap, sizeof(*p->ren));
	}
	p->ren[p->nren++] = (struct ren_ent){.seq = rk->seq, .st = *cur};
	return 0;
}

/*
 * Whether the totals at every change of p's reader that cur, its totals as
 * read, has passed are in hand: cur->rseq names the last change, each
 * change's totals the one before it (fl_stats.rseq, as it was then), back
 * to the last one folded (p->rseq).  One read of renamed can give a change
 * and not the one before it, which came to a part of the map it had read.
 */
static bool changes_in_hand(const struct prev_ent *p, const struct fl_stats *cur)
{
	uint64_t rseq = cur->rseq;
	uint32_t i;

	while (rseq > p->rseq) {
		for (i = 0; i < p->nren && p->ren[i].seq + 1 != rseq; i++)
			;
		if (i == p->nren)
			return false;
		rseq = p->ren[i].st.rseq;
	}
	return true;
}

/*
 * Flow p was read as cur past a change of reader whose totals renamed had
 * not given when it was last read (changes_in_hand): keep cur, to fold once
 * read_flows has read renamed again (fold_pending).  departed: cur is its
 * last.
 */
static void defer_fold(struct flows_priv *fp, struct prev_ent *p, const struct fl_stats *cur,
		       bool departed)
{
	if (!p->pend) {
		p->pend = xmalloc(sizeof(*p->pend));
		if (fp->npend == fp->pcap) {
			fp->pcap = fp->pcap ? 2 * fp->pcap : 64;
			fp->pending = xreallocarray(fp->pending, fp->pcap, sizeof(*fp->pending));
		}
		fp->pending[fp->npend++] = p;
	}
	*p->pend = *cur;
	p->pend_departed = departed;
}

/*
 * Append a row for each stretch of a flow under a reader it had before a
 * change (stash_renamed) that cur, its totals as read, has passed, under
 * that reader; return requests counted.  The changes cur has not passed
 * (numbered from its rseq on: they came after it was read) wait for the
 * next read.  None is behind p (changes_in_hand) unless p was made again.
 */
static uint64_t fold_renames(struct flows_priv *fp, struct frame *f, const struct fl_akey *ak,
			     const struct fl_stats *cur, struct prev_ent *p)
{
	uint64_t events = 0;
	uint32_t i, kept = 0;

	/* The map gives them in hash order: in the order they came. */
	qsort(p->ren, p->nren, sizeof(*p->ren), ren_cmp);
	for (i = 0; i < p->nren; i++) {
		const struct fl_stats *r = &p->ren[i].st;

		if (p->ren[i].seq >= cur->rseq) {
			p->ren[kept++] = p->ren[i];
			continue;
		}
		p->rseq = p->ren[i].seq + 1;
		if (r->count < p->count || r->bytes_in < p->bytes_in ||
		    r->bytes_out < p->bytes_out || r->evicted < p->evicted ||
		    r->unsolicited < p->unsolicited)
			continue;
		if (moved(r, p))
			events += add_row(fp, f, ak, r, p);
	}
	p->nren = kept;
	if (!kept) {
		/* Renames are rare: give the copies back rather than keep
		 * 2.6 KB each. */
		free(p->ren);
		p->ren = NULL;
		p->rcap = 0;
	}
	return events;
}

/* Fold the flows whose fold waited (defer_fold), with the changes of
 * reader read since; return requests counted. */
static uint64_t fold_pending(struct flows_priv *fp, struct frame *f)
{
	uint64_t events = 0;
	size_t j;

	for (j = 0; j < fp->npend; j++) {
		struct prev_ent *p = fp->pending[j];
		struct fl_akey ak = p->key;

		if (p->nren)
			events += fold_renames(fp, f, &ak, p->pend, p);
		/* renamed was read after it: a change not found now is lost
		 * (its flow's prev entry was made again since). */
		if (p->pend->rseq > p->rseq)
			p->rseq = p->pend->rseq;
		if (moved(p->pend, p))
			events += add_row(fp, f, &ak, p->pend, p);
		if (p->pend_departed)
			p->seen = fp->round - 1;	/* prev_sweep frees it */
		free(p->pend);
		p->pend = NULL;
	}
	fp->npend = 0;
	return events;
}

/* Fold flow k, whose totals are cur, into f; note it for removal when it
 * was closed at the last read too.  Return requests counted. */
static uint64_t fold_flow(struct flows_priv *fp, struct frame *f, const void *key,
			  const struct fl_stats *cur)
{
	const struct fl_key *k = key;
	struct fl_akey ak = {.k = *k};
	/* A new connection on this 4-tuple has a prev entry of its own. */
	struct prev_ent *p = prev_get(fp, &ak, cur->born_ns);
	uint64_t events = 0;

	p->seen = fp->round;
	/* Bytes that came before any process read the socket wait for their
	 * reader: a row of them under pid 0 would split the connection in two.
	 * What only its reader can make (an answer, an eviction) or its close
	 * shows them at once. */
	if (!cur->pid && !cur->closed && cur->count == p->count &&
	    cur->evicted == p->evicted && cur->unsolicited == p->unsolicited)
		return 0;
	if (!changes_in_hand(p, cur)) {
		defer_fold(fp, p, cur, false);
		return 0;
	}
	if (p->nren)
		events = fold_renames(fp, f, &ak, cur, p);
	if (moved(cur, p))
		events += add_row(fp, f, &ak, cur, p);
	/*
	 * The kernel moves a flow to departed at its close, just after marking
	 * it closed: one read closed may be on its way there (removing it
	 * here could remove the next connection of its 4-tuple instead).  One
	 * still here at the next read stayed, departed being full.
	 */
	if (cur->closed && p->closed++) {
		if (fp->ndead == fp->dcap) {
			fp->dcap = fp->dcap ? 2 * fp->dcap : 64;
			fp->dead = xreallocarray(fp->dead, fp->dcap, sizeof(*fp->dead));
		}
		fp->dead[fp->ndead++] = (struct fl_dkey){.k = *k, .born_ns = cur->born_ns};
	}
	return events;
}

/* Fold departed connection key (an fl_dkey), whose last totals are cur,
 * into f, and forget it.  Return requests counted. */
static uint64_t fold_departed(struct flows_priv *fp, struct frame *f, const void *key,
			      const struct fl_stats *cur)
{
	const struct fl_dkey *dk = key;
	struct fl_akey ak = {.k = dk->k};
	struct prev_ent *p = prev_get(fp, &ak, dk->born_ns);
	uint64_t events = 0;

	if (p->pend || !changes_in_hand(p, cur)) {
		defer_fold(fp, p, cur, true);
		return 0;
	}
	if (p->nren)
		events = fold_renames(fp, f, &ak, cur, p);
	if (moved(cur, p))
		events += add_row(fp, f, &ak, cur, p);
	p->seen = fp->round - 1;	/* prev_sweep frees it */
	return events;
}

/* What read_batches calls for each entry: its key and totals. */
typedef uint64_t batch_fold_fn(struct flows_priv *fp, struct frame *f, const void *key,
			       const struct fl_stats *cur);

/* The maps read_batches reads. */
enum batch_map {
	BM_FLOWS,	/* the connections */
	BM_GROUPS,	/* agg: a grouped query's totals */
	BM_DEPARTED,	/* connections that ended: read and removed */
	BM_RENAMED,	/* totals at changes of reader: read and removed */
};

/*
 * Read every entry of map which a batch at a time (one call each for its
 * key and its totals took most of a tick at 10,000 flows), folding each
 * into f with fold; the requests counted added to *events, the entries read
 * to *nread (unless NULL).  BM_DEPARTED's and BM_RENAMED's entries leave the
 * map as they are read.  The buffers grow when one bucket holds more entries than they do.
 * 0, or -1 with errno.
 */
static int read_batches(struct flows_priv *fp, enum batch_map which, struct frame *f,
			batch_fold_fn *fold, uint64_t *events, uint64_t *nread)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct bpf_map *const maps[] = {fp->skel->maps.flows, fp->skel->maps.agg,
					fp->skel->maps.departed, fp->skel->maps.renamed};
	const size_t ksizes[] = {sizeof(*fp->bkeys), sizeof(*fp->akeys), sizeof(*fp->dkeys),
				 sizeof(*fp->rkeys)};
	int fd = bpf_map__fd(maps[which]), err;
	__u32 in = 0, out = 0, n, i;
	bool first = true;
	char *keys;

	for (;;) {
		keys = which == BM_FLOWS ? (char *)fp->bkeys :
		       which == BM_GROUPS ? (char *)fp->akeys :
		       which == BM_DEPARTED ? (char *)fp->dkeys : (char *)fp->rkeys;
		n = fp->bcap;
		if (which == BM_DEPARTED || which == BM_RENAMED)
			err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &out, keys,
							      fp->bvals, &n, &opts);
		else
			err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, fp->bvals,
						   &n, &opts);
		if (err && errno == ENOSPC && n == 0) {
			/* One bucket holds more than the buffers: make room. */
			fp->bcap *= 2;
			fp->bkeys = xreallocarray(fp->bkeys, fp->bcap, sizeof(*fp->bkeys));
			fp->akeys = xreallocarray(fp->akeys, fp->bcap, sizeof(*fp->akeys));
			fp->dkeys = xreallocarray(fp->dkeys, fp->bcap, sizeof(*fp->dkeys));
			fp->rkeys = xreallocarray(fp->rkeys, fp->bcap, sizeof(*fp->rkeys));
			fp->bvals = xreallocarray(fp->bvals, fp->bcap, sizeof(*fp->bvals));
			continue;
		}
		if (err && errno != ENOENT)
			return -1;
		if (nread)
			*nread += n;
		for (i = 0; i < n; i++)
			*events += fold(fp, f, keys + i * ksizes[which], &fp->bvals[i]);
		if (err)
			return 0;	/* ENOENT: that was the last batch */
		in = out;
		first = false;
	}
}

/*
 * Take the totals kept at changes of reader (renamed), then fold every
 * flow of the map into f, then the departed connections (after
 * the flows: a connection the kernel moved there since the flows were read
 * was read as a flow first, and its prev entry is still there), then take
 * the changes of reader made while they were read and fold the flows that
 * had passed one (their reader's name is the later one, the totals at the
 * change were not read yet: folded first, they would count the requests
 * before it under the later name).  The kernel
 * moves a flow to departed at its close; one found closed in flows at two
 * reads (departed was full then) is removed here, and should its 4-tuple
 * have come back since the read, the entry removed was the new
 * connection's: it is put back, and what its segments did in between is
 * lost, and counted so.  The requests counted in *events; -1 with errno.
 */
static int read_flows(struct flows_priv *fp, struct frame *f, uint64_t *events)
{
	int fd = bpf_map__fd(fp->skel->maps.flows), rc, err;
	size_t j;

	fp->ndead = 0;
	fp->nflows = 0;
	*events = 0;
	/* The totals at changes of reader first: each is then at most its
	 * flow's as read next. */
	if (read_batches(fp, BM_RENAMED, f, stash_renamed, events, NULL))
		return -1;
	rc = read_batches(fp, BM_FLOWS, f, fold_flow, events, &fp->nflows);
	err = errno;
	for (j = 0; j < fp->ndead; j++) {
		const struct fl_dkey *d = &fp->dead[j];

		struct fl_akey ak = {.k = d->k};
		struct prev_ent *p;

		if (bpf_map_lookup_and_delete_elem(fd, &d->k, &fp->cur))
			continue;
		if (fp->cur.born_ns == d->born_ns) {
			/* Its last totals, should a segment have been
			 * counted since the read. */
			p = prev_get(fp, &ak, d->born_ns);
			if (moved(&fp->cur, p))
				*events += add_row(fp, f, &ak, &fp->cur, p);
			continue;
		}
		/* Its 4-tuple came back since the read (the closed connection
		 * waits in departed): that was the new one's entry. */
		bpf_map_update_elem(fd, &d->k, &fp->cur, BPF_NOEXIST);
		f->stats.lost++;
	}
	if (!rc)
		rc = read_batches(fp, BM_DEPARTED, f, fold_departed, events, NULL);
	else
		errno = err;
	if (!rc)
		rc = read_batches(fp, BM_RENAMED, f, stash_renamed, events, NULL);
	err = errno;
	/* Whatever failed, none waits past this read. */
	*events += fold_pending(fp, f);
	errno = err;
	return rc;
}

/*
 * Fold group ak, whose totals are cur, into f; note it for removal once it
 * has been unchanged AGG_IDLE_ROUNDS reads.  Return requests counted.
 */
static uint64_t fold_group(struct flows_priv *fp, struct frame *f, const void *key,
			   const struct fl_stats *cur)
{
	const struct fl_akey *ak = key;
	struct prev_ent *p = prev_get(fp, ak, 0);

	p->seen = fp->round;
	if (!moved(cur, p)) {
		if (++p->idle >= AGG_IDLE_ROUNDS) {
			if (fp->nidle == fp->icap) {
				fp->icap = fp->icap ? 2 * fp->icap : 64;
				fp->idle = xreallocarray(fp->idle, fp->icap, sizeof(*fp->idle));
			}
			fp->idle[fp->nidle++] = *ak;
		}
		return 0;
	}
	p->idle = 0;
	return add_row(fp, f, ak, cur, p);
}

/*
 * Fold every group of the agg map (a grouped query's totals, FLOW_AGG)
 * into f, and remove the idle ones: each is taken out with its last totals,
 * which are folded too, and its prev entry goes with it (the next request
 * of the group makes a new entry, from zero).  The requests counted in
 * *events; -1 with errno.
 */
static int read_groups(struct flows_priv *fp, struct frame *f, uint64_t *events)
{
	int fd = bpf_map__fd(fp->skel->maps.agg), rc, err;
	size_t j;

	fp->nidle = 0;
	*events = 0;
	rc = read_batches(fp, BM_GROUPS, f, fold_group, events, NULL);
	err = errno;
	for (j = 0; j < fp->nidle; j++) {
		struct prev_ent *p;

		if (bpf_map_lookup_and_delete_elem(fd, &fp->idle[j], &fp->cur))
			continue;
		p = prev_get(fp, &fp->idle[j], 0);
		if (moved(&fp->cur, p))
			*events += add_row(fp, f, &fp->idle[j], &fp->cur, p);
		p->seen = fp->round - 1;	/* prev_sweep frees it */
	}
	errno = err;
	return rc;
}

/*
 * Sum the overflow row's copies, one a CPU, into fp->cur and append its row
 * when it moved; return the requests counted.  -1 with errno when the map
 * cannot be read.
 */
static int64_t read_overflow(struct flows_priv *fp, struct frame *f)
{
	struct fl_stats *c = &fp->cur;
	uint32_t zero = 0, i;
	int cpu;

	if (bpf_map_lookup_elem(bpf_map__fd(fp->skel->maps.overflow), &zero, fp->ovf_cpu))
		return -1;
	memset(c, 0, sizeof(*c));
	for (cpu = 0; cpu < fp->ncpus; cpu++) {
		const struct fl_stats *s = &fp->ovf_cpu[cpu];

		if (s->count && (!c->count || s->lat_min < c->lat_min))
			c->lat_min = s->lat_min;
		if (s->lat_max > c->lat_max)
			c->lat_max = s->lat_max;
		c->count += s->count;
		c->lat_sum += s->lat_sum;
		c->bytes_in += s->bytes_in;
		c->bytes_out += s->bytes_out;
		c->evicted += s->evicted;
		c->unsolicited += s->unsolicited;
		for (i = 0; i < LH_NBUCKETS; i++)
			c->hist[i] += s->hist[i];
	}
	if (!moved(c, &fp->ovf_prev))
		return 0;
	return (int64_t)add_row(fp, f, NULL, c, &fp->ovf_prev);
}

/* Attach the spill hook (when it is not); -1 with errno. */
static int spill_attach(struct flows_priv *fp)
{
	if (fp->spill_link)
		return 0;
	fp->spill_link = bpf_program__attach(fp->spill_prog);
	if (!fp->spill_link)
		return -1;
	__atomic_store_n(&fp->skel->bss->spill_live, 1, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Attach the spill hook when the flows map is at least half full, so that
 * it is there before a connection finds no room (a connection spilled
 * before it was attached is followed from then on, its earlier responses
 * counted as unsolicited); detach it when the map is below a quarter full
 * and nothing is spilled.  Until then the hook costs nothing: it runs for
 * every segment an established socket takes.  -1 with *cause when it
 * cannot be attached.
 */
static int spill_tick(struct flows_priv *fp, char **cause)
{
	bool want;

	if (!fp->spill_prog)
		return 0;
	want = fp->spill_always || fp->nflows * 2 >= fp->max_keys ||
	       (fp->spill_link && (fp->nflows * 4 >= fp->max_keys ||
				   __atomic_load_n(&fp->skel->bss->spilled_n, __ATOMIC_RELAXED) > 0));
	if (want && spill_attach(fp)) {
		*cause = xasprintf("flows: attaching %s for the connections beyond flow_max: %s",
				   bpf_program__name(fp->spill_prog), strerror(errno));
		return -1;
	} else if (!want && fp->spill_link) {
		__atomic_store_n(&fp->skel->bss->spill_live, 0, __ATOMIC_RELEASE);
		bpf_link__destroy(fp->spill_link);
		fp->spill_link = NULL;
		/* A map full again may ask for it again. */
		__atomic_store_n(&fp->skel->bss->spill_wake_pending, 0, __ATOMIC_RELEASE);
	}
	return 0;
}

/* A spill_wake record: nothing to read in it. */
static int on_spill_wake(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	return 0;
}

/* The fd the kernel wakes when the flows map is full before the spill
 * hook is attached. */
static int flows_wake_fd(struct probe *p)
{
	struct flows_priv *fp = p->priv;

	return fp ? fp->wake_epfd : -1;
}

/* Attach the spill hook now, not at the next tick.  A failure is left to
 * the tick, which tries again and says why (spill_wake_pending stays set
 * until spill_tick detaches the hook: one wake until then). */
static void flows_wake(struct probe *p)
{
	struct flows_priv *fp = p->priv;

	probe_wake_take(fp->wake_epfd);
	ring_buffer__consume(fp->wake_rb);
	spill_attach(fp);
}

/* Read and fold this tick's totals and events into two frames of t. */
static int flows_collect(struct probe *p, uint64_t t_ns, uint64_t dt_ns, struct tick *t,
			 char **cause)
{
	struct flows_priv *fp = p->priv;
	struct frame *f = frame_new(&flows_schema, t_ns, dt_ns);
	struct frame *ev = frame_new(&flow_events_schema, t_ns, dt_ns);
	uint64_t groups;
	int64_t ovf;
	int err;

	fp->round++;	/* the flows and groups read now are seen in this round */
	fp->ev_frame = ev;
	err = ring_buffer__consume(fp->rb);
	fp->ev_frame = NULL;
	fp->skel->bss->events_used = 0;
	if (err < 0) {
		*cause = xasprintf("flows: reading the events ring buffer: %s", strerror(-err));
		frame_free(f);
		frame_free(ev);
		return -1;
	}
	if (read_flows(fp, f, &f->stats.events) < 0) {
		*cause = xasprintf("flows: reading the flows map: %s", strerror(errno));
		frame_free(f);
		frame_free(ev);
		return -1;
	}
	if (read_groups(fp, f, &groups) < 0) {
		*cause = xasprintf("flows: reading the agg map: %s", strerror(errno));
		frame_free(f);
		frame_free(ev);
		return -1;
	}
	f->stats.events += groups;
	prev_sweep(fp, false);
	ovf = read_overflow(fp, f);
	if (ovf < 0) {
		*cause = xasprintf("flows: reading the overflow row: %s", strerror(errno));
		frame_free(f);
		frame_free(ev);
		return -1;
	}
	if (spill_tick(fp, cause)) {
		frame_free(f);
		frame_free(ev);
		return -1;
	}
	f->stats.events += (uint64_t)ovf;
	f->stats.overflow += (uint64_t)ovf;
	f->stats.evicted += fp->unseeded;
	fp->unseeded = 0;
	probe_health_tick(&fp->health, &f->stats);
	ev->stats = f->stats;
	ev->stats.events = ev->nrows;
	tick_add(t, f);
	tick_add(t, ev);
	return 0;
}

/* Check that test e is on a term flows knows, by an op that term takes. */
static int filter_leaf(const char *probe, const struct filter_entry *e, uint32_t i, char **cause)
{
	bool addr = e->term == FTERM_LADDR || e->term == FTERM_RADDR;
	bool comm = e->term == FTERM_COMM;
	bool num = e->term == FTERM_PID || e->term == FTERM_LPORT ||
		   e->term == FTERM_RPORT || e->term == FTERM_LAT;

	if ((!addr && !comm && !num) || e->op < FOP_EQ || e->op > FOP_PREFIX ||
	    ((addr || comm) && e->op != FOP_EQ && e->op != FOP_NE &&
	     !(comm && e->op == FOP_PREFIX)) ||
	    (num && e->op == FOP_PREFIX) ||
	    (addr && FILTER_ADDR_BITS(e->value) > 128) ||
	    (comm && e->value >= FILTER_MAX_STRS)) {
		*cause = xasprintf("%s: filter entry %u: op %u on term %u "
				   "is not one flows can test", probe, i, e->op, e->term);
		return -1;
	}
	return 0;
}

/* Install f in the idle slot, then make it current. */
static int flows_set_filter(struct probe *p, const struct filter_prog *f, char **cause)
{
	struct flows_priv *fp = p->priv;
	uint32_t next;

	if (probe_filter_check("flows", f, filter_leaf, cause))
		return -1;
	next = (fp->skel->bss->filter_idx + 1) & 1;
	fp->skel->bss->filters[next] = *f;
	fp->skel->bss->filter_keymask[next] = flows_key_mask(f);
	__atomic_store_n(&fp->skel->bss->filter_idx, next, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Parse a duration like 500ms, 2s, 750us or 1000000 (ns) into *ns: 0 for
 * one not above 0, UINT64_MAX for one too long to count.  -1 if s is none.
 */
static int parse_dur(const char *s, uint64_t *ns)
{
	static const struct { const char *u; double mul; } units[] = {
		{"", 1}, {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9},
	};
	char *end;
	double v;
	size_t i;

	v = strtod(s, &end);
	if (end == s || !isfinite(v))
		return -1;
	while (*end == ' ')
		end++;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].u)) {
			v *= units[i].mul;
			*ns = v < 1 ? 0 : v >= 0x1p64 ? UINT64_MAX : (uint64_t)v;
			return 0;
		}
	}
	return -1;
}

/*
 * Read Φ, the unanswered-request timeout, from the rc file's flow_timeout.
 * A value that is not a duration from 1ms to 1h is a warning naming its
 * line, and the default stands: the probe runs either way.
 */
static uint64_t read_timeout(void)
{
	struct config *cfg = config_shared();
	const char *v = config_get(cfg, "flow_timeout");
	uint64_t ns;

	if (!v)
		return FLOW_DEFAULT_TIMEOUT_NS;
	if (parse_dur(v, &ns) < 0) {
		config_warn(cfg, "flow_timeout", "not a duration (like 500ms or 2s, from 1ms to 1h); "
			    "using the default " FLOW_DEFAULT_TIMEOUT_TEXT);
		return FLOW_DEFAULT_TIMEOUT_NS;
	}
	if (ns < FLOW_TIMEOUT_MIN_NS || ns > FLOW_TIMEOUT_MAX_NS) {
		config_warn(cfg, "flow_timeout", "out of range (allowed from 1ms to 1h); "
			    "using the default " FLOW_DEFAULT_TIMEOUT_TEXT);
		return FLOW_DEFAULT_TIMEOUT_NS;
	}
	return ns;
}

/* Return true when latoprc's flow_spill says always (else auto, the
 * default; a bad value is said, naming its line). */
static bool read_spill_always(void)
{
	struct config *cfg = config_shared();
	const char *v = config_get(cfg, "flow_spill");

	if (!v || !strcmp(v, "auto"))
		return false;
	if (!strcmp(v, "always"))
		return true;
	config_warn(cfg, "flow_spill", "not auto or always; using auto");
	return false;
}

/* Return latoprc's flow_max, or the default (said, when it is bad). */
static uint32_t read_max_keys(void)
{
	return probe_size_option("flow_max", FLOW_KEYS_MIN, FLOW_KEYS_MAX, FLOW_DEFAULT_KEYS, false,
				 "connections");
}

/* Fill c with the flows map's capacity and what it costs when full. */
static void capacity_choice(struct hook_choice *c, uint32_t max_keys)
{
	/* A hash entry: its key and value, and the element header and the
	 * allocator's share, about 64 bytes on 6.1. */
	probe_capacity(c, "connections tracked at once (latoprc flow_max)", max_keys,
		       "connections", sizeof(struct fl_key) + sizeof(struct fl_stats) + 64, false,
		       "more are followed on their sockets (the hook above is attached while "
		       "the map is half full, latoprc flow_spill), counted in the overflow row "
		       "(in their group if the query reads no flow, rport)");
}

/* Parse one /proc/net/tcp{,6} address "HEX:PORT" into the key form. */
static bool proc_addr(const char *s, bool v6, __u64 a[2], uint32_t *port)
{
	uint8_t b[16];
	size_t i, n = v6 ? 4 : 1;

	for (i = 0; i < n; i++) {
		char w[9];
		uint32_t v;

		memcpy(w, s + 8 * i, 8);
		w[8] = 0;
		v = (uint32_t)strtoul(w, NULL, 16);
		memcpy(b + 4 * i, &v, 4);
	}
	if (s[8 * n] != ':')
		return false;
	*port = (uint32_t)strtoul(s + 8 * n + 1, NULL, 16);
	if (!v6) {
		uint32_t be;

		memcpy(&be, b, 4);
		a[0] = 0;
		a[1] = 0x0000ffff00000000ULL | ntohl(be);
	} else {
		uint64_t hi, lo;

		memcpy(&hi, b, 8);
		memcpy(&lo, b + 8, 8);
		a[0] = be64toh(hi);
		a[1] = be64toh(lo);
	}
	return true;
}

struct listener {
	__u64 a[2];
	uint32_t port;
};

/*
 * Add the connections accepted before latop started: established sockets
 * of this network namespace whose local port is one a socket listens on.
 * Those the map has no room for are not followed (user space cannot reach
 * their sockets' storage): they are counted once, in evicted.
 */
static void seed_flows(struct flows_priv *fp)
{
	static const char *const files[] = {"/proc/net/tcp", "/proc/net/tcp6"};
	struct listener *ls = NULL;
	size_t nls = 0, cap = 0, pass, i, j;
	struct stat nst;
	uint32_t netns = stat("/proc/self/ns/net", &nst) ? 0 : (uint32_t)nst.st_ino;
	int fd = bpf_map__fd(fp->skel->maps.flows);
	char line[512];

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < 2; i++) {
			FILE *fh = fopen(files[i], "r");

			if (!fh)
				continue;
			while (fgets(line, sizeof(line), fh)) {
				char la[64], ra[64];
				unsigned st;
				struct fl_key k = {0};

				if (sscanf(line, " %*s %63s %63s %x", la, ra, &st) != 3 ||
				    !proc_addr(la, i, k.laddr, &k.lport) ||
				    !proc_addr(ra, i, k.raddr, &k.rport))
					continue;
				if (pass == 0 && st == 0x0A) {
					fp->skel->bss->served[k.lport & 0xffff] = 1;
					if (nls == cap)
						ls = xrealloc(ls, (cap = cap * 2 + 16) * sizeof(*ls));
					memcpy(ls[nls].a, k.laddr, 16);
					ls[nls++].port = k.lport;
				} else if (pass == 1 && st == 0x01) {
					for (j = 0; j < nls; j++) {
						bool any = (!ls[j].a[0] && !ls[j].a[1]) ||
							   (!ls[j].a[0] && ls[j].a[1] == 0x0000ffff00000000ULL);

						if (ls[j].port == k.lport &&
						    (any || !memcmp(ls[j].a, k.laddr, 16)))
							break;
					}
					if (j == nls)
						continue;
					k.netns = netns;
					fp->cur = (struct fl_stats){0};
					fp->cur.born_ns = mono_ns();
					if (!bpf_map_update_elem(fd, &k, &fp->cur, BPF_NOEXIST))
						fp->seeded++;
					else if (errno != EEXIST)
						fp->unseeded++;
				}
			}
			fclose(fh);
		}
	free(ls);
}

/* Mark in served the local port of every socket listening in tcp file path
 * (IPv6 when v6). */
static void mark_listeners(struct flows_priv *fp, const char *path, bool v6)
{
	FILE *fh = fopen(path, "r");
	char line[512];

	if (!fh)
		return;
	while (fgets(line, sizeof(line), fh)) {
		char la[64];
		unsigned st;
		uint32_t port;
		__u64 a[2];

		if (sscanf(line, " %*s %63s %*s %x", la, &st) == 2 && st == 0x0A &&
		    proc_addr(la, v6, a, &port))
			fp->skel->bss->served[port & 0xffff] = 1;
	}
	fclose(fh);
}

/*
 * Mark the ports sockets listen on now, in every network namespace a
 * process is in but latop's own, whose listeners seed_flows marks (a
 * container's server from before latop too); the kernel marks those that
 * start listening later.
 */
static void seed_served(struct flows_priv *fp)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	ino_t *seen = NULL;
	size_t nseen = 0, cap = 0, i;
	char path[64];
	struct stat st;

	if (!d)
		return;
	if (!stat("/proc/self/ns/net", &st)) {
		seen = xreallocarray(seen, cap = 16, sizeof(*seen));
		seen[nseen++] = st.st_ino;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' || strlen(de->d_name) > 10)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/net", de->d_name);
		if (stat(path, &st))
			continue;
		for (i = 0; i < nseen && seen[i] != st.st_ino; i++)
			;
		if (i < nseen)
			continue;
		if (nseen == cap)
			seen = xreallocarray(seen, cap = cap ? 2 * cap : 16, sizeof(*seen));
		seen[nseen++] = st.st_ino;
		snprintf(path, sizeof(path), "/proc/%s/net/tcp", de->d_name);
		mark_listeners(fp, path, false);
		snprintf(path, sizeof(path), "/proc/%s/net/tcp6", de->d_name);
		mark_listeners(fp, path, true);
	}
	closedir(d);
	free(seen);
}

/* Free everything flows_open made. */
static void flows_close(struct probe *p)
{
	struct flows_priv *fp = p->priv;

	if (!fp)
		return;
	ring_buffer__free(fp->rb);
	ring_buffer__free(fp->wake_rb);
	if (fp->wake_epfd >= 0)
		close(fp->wake_epfd);
	bpf_link__destroy(fp->spill_link);
	flows_bpf__destroy(fp->skel);
	prev_sweep(fp, true);
	free(fp->ovf_prev.hist);
	free(fp->ovf_cpu);
	free(fp->bkeys);
	free(fp->bvals);
	free(fp->akeys);
	free(fp->dkeys);
	free(fp->rkeys);
	free(fp->idle);
	free(fp->dead);
	free(fp->pending);
	free(fp);
	p->priv = NULL;
}

/* The segment hooks' twins that read headers in place (flows.bpf.c). */
#define IN_PLACE_TWIN "_d"

/*
 * Whether the segment hooks may read packet headers in place here: the
 * kernel lets them (feature_read_in_place) and LATOP_FLOWS_READS (copy or
 * auto) does not say copy.  why gets the reason when not; -1 with *cause
 * for a value of LATOP_FLOWS_READS it does not know.
 */
static int reads_in_place(char *why, size_t len, char **cause)
{
	const char *v = getenv("LATOP_FLOWS_READS");

	if (v && strcmp(v, "auto") && strcmp(v, "copy")) {
		if (cause)
			*cause = xasprintf("flows: LATOP_FLOWS_READS=%s: not copy or auto", v);
		return -1;
	}
	if (v && !strcmp(v, "copy")) {
		snprintf(why, len, "LATOP_FLOWS_READS=copy in the environment");
		return 0;
	}
	if (feature_read_in_place(why, len)) {
		why[0] = 0;
		return 1;
	}
	return 0;
}

/* Fill c with how the segment hooks read packet headers, and why not in place. */
static void reads_choice(struct hook_choice *c, bool in_place, const char *why)
{
	c->stage = "packet headers";
	c->hook = in_place ? "read in place (bpf_rdonly_cast)" : "copied (bpf_probe_read_kernel)";
	c->first = in_place;
	snprintf(c->why, sizeof(c->why), "%s%s", in_place ? "" : "not in place: ", why);
}

/*
 * Open, set up and load the BPF object, its segment hooks reading headers
 * in place when in_place; p->hooks get the choices.  0; or -1 with
 * *load_err the load's error (fp->skel then freed), or with *cause set
 * when a step before it failed.
 */
static int load_skel(struct probe *p, struct flows_priv *fp, bool in_place, int *load_err,
		     char **cause)
{
	int used[NSPECS];
	int err;

	*load_err = 0;
	fp->skel = flows_bpf__open();
	if (!fp->skel) {
		*cause = xasprintf("flows: opening the BPF object: %s", strerror(errno));
		return -1;
	}
	if (hook_choose_all("flows", fp->skel->obj, hook_specs, NSPECS, p->hooks, used, 0, cause))
		return -1;
	if (in_place)
		hook_use_twins(fp->skel->obj, hook_specs, NSPECS, used, IN_PLACE_TWIN);
	fp->skel->rodata->spill_on = used[SPEC_SPILL] >= 0;
	fp->spill_prog = NULL;
	if (used[SPEC_SPILL] >= 0) {
		char name[64];

		snprintf(name, sizeof(name), "%s%s",
			 hook_specs[SPEC_SPILL].alt[used[SPEC_SPILL]].progs[0],
			 in_place ? IN_PLACE_TWIN : "");
		fp->spill_prog = bpf_object__find_program_by_name(fp->skel->obj, name);
		if (fp->spill_prog)
			bpf_program__set_autoattach(fp->spill_prog, false);
	}
	capacity_choice(&p->hooks[NSPECS], fp->max_keys);
	p->nhooks = NSPECS + 2;
	if (bpf_map__set_max_entries(fp->skel->maps.flows, fp->max_keys) ||
	    bpf_map__set_max_entries(fp->skel->maps.agg, fp->max_keys) ||
	    bpf_map__set_max_entries(fp->skel->maps.departed, fp->max_keys)) {
		*cause = xasprintf("flows: sizing the flows, agg and departed maps to %u: %s",
				   fp->max_keys, strerror(errno));
		return -1;
	}
	fp->skel->rodata->timeout_ns = fp->timeout_ns;
	fp->skel->rodata->nr_cpus = (uint32_t)libbpf_num_possible_cpus();
	err = flows_bpf__load(fp->skel);
	if (!err)
		return 0;
	flows_bpf__destroy(fp->skel);
	fp->skel = NULL;
	fp->spill_prog = NULL;
	*load_err = err;
	return -1;
}

/* Drop libbpf's messages (a trial load's verifier log). */
static int quiet_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* Choose hooks and load; flows_attach starts counting. */
static int flows_open(struct probe *p, char **cause)
{
	struct flows_priv *fp = xcalloc(1, sizeof(*fp));
	char why[160];
	int err, rc, in_place;

	p->priv = fp;
	fp->wake_epfd = -1;
	if (!feature_btf(why, sizeof(why))) {
		*cause = xasprintf("flows: %s", why);
		goto fail;
	}
	fp->timeout_ns = read_timeout();
	fp->max_keys = read_max_keys();
	fp->spill_always = read_spill_always();
	in_place = reads_in_place(why, sizeof(why), cause);
	if (in_place < 0)
		goto fail;
	if (in_place) {
		/* A trial: should the twins fail, the copies load, and a
		 * verifier log on stderr would say nothing of use. */
		libbpf_print_fn_t was = libbpf_set_print(quiet_libbpf);

		rc = load_skel(p, fp, true, &err, cause);
		libbpf_set_print(was);
		if (rc && err && err != -EPERM) {
			/* A verifier that refuses the twins: copy, and say so. */
			snprintf(why, sizeof(why), "the programs that read in place failed to "
				 "load (%s)", strerror(-err));
			in_place = 0;
			rc = load_skel(p, fp, false, &err, cause);
		}
	} else {
		rc = load_skel(p, fp, false, &err, cause);
	}
	if (rc) {
		if (err)
			*cause = hook_load_cause("flows", err);
		goto fail;
	}
	reads_choice(&p->hooks[NSPECS + 1], in_place, why);
	fp->rb = ring_buffer__new(bpf_map__fd(fp->skel->maps.events), on_event, fp, NULL);
	if (!fp->rb) {
		*cause = xasprintf("flows: opening the events ring buffer: %s", strerror(errno));
		goto fail;
	}
	if (fp->spill_prog) {
		int wfd = bpf_map__fd(fp->skel->maps.spill_wake);

		fp->wake_rb = ring_buffer__new(wfd, on_spill_wake, fp, NULL);
		fp->wake_epfd = fp->wake_rb ? probe_wake_open(wfd) : -1;
		if (fp->wake_epfd < 0) {
			*cause = xasprintf("flows: watching the spill_wake ring: %s",
					   strerror(errno));
			goto fail;
		}
	}
	fp->ncpus = libbpf_num_possible_cpus();
	fp->boot_offset_ns = boot_offset_ns();
	fp->bcap = FLOW_BATCH;
	fp->bkeys = xcalloc(fp->bcap, sizeof(*fp->bkeys));
	fp->bvals = xcalloc(fp->bcap, sizeof(*fp->bvals));
	fp->akeys = xcalloc(fp->bcap, sizeof(*fp->akeys));
	fp->dkeys = xcalloc(fp->bcap, sizeof(*fp->dkeys));
	fp->rkeys = xcalloc(fp->bcap, sizeof(*fp->rkeys));
	fp->ovf_cpu = xcalloc(fp->ncpus, sizeof(*fp->ovf_cpu));
	probe_health_init(&fp->health, bpf_map__fd(fp->skel->maps.health), fp->ncpus, health_to,
			  FH_N);
	return 0;
fail:
	flows_close(p);
	return -1;
}

/* Attach the loaded programs, then add the connections already open. */
static int flows_attach(struct probe *p, char **cause)
{
	struct flows_priv *fp = p->priv;

	if (probe_attach_skel("flows", fp->skel->skeleton, cause))
		return -1;
	/* After the attach: a listener from before is in /proc by now, one
	 * from after is seen by the kernel. */
	seed_served(fp);
	seed_flows(fp);
	fp->nflows = fp->seeded;
	return spill_tick(fp, cause);
}

/* What each stage would use here, every alternative tried. */
static size_t flows_hooks(struct hook_choice *out, size_t max)
{
	char why[160];
	int in_place;

	if (max < NSPECS + 2)
		return 0;
	hook_choose_all("flows", NULL, hook_specs, NSPECS, out, NULL, HOOK_CHECK_ALL, NULL);
	capacity_choice(&out[NSPECS], read_max_keys());
	in_place = reads_in_place(why, sizeof(why), NULL);
	if (in_place < 0)
		snprintf(why, sizeof(why), "LATOP_FLOWS_READS=%s: not copy or auto (flows will "
			 "not open)", getenv("LATOP_FLOWS_READS"));
	reads_choice(&out[NSPECS + 1], in_place > 0, why);
	return NSPECS + 2;
}

/* List the fds of the loaded programs. */
static size_t flows_prog_fds(struct probe *p, int *out, size_t max)
{
	struct flows_priv *fp = p->priv;

	return fp ? probe_prog_fds(fp->skel->obj, out, max) : 0;
}

static const struct schema *const flows_tables[] = {
	&flows_schema, &flow_events_schema,
};

/* The latoprc keys this probe reads. */
static const char *const rc_keys[] = {"flow_max", "flow_timeout", "flow_spill", NULL};

const struct probe_ops flows_probe_ops = {
	.name = "flows",
	.config_keys = rc_keys,
	.help = "per TCP flow host latency: request in to response out, matched by "
		"sequence and ack numbers on the serving socket",
	.ntables = 2,
	.tables = flows_tables,
	.open = flows_open,
	.attach = flows_attach,
	.set_filter = flows_set_filter,
	.collect = flows_collect,
	.hooks = flows_hooks,
	.close = flows_close,
	.prog_fds = flows_prog_fds,
	.wake_fd = flows_wake_fd,
	.wake = flows_wake,
};
