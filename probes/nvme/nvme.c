/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The nvme probe, user side: choose a hook for each stage boundary of
 * NVMe/TCP I/O on the initiator (nvme_tcp) and the target (nvmet_tcp), load
 * and attach nvme.bpf.c, and turn its monotonic per-key totals into one
 * frame of nvme and one of nvme_events per tick.
 *
 * The hooks live in kernel modules.  A side whose module is not loaded is
 * left out; with neither, the probe does not open and says why (other
 * probes run on, and recordings of nvme replay as usual).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "../../core/clock.h"
#include "../../core/xalloc.h"
#include "../../core/hist.h"
#include "../probe.h"
#include "../probe_util.h"
#include "../feature.h"
#include "nvme.h"
#include "nvme_schema.h"
#include "nvme.skel.h"

/* A stage boundary: its hooks, and what it means to this probe. */
struct nvme_hook {
	struct hook_spec h;
	int side;			/* enum nvme_side */
	__u32 have;			/* rodata bits set when the first alternative is live */
};

static const struct nvme_hook hook_specs[] = {
	{{"initiator: bio queued (queue starts)", false, "I/Os start at queue_rq (queue is 0)",
	  {{"tp_btf", NULL, {"block_bio_queue"}, {"bio_queue"}, "tp_btf/block_bio_queue"}}},
	 SIDE_INITIATOR, HAVE_I(IB_BIO)},
	{{"initiator: bio split (parts inherit its queueing)", false,
	  "none: split I/Os do not fit (counted as misfit)",
	  {{"tp_btf", NULL, {"block_split"}, {"bio_split"}, "tp_btf/block_split"}}},
	 SIDE_INITIATOR, 0},
	{{"initiator: nvme-tcp submission starts", false, "tp_btf/nvme_setup_cmd",
	  {{"fentry", "nvme_tcp", {"nvme_tcp_queue_rq"}, {"queue_rq"}, "fentry/nvme_tcp_queue_rq"}}},
	 SIDE_INITIATOR, HAVE_I(IB_QRQ)},
	{{"initiator: command id and opcode", true, NULL,
	  {{"tp_btf", "nvme_core", {"nvme_setup_cmd"}, {"setup_cmd"}, "tp_btf/nvme_setup_cmd"}}},
	 SIDE_INITIATOR, 0},
	{{"initiator: capsule and data handed to TCP", false,
	  "none: submit and data_out are 0, remote starts at queue_rq",
	  {{"fentry", "nvme_tcp", {"nvme_tcp_try_send"}, {"try_send_enter", "try_send_exit"},
	   "fentry+fexit/nvme_tcp_try_send"}}},
	 SIDE_INITIATOR, HAVE_I(IB_CMD_SENT) | HAVE_I(IB_DATA_SENT)},
	{{"initiator: R2T received", false, "none: r2t is 0",
	  {{"fentry", "nvme_tcp", {"nvme_tcp_setup_h2c_data_pdu"}, {"setup_h2c"},
	   "fentry/nvme_tcp_setup_h2c_data_pdu"}}},
	 SIDE_INITIATOR, HAVE_I(IB_R2T)},
	{{"initiator: response arrives on the socket", false,
	  "none: rx is 0, remote ends at nvme_complete_rq",
	  {{"fentry", "nvme_tcp", {"nvme_tcp_data_ready"}, {"data_ready"},
	   "fentry/nvme_tcp_data_ready"}}},
	 SIDE_INITIATOR, HAVE_I(IB_RX)},
	{{"initiator: nvme completion", true, NULL,
	  {{"tp_btf", "nvme_core", {"nvme_complete_rq"}, {"complete_rq_tp"},
	   "tp_btf/nvme_complete_rq"},
	  {"fentry", "nvme_core", {"nvme_complete_rq"}, {"complete_rq_fentry"},
	   "fentry/nvme_complete_rq"}}},
	 SIDE_INITIATOR, 0},
	{{"initiator: block completion (I/O ends)", true, NULL,
	  {{"tp_btf", NULL, {"block_rq_complete"}, {"block_complete"}, "tp_btf/block_rq_complete"}}},
	 SIDE_INITIATOR, 0},
	{{"target: command received", true, NULL,
	  {{"tp_btf", "nvmet", {"nvmet_req_init"}, {"req_init_tp"}, "tp_btf/nvmet_req_init"},
	  {"fentry", "nvmet", {"nvmet_req_init"}, {"req_init_fentry"}, "fentry/nvmet_req_init"}}},
	 SIDE_TARGET, 0},
	{{"target: backing I/O starts (block device)", false,
	  "none: t_recv is 0, t_exec starts at the command",
	  {{"fentry", "nvmet", {"nvmet_bdev_execute_rw"}, {"bdev_execute"},
	   "fentry/nvmet_bdev_execute_rw"}}},
	 SIDE_TARGET, HAVE_T(TB_EXEC)},
	{{"target: backing I/O starts (file)", false,
	  "none (file-backed namespaces: t_exec starts at the command)",
	  {{"fentry", "nvmet", {"nvmet_file_execute_rw"}, {"file_execute"},
	   "fentry/nvmet_file_execute_rw"}}},
	 SIDE_TARGET, HAVE_T(TB_EXEC)},
	{{"target: command completes", true, NULL,
	  {{"tp_btf", "nvmet", {"nvmet_req_complete"}, {"req_complete_tp"},
	   "tp_btf/nvmet_req_complete"},
	  {"fentry", "nvmet", {"nvmet_req_complete"}, {"req_complete_fentry"},
	   "fentry/nvmet_req_complete"}}},
	 SIDE_TARGET, 0},
	{{"target: response PDU sent", false,
	  "none: the command ends at its completion (t_send is 0)",
	  {{"fentry", "nvmet_tcp", {"nvmet_setup_response_pdu"}, {"setup_response"},
	   "fentry/nvmet_setup_response_pdu"}}},
	 SIDE_TARGET, HAVE_T(TB_RSP)},
};
#define NSPECS (sizeof(hook_specs) / sizeof(hook_specs[0]))
#define NCHOICES (NSPECS + 4)	/* the two sides, the boundaries, the two tables' sizes */
#define SWEEP_TICKS 10		/* the I/O tables are swept every this many ticks */

/* The module each side needs loaded. */
#define INITIATOR_MODULE "nvme_tcp"
#define TARGET_MODULE "nvmet_tcp"

/* Where each health counter goes in the frames' stats: single events over
 * the per-tick budget (BUFFER) are left out by design, dropped, not lost. */
static const enum probe_stat health_to[H_N] = {
	[H_DROPPED] = PSTAT_DROPPED, [H_BUDGET] = PSTAT_DROPPED, [H_LOST] = PSTAT_LOST,
	[H_EVICTED] = PSTAT_EVICTED, [H_OVERFLOW] = PSTAT_OVERFLOW,
};

/* A key's totals last tick. */
struct prev_ent {
	struct nvme_key key;
	struct nvme_stats st;
	bool seen;		/* found in the map this tick */
};

struct nvme_priv {
	struct nvme_bpf *skel;
	struct ring_buffer *rb;
	struct prev_ent **prev;	/* keys seen, by a hash of the key: nprev slots */
	size_t nprev;		/* a power of 2, twice the stats map's keys or more */
	uint32_t max_keys;	/* the stats map's size: latoprc nvme_max */
	uint32_t max_inflight;	/* the I/O tables' size: latoprc nvme_inflight_max */
	uint64_t ticks;
	struct nvme_stats *ovf_prev;	/* the overflow entry's totals last tick */
	struct nvme_stats *cur;	/* one key's totals, read from the map */
	uint32_t sample_n;
	int ncpus;
	struct probe_health health;
	uint64_t boot_offset_ns;
	struct frame *ev_frame;
	struct frame *span_frame;
};

/*
 * The hooks LATOP_NVME_HOOKS=tracepoints allows: tracepoints only (what a
 * kernel that refuses fentry gives; the guest test runs it).
 */
static unsigned hook_flags(void)
{
	const char *v = getenv("LATOP_NVME_HOOKS");

	return v && !strcmp(v, "tracepoints") ? HOOK_NO_FENTRY : 0;
}

/* Return true when the module side needs is loaded. */
static bool side_present(int side)
{
	return feature_module(side == SIDE_INITIATOR ? INITIATOR_MODULE : TARGET_MODULE);
}

/*
 * Fill choice for spec; return the index of the alternative used, or -1.
 * A side whose module is absent is not tried.
 */
static int choose_hook(const struct nvme_hook *spec, struct hook_choice *choice, unsigned flags)
{
	if (!side_present(spec->side)) {
		choice->stage = spec->h.stage;
		choice->hook = NULL;
		choice->first = false;
		snprintf(choice->why, sizeof(choice->why), "off: module %s is not loaded",
			 spec->side == SIDE_INITIATOR ? INITIATOR_MODULE : TARGET_MODULE);
		return -1;
	}
	return hook_choose(&spec->h, choice, flags);
}

/* Write the session name of key k into buf. */
static const char *session_name(const struct nvme_key *k, char *buf, size_t len)
{
	if (k->side == SIDE_INITIATOR)
		snprintf(buf, len, "nvme%uq%u", k->instance, k->qid);
	else
		snprintf(buf, len, "cntlid%uq%u", k->cntlid, k->qid);
	return buf;
}

static const char *const seq_names[] = {
	[SEQ_READ] = "read", [SEQ_WRITE_INLINE] = "write_inline",
	[SEQ_WRITE_R2T] = "write_r2t", [SEQ_TARGET] = "target",
};

/* Lay I/O e's stages (ending at end_ns) end to end as spans of its timeline. */
static void add_spans(struct nvme_priv *np, const struct nvme_event *e, uint64_t end_ns)
{
	uint64_t at = end_ns - e->lat;
	char row[48], ses[32];
	int i;

	snprintf(row, sizeof(row), "%s %s", e->key.side == SIDE_INITIATOR ? "initiator" : "target",
		 session_name(&e->key, ses, sizeof(ses)));
	for (i = 0; i < NS_N; i++) {
		union cell *r;

		if (!e->stage[i])
			continue;
		r = frame_add_row(np->span_frame);
		r[NP_ID].u = e->id;
		cell_set_str(&r[NP_ROW], row);
		r[NP_START].u = at;
		r[NP_DUR].u = e->stage[i];
		cell_set_str(&r[NP_KIND], nvme_stage_names[i]);
		cell_set_str(&r[NP_LABEL], nvme_stage_names[i]);
		at += e->stage[i];
	}
}

/* Append one ring buffer record to the events frame of this tick. */
static int on_event(void *ctx, void *data, size_t size)
{
	struct nvme_priv *np = ctx;
	const struct nvme_event *e = data;
	char buf[32];
	union cell *r;
	int i;

	if (size < sizeof(*e) || !np->ev_frame)
		return 0;
	r = frame_add_row(np->ev_frame);
	r[NE_TS].u = e->ts_ns + np->boot_offset_ns;
	r[NE_ID].u = e->id;
	cell_set_str(&r[NE_SIDE], e->key.side == SIDE_INITIATOR ? "initiator" : "target");
	cell_set_str(&r[NE_SESSION], session_name(&e->key, buf, sizeof(buf)));
	cell_set_str(&r[NE_OP], nvme_op_name(e->key.op, buf, sizeof(buf)));
	r[NE_SIZE].u = e->key.size;
	r[NE_QID].u = e->key.qid;
	r[NE_CNTLID].u = e->key.cntlid;
	r[NE_CID].u = e->cid;
	cell_set_str(&r[NE_SEQ], e->seq < sizeof(seq_names) / sizeof(seq_names[0]) &&
		     seq_names[e->seq] ? seq_names[e->seq] : "?");
	r[NE_LAT].u = e->lat;
	for (i = 0; i < NS_N; i++)
		r[NE_STAGE0 + i].u = e->stage[i];
	add_spans(np, e, r[NE_TS].u);
	return 0;
}

/* Return the prev entry of key k, adding a zeroed one; NULL when full
 * (keys never leave the stats map, which holds half the slots at most). */
static struct prev_ent *prev_of(struct nvme_priv *np, const struct nvme_key *k)
{
	uint64_t h = ((uint64_t)k->side << 56) ^ ((uint64_t)k->instance << 40) ^
		     ((uint64_t)k->cntlid << 24) ^ ((uint64_t)k->qid << 8) ^ k->op;
	size_t i, s;

	h = (h ^ ((uint64_t)k->size * 0xC2B2AE3D27D4EB4FULL)) * 0x9E3779B97F4A7C15ULL;
	for (i = 0; i < np->nprev; i++) {
		s = (h + i) & (np->nprev - 1);
		if (!np->prev[s]) {
			np->prev[s] = xcalloc(1, sizeof(*np->prev[s]));
			np->prev[s]->key = *k;
			return np->prev[s];
		}
		if (!memcmp(&np->prev[s]->key, k, sizeof(*k)))
			return np->prev[s];
	}
	return NULL;
}

/* Append a row for key k's I/Os since last tick (k NULL: the overflow row,
 * text keys "(other)" and numeric ones 0); return the I/Os counted. */
static uint64_t add_row(struct nvme_priv *np, struct frame *f, const struct nvme_key *k,
			const struct nvme_stats *cur, const struct nvme_stats *prev)
{
	uint64_t n = np->sample_n > 1 ? np->sample_n : 1;
	uint64_t count = delta(cur->count, prev->count);
	uint64_t misfit = delta(cur->misfit, prev->misfit);
	union cell *r;
	char buf[32];
	int i;

	if (!count && !misfit)
		return 0;
	r = frame_add_row(f);
	if (k) {
		/* A field the key leaves out (the query reads nothing of it) is empty. */
		cell_set_str(&r[NC_SIDE], k->masked & NVME_NO_SIDE_KEY ? "" :
			     k->side == SIDE_INITIATOR ? "initiator" : "target");
		cell_set_str(&r[NC_SESSION], k->masked & NVME_NO_INSTANCE_KEY ? "" :
			     session_name(k, buf, sizeof(buf)));
		cell_set_str(&r[NC_OP], k->masked & NVME_NO_OP_KEY ? "" :
			     nvme_op_name(k->op, buf, sizeof(buf)));
		r[NC_SIZE].u = k->size;
		r[NC_QID].u = k->qid;
		r[NC_CNTLID].u = k->cntlid;
	} else {
		cell_set_str(&r[NC_SIDE], "(other)");
		cell_set_str(&r[NC_SESSION], "(other)");
		cell_set_str(&r[NC_OP], "(other)");
		r[NC_SIZE].u = 0;
		r[NC_QID].u = 0;
		r[NC_CNTLID].u = 0;
	}
	r[NC_COUNT].u = count * n;
	r[NC_MISFIT].u = misfit * n;
	probe_cell_hist(&r[NC_LAT], cur->hist[NS_N], prev->hist[NS_N],
			 delta(cur->lat_sum, prev->lat_sum), NULL, n);
	r[NC_TIME].u = delta(cur->lat_sum, prev->lat_sum) * n;
	for (i = 0; i < NS_N; i++) {
		uint64_t d = delta(cur->stage[i], prev->stage[i]);

		r[NC_STAGE0 + i].u = d * n;
		probe_cell_hist(&r[NC_HIST0 + i], cur->hist[i], prev->hist[i], d, NULL, n);
	}
	return count + misfit;
}

/* Fold every key of the stats map, and the overflow entry, into f; return
 * the I/Os counted. */
static uint64_t read_stats(struct nvme_priv *np, struct frame *f)
{
	int fd = bpf_map__fd(np->skel->maps.stats);
	struct nvme_key k, next;
	uint64_t events = 0;
	bool first = true;
	uint32_t zero = 0;

	while (!bpf_map_get_next_key(fd, first ? NULL : &k, &next)) {
		struct prev_ent *p;

		first = false;
		k = next;
		if (bpf_map_lookup_elem(fd, &k, np->cur))
			continue;
		p = prev_of(np, &k);
		if (!p) {
			f->stats.evicted++;
			continue;
		}
		events += add_row(np, f, &k, np->cur, &p->st);
		p->st = *np->cur;
	}
	if (!bpf_map_lookup_elem(bpf_map__fd(np->skel->maps.overflow), &zero, np->cur)) {
		events += add_row(np, f, NULL, np->cur, np->ovf_prev);
		*np->ovf_prev = *np->cur;
	}
	return events;
}

/* An initiator I/O that started more than NVME_STALE_NS ago: stale. */
static bool iio_stale(const void *key, const void *value, void *arg)
{
	const struct nvme_iio *io = value;

	(void)key;
	return io->t[IB_QRQ] + NVME_STALE_NS <= *(const uint64_t *)arg;
}

/* A target command that started more than NVME_STALE_NS ago: stale. */
static bool tio_stale(const void *key, const void *value, void *arg)
{
	const struct nvme_tio *io = value;

	(void)key;
	return io->t[TB_INIT] + NVME_STALE_NS <= *(const uint64_t *)arg;
}

/* Give up the I/Os whose end was never seen (nvme.h); return how many. */
static uint64_t sweep_ios(struct nvme_priv *np)
{
	uint64_t now = mono_ns();

	if (now < NVME_STALE_NS)
		return 0;
	return probe_sweep_hash(bpf_map__fd(np->skel->maps.ios), sizeof(__u64),
				sizeof(struct nvme_iio), iio_stale, &now) +
	       probe_sweep_hash(bpf_map__fd(np->skel->maps.tios), sizeof(struct nvme_tkey),
				sizeof(struct nvme_tio), tio_stale, &now);
}

/* Read and fold this tick's totals and events into two frames of t. */
static int nvme_collect(struct probe *p, uint64_t t_ns, uint64_t dt_ns, struct tick *t,
			char **cause)
{
	struct nvme_priv *np = p->priv;
	struct frame *f = frame_new(&nvme_schema, t_ns, dt_ns);
	struct frame *ev = frame_new(&nvme_events_schema, t_ns, dt_ns);
	struct frame *sp = frame_new(&nvme_spans_schema, t_ns, dt_ns);
	int err;

	np->ev_frame = ev;
	np->span_frame = sp;
	err = ring_buffer__consume(np->rb);
	np->ev_frame = np->span_frame = NULL;
	np->skel->bss->events_used = 0;
	if (err < 0) {
		*cause = xasprintf("nvme: reading the events ring buffer: %s", strerror(-err));
		frame_free(f);
		frame_free(ev);
		frame_free(sp);
		return -1;
	}
	f->stats.events = read_stats(np, f);
	probe_health_tick(&np->health, &f->stats);
	if (++np->ticks % SWEEP_TICKS == 0)
		f->stats.evicted += sweep_ios(np);
	ev->stats = f->stats;
	ev->stats.events = ev->nrows;
	sp->stats = ev->stats;
	sp->stats.events = sp->nrows;
	tick_add(t, f);
	tick_add(t, ev);
	tick_add(t, sp);
	return 0;
}

/* Check that test e is one nvme can run: any term but comm. */
static int filter_leaf(const char *probe, const struct filter_entry *e, uint32_t i, char **cause)
{
	if (e->op >= FOP_EQ && e->op <= FOP_PREFIX && e->term > FTERM_NONE &&
	    e->term < FTERM_MAX && e->term != FTERM_COMM)
		return 0;
	*cause = xasprintf("%s: filter entry %u: op %u on term %u is not "
			   "supported here", probe, i, e->op, e->term);
	return -1;
}

/* Return the side named by s ("initiator", "target"), or by its prefix; 0 for none. */
static __u64 side_of(const char *s, bool prefix)
{
	size_t n = prefix ? strlen(s) : sizeof("initiator");

	if (!strncmp(s, "initiator", n))
		return SIDE_INITIATOR;
	n = prefix ? n : sizeof("target");
	return !strncmp(s, "target", n) ? SIDE_TARGET : 0;
}

/*
 * Turn side tests (a string, or a prefix, in strs[]) into numbers the BPF
 * side compares: 'initiator' 1, 'target' 2, anything else 0 (no I/O).
 */
static void filter_sides(struct filter_prog *f)
{
	uint32_t i;

	for (i = 0; i < f->n && i < FILTER_MAX_ENTRIES; i++) {
		struct filter_entry *e = &f->e[i];
		char s[FILTER_STR_LEN + 1] = "";

		if (e->term != FTERM_SIDE)
			continue;
		if (e->value < FILTER_MAX_STRS)
			memcpy(s, f->strs[e->value], FILTER_STR_LEN);
		e->value = side_of(s, e->op == FOP_PREFIX);
		if (e->op == FOP_PREFIX)
			e->op = FOP_EQ;
	}
}

/* Install f in the idle slot, then make it current. */
static int nvme_set_filter(struct probe *p, const struct filter_prog *f, char **cause)
{
	struct nvme_priv *np = p->priv;
	struct filter_prog copy = *f;
	uint32_t next;

	if (probe_filter_check("nvme", f, filter_leaf, cause))
		return -1;
	filter_sides(&copy);
	next = (np->skel->bss->filter_idx + 1) & 1;
	np->skel->bss->filters[next] = copy;
	np->skel->bss->filter_keymask[next] = nvme_key_mask(f);
	__atomic_store_n(&np->skel->bss->filter_idx, next, __ATOMIC_RELEASE);
	np->sample_n = f->sample_n;
	return 0;
}

/* Free everything nvme_open made. */
static void nvme_close(struct probe *p)
{
	struct nvme_priv *np = p->priv;
	size_t i;

	if (!np)
		return;
	ring_buffer__free(np->rb);
	nvme_bpf__destroy(np->skel);
	for (i = 0; np->prev && i < np->nprev; i++)
		free(np->prev[i]);
	free(np->prev);
	free(np->cur);
	free(np->ovf_prev);
	free(np);
	p->priv = NULL;
}

/* Fill the two side lines of choices (whether each side runs, and why not). */
static void side_choices(struct hook_choice *c, const bool run[3])
{
	c[0].stage = "initiator side (nvme_tcp)";
	c[0].hook = run[SIDE_INITIATOR] ? "on" : "off";
	c[0].first = run[SIDE_INITIATOR];
	snprintf(c[0].why, sizeof(c[0].why), "%s", run[SIDE_INITIATOR] ? "" :
		 side_present(SIDE_INITIATOR) ? "initiator off: a required hook is refused (below)" :
		 "initiator off: no nvme_tcp in this kernel (module not loaded)");
	c[1].stage = "target side (nvmet_tcp)";
	c[1].hook = run[SIDE_TARGET] ? "on" : "off";
	c[1].first = run[SIDE_TARGET];
	snprintf(c[1].why, sizeof(c[1].why), "%s", run[SIDE_TARGET] ? "" :
		 side_present(SIDE_TARGET) ? "target off: a required hook is refused (below)" :
		 "target off: no nvmet_tcp in this kernel (module not loaded)");
}

/* A stats map entry: its key and value, and the element header and the
 * allocator's share, about 64 bytes on 6.1. */
#define NVME_KEY_BYTES (sizeof(struct nvme_key) + sizeof(struct nvme_stats) + 64)
/* One I/O's room in each of the three tables of that size (initiator,
 * target, bio queueing times), each entry with its element header. */
#define NVME_IO_BYTES (sizeof(__u64) + sizeof(struct nvme_iio) + sizeof(struct nvme_tkey) + \
		       sizeof(struct nvme_tio) + 2 * sizeof(__u64) + 3 * 64)

/* Return latoprc's nvme_max, or the default that fits this machine (said,
 * when it is bad). */
static uint32_t read_max_keys(void)
{
	return probe_size_option("nvme_max", NVME_KEYS_MIN, NVME_KEYS_MAX,
				 probe_size_fit(NVME_DEFAULT_KEYS, NVME_KEYS_DEFAULT_MIN,
						NVME_KEY_BYTES),
				 false, "keys");
}

/* Return latoprc's nvme_inflight_max, or the default that fits this machine. */
static uint32_t read_max_inflight(void)
{
	return probe_size_option("nvme_inflight_max", NVME_INFLIGHT_MIN, NVME_INFLIGHT_MAX,
				 probe_size_fit(NVME_DEFAULT_INFLIGHT, NVME_INFLIGHT_DEFAULT_MIN,
						NVME_IO_BYTES),
				 false, "I/Os");
}

/* Fill c[0] and c[1] with the stats map's and the I/O tables' capacity and
 * what happens when each is full. */
static void capacity_choices(struct hook_choice *c, uint32_t max_keys, uint32_t max_inflight)
{
	probe_capacity(&c[0], "keys counted at once (latoprc nvme_max)", max_keys, "keys",
		       NVME_KEY_BYTES, false, "more are counted in the (other) row (overflow)");
	probe_capacity(&c[1], "I/Os in flight (latoprc nvme_inflight_max)", max_inflight,
		       "I/Os", NVME_IO_BYTES, true,
		       "as many on each side; more are not followed, counted as evicted");
}

/*
 * Choose every boundary's hook into choices (after the two side lines, and
 * before the stats map's size, from max_keys); say which sides can run and
 * which programs and rodata bits are used.
 */
static size_t choose_all(struct hook_choice *choices, bool run[3], int used[NSPECS],
			 __u32 *have, unsigned flags, uint32_t max_keys)
{
	size_t i;

	run[SIDE_INITIATOR] = side_present(SIDE_INITIATOR);
	run[SIDE_TARGET] = side_present(SIDE_TARGET);
	*have = 0;
	for (i = 0; i < NSPECS; i++) {
		const struct nvme_hook *s = &hook_specs[i];

		used[i] = choose_hook(s, &choices[2 + i], flags);
		if (used[i] < 0 && s->h.required)
			run[s->side] = false;
		if (used[i] == 0)
			*have |= s->have;
	}
	side_choices(choices, run);
	capacity_choices(&choices[2 + NSPECS], max_keys, read_max_inflight());
	return NCHOICES;
}

/* Choose hooks and load; nvme_attach starts counting. */
static int nvme_open(struct probe *p, char **cause)
{
	struct nvme_priv *np = xcalloc(1, sizeof(*np));
	int used[NSPECS], err;
	bool run[3];
	char why[160];
	__u32 have;
	size_t i;

	p->priv = np;
	if (!feature_btf(why, sizeof(why))) {
		*cause = xasprintf("nvme: %s", why);
		goto fail;
	}
	if (!side_present(SIDE_INITIATOR) && !side_present(SIDE_TARGET)) {
		*cause = xasprintf("nvme: no nvme_tcp/nvmet_tcp in this kernel (neither module is "
				   "loaded: no /sys/kernel/btf/%s or /sys/kernel/btf/%s); "
				   "modprobe nvme-tcp or nvmet-tcp to profile NVMe/TCP; "
				   "recordings of nvme still replay", INITIATOR_MODULE,
				   TARGET_MODULE);
		goto fail;
	}
	np->max_keys = read_max_keys();
	p->nhooks = choose_all(p->hooks, run, used, &have, hook_flags(), np->max_keys);
	if (!run[SIDE_INITIATOR] && !run[SIDE_TARGET]) {
		for (i = 0; i < NSPECS; i++)
			if (hook_specs[i].h.required && used[i] < 0 && p->hooks[2 + i].why[0])
				break;
		*cause = xasprintf("nvme: %s: %s", i < NSPECS ? hook_specs[i].h.stage : "hooks",
				   i < NSPECS ? p->hooks[2 + i].why : "none load");
		goto fail;
	}
	np->skel = nvme_bpf__open();
	if (!np->skel) {
		*cause = xasprintf("nvme: opening the BPF object: %s", strerror(errno));
		goto fail;
	}
	for (i = 0; i < NSPECS; i++)
		hook_disable(np->skel->obj, &hook_specs[i].h,
			     run[hook_specs[i].side] ? used[i] : -1);
	np->skel->rodata->have = have;
	if (bpf_map__set_max_entries(np->skel->maps.stats, np->max_keys)) {
		*cause = xasprintf("nvme: sizing the stats map to %u: %s", np->max_keys,
				   strerror(errno));
		goto fail;
	}
	np->max_inflight = read_max_inflight();
	if (bpf_map__set_max_entries(np->skel->maps.ios, np->max_inflight) ||
	    bpf_map__set_max_entries(np->skel->maps.tios, np->max_inflight) ||
	    bpf_map__set_max_entries(np->skel->maps.bio_ts, np->max_inflight)) {
		*cause = xasprintf("nvme: sizing the I/O tables to %u: %s", np->max_inflight,
				   strerror(errno));
		goto fail;
	}
	err = nvme_bpf__load(np->skel);
	if (err) {
		*cause = hook_load_cause("nvme", err);
		goto fail;
	}
	np->rb = ring_buffer__new(bpf_map__fd(np->skel->maps.events), on_event, np, NULL);
	if (!np->rb) {
		*cause = xasprintf("nvme: opening the events ring buffer: %s", strerror(errno));
		goto fail;
	}
	np->ncpus = libbpf_num_possible_cpus();
	np->boot_offset_ns = boot_offset_ns();
	for (np->nprev = 64; np->nprev < 2 * (size_t)np->max_keys; np->nprev *= 2)
		;
	np->prev = xcalloc(np->nprev, sizeof(*np->prev));
	np->cur = xcalloc(1, sizeof(*np->cur));
	np->ovf_prev = xcalloc(1, sizeof(*np->ovf_prev));
	probe_health_init(&np->health, bpf_map__fd(np->skel->maps.health), np->ncpus, health_to,
			  H_N);
	return 0;
fail:
	nvme_close(p);
	return -1;
}

/* Attach the loaded programs. */
static int nvme_attach(struct probe *p, char **cause)
{
	struct nvme_priv *np = p->priv;

	return probe_attach_skel("nvme", np->skel->skeleton, cause);
}

/* What each stage would use here, every alternative tried. */
static size_t nvme_hooks(struct hook_choice *out, size_t max)
{
	int used[NSPECS];
	bool run[3];
	__u32 have;

	if (max < NCHOICES)
		return 0;
	return choose_all(out, run, used, &have, hook_flags() | HOOK_CHECK_ALL, read_max_keys());
}

/* List the fds of the loaded programs. */
static size_t nvme_prog_fds(struct probe *p, int *out, size_t max)
{
	struct nvme_priv *np = p->priv;

	return np ? probe_prog_fds(np->skel->obj, out, max) : 0;
}

static const struct schema *const nvme_tables[] = {
	&nvme_schema, &nvme_events_schema, &nvme_spans_schema,
};

/* The latoprc keys this probe reads. */
static const char *const rc_keys[] = {"nvme_max", "nvme_inflight_max", NULL};

const struct probe_ops nvme_probe_ops = {
	.name = "nvme",
	.config_keys = rc_keys,
	.help = "NVMe/TCP I/O latency by stage, initiator (nvme_tcp) and target (nvmet_tcp)",
	.ntables = 3,
	.tables = nvme_tables,
	.open = nvme_open,
	.attach = nvme_attach,
	.set_filter = nvme_set_filter,
	.collect = nvme_collect,
	.hooks = nvme_hooks,
	.close = nvme_close,
	.prog_fds = nvme_prog_fds,
};
