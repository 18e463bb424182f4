/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The paths probe, user side: choose the send/receive hooks, load and
 * attach paths.bpf.c, feed its records to the reconstruction
 * (paths_recon.c) every tick, and fold the completed requests into one
 * frame of paths (per path shape x process), one of path_events (single
 * requests above THRESHOLD or sampled) and one of path_spans (their
 * timelines).
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
#include "paths.h"
#include "paths_recon.h"
#include "paths_schema.h"
#include "paths.skel.h"

#define GRACE_NS (10 * 1000000ULL)	/* a thread quiet this long has ended its message */
#define IDLE_NS (60 * 1000000000ULL)	/* threads and connections idle this long are forgotten */
#define DEFAULT_MAX_EVENTS 4096		/* single requests per tick when BUFFER is 0 */
#define SHAPE_LEN 512
#define NAGG 1024

/* Each direction's hooks, preferred first. */
static const struct hook_spec hook_specs[] = {
	{"TCP send (socket, bytes, sequence)", true, NULL,
	 {HOOK_TP_BTF("sock_send_length", "tp_send"),
	  HOOK_FENTRY("security_socket_sendmsg", "fentry_send")}},
	{"TCP receive (socket, bytes, sequence)", true, NULL,
	 {HOOK_TP_BTF("sock_recv_length", "tp_recv"),
	  {"fexit", NULL, {"sock_recvmsg"}, {"fexit_recv"}, "fexit/sock_recvmsg"}}},
};
#define NSPECS (sizeof(hook_specs) / sizeof(hook_specs[0]))
#define NCHOICES (NSPECS + 1)	/* and the ring's size */

/* Where each health counter goes in the frames' stats. */
static const enum probe_stat health_to[PH_N] = {
	[PH_DROPPED] = PSTAT_DROPPED, [PH_LOST] = PSTAT_LOST,
};

/* One row of the paths frame being built. */
struct agg {
	struct agg *next;
	char *shape;
	uint32_t lport, pid;
	char comm[PATH_COMM_LEN + 1];
	uint64_t cgroup;		/* 0 when the query reads no cgroup field */
	uint64_t count, time, calls, down, bytes_in, bytes_out;
	struct hist *lat;
};

struct paths_priv {
	struct paths_bpf *skel;
	struct ring_buffer *rb;
	int epfd;			/* readable when the kernel woke us to drain rb */
	uint32_t ring_mb;
	struct recon *rc;
	int ncpus;
	uint64_t boot_offset_ns;
	struct probe_health health;
	uint64_t records;		/* records read since the last tick */
	/* What the query asked of single events. */
	uint64_t threshold_ns;
	uint32_t sample_n, max_events;
	uint64_t over_budget;		/* events over BUFFER since the last tick */
	bool nocgroup;			/* paths rows leave out the cgroup (the query
					 * reads no cgroup field) */
	uint64_t stray_prev, unanswered_prev;
	/* The frames being built for the next tick (NULL until a drain needs them). */
	struct agg *agg[NAGG];
	struct frame *ev, *sp;
};

/* Fill an ip cell value from 16 bytes (v4-mapped kept as v4). */
static void ip_of(const uint8_t a[16], struct ipaddr *ip)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	memcpy(ip->a, a, 16);
	ip->v4 = !memcmp(a, mapped, 12);
	ip->prefix = ip->v4 ? 32 : 128;
}

static size_t shape_hash(const char *s, uint32_t lport, uint32_t pid, const char *comm,
			 uint64_t cgroup)
{
	uint64_t h = 1469598103934665603ULL ^ lport ^ ((uint64_t)pid << 20) ^
		     cgroup * 0xff51afd7ed558ccdULL;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	for (; *comm; comm++)
		h = (h ^ (uint8_t)*comm) * 1099511628211ULL;
	return (size_t)(h % NAGG);
}

/* Count request r in its paths row. */
static void agg_add(struct paths_priv *sp, const struct recon_req *r, const char *shape,
		    uint64_t lat, uint64_t down)
{
	uint32_t lport = r->client ? 0 : r->entry.lport;
	uint64_t cgroup = sp->nocgroup ? 0 : r->cgroup;
	size_t b = shape_hash(shape, lport, r->tgid, r->comm, cgroup);
	struct agg *a;

	for (a = sp->agg[b]; a; a = a->next)
		if (a->lport == lport && a->pid == r->tgid && !strcmp(a->shape, shape) &&
		    !strcmp(a->comm, r->comm) && a->cgroup == cgroup)
			break;
	if (!a) {
		a = xcalloc(1, sizeof(*a));
		a->shape = xstrdup(shape);
		a->lport = lport;
		a->pid = r->tgid;
		memcpy(a->comm, r->comm, sizeof(a->comm));
		a->cgroup = cgroup;
		a->lat = hist_new();
		a->next = sp->agg[b];
		sp->agg[b] = a;
	}
	a->count++;
	a->time += lat;
	a->calls += r->ncalls;
	a->down += down;
	a->bytes_in += r->bytes_in;
	a->bytes_out += r->bytes_out;
	hist_add(a->lat, lat);
}

/* Append one span row of request id. */
static void add_span(struct paths_priv *sp, uint64_t id, const char *row, uint64_t start,
		     uint64_t dur, const char *kind, const char *label,
		     const struct recon_tuple *t, uint32_t seq, uint64_t n)
{
	union cell *c = frame_add_row(sp->sp);
	struct ipaddr ip;

	c[PS_ID].u = id;
	cell_set_str(&c[PS_ROW], row);
	c[PS_START].u = start + sp->boot_offset_ns;
	c[PS_DUR].u = dur;
	cell_set_str(&c[PS_KIND], kind);
	cell_set_str(&c[PS_LABEL], label);
	ip_of(t->laddr, &ip);
	cell_set_ip(&c[PS_LADDR], &ip);
	c[PS_LPORT].u = t->lport;
	ip_of(t->raddr, &ip);
	cell_set_ip(&c[PS_RADDR], &ip);
	c[PS_RPORT].u = t->rport;
	c[PS_SEQ].u = seq;
	c[PS_N].u = n;
}

/* Append request r to path_events and its timeline to path_spans. */
static void add_event(struct paths_priv *sp, const struct recon_req *r, const char *shape,
		      uint64_t lat, uint64_t down)
{
	union cell *c = frame_add_row(sp->ev);
	struct ipaddr ip;
	char row[96], label[128], addr[64];
	size_t i;

	c[PE_TS].u = r->end_ns + sp->boot_offset_ns;
	c[PE_ID].u = r->id;
	cell_set_str(&c[PE_PATH], shape);
	c[PE_LPORT].u = r->client ? 0 : r->entry.lport;
	c[PE_PID].u = r->tgid;
	c[PE_TID].u = r->tid;
	cell_set_str(&c[PE_COMM], r->comm);
	probe_cgroup_cells(c + PE_CGROUP, r->cgroup);
	ip_of(r->entry.laddr, &ip);
	cell_set_ip(&c[PE_LADDR], &ip);
	ip_of(r->entry.raddr, &ip);
	cell_set_ip(&c[PE_RADDR], &ip);
	c[PE_RPORT].u = r->entry.rport;
	c[PE_SEQ].u = r->seq;
	c[PE_NTH].u = r->nth;
	c[PE_START].u = r->start_ns + sp->boot_offset_ns;
	c[PE_LAT].u = lat;
	c[PE_CALLS].u = r->ncalls;
	c[PE_DOWN].u = down;
	c[PE_SELF].u = lat - down;
	c[PE_BYTES_IN].u = r->bytes_in;
	c[PE_BYTES_OUT].u = r->bytes_out;
	if (!r->client) {
		recon_remote(&r->entry, addr, sizeof(addr));
		snprintf(row, sizeof(row), "request :%u", r->entry.lport);
		snprintf(label, sizeof(label), "%s → :%u", addr, r->entry.lport);
		add_span(sp, r->id, row, r->start_ns, lat, "request", label, &r->entry, r->seq, 0);
	}
	for (i = 0; i < r->ncalls; i++) {
		const struct recon_call *k = r->calls[i];
		uint64_t end = k->end_ns && k->end_ns <= r->end_ns ? k->end_ns : r->end_ns;

		recon_remote(&k->conn, addr, sizeof(addr));
		snprintf(row, sizeof(row), "call %zu %s", i + 1, addr);
		add_span(sp, r->id, row, k->start_ns, end > k->start_ns ? end - k->start_ns : 0,
			 k->end_ns && k->end_ns <= r->end_ns ? "call" : "call-open", addr,
			 &k->conn, k->seq, i + 1);
	}
}

/* A request completed: count it, and keep it as an event when asked. */
static void on_request(void *ctx, const struct recon_req *r)
{
	struct paths_priv *sp = ctx;
	char shape[SHAPE_LEN];
	uint64_t lat = r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0;
	uint64_t down = recon_down_ns(r);
	uint64_t budget = sp->max_events ? sp->max_events : DEFAULT_MAX_EVENTS;
	bool keep;

	recon_shape(r, shape, sizeof(shape));
	agg_add(sp, r, shape, lat, down);
	keep = (sp->threshold_ns && lat >= sp->threshold_ns) ||
	       (sp->sample_n > 1 && (r->id % sp->sample_n) == 0);
	if (!keep || !sp->ev)
		return;
	if (sp->ev->nrows >= budget) {
		sp->over_budget++;
		return;
	}
	add_event(sp, r, shape, lat, down);
}

/* Feed one ring buffer record to the reconstruction. */
static int on_record(void *ctx, void *data, size_t size)
{
	struct paths_priv *sp = ctx;

	if (size < sizeof(struct path_rec))
		return 0;
	sp->records++;
	recon_add(sp->rc, data);
	return 0;
}

/* Turn the aggregates into rows of f and free them. */
static void agg_flush(struct paths_priv *sp, struct frame *f)
{
	size_t b;

	for (b = 0; b < NAGG; b++) {
		while (sp->agg[b]) {
			struct agg *a = sp->agg[b];
			union cell *c = frame_add_row(f);

			sp->agg[b] = a->next;
			cell_set_str(&c[PC_PATH], a->shape);
			c[PC_LPORT].u = a->lport;
			c[PC_PID].u = a->pid;
			cell_set_str(&c[PC_COMM], a->comm);
			probe_cgroup_cells(c + PC_CGROUP, a->cgroup);
			c[PC_COUNT].u = a->count;
			cell_set_hist(&c[PC_LAT], a->lat);
			c[PC_TIME].u = a->time;
			c[PC_CALLS].u = a->calls;
			c[PC_DOWN].u = a->down;
			c[PC_SELF].u = a->time - a->down;
			c[PC_BYTES_IN].u = a->bytes_in;
			c[PC_BYTES_OUT].u = a->bytes_out;
			hist_free(a->lat);
			free(a->shape);
			free(a);
		}
	}
}

/* Feed every record in the ring to the reconstruction; its requests go to
 * the aggregates and to the next tick's frames.  Return ring_buffer__consume's
 * result. */
static int drain(struct paths_priv *sp)
{
	if (!sp->ev)
		sp->ev = frame_new(&path_events_schema, 0, 0);
	if (!sp->sp)
		sp->sp = frame_new(&path_spans_schema, 0, 0);
	return ring_buffer__consume(sp->rb);
}

/* Drain the ring and build the tick's three frames. */
static int paths_collect(struct probe *p, uint64_t t_ns, uint64_t dt_ns, struct tick *t,
			 char **cause)
{
	struct paths_priv *sp = p->priv;
	struct frame *f = frame_new(&paths_schema, t_ns, dt_ns);
	const struct recon_stats *rs;
	uint64_t stray, unanswered;
	int err;

	err = drain(sp);
	sp->ev->t_ns = sp->sp->t_ns = t_ns;
	sp->ev->dt_ns = sp->sp->dt_ns = dt_ns;
	if (err < 0) {
		*cause = xasprintf("paths: reading the records ring buffer: %s", strerror(-err));
		frame_free(f);
		frame_free(sp->ev);
		frame_free(sp->sp);
		sp->ev = sp->sp = NULL;
		return -1;
	}
	recon_flush(sp->rc, mono_ns(), GRACE_NS, IDLE_NS);
	agg_flush(sp, f);
	rs = recon_stats(sp->rc);
	stray = rs->stray_replies + rs->stray_call_replies;
	unanswered = rs->unanswered;
	f->stats.events = sp->records;
	probe_health_tick(&sp->health, &f->stats);
	f->stats.evicted = delta(stray, sp->stray_prev) + delta(unanswered, sp->unanswered_prev);
	sp->stray_prev = stray;
	sp->unanswered_prev = unanswered;
	sp->ev->stats = f->stats;
	sp->ev->stats.events = sp->ev->nrows;
	sp->ev->stats.dropped += sp->over_budget;	/* over BUFFER: dropped, not lost */
	sp->sp->stats = sp->ev->stats;
	sp->sp->stats.events = sp->sp->nrows;
	tick_add(t, f);
	tick_add(t, sp->ev);
	tick_add(t, sp->sp);
	sp->ev = sp->sp = NULL;
	sp->records = 0;
	sp->over_budget = 0;
	return 0;
}

/* The fd the kernel wakes when the ring is a quarter full. */
static int paths_wake_fd(struct probe *p)
{
	struct paths_priv *sp = p->priv;

	return sp ? sp->epfd : -1;
}

/* Drain the ring before the tick, so it never has to hold a whole tick. */
static void paths_wake(struct probe *p)
{
	struct paths_priv *sp = p->priv;

	probe_wake_take(sp->epfd);
	drain(sp);	/* an error is the tick's to report */
	/* Only now may a record wake us again: clearing it before the drain
	 * would let every record of it wake us. */
	__atomic_store_n(&sp->skel->bss->wake_pending, 0, __ATOMIC_RELEASE);
}

/* Check that test e is on what the kernel side knows (pid, tid, comm, cgroup). */
static int filter_leaf(const char *probe, const struct filter_entry *e, uint32_t i, char **cause)
{
	if (e->op < FOP_EQ || e->op > FOP_PREFIX ||
	    (e->term != FTERM_PID && e->term != FTERM_TID && e->term != FTERM_COMM &&
	     e->term != FTERM_CGROUP)) {
		*cause = xasprintf("%s: filter entry %u: op %u on term %u is not "
				   "something the paths probe can test (pid, tid, comm, cgroup)",
				   probe, i, e->op, e->term);
		return -1;
	}
	return probe_filter_leaf(probe, e, i, cause);
}

/* Install f in the idle slot, then make it current; keep its event options. */
static int paths_set_filter(struct probe *p, const struct filter_prog *f, char **cause)
{
	struct paths_priv *sp = p->priv;
	uint32_t next, i, comm = 0;

	if (probe_filter_check("paths", f, filter_leaf, cause))
		return -1;
	for (i = 0; i < f->n; i++)
		comm |= f->e[i].term == FTERM_COMM;
	next = (sp->skel->bss->filter_idx + 1) & 1;
	sp->skel->bss->filters[next] = *f;
	sp->skel->bss->filter_need_comm[next] = comm;
	/* The paths table (0) keys by what the query reads of it. */
	sp->nocgroup = !filter_reads_any_of(f, 0, FILTER_FIELD(PC_CGROUP) | FILTER_FIELD(PC_UNIT) |
						  FILTER_FIELD(PC_CONTAINER));
	__atomic_store_n(&sp->skel->bss->filter_idx, next, __ATOMIC_RELEASE);
	sp->threshold_ns = f->threshold_ns;
	sp->sample_n = f->sample_n;
	sp->max_events = f->max_events;
	return 0;
}

/* Free everything paths_open made. */
static void paths_close(struct probe *p)
{
	struct paths_priv *sp = p->priv;
	size_t b;

	if (!sp)
		return;
	ring_buffer__free(sp->rb);
	if (sp->epfd >= 0)
		close(sp->epfd);
	paths_bpf__destroy(sp->skel);
	recon_free(sp->rc);
	for (b = 0; b < NAGG; b++) {
		while (sp->agg[b]) {
			struct agg *a = sp->agg[b];

			sp->agg[b] = a->next;
			hist_free(a->lat);
			free(a->shape);
			free(a);
		}
	}
	frame_free(sp->ev);
	frame_free(sp->sp);
	free(sp);
	p->priv = NULL;
}

/* Return latoprc's paths_ring_mb, or the default. */
static uint32_t read_ring_mb(void)
{
	return probe_size_option("paths_ring_mb", PATH_RING_MB_MIN, PATH_RING_MB_MAX,
				 PATH_RINGBUF_BYTES >> 20, true, "MiB");
}

/* Fill c with the ring's size and what happens when it is full. */
static void ring_choice(struct hook_choice *c, uint32_t mb)
{
	probe_capacity(c, "records ring (latoprc paths_ring_mb)", mb, "MiB", 1 << 20, true,
		       "drained at a quarter full and every tick; a record that finds it "
		       "full is lost");
}

/* Choose hooks and load; paths_attach starts recording. */
static int paths_open(struct probe *p, char **cause)
{
	struct paths_priv *sp = xcalloc(1, sizeof(*sp));
	char why[160];
	int err;

	p->priv = sp;
	sp->sample_n = 1;
	sp->epfd = -1;
	if (!feature_btf(why, sizeof(why))) {
		*cause = xasprintf("paths: %s", why);
		goto fail;
	}
	sp->skel = paths_bpf__open();
	if (!sp->skel) {
		*cause = xasprintf("paths: opening the BPF object: %s", strerror(errno));
		goto fail;
	}
	if (hook_choose_all("paths", sp->skel->obj, hook_specs, NSPECS, p->hooks, NULL, 0, cause))
		goto fail;
	sp->ring_mb = read_ring_mb();
	ring_choice(&p->hooks[NSPECS], sp->ring_mb);
	p->nhooks = NCHOICES;
	if (bpf_map__set_max_entries(sp->skel->maps.records, sp->ring_mb << 20)) {
		*cause = xasprintf("paths: sizing the records ring to %u MiB: %s", sp->ring_mb,
				   strerror(errno));
		goto fail;
	}
	sp->skel->rodata->wake_bytes = ((uint64_t)sp->ring_mb << 20) / 4;
	sp->skel->rodata->self_tgid = getpid();
	err = paths_bpf__load(sp->skel);
	if (err) {
		*cause = hook_load_cause("paths", err);
		goto fail;
	}
	sp->rb = ring_buffer__new(bpf_map__fd(sp->skel->maps.records), on_record, sp, NULL);
	if (!sp->rb) {
		*cause = xasprintf("paths: opening the records ring buffer: %s", strerror(errno));
		goto fail;
	}
	sp->epfd = probe_wake_open(bpf_map__fd(sp->skel->maps.records));
	if (sp->epfd < 0) {
		*cause = xasprintf("paths: watching the records ring: %s", strerror(errno));
		goto fail;
	}
	sp->rc = recon_new(on_request, sp);
	sp->ncpus = libbpf_num_possible_cpus();
	sp->boot_offset_ns = boot_offset_ns();
	probe_health_init(&sp->health, bpf_map__fd(sp->skel->maps.health), sp->ncpus, health_to,
			  PH_N);
	return 0;
fail:
	paths_close(p);
	return -1;
}

/* Attach the loaded programs. */
static int paths_attach(struct probe *p, char **cause)
{
	struct paths_priv *sp = p->priv;

	return probe_attach_skel("paths", sp->skel->skeleton, cause);
}

/* What each stage would use here, every alternative tried. */
static size_t paths_hooks(struct hook_choice *out, size_t max)
{
	if (max < NCHOICES)
		return 0;
	hook_choose_all("paths", NULL, hook_specs, NSPECS, out, NULL, HOOK_CHECK_ALL, NULL);
	ring_choice(&out[NSPECS], read_ring_mb());
	return NCHOICES;
}

/* List the fds of the loaded programs. */
static size_t paths_prog_fds(struct probe *p, int *out, size_t max)
{
	struct paths_priv *sp = p->priv;

	return sp ? probe_prog_fds(sp->skel->obj, out, max) : 0;
}

static const struct schema *const paths_tables[] = {
	&paths_schema, &path_events_schema, &path_spans_schema,
};

/* The latoprc keys this probe reads. */
static const char *const rc_keys[] = {"paths_ring_mb", NULL};

const struct probe_ops paths_probe_ops = {
	.name = "paths",
	.config_keys = rc_keys,
	.help = "request paths after vPath: per request, its entry port, downstream calls "
		"(to where, how many, how long), time in this tier and downstream",
	.ntables = 3,
	.tables = paths_tables,
	.open = paths_open,
	.attach = paths_attach,
	.set_filter = paths_set_filter,
	.collect = paths_collect,
	.hooks = paths_hooks,
	.close = paths_close,
	.prog_fds = paths_prog_fds,
	.wake_fd = paths_wake_fd,
	.wake = paths_wake,
};
