/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The nvme joiner: NVMe/TCP initiator and target records of the same I/Os
 * (nvme_events rows, from one recording holding both sides or from one per
 * host) joined into one breakdown with the network time split out.
 *
 * An initiator I/O and a target command match by controller id, queue id and
 * command id, and by order: a command id is reused on its queue only after
 * its command completed, so the n-th use on one side is the n-th on the
 * other.  Op and size must agree too; a record without its partner is
 * counted as unmatched.  No time is compared across sides: the network time
 * is ntprof's difference of two durations, each from one clock,
 *
 *   net = (r2t + data_out + remote)   the initiator's time from sending the
 *                                     command to the response's arrival
 *       - target lat                  the target's time from receiving it
 *                                     to sending the response
 *
 * so the joined stages queue, submit, net, t_recv, t_exec, t_send, rx and
 * complete sum to the initiator's latency.
 *
 * Pairing by order needs both sides to keep the same I/Os: every record, or
 * SAMPLE 1/N, which keeps an I/O by its (queue id, command id) on both sides
 * alike (nvme.h: nvme_sample_keep).  A THRESHOLD keeps each side's slow
 * I/Os, by latencies that differ per side (so does a WHERE on lat pushed
 * into the probe), so a recording whose status says so is refused.  Fields are found by name in
 * each recording's schema, so recordings of other latop versions join as
 * long as they carry these names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../core/merge.h"
#include "../../core/xalloc.h"

#define NSTAGES 10
#define NJ_OP_LEN 16

static const char *const ev_stages[NSTAGES] = {
	"queue", "submit", "r2t", "data_out", "remote", "rx", "complete",
	"t_recv", "t_exec", "t_send",
};
enum { S_QUEUE, S_SUBMIT, S_R2T, S_DATA_OUT, S_REMOTE, S_RX, S_COMPLETE,
       S_T_RECV, S_T_EXEC, S_T_SEND };

/* Column indexes of nvme_joined. */
enum {
	J_TS, J_ID, J_SESSION, J_TSESSION, J_CNTLID, J_QID, J_CID, J_OP, J_SIZE, J_SEQ,
	J_COUNT, J_UNMATCHED, J_LAT,
	J_QUEUE, J_SUBMIT, J_NET, J_T_RECV, J_T_EXEC, J_T_SEND, J_RX, J_COMPLETE,
	J_R2T, J_DATA_OUT, J_REMOTE, J_TARGET_LAT,
	J_NCOLS
};

static const struct field joined_fields[J_NCOLS] = {
	[J_TS]       = {"ts", FT_U64, FF_KEY, "ns", "end of the I/O on the initiator, its CLOCK_REALTIME ns"},
	[J_ID]       = {"id", FT_U64, FF_KEY, "", "the initiator's I/O number (a key: one row per I/O)"},
	[J_SESSION]  = {"session", FT_STR, FF_KEY, "", "the initiator's controller and queue (nvme0q1)"},
	[J_TSESSION] = {"target_session", FT_STR, FF_KEY | FF_HIDDEN, "", "the target's controller and queue"},
	[J_CNTLID]   = {"cntlid", FT_U64, FF_KEY | FF_HIDDEN, "", "controller id"},
	[J_QID]      = {"qid", FT_U64, FF_KEY, "", "NVMe queue id"},
	[J_CID]      = {"cid", FT_U64, FF_KEY | FF_HIDDEN, "", "NVMe command id"},
	[J_OP]       = {"op", FT_STR, FF_KEY, "", "NVMe command"},
	[J_SIZE]     = {"size", FT_SIZE, FF_KEY, "B", "bytes transferred"},
	[J_SEQ]      = {"seq", FT_STR, FF_KEY, "", "the initiator's stage sequence"},
	[J_COUNT]    = {"count", FT_U64, FF_SUM, "", "1 for a joined I/O, 0 for an unmatched record"},
	[J_UNMATCHED] = {"unmatched", FT_U64, FF_SUM, "", "1 for a record of one side without its partner"},
	[J_LAT]      = {"lat", FT_DUR, FF_TOTAL, "ns", "the initiator's end-to-end latency"},
	[J_QUEUE]    = {"queue", FT_DUR, FF_SUM | FF_PART, "ns", "initiator: block layer submission"},
	[J_SUBMIT]   = {"submit", FT_DUR, FF_SUM | FF_PART, "ns", "initiator: nvme-tcp submission"},
	[J_NET]      = {"net", FT_DUR, FF_SUM | FF_PART, "ns", "network: initiator's r2t + data_out + remote minus the target's latency"},
	[J_T_RECV]   = {"t_recv", FT_DUR, FF_SUM | FF_PART, "ns", "target: receive (R2T and data in for writes)"},
	[J_T_EXEC]   = {"t_exec", FT_DUR, FF_SUM | FF_PART, "ns", "target: backing device"},
	[J_T_SEND]   = {"t_send", FT_DUR, FF_SUM | FF_PART, "ns", "target: response queueing and send"},
	[J_RX]       = {"rx", FT_DUR, FF_SUM | FF_PART, "ns", "initiator: receive and completion handling"},
	[J_COMPLETE] = {"complete", FT_DUR, FF_SUM | FF_PART, "ns", "initiator: block completion"},
	[J_R2T]      = {"r2t", FT_DUR, FF_SUM | FF_HIDDEN, "ns", "initiator: waiting for R2T (within net + target)"},
	[J_DATA_OUT] = {"data_out", FT_DUR, FF_SUM | FF_HIDDEN, "ns", "initiator: sending data after R2T (within net + target)"},
	[J_REMOTE]   = {"remote", FT_DUR, FF_SUM | FF_HIDDEN, "ns", "initiator: last send to response (within net + target)"},
	[J_TARGET_LAT] = {"target_lat", FT_DUR, FF_SUM | FF_HIDDEN, "ns", "the target's latency for the command"},
};

static const struct schema nvme_joined_schema = {
	.table = "nvme_joined",
	.help = "NVMe/TCP I/Os joined across initiator and target, network time split out",
	.nfields = J_NCOLS,
	.fields = joined_fields,
};

/* One side's record of one I/O. */
struct jrec {
	uint64_t ts, id, cntlid, qid, cid, size, lat;
	uint64_t st[NSTAGES];
	char op[NJ_OP_LEN];
	char seq[NJ_OP_LEN];
	char session[32];
	size_t order;		/* the order it was read in: file order, one file after the other */
};

struct jvec {
	struct jrec *v;
	size_t n, cap;
};

/* Where a recording's nvme_events schema keeps each field. */
struct jcols {
	const struct schema *s;
	int side, ts, id, session, cntlid, qid, cid, op, size, seq, lat, st[NSTAGES];
};

struct nvme_join {
	struct jvec init, tgt;
	struct jcols cols;
	uint64_t t_min, t_max;
	size_t order;
};

/* Resolve the columns of schema s; false when it lacks one. */
static bool cols_resolve(struct jcols *c, const struct schema *s)
{
	int i;

	c->s = s;
	c->side = schema_field(s, "side");
	c->ts = schema_field(s, "ts");
	c->id = schema_field(s, "id");
	c->session = schema_field(s, "session");
	c->cntlid = schema_field(s, "cntlid");
	c->qid = schema_field(s, "qid");
	c->cid = schema_field(s, "cid");
	c->op = schema_field(s, "op");
	c->size = schema_field(s, "size");
	c->seq = schema_field(s, "seq");
	c->lat = schema_field(s, "lat");
	if (c->side < 0 || c->ts < 0 || c->id < 0 || c->session < 0 || c->cntlid < 0 ||
	    c->qid < 0 || c->cid < 0 || c->op < 0 || c->size < 0 || c->seq < 0 || c->lat < 0)
		return false;
	for (i = 0; i < NSTAGES; i++)
		if ((c->st[i] = schema_field(s, ev_stages[i])) < 0)
			return false;
	return s->fields[c->side].type == FT_STR && s->fields[c->op].type == FT_STR &&
	       s->fields[c->session].type == FT_STR && s->fields[c->seq].type == FT_STR;
}

/* Start a join when some recording has an nvme_events table with the fields used. */
static void *nj_begin(const struct source_info *const *infos, size_t nsrc)
{
	struct jcols c;
	size_t i;

	for (i = 0; i < nsrc; i++) {
		const struct schema *s = source_schema(infos[i], "nvme_events");

		if (s && cols_resolve(&c, s))
			return xcalloc(1, sizeof(struct nvme_join));
	}
	return NULL;
}

/* Refuse a recording whose nvme I/Os were chosen by latency: a THRESHOLD or a
 * WHERE on lat (probe.h: live_open says how its status tells). */
static char *nj_refuse(const struct source_info *const *infos, size_t nsrc)
{
	size_t i;

	for (i = 0; i < nsrc; i++) {
		const char *st = infos[i]->status;
		const char *how;
		char *name, *why;

		if (!st || !source_schema(infos[i], "nvme_events"))
			continue;
		if (strstr(st, "nvme: THRESHOLD "))
			how = "a THRESHOLD on its nvme events";
		else if (strstr(st, "nvme: a WHERE on latency"))
			how = "a WHERE on latency choosing its nvme I/Os";
		else
			continue;
		name = infos[i]->path ? xstrdup(infos[i]->path)
				      : xasprintf("recording %zu (host %s)", i + 1, infos[i]->host);
		why = xasprintf("nvme_joined: %s was recorded with %s, which keeps different "
				"I/Os on the initiator and the target (their latencies differ), so the "
				"join would pair the wrong records; record with SAMPLE 1/N or BUFFER n "
				"instead", name, how);
		free(name);
		return why;
	}
	return NULL;
}

/* Copy string cell c into buf. */
static void str_copy(char *buf, size_t len, const union cell *c)
{
	snprintf(buf, len, "%s", c->s ? c->s : "");
}

/* Keep every nvme_events row of tick t. */
static void nj_add(void *st, size_t src, const struct tick *t)
{
	struct nvme_join *j = st;
	const struct frame *f = tick_frame(t, "nvme_events");
	size_t r;
	int i;

	(void)src;
	if (!f)
		return;
	if (f->schema != j->cols.s && !cols_resolve(&j->cols, f->schema)) {
		j->cols.s = NULL;
		return;
	}
	if (!j->t_min || f->t_ns - f->dt_ns < j->t_min)
		j->t_min = f->t_ns - f->dt_ns;
	if (f->t_ns > j->t_max)
		j->t_max = f->t_ns;
	for (r = 0; r < f->nrows; r++) {
		const union cell *c = frame_row(f, r);
		const struct jcols *k = &j->cols;
		const char *side = c[k->side].s ? c[k->side].s : "";
		struct jvec *v = !strcmp(side, "initiator") ? &j->init :
				 !strcmp(side, "target") ? &j->tgt : NULL;
		struct jrec *e;

		if (!v)
			continue;
		if (v->n == v->cap) {
			v->cap = v->cap ? 2 * v->cap : 256;
			v->v = xrealloc(v->v, v->cap * sizeof(*v->v));
		}
		e = &v->v[v->n++];
		e->ts = c[k->ts].u;
		e->id = c[k->id].u;
		e->cntlid = c[k->cntlid].u;
		e->qid = c[k->qid].u;
		e->cid = c[k->cid].u;
		e->size = c[k->size].u;
		e->lat = c[k->lat].u;
		for (i = 0; i < NSTAGES; i++)
			e->st[i] = c[k->st[i]].u;
		str_copy(e->op, sizeof(e->op), &c[k->op]);
		str_copy(e->seq, sizeof(e->seq), &c[k->seq]);
		str_copy(e->session, sizeof(e->session), &c[k->session]);
		e->order = j->order++;
	}
}

/* Order records by (cntlid, qid, cid), then as they were read. */
static int jrec_cmp(const void *pa, const void *pb)
{
	const struct jrec *a = pa, *b = pb;

	if (a->cntlid != b->cntlid)
		return a->cntlid < b->cntlid ? -1 : 1;
	if (a->qid != b->qid)
		return a->qid < b->qid ? -1 : 1;
	if (a->cid != b->cid)
		return a->cid < b->cid ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* Return <0, 0, >0 as a's command key is below, equal to, above b's. */
static int key_cmp(const struct jrec *a, const struct jrec *b)
{
	if (a->cntlid != b->cntlid)
		return a->cntlid < b->cntlid ? -1 : 1;
	if (a->qid != b->qid)
		return a->qid < b->qid ? -1 : 1;
	if (a->cid != b->cid)
		return a->cid < b->cid ? -1 : 1;
	return 0;
}

/* Fill the key columns of row r from record e. */
static void row_keys(union cell *r, const struct jrec *e, bool initiator)
{
	r[J_TS].u = e->ts;
	r[J_ID].u = e->id;
	cell_set_str(&r[initiator ? J_SESSION : J_TSESSION], e->session);
	cell_set_str(&r[initiator ? J_TSESSION : J_SESSION], "");
	r[J_CNTLID].u = e->cntlid;
	r[J_QID].u = e->qid;
	r[J_CID].u = e->cid;
	cell_set_str(&r[J_OP], e->op);
	r[J_SIZE].u = e->size;
	cell_set_str(&r[J_SEQ], initiator ? e->seq : "");
}

/* Append a joined row for initiator record a and target record b; false on skew. */
static bool add_joined(struct frame *f, const struct jrec *a, const struct jrec *b)
{
	uint64_t window = a->st[S_R2T] + a->st[S_DATA_OUT] + a->st[S_REMOTE];
	union cell *r;

	if (window < b->lat)
		return false;	/* the target's time cannot exceed the initiator's wait */
	r = frame_add_row(f);
	row_keys(r, a, true);
	cell_set_str(&r[J_TSESSION], b->session);
	r[J_COUNT].u = 1;
	r[J_LAT].u = a->lat;
	r[J_QUEUE].u = a->st[S_QUEUE];
	r[J_SUBMIT].u = a->st[S_SUBMIT];
	r[J_NET].u = window - b->lat;
	r[J_T_RECV].u = b->st[S_T_RECV];
	r[J_T_EXEC].u = b->st[S_T_EXEC];
	r[J_T_SEND].u = b->st[S_T_SEND];
	r[J_RX].u = a->st[S_RX];
	r[J_COMPLETE].u = a->st[S_COMPLETE];
	r[J_R2T].u = a->st[S_R2T];
	r[J_DATA_OUT].u = a->st[S_DATA_OUT];
	r[J_REMOTE].u = a->st[S_REMOTE];
	r[J_TARGET_LAT].u = b->lat;
	return true;
}

/* Append an unmatched row for record e of one side. */
static void add_unmatched(struct frame *f, const struct jrec *e, bool initiator)
{
	union cell *r = frame_add_row(f);

	row_keys(r, e, initiator);
	r[J_UNMATCHED].u = 1;
}

/*
 * Join per command key: walk both sides' uses of a key in order, pairing
 * while op and size agree; on a disagreement the side with more uses left
 * loses its record (it is the one that has a record the other lacks).
 */
static void nj_finish(void *st, struct tick *out)
{
	struct nvme_join *j = st;
	struct frame *f = frame_new(&nvme_joined_schema, out->t_ns,
				    j->t_max > j->t_min ? j->t_max - j->t_min : 0);
	size_t a = 0, b = 0;

	qsort(j->init.v, j->init.n, sizeof(*j->init.v), jrec_cmp);
	qsort(j->tgt.v, j->tgt.n, sizeof(*j->tgt.v), jrec_cmp);
	while (a < j->init.n || b < j->tgt.n) {
		const struct jrec *x = a < j->init.n ? &j->init.v[a] : NULL;
		const struct jrec *y = b < j->tgt.n ? &j->tgt.v[b] : NULL;
		int c = !x ? 1 : !y ? -1 : key_cmp(x, y);
		size_t ea, eb;

		if (c < 0) {
			add_unmatched(f, x, true);
			a++;
			continue;
		}
		if (c > 0) {
			add_unmatched(f, y, false);
			b++;
			continue;
		}
		for (ea = a; ea < j->init.n && !key_cmp(&j->init.v[ea], x); ea++)
			;
		for (eb = b; eb < j->tgt.n && !key_cmp(&j->tgt.v[eb], y); eb++)
			;
		while (a < ea || b < eb) {
			x = a < ea ? &j->init.v[a] : NULL;
			y = b < eb ? &j->tgt.v[b] : NULL;
			if (x && y && !strcmp(x->op, y->op) && x->size == y->size &&
			    add_joined(f, x, y)) {
				a++;
				b++;
			} else if (x && (!y || ea - a >= eb - b)) {
				add_unmatched(f, x, true);
				a++;
			} else {
				add_unmatched(f, y, false);
				b++;
			}
		}
	}
	f->stats.events = f->nrows;
	tick_add(out, f);
}

static void nj_free(void *st)
{
	struct nvme_join *j = st;

	if (!j)
		return;
	free(j->init.v);
	free(j->tgt.v);
	free(j);
}

static const struct schema *const nvme_join_tables[] = { &nvme_joined_schema };

const struct joiner nvme_joiner = {
	.name = "nvme",
	.help = "nvme_joined: NVMe/TCP initiator and target records of the same I/Os, "
		"matched by queue and command id, with the network time split out",
	.ntables = 1,
	.tables = nvme_join_tables,
	.begin = nj_begin,
	.refuse = nj_refuse,
	.add = nj_add,
	.finish = nj_finish,
	.free = nj_free,
};
