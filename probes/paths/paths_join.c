/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The paths joiner: a downstream call recorded on one host joined to the
 * request it served on another, giving each request its end-to-end path.
 *
 * It reads the recorded path_events (one row per request) and path_spans
 * (the request's calls, kind "call", n >= 1) of every recording, by field
 * name only.  A call seen from the caller as (laddr:lport -> raddr:rport,
 * first byte at TCP sequence number seq) is the request the callee saw as
 * (laddr = the caller's raddr, lport = its rport, raddr = its laddr, rport =
 * its lport, seq): both ends of a TCP connection number its bytes alike, so
 * the join needs no clocks and no order beyond the byte stream's.  (A
 * middlebox that rewrites sequence numbers or addresses defeats it: such
 * calls stay unjoined and are counted.)
 *
 * Requests that served no joined call are the roots: path_joins has one row
 * per root, its path expanded through every tier reached.  Only requests
 * recorded as single events take part, so record with THRESHOLD (or SAMPLE)
 * low enough on every host: `threshold 1ns` keeps them all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../core/merge.h"
#include "../../core/xalloc.h"

#define MAX_DEPTH 16

enum join_col {
	JC_ID, JC_HOST, JC_PATH, JC_LPORT, JC_TS, JC_LAT, JC_TIERS, JC_REQUESTS, JC_CALLS,
	JC_JOINED, JC_UNJOINED, JC_SELF, JC_DOWN, JC_WORK, JC_NET,
	JC_NCOLS
};

static const struct field join_fields[JC_NCOLS] = {
	[JC_ID]    = {"id", FT_U64, FF_KEY, "", "the root request (path_events.id in its recording)"},
	[JC_HOST]  = {"host", FT_STR, FF_KEY, "", "host of the recording the root request is in"},
	[JC_PATH]  = {"path", FT_STR, FF_KEY, "",
		      "end-to-end path: each joined call followed by (the path it served there)"},
	[JC_LPORT] = {"lport", FT_U64, FF_KEY, "", "entry port of the root request"},
	[JC_TS]    = {"ts", FT_U64, FF_HIDDEN, "ns", "end of the root request, its host's CLOCK_REALTIME ns"},
	[JC_LAT]   = {"lat", FT_DUR, 0, "ns", "end-to-end latency (the root request's)"},
	[JC_TIERS] = {"tiers", FT_U64, 0, "", "tiers the path reached (1: no call joined)"},
	[JC_REQUESTS] = {"requests", FT_U64, FF_SUM, "", "requests in the path, on every host"},
	[JC_CALLS] = {"calls", FT_U64, FF_SUM, "", "downstream calls in the path"},
	[JC_JOINED] = {"joined", FT_U64, FF_SUM, "", "calls joined to the request they served"},
	[JC_UNJOINED] = {"unjoined", FT_U64, FF_SUM, "",
			 "calls whose callee was not recorded (or not as a single event)"},
	[JC_SELF]  = {"self", FT_DUR, FF_SUM, "ns", "time in the root tier"},
	[JC_DOWN]  = {"down", FT_DUR, FF_SUM, "ns", "time the root tier waited downstream"},
	[JC_WORK]  = {"work", FT_DUR, FF_SUM, "ns", "time in tiers: self summed over every request of the path"},
	[JC_NET]   = {"net", FT_DUR, FF_SUM, "ns",
		      "time between tiers: the joined calls' times minus their callees' latencies"},
};

static const struct schema path_joins_schema = {
	.table = "path_joins",
	.help = "requests joined across recordings: end-to-end paths through every tier",
	.nfields = JC_NCOLS,
	.fields = join_fields,
};

/* A connection end and a byte: what both sides of a call know. */
struct jkey {
	uint8_t laddr[16], raddr[16];
	uint64_t lport, rport, seq;
};

struct jreq {
	size_t src;
	uint64_t id, ts, lat, self, down;
	struct jkey k;
	char *path;
	size_t first, ncalls;	/* its calls: jcall[first .. first + ncalls) once sorted */
	bool served;
};

struct jcall {
	size_t src;
	uint64_t id, n, dur;
	struct jkey k;
	char *label;
	long target;		/* the jreq it served, or -1 */
};

struct pjoin {
	size_t nsrc;
	char **hosts;
	struct jreq *reqs;
	size_t nreqs, capreqs;
	struct jcall *calls;
	size_t ncalls, capcalls;
};

static void *pjoin_begin(const struct source_info *const *infos, size_t nsrc)
{
	struct pjoin *pj;
	size_t i;
	bool any = false;

	for (i = 0; i < nsrc; i++)
		any = any || (source_schema(infos[i], "path_events") &&
			      source_schema(infos[i], "path_spans"));
	if (!any)
		return NULL;
	pj = xcalloc(1, sizeof(*pj));
	pj->nsrc = nsrc;
	pj->hosts = xcalloc(nsrc, sizeof(*pj->hosts));
	for (i = 0; i < nsrc; i++)
		pj->hosts[i] = xstrdup(infos[i]->host);
	return pj;
}

/* Column indexes of names[] in f's schema; false when one is missing. */
static bool columns(const struct frame *f, const char *const *names, int *idx, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((idx[i] = schema_field(f->schema, names[i])) < 0)
			return false;
	return true;
}

static void copy_ip(uint8_t dst[16], const union cell *c)
{
	if (c->ip)
		memcpy(dst, c->ip->a, 16);
	else
		memset(dst, 0, 16);
}

enum { EV_ID, EV_TS, EV_LAT, EV_SELF, EV_DOWN, EV_LADDR, EV_LPORT, EV_RADDR, EV_RPORT,
       EV_SEQ, EV_PATH, EV_N };
static const char *const ev_names[EV_N] = {
	"id", "ts", "lat", "self", "down", "laddr", "lport", "raddr", "rport", "seq", "path",
};
enum { SP_ID, SP_N, SP_DUR, SP_KIND, SP_LADDR, SP_LPORT, SP_RADDR, SP_RPORT, SP_SEQ,
       SP_LABEL, SP_NN };
static const char *const sp_names[SP_NN] = {
	"id", "n", "dur", "kind", "laddr", "lport", "raddr", "rport", "seq", "label",
};

/* Keep the requests and calls of one tick of recording src. */
static void pjoin_add(void *st, size_t src, const struct tick *t)
{
	struct pjoin *pj = st;
	const struct frame *ev = tick_frame(t, "path_events");
	const struct frame *sp = tick_frame(t, "path_spans");
	int c[16];
	size_t i;

	if (ev && columns(ev, ev_names, c, EV_N)) {
		for (i = 0; i < ev->nrows; i++) {
			const union cell *r = frame_row(ev, i);
			struct jreq *q;

			if (pj->nreqs == pj->capreqs) {
				pj->capreqs = pj->capreqs ? 2 * pj->capreqs : 256;
				pj->reqs = xreallocarray(pj->reqs, pj->capreqs, sizeof(*pj->reqs));
			}
			q = &pj->reqs[pj->nreqs++];
			memset(q, 0, sizeof(*q));
			q->src = src;
			q->id = r[c[EV_ID]].u;
			q->ts = r[c[EV_TS]].u;
			q->lat = r[c[EV_LAT]].u;
			q->self = r[c[EV_SELF]].u;
			q->down = r[c[EV_DOWN]].u;
			copy_ip(q->k.laddr, &r[c[EV_LADDR]]);
			copy_ip(q->k.raddr, &r[c[EV_RADDR]]);
			q->k.lport = r[c[EV_LPORT]].u;
			q->k.rport = r[c[EV_RPORT]].u;
			q->k.seq = r[c[EV_SEQ]].u;
			q->path = xstrdup(r[c[EV_PATH]].s ? r[c[EV_PATH]].s : "");
		}
	}
	if (sp && columns(sp, sp_names, c, SP_NN)) {
		for (i = 0; i < sp->nrows; i++) {
			const union cell *r = frame_row(sp, i);
			struct jcall *k;

			if (!r[c[SP_N]].u || !r[c[SP_KIND]].s || strncmp(r[c[SP_KIND]].s, "call", 4))
				continue;
			if (pj->ncalls == pj->capcalls) {
				pj->capcalls = pj->capcalls ? 2 * pj->capcalls : 256;
				pj->calls = xreallocarray(pj->calls, pj->capcalls, sizeof(*pj->calls));
			}
			k = &pj->calls[pj->ncalls++];
			memset(k, 0, sizeof(*k));
			k->src = src;
			k->id = r[c[SP_ID]].u;
			k->n = r[c[SP_N]].u;
			k->dur = r[c[SP_DUR]].u;
			copy_ip(k->k.laddr, &r[c[SP_LADDR]]);
			copy_ip(k->k.raddr, &r[c[SP_RADDR]]);
			k->k.lport = r[c[SP_LPORT]].u;
			k->k.rport = r[c[SP_RPORT]].u;
			k->k.seq = r[c[SP_SEQ]].u;
			k->label = xstrdup(r[c[SP_LABEL]].s ? r[c[SP_LABEL]].s : "?");
			k->target = -1;
		}
	}
}

static int call_cmp(const void *a, const void *b)
{
	const struct jcall *x = a, *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->n < y->n ? -1 : x->n > y->n;
}

/* An open-addressing index of n slots over requests, by a hash of a key. */
struct index {
	size_t n;
	long *slot;		/* request index, or -1 */
};

static uint64_t mix(uint64_t h, const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

static uint64_t key_hash(const struct jkey *k)
{
	uint64_t h = 1469598103934665603ULL;

	h = mix(h, k->laddr, 16);
	h = mix(h, k->raddr, 16);
	h = mix(h, &k->lport, 8);
	h = mix(h, &k->rport, 8);
	return mix(h, &k->seq, 8);
}

static bool key_eq(const struct jkey *a, const struct jkey *b)
{
	return a->lport == b->lport && a->rport == b->rport && a->seq == b->seq &&
	       !memcmp(a->laddr, b->laddr, 16) && !memcmp(a->raddr, b->raddr, 16);
}

static uint64_t owner_hash(size_t src, uint64_t id)
{
	uint64_t h = 1469598103934665603ULL;

	h = mix(h, &src, sizeof(src));
	return mix(h, &id, 8);
}

/* Index requests by connection key (by_key) or by (recording, id). */
static void index_build(struct index *ix, const struct pjoin *pj, bool by_key)
{
	size_t i;

	ix->n = 16;
	while (ix->n < 2 * pj->nreqs)
		ix->n *= 2;
	ix->slot = xreallocarray(NULL, ix->n, sizeof(*ix->slot));
	for (i = 0; i < ix->n; i++)
		ix->slot[i] = -1;
	for (i = 0; i < pj->nreqs; i++) {
		const struct jreq *q = &pj->reqs[i];
		size_t s = (by_key ? key_hash(&q->k) : owner_hash(q->src, q->id)) & (ix->n - 1);

		if (by_key && !q->k.lport)
			continue;	/* made outside any request: nothing called it */

		while (ix->slot[s] >= 0) {
			const struct jreq *o = &pj->reqs[ix->slot[s]];

			if (by_key ? key_eq(&o->k, &q->k) : (o->src == q->src && o->id == q->id))
				break;	/* the same request recorded twice: keep the first */
			s = (s + 1) & (ix->n - 1);
		}
		if (ix->slot[s] < 0)
			ix->slot[s] = (long)i;
	}
}

static long index_key(const struct index *ix, const struct pjoin *pj, const struct jkey *k)
{
	size_t s = key_hash(k) & (ix->n - 1);

	for (; ix->slot[s] >= 0; s = (s + 1) & (ix->n - 1))
		if (key_eq(&pj->reqs[ix->slot[s]].k, k))
			return ix->slot[s];
	return -1;
}

static long index_owner(const struct index *ix, const struct pjoin *pj, size_t src, uint64_t id)
{
	size_t s = owner_hash(src, id) & (ix->n - 1);

	for (; ix->slot[s] >= 0; s = (s + 1) & (ix->n - 1))
		if (pj->reqs[ix->slot[s]].src == src && pj->reqs[ix->slot[s]].id == id)
			return ix->slot[s];
	return -1;
}

/* A growing string. */
struct sbuf {
	char *s;
	size_t len, cap;
};

static void sb_add(struct sbuf *b, const char *s)
{
	size_t n = strlen(s);

	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
}

/* What a path adds up to. */
struct jsum {
	uint64_t requests, calls, joined, unjoined, work, tiers;
	/* Signed: a call's share is below 0 when its callee's records lead
	 * the caller's (a send is stamped as it returns, after the callee
	 * may have woken), and the callee's latency then holds that time. */
	int64_t net;
};

/* Write request q's path into b and add it up into sum. */
static void expand(const struct pjoin *pj, const struct jreq *q, int depth, struct sbuf *b,
		   struct jsum *sum)
{
	size_t i, j;
	bool first = true;

	sum->requests++;
	sum->work += q->self;
	if ((uint64_t)depth + 1 > sum->tiers)
		sum->tiers = depth + 1;
	if (q->k.lport) {
		char port[24];

		snprintf(port, sizeof(port), ":%llu", (unsigned long long)q->k.lport);
		sb_add(b, port);
	} else {
		sb_add(b, "-");
	}
	for (i = 0; i < q->ncalls; i++) {
		const struct jcall *k = &pj->calls[q->first + i];
		size_t n = 0, nsub = 0;
		char cnt[32], **subs;
		bool seen = false;

		for (j = 0; j < i && !seen; j++)
			seen = !strcmp(pj->calls[q->first + j].label, k->label);
		if (seen)
			continue;
		for (j = i; j < q->ncalls; j++)
			n += !strcmp(pj->calls[q->first + j].label, k->label);
		sb_add(b, first ? " → " : ", ");
		first = false;
		sb_add(b, k->label);
		snprintf(cnt, sizeof(cnt), " ×%zu", n);
		sb_add(b, cnt);
		/* The distinct paths the calls to this address served, in order. */
		subs = xreallocarray(NULL, n, sizeof(*subs));
		for (j = i; j < q->ncalls; j++) {
			const struct jcall *c = &pj->calls[q->first + j];
			struct sbuf sub = {0};
			size_t s;

			if (strcmp(c->label, k->label))
				continue;
			sum->calls++;
			if (c->target < 0 || depth + 1 >= MAX_DEPTH) {
				sum->unjoined++;
				continue;
			}
			sum->joined++;
			sum->net += (int64_t)c->dur - (int64_t)pj->reqs[c->target].lat;
			expand(pj, &pj->reqs[c->target], depth + 1, &sub, sum);
			for (s = 0; s < nsub && strcmp(subs[s], sub.s); s++)
				;
			if (s < nsub) {
				free(sub.s);
				continue;
			}
			sb_add(b, nsub ? " | " : " (");
			sb_add(b, sub.s);
			subs[nsub++] = sub.s;
		}
		if (nsub)
			sb_add(b, ")");
		while (nsub)
			free(subs[--nsub]);
		free(subs);
	}
}

static void pjoin_finish(void *st, struct tick *out)
{
	struct pjoin *pj = st;
	struct frame *f = frame_new(&path_joins_schema, out->t_ns, 0);
	struct index by_key, by_owner;
	size_t i;

	/* Requests that made no call (calls is still NULL) have nothing to sort. */
	if (pj->ncalls)
		qsort(pj->calls, pj->ncalls, sizeof(*pj->calls), call_cmp);
	index_build(&by_key, pj, true);
	index_build(&by_owner, pj, false);
	for (i = 0; i < pj->ncalls; i++) {
		struct jcall *k = &pj->calls[i];
		struct jkey peer = k->k;
		long owner = index_owner(&by_owner, pj, k->src, k->id);

		memcpy(peer.laddr, k->k.raddr, 16);
		memcpy(peer.raddr, k->k.laddr, 16);
		peer.lport = k->k.rport;
		peer.rport = k->k.lport;
		k->target = index_key(&by_key, pj, &peer);
		if (k->target >= 0 && k->target != owner)
			pj->reqs[k->target].served = true;
		else
			k->target = -1;
		if (owner >= 0) {
			struct jreq *q = &pj->reqs[owner];

			if (!q->ncalls)
				q->first = i;
			if (q->first + q->ncalls == i)
				q->ncalls++;
		}
	}
	for (i = 0; i < pj->nreqs; i++) {
		const struct jreq *q = &pj->reqs[i];
		struct sbuf b = {0};
		struct jsum sum = {0};
		union cell *r;

		/* Roots only, each once (a recording given twice holds it twice). */
		if (q->served || index_owner(&by_owner, pj, q->src, q->id) != (long)i ||
		    (q->k.lport && index_key(&by_key, pj, &q->k) != (long)i))
			continue;
		expand(pj, q, 0, &b, &sum);
		r = frame_add_row(f);
		r[JC_ID].u = q->id;
		cell_set_str(&r[JC_HOST], pj->hosts[q->src]);
		cell_set_str(&r[JC_PATH], b.s);
		r[JC_LPORT].u = q->k.lport;
		r[JC_TS].u = q->ts;
		r[JC_LAT].u = q->lat;
		r[JC_TIERS].u = sum.tiers;
		r[JC_REQUESTS].u = sum.requests;
		r[JC_CALLS].u = sum.calls;
		r[JC_JOINED].u = sum.joined;
		r[JC_UNJOINED].u = sum.unjoined;
		r[JC_SELF].u = q->self;
		r[JC_DOWN].u = q->down;
		r[JC_WORK].u = sum.work;
		r[JC_NET].u = sum.net > 0 ? (uint64_t)sum.net : 0;
		free(b.s);
	}
	free(by_key.slot);
	free(by_owner.slot);
	f->stats.events = f->nrows;
	tick_add(out, f);
}

static void pjoin_free(void *st)
{
	struct pjoin *pj = st;
	size_t i;

	for (i = 0; i < pj->nreqs; i++)
		free(pj->reqs[i].path);
	for (i = 0; i < pj->ncalls; i++)
		free(pj->calls[i].label);
	for (i = 0; i < pj->nsrc; i++)
		free(pj->hosts[i]);
	free(pj->hosts);
	free(pj->reqs);
	free(pj->calls);
	free(pj);
}

static const struct schema *const pjoin_tables[] = {&path_joins_schema};

const struct joiner paths_joiner = {
	.name = "paths",
	.help = "path_joins: each request's downstream calls joined to the requests they "
		"served in the other recordings (by connection and TCP sequence number)",
	.ntables = 1,
	.tables = pjoin_tables,
	.begin = pjoin_begin,
	.add = pjoin_add,
	.finish = pjoin_finish,
	.free = pjoin_free,
};
