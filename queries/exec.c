/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Run a bound query over a window: filter rows, group them, aggregate,
 * order and limit.  The run is incremental (query_run_*): ticks are folded in
 * one at a time and only the groups are kept, so memory follows the number
 * of groups, not of rows (scalar pNN keeps each row's value: 8 bytes).
 * query_exec is that loop over a window's ticks.
 *
 * Rows are pre-aggregated cells: each stands for `count` events.  FF_SUM
 * fields are per-event sums; histogram fields are per-event distributions.
 *
 * WHERE on a histogram field is evaluated per bucket, with each bucket read
 * at the value hist_clip reports for it (its midpoint within the row's
 * [min, max]): a row keeps the buckets for which the whole predicate holds
 * and is dropped when none does.  A clipped row's count becomes the kept
 * count; its duration sums are scaled by the kept share of the histogram's
 * time, and its other sums by the kept share of its events (estimates: the
 * kernel does not split sums per bucket).  Other predicates test whole rows.
 *
 * Aggregates (per group):
 *   count(x)  events: the histogram's count for a histogram x, else the sum
 *             of the table's count field (rows when it has none)
 *   sum(x)    the sum of x (a histogram's sum of values)
 *   avg(x)    histogram: mean value; FF_SUM field: sum(x) / events (the
 *             per-event mean; count itself: mean per row); others: mean per row
 *   min/max   histogram: its min/max; scalars: over rows
 *   stddev(x) histogram: hist_stddev; scalars: population stddev over rows
 *   pNN(x)    histogram: hist_percentile of the merged histogram; scalars:
 *             nearest-rank percentile of the row values
 *   dist(x)   the merged histogram
 *   rate(x)   histogram: events per second; scalars: sum per second; the
 *             seconds are the dt of every tick holding the table
 * min, max, avg, stddev and pNN of nothing are null.
 *
 * BYTES_FIELD, in a table with a key size and no bytes field (nvme, its
 * events, recordings made before it had one), reads size times the row's
 * count (1 per row without a count field) and is then an FF_SUM field like
 * the others: clipped and split the same way.
 *
 * With BASELINE, the ratio columns take no rows: once the final values are
 * known, baseline.c fills them from the baseline's rows before ordering.
 *
 * Unpivoting (plan.expand: the query names PART_KEY): each row becomes one
 * row per FF_PART field p with a nonzero value, where PART_KEY reads p's
 * name, the FF_TOTAL field reads p's value, the other FF_PART fields read 0,
 * and every other FF_SUM field (count, errors, oncpu...) reads its share:
 * the row's value split over the parts in proportion to their values, by
 * largest remainder, so the shares add up to the row's value exactly.  A
 * table without a count field counts each row as 1 split the same way (a
 * single event goes to its largest part).  A row with no time in any part
 * becomes one row for the last part (the catch-all).  Histograms and other
 * fields are not split: each part's row carries the whole row's.  WHERE
 * runs on each part's row, but only PART_KEY reads differently there: other
 * fields are read as recorded (time > 10ms tests the row's whole time).
 */
#include <arpa/inet.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../core/xalloc.h"
#include "ast.h"

/* One aggregate being accumulated. */
struct acc {
	struct shist *h;	/* histogram columns: the merge */
	uint64_t sum, events, rows, min, max;
	double mean, m2;	/* Welford over row values */
	uint64_t *vals;		/* pNN over rows */
	size_t nvals, cap;
};

struct group {
	uint64_t bucket;	/* GROUP BY time(...): the window's start */
	char *key;		/* serialized key tuple (after the window's start) */
	size_t keylen;
	union cell *kcells;	/* the key cells of the first row (borrowed copies) */
	struct acc *acc;	/* one per plan column */
};

/* A row as the aggregates see it, after WHERE clipping. */
struct rowview {
	const union cell *cells;
	const int *map;		/* query schema index -> frame schema index, or -1 */
	int part;		/* unpivoted: index into plan.parts; -1 = the row as recorded */
	const struct shist *clipped;	/* hist_field's kept part, or NULL */
	double fcount, fdur;	/* kept share of events and of time */
	union cell bytes;	/* plan.bytes_field's value in the row as recorded */
};

/* One window of GROUP BY time(...): its start and the time its ticks cover. */
struct bucket_span {
	uint64_t bucket, span_ns;
};

/* An execution in progress: the groups so far and what the result reports. */
struct query_run {
	const struct query *q;
	const struct schema *s;
	size_t ngroups, cap;
	struct group *groups;
	size_t hcap;
	size_t *hash;		/* open addressing: group index + 1, 0 = empty */
	struct shist *clip;	/* scratch for a clipped row, room for every bucket */
	union cell *pnames;	/* PART_KEY's value for each part */
	int *map;		/* query schema index -> current frame's schema index */
	const union cell zero;
	uint64_t t_ns;		/* the newest tick added */
	uint64_t span_ns;	/* summed dt of the ticks holding the table */
	struct frame_stats stats;	/* summed over those ticks */
	size_t bytes;		/* held by groups, hash and accumulators */
	uint64_t bucket;	/* time(...): the current tick's window */
	size_t nspans, scap;
	struct bucket_span *spans;	/* time(...): every window a tick fell in */
	uint64_t since_ns, until_ns;	/* SINCE/UNTIL resolved: [since, until) */
	uint64_t seen_from, seen_to;	/* the ticks added: first start, last end */
	size_t nseen, nin;	/* ticks added, and those in [since, until) */
};

/* Return the cell of query-schema field idx in a row (a zero cell if absent). */
static const union cell *exec_cell(const struct query_run *x, const struct rowview *rv, int idx)
{
	int fi;

	if (idx == x->q->plan.part_key)
		return rv->part >= 0 ? &x->pnames[rv->part] : &x->zero;
	if (idx == x->q->plan.bytes_field)
		return &rv->bytes;
	fi = rv->map[idx];
	return fi < 0 ? &x->zero : &rv->cells[fi];
}

/* Return a numeric field's value as recorded, scaled when the row was clipped. */
static uint64_t exec_raw(const struct query_run *x, const struct rowview *rv, int idx)
{
	const struct field *f = &x->s->fields[idx];
	uint64_t u = exec_cell(x, rv, idx)->u;

	if (!rv->clipped || !(f->flags & FF_SUM))
		return u;
	if (idx == x->q->plan.count_field)
		return rv->clipped->count;
	return (uint64_t)llround((double)u * (f->type == FT_DUR ? rv->fdur : rv->fcount));
}

/*
 * Return the current part's share of v: v split over the row's parts in
 * proportion to their values, by largest remainder (ties to the earlier
 * part), so the shares add up to v; all of v when no part has a value and
 * the current part is the last.
 */
static uint64_t exec_share(const struct query_run *x, const struct rowview *rv, uint64_t v)
{
	const struct plan *pl = &x->q->plan;
	unsigned __int128 total = 0, sum_floor = 0, rem_p, rem_i;
	uint64_t w_p = exec_raw(x, rv, pl->parts[rv->part]);
	size_t i, rank = 0;

	for (i = 0; i < pl->nparts; i++)
		total += exec_raw(x, rv, pl->parts[i]);
	if (!total)
		return (size_t)rv->part == pl->nparts - 1 ? v : 0;
	if (!w_p)
		return 0;
	rem_p = (unsigned __int128)v * w_p % total;
	for (i = 0; i < pl->nparts; i++) {
		unsigned __int128 vw = (unsigned __int128)v * exec_raw(x, rv, pl->parts[i]);

		sum_floor += vw / total;
		rem_i = vw % total;
		if (rem_i > rem_p || (rem_i == rem_p && i < (size_t)rv->part))
			rank++;
	}
	return (uint64_t)((unsigned __int128)v * w_p / total) + (rank < v - sum_floor);
}

/* Return a numeric field's value in the row, unpivoted when rv is one part's row. */
static uint64_t exec_u(const struct query_run *x, const struct rowview *rv, int idx)
{
	const struct plan *pl = &x->q->plan;
	const struct field *f = &x->s->fields[idx];

	if (rv->part < 0)
		return exec_raw(x, rv, idx);
	if (f->flags & FF_TOTAL)
		return exec_raw(x, rv, pl->parts[rv->part]);
	if (f->flags & FF_PART)
		return idx == pl->parts[rv->part] ? exec_raw(x, rv, idx) : 0;
	if (f->flags & FF_SUM)
		return exec_share(x, rv, exec_raw(x, rv, idx));
	return exec_raw(x, rv, idx);
}

/* Return how many events the row stands for (its share when unpivoted). */
static uint64_t exec_events(const struct query_run *x, const struct rowview *rv)
{
	const struct plan *pl = &x->q->plan;

	if (pl->count_field >= 0)
		return exec_u(x, rv, pl->count_field);
	return rv->part < 0 ? 1 : exec_share(x, rv, 1);
}

/* Return whether the current part's row exists: the part has a value, or no
 * part has one and it is the last. */
static bool exec_part_kept(const struct query_run *x, const struct rowview *rv)
{
	const struct plan *pl = &x->q->plan;
	size_t i;

	if (exec_raw(x, rv, pl->parts[rv->part]))
		return true;
	if ((size_t)rv->part != pl->nparts - 1)
		return false;
	for (i = 0; i < pl->nparts; i++)
		if (exec_raw(x, rv, pl->parts[i]))
			return false;
	return true;
}

/* Return whether address a lies in prefix p. */
static bool exec_ip_in(const struct ipaddr *a, const struct ipaddr *p)
{
	unsigned bits = p->v4 ? 96u + p->prefix : p->prefix, i;

	if (!a || a->v4 != p->v4)
		return false;
	for (i = 0; i < bits; i++) {
		unsigned m = 0x80u >> (i % 8);

		if ((a->a[i / 8] & m) != (p->a[i / 8] & m))
			return false;
	}
	return true;
}

/* Return whether `x op v` holds. */
static bool exec_cmp(uint64_t x, enum cmp op, uint64_t v)
{
	switch (op) {
	case CMP_EQ: return x == v;
	case CMP_NE: return x != v;
	case CMP_LT: return x < v;
	case CMP_LE: return x <= v;
	case CMP_GT: return x > v;
	default: return x >= v;
	}
}

/* Return whether a leaf holds for one value of its field. */
static bool exec_leaf(const struct query_run *x, const struct pred *p, const struct rowview *rv,
		      uint64_t bucket_v)
{
	const struct field *f = &x->s->fields[p->f.idx];
	const union cell *c = exec_cell(x, rv, p->f.idx);
	const char *s = c->s ? c->s : "";
	uint64_t u = f->type == FT_HIST ? bucket_v : c->u;
	bool eq;
	size_t i;

	if (p->kind == P_MATCH)
		return p->regex ? !regexec(&p->re, s, 0, NULL, 0) : !fnmatch(p->vals[0].s, s, 0);
	for (i = 0; i < p->nvals; i++) {
		const struct value *v = &p->vals[i];

		if (f->type == FT_STR)
			eq = !strcmp(s, v->s);
		else if (f->type == FT_IP)
			eq = exec_ip_in(c->ip, &v->ip);
		else if (p->kind == P_CMP)
			return exec_cmp(u, p->op, v->u);
		else
			eq = u == v->u;
		if (p->kind == P_CMP)
			return p->op == CMP_EQ ? eq : !eq;
		if (eq)
			return true;
	}
	return false;
}

/* Evaluate a predicate on a row, reading the histogram field as bucket_v. */
static bool exec_pred(const struct query_run *x, const struct pred *p, const struct rowview *rv,
		      uint64_t bucket_v)
{
	switch (p->kind) {
	case P_AND:
		return exec_pred(x, p->l, rv, bucket_v) && exec_pred(x, p->r, rv, bucket_v);
	case P_OR:
		return exec_pred(x, p->l, rv, bucket_v) || exec_pred(x, p->r, rv, bucket_v);
	case P_NOT:
		return !exec_pred(x, p->l, rv, bucket_v);
	default:
		return exec_leaf(x, p, rv, bucket_v);
	}
}

/* Return the value hist_clip reports for bucket i: its midpoint within [min, max]. */
static uint64_t exec_bucket_value(const struct shist *h, uint32_t i)
{
	uint64_t m = hist_bucket_mid(i);

	return m < h->min ? h->min : m > h->max ? h->max : m;
}

/*
 * Apply WHERE to a row; false drops it.  With a histogram predicate, keep
 * the buckets that pass, recomputing count/sum/min/max as hist_clip does.
 */
static bool exec_where(struct query_run *x, struct rowview *rv)
{
	const struct query *q = x->q;
	const struct shist *h;
	struct shist *k;
	uint64_t all_t = 0, first = LH_NBUCKETS, last = 0;
	uint32_t j;

	rv->clipped = NULL;
	if (!q->where)
		return true;
	if (q->plan.hist_field < 0)
		return exec_pred(x, q->where, rv, 0);
	h = exec_cell(x, rv, q->plan.hist_field)->h;
	if (!h || !h->count)
		return false;
	if (!x->clip) {
		x->clip = shist_new();
		x->clip = xrealloc(x->clip, sizeof(*x->clip) + LH_NBUCKETS * sizeof(x->clip->bin[0]));
		x->clip->cap = LH_NBUCKETS;
	}
	k = x->clip;
	k->n = 0;
	k->count = k->sum = 0;
	for (j = 0; j < h->n; j++) {
		uint32_t i = h->bin[j].idx;
		uint64_t v, c = h->bin[j].c;

		if (!c)
			continue;
		v = exec_bucket_value(h, i);
		all_t += v * c;
		if (!exec_pred(x, q->where, rv, v))
			continue;
		k->bin[k->n++] = h->bin[j];
		k->count += c;
		k->sum += v * c;
		if (first == LH_NBUCKETS)
			first = i;
		last = i;
	}
	if (!k->count)
		return false;
	if (k->count == h->count)
		return true;
	k->min = first == lh_bucket(h->min) ? h->min : lh_bucket_low((uint32_t)first);
	k->max = last == lh_bucket(h->max) ? h->max :
		 last + 1 >= LH_NBUCKETS ? UINT64_MAX : lh_bucket_low((uint32_t)last + 1) - 1;
	rv->clipped = k;
	rv->fcount = (double)k->count / (double)h->count;
	rv->fdur = all_t ? (double)k->sum / (double)all_t : rv->fcount;
	return true;
}

/* Hash bytes (FNV-1a). */
static uint64_t exec_hash(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	while (n--)
		h = (h ^ (unsigned char)*p++) * 1099511628211ULL;
	return h;
}

/* Serialize the row's key tuple into a new buffer. */
static char *exec_key(const struct query_run *x, const struct rowview *rv, size_t *len)
{
	const struct plan *pl = &x->q->plan;
	size_t i, n = 0, cap = 64;
	char *b = xmalloc(cap);

	if (x->q->bucket_ns) {
		memcpy(b, &x->bucket, 8);
		n = 8;
	}
	for (i = 0; i < pl->nkeys; i++) {
		const struct field *f = &x->s->fields[pl->keys[i]];
		const union cell *c = exec_cell(x, rv, pl->keys[i]);
		size_t need = f->type == FT_STR ? (c->s ? strlen(c->s) : 0) + 2 : 24;

		if (n + need > cap) {
			cap = (n + need) * 2;
			b = xrealloc(b, cap);
		}
		if (f->type == FT_STR) {
			b[n++] = c->s ? 1 : 0;
			memcpy(b + n, c->s ? c->s : "", need - 1);
			n += need - 1;
		} else if (f->type == FT_IP) {
			memset(b + n, 0, 18);
			if (c->ip) {
				memcpy(b + n, c->ip->a, 16);
				b[n + 16] = (char)c->ip->prefix;
				b[n + 17] = (char)c->ip->v4;
			}
			n += 18;
		} else {
			memcpy(b + n, &c->u, 8);
			n += 8;
		}
	}
	*len = n;
	return b;
}

/* Grow the hash table and reinsert every group. */
static void exec_rehash(struct query_run *x)
{
	size_t i, j;

	free(x->hash);
	x->bytes -= x->hcap * sizeof(*x->hash);
	x->hcap = x->hcap ? x->hcap * 2 : 64;
	x->hash = xcalloc(x->hcap, sizeof(*x->hash));
	x->bytes += x->hcap * sizeof(*x->hash);
	for (i = 0; i < x->ngroups; i++) {
		j = exec_hash(x->groups[i].key, x->groups[i].keylen) & (x->hcap - 1);
		while (x->hash[j])
			j = (j + 1) & (x->hcap - 1);
		x->hash[j] = i + 1;
	}
}

/* Return the row's group, creating it on first sight. */
static struct group *exec_group(struct query_run *x, const struct rowview *rv)
{
	const struct plan *pl = &x->q->plan;
	size_t len, j, i;
	char *key = exec_key(x, rv, &len);
	struct group *g;

	if ((x->ngroups + 1) * 2 > x->hcap)
		exec_rehash(x);
	j = exec_hash(key, len) & (x->hcap - 1);
	for (; x->hash[j]; j = (j + 1) & (x->hcap - 1)) {
		g = &x->groups[x->hash[j] - 1];
		if (g->keylen == len && !memcmp(g->key, key, len)) {
			free(key);
			return g;
		}
	}
	if (x->ngroups == x->cap) {
		x->bytes -= x->cap * sizeof(*x->groups);
		x->cap = x->cap ? x->cap * 2 : 16;
		x->groups = xreallocarray(x->groups, x->cap, sizeof(*x->groups));
		x->bytes += x->cap * sizeof(*x->groups);
	}
	x->hash[j] = x->ngroups + 1;
	g = &x->groups[x->ngroups++];
	g->bucket = x->bucket;
	g->key = xrealloc(key, len + 1);
	g->keylen = len;
	g->kcells = xcalloc(pl->nkeys + 1, sizeof(*g->kcells));
	x->bytes += len + 1 + (pl->nkeys + 1) * sizeof(*g->kcells);
	for (i = 0; i < pl->nkeys; i++) {
		const union cell *c = exec_cell(x, rv, pl->keys[i]);
		enum ftype t = x->s->fields[pl->keys[i]].type;

		if (t == FT_STR) {
			g->kcells[i].s = xstrdup(c->s ? c->s : "");
			x->bytes += strlen(g->kcells[i].s) + 1;
		} else if (t == FT_IP && c->ip) {
			g->kcells[i].ip = memcpy(xmalloc(sizeof(*c->ip)), c->ip, sizeof(*c->ip));
			x->bytes += sizeof(*c->ip);
		} else if (t != FT_IP) {
			g->kcells[i].u = c->u;
		}
	}
	g->acc = xcalloc(pl->ncols, sizeof(*g->acc));
	x->bytes += pl->ncols * sizeof(*g->acc);
	for (i = 0; i < pl->ncols; i++) {
		g->acc[i].min = UINT64_MAX;
		if (!pl->cols[i].key && pl->cols[i].field >= 0 &&
		    x->s->fields[pl->cols[i].field].type == FT_HIST) {
			g->acc[i].h = shist_new();
			x->bytes += shist_bytes(g->acc[i].h);
		}
	}
	return g;
}

/* Add one row to a column's accumulator. */
static void exec_add(struct query_run *x, const struct pcol *c, struct acc *a,
		     const struct rowview *rv)
{
	const struct plan *pl = &x->q->plan;
	uint64_t v;
	double d;

	if (a->h) {
		const struct shist *h = c->field == pl->hist_field && rv->clipped ? rv->clipped :
					exec_cell(x, rv, c->field)->h;

		if (h) {
			x->bytes -= shist_bytes(a->h);
			a->h = shist_merge(a->h, h);
			x->bytes += shist_bytes(a->h);
		}
		return;
	}
	a->events += exec_events(x, rv);
	if (c->field < 0)
		return;
	v = exec_u(x, rv, c->field);
	a->sum += v;
	a->rows++;
	a->min = v < a->min ? v : a->min;
	a->max = v > a->max ? v : a->max;
	d = (double)v - a->mean;
	a->mean += d / (double)a->rows;
	a->m2 += d * ((double)v - a->mean);
	if (c->agg == AGG_PCT) {
		if (a->nvals == a->cap) {
			x->bytes -= a->cap * sizeof(*a->vals);
			a->cap = a->cap ? a->cap * 2 : 16;
			a->vals = xreallocarray(a->vals, a->cap, sizeof(*a->vals));
			x->bytes += a->cap * sizeof(*a->vals);
		}
		a->vals[a->nvals++] = v;
	}
}

/* Order u64 values ascending (qsort). */
static int exec_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Format an address key as text. */
static char *exec_ip_text(const struct ipaddr *ip)
{
	char buf[INET6_ADDRSTRLEN + 8];

	if (!ip)
		return xstrdup("");
	inet_ntop(ip->v4 ? AF_INET : AF_INET6, ip->v4 ? ip->a + 12 : ip->a, buf, sizeof(buf));
	if (ip->prefix < (ip->v4 ? 32 : 128))
		return xasprintf("%s/%u", buf, ip->prefix);
	return xstrdup(buf);
}

/* Compute a column's final value for a group. */
static void exec_final(const struct query_run *x, const struct pcol *c, struct group *g,
		       struct acc *a, double span_s, struct result_val *out)
{
	const struct field *f = c->field >= 0 ? &x->s->fields[c->field] : NULL;
	const struct shist *h = a->h;
	bool hist = h != NULL;
	uint64_t events = hist ? h->count : a->events;

	memset(out, 0, sizeof(*out));
	if (c->ratio_of >= 0) {
		out->null = true;
		return;
	}
	if (c->key) {
		if (f->type == FT_STR)
			out->s = xstrdup(g->kcells[c->keyslot].s);
		else if (f->type == FT_IP)
			out->s = exec_ip_text(g->kcells[c->keyslot].ip);
		else
			out->u = g->kcells[c->keyslot].u;
		return;
	}
	out->null = hist ? !h->count : !a->rows;
	switch (c->agg) {
	case AGG_COUNT:
		out->null = false;
		out->u = events;
		break;
	case AGG_SUM:
		out->null = false;
		out->u = hist ? h->sum : a->sum;
		break;
	case AGG_RATE:
		out->null = !span_s;
		out->d = span_s ? (double)(hist ? h->count : a->sum) / span_s : 0;
		break;
	case AGG_MIN:
		out->u = hist ? h->min : a->min;
		break;
	case AGG_MAX:
		out->u = hist ? h->max : a->max;
		break;
	case AGG_AVG:
		if (hist) {
			out->d = h->count ? (double)h->sum / (double)h->count : 0.0;
		} else if ((f->flags & FF_SUM) && x->q->plan.count_field >= 0 &&
			   c->field != x->q->plan.count_field) {
			out->null = !a->events;
			out->d = a->events ? (double)a->sum / (double)a->events : 0;
		} else {
			out->d = a->rows ? (double)a->sum / (double)a->rows : 0;
		}
		break;
	case AGG_STDDEV:
		out->d = hist ? shist_stddev(h) : a->rows ? sqrt(a->m2 / (double)a->rows) : 0;
		break;
	case AGG_PCT:
		if (hist) {
			out->u = shist_percentile(h, c->pct);
		} else if (a->nvals) {
			size_t rank = (size_t)ceil(c->pct / 100.0 * (double)a->nvals);

			qsort(a->vals, a->nvals, sizeof(*a->vals), exec_u64_cmp);
			out->u = a->vals[rank ? rank - 1 : 0];
		}
		break;
	case AGG_DIST:
		out->null = false;
		out->h = hist_new();
		shist_unpack(h, out->h);
		break;
	default:
		break;
	}
}

/* Compare two values of column c; nulls sort after everything. */
static int exec_val_cmp(const struct pcol *c, const struct result_val *a,
			const struct result_val *b)
{
	if (a->null || b->null)
		return a->null - b->null;
	if (c->real)
		return a->d < b->d ? -1 : a->d > b->d;
	if (c->type == FT_STR || c->type == FT_IP)
		return strcmp(a->s, b->s);
	return a->u < b->u ? -1 : a->u > b->u;
}

struct exec_sort {
	const struct plan *pl;
	const struct result_val *vals;	/* ngroups * ncols */
	const struct group *groups;
};

/* Order group indexes: the window (time(...)), the order column, then key
 * columns ascending. */
static int exec_row_cmp(const void *pa, const void *pb, void *arg)
{
	const struct exec_sort *es = arg;
	const struct plan *pl = es->pl;
	const struct result_val *a = es->vals + *(const size_t *)pa * pl->ncols;
	const struct result_val *b = es->vals + *(const size_t *)pb * pl->ncols;
	const struct pcol *oc = &pl->cols[pl->order_col];
	uint64_t ba = es->groups[*(const size_t *)pa].bucket, bb = es->groups[*(const size_t *)pb].bucket;
	size_t i;
	int r;

	if (ba != bb)
		return ba < bb ? -1 : 1;
	r = exec_val_cmp(oc, &a[pl->order_col], &b[pl->order_col]);
	if (r && !a[pl->order_col].null && !b[pl->order_col].null && pl->order_desc)
		r = -r;
	if (r)
		return r;
	for (i = 0; i < pl->ncols; i++)
		if (pl->cols[i].key && (r = exec_val_cmp(&pl->cols[i], &a[i], &b[i])))
			return r;
	return (*(const size_t *)pa > *(const size_t *)pb) - (*(const size_t *)pa < *(const size_t *)pb);
}

/* Free one computed value. */
static void exec_val_free(struct result_val *v)
{
	free(v->s);
	hist_free(v->h);
}

/* Map the query schema's fields onto a frame's schema by name and type. */
static void exec_map(const struct schema *qs, const struct schema *fs, int *map)
{
	size_t i;
	int j;

	for (i = 0; i < qs->nfields; i++) {
		if (qs == fs) {
			map[i] = (int)i;
			continue;
		}
		j = schema_field(fs, qs->fields[i].name);
		map[i] = j >= 0 && fs->fields[j].type == qs->fields[i].type ? j : -1;
	}
}

/* Order windows by start (qsort, bsearch). */
static int exec_span_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct bucket_span *)a)->bucket, y = ((const struct bucket_span *)b)->bucket;

	return x < y ? -1 : x > y;
}

/* Return the seconds group g's rates divide by: the time covered by its
 * window's ticks with time(...) (x->spans sorted), else span_s. */
static double exec_group_span(const struct query_run *x, const struct group *g, double span_s)
{
	struct bucket_span key = {.bucket = g->bucket}, *s;

	if (!x->q->bucket_ns || !x->nspans)
		return x->q->bucket_ns ? 0 : span_s;
	s = bsearch(&key, x->spans, x->nspans, sizeof(*x->spans), exec_span_cmp);
	return s ? (double)s->span_ns / 1e9 : 0;
}

/* Build the result from the groups: final values, order, limit (with
 * time(...): the time column first, and the limit per window). */
static struct result *exec_result(struct query_run *x, double span_s)
{
	const struct plan *pl = &x->q->plan;
	struct result *r = xcalloc(1, sizeof(*r));
	struct result_val *all = xcalloc(x->ngroups * pl->ncols + 1, sizeof(*all));
	size_t *idx = xcalloc(x->ngroups + 1, sizeof(*idx));
	size_t i, j, n, tc = x->q->bucket_ns ? 1 : 0;

	if (x->nspans)
		qsort(x->spans, x->nspans, sizeof(*x->spans), exec_span_cmp);
	for (i = 0; i < x->ngroups; i++)
		for (j = 0; j < pl->ncols; j++)
			exec_final(x, &pl->cols[j], &x->groups[i], &x->groups[i].acc[j],
				   exec_group_span(x, &x->groups[i], span_s), &all[i * pl->ncols + j]);
	if (x->q->base)
		baseline_ratios(x->q, all, x->ngroups);
	for (i = 0; i < x->ngroups; i++)
		idx[i] = i;
	struct exec_sort es = {pl, all, x->groups};

	qsort_r(idx, x->ngroups, sizeof(*idx), exec_row_cmp, &es);
	n = x->ngroups;
	if (x->q->has_limit && tc) {
		uint64_t prev = 0, in_window = 0;

		for (i = 0, n = 0; i < x->ngroups; i++) {
			if (!i || x->groups[idx[i]].bucket != prev)
				in_window = 0;
			prev = x->groups[idx[i]].bucket;
			if (in_window++ < x->q->limit)
				idx[n++] = idx[i];
		}
	} else if (x->q->has_limit && x->q->limit < n) {
		n = (size_t)x->q->limit;
	}
	r->ncols = pl->nvisible + tc;
	r->nrows = n;
	r->cols = xcalloc(r->ncols + 1, sizeof(*r->cols));
	if (tc) {
		r->cols[0].name = xstrdup("time");
		r->cols[0].type = FT_U64;
		r->cols[0].key = true;
		r->cols[0].time = true;
	}
	for (j = 0; j < pl->nvisible; j++) {
		r->cols[tc + j].name = xstrdup(pl->cols[j].name);
		r->cols[tc + j].type = pl->cols[j].type;
		r->cols[tc + j].key = pl->cols[j].key;
		r->cols[tc + j].real = pl->cols[j].real;
		r->cols[tc + j].ratio = pl->cols[j].ratio_of >= 0;
		r->cols[tc + j].part = pl->cols[j].part;
		r->cols[tc + j].cumulative = !pl->cols[j].key && pl->cols[j].ratio_of < 0 &&
					     (pl->cols[j].agg == AGG_COUNT ||
					      pl->cols[j].agg == AGG_SUM);
	}
	r->vals = xcalloc(n * r->ncols + 1, sizeof(*r->vals));
	for (i = 0; i < n; i++) {
		if (tc)
			r->vals[i * r->ncols].u = x->groups[idx[i]].bucket;
		for (j = 0; j < pl->nvisible; j++) {
			r->vals[i * r->ncols + tc + j] = all[idx[i] * pl->ncols + j];
			memset(&all[idx[i] * pl->ncols + j], 0, sizeof(*all));
		}
	}
	for (i = 0; i < x->ngroups * pl->ncols; i++)
		exec_val_free(&all[i]);
	free(all);
	free(idx);
	return r;
}

/* Filter one row (or one part's row) and add it to its group. */
static void exec_row(struct query_run *x, struct rowview *rv)
{
	const struct plan *pl = &x->q->plan;
	struct group *g;
	size_t j;

	if (!exec_where(x, rv) || (rv->part >= 0 && !exec_part_kept(x, rv)))
		return;
	g = exec_group(x, rv);
	for (j = 0; j < pl->ncols; j++)
		if (!pl->cols[j].key && pl->cols[j].ratio_of < 0)
			exec_add(x, &pl->cols[j], &g->acc[j], rv);
}

/* Compute the row's BYTES_FIELD: its size times the events it stands for
 * (its count, or 1 in a table without one). */
static void exec_bytes(const struct query_run *x, struct rowview *rv)
{
	const struct plan *pl = &x->q->plan;

	if (pl->bytes_field < 0)
		return;
	rv->bytes.u = exec_cell(x, rv, pl->size_field)->u *
		      (pl->count_field >= 0 ? exec_cell(x, rv, pl->count_field)->u : 1);
}

/* Add one frame's rows, each unpivoted into its parts when the plan says so. */
static void exec_frame(struct query_run *x, const struct frame *f)
{
	const struct plan *pl = &x->q->plan;
	struct rowview rv = {.map = x->map, .part = -1};
	size_t r, p;

	exec_map(x->s, f->schema, x->map);
	for (r = 0; r < f->nrows; r++) {
		rv.cells = frame_row(f, r);
		exec_bytes(x, &rv);
		if (!pl->expand) {
			exec_row(x, &rv);
			continue;
		}
		for (p = 0; p < pl->nparts; p++) {
			rv.part = (int)p;
			exec_row(x, &rv);
		}
	}
}

/* Sum a frame's health counters into st. */
static void exec_stats(struct frame_stats *st, const struct frame_stats *f)
{
	st->events += f->events;
	st->lost += f->lost;
	st->dropped += f->dropped;
	st->evicted += f->evicted;
	st->overflow += f->overflow;
	st->bpf_ns += f->bpf_ns;
	st->bpf_runs += f->bpf_runs;
}

struct query_run *query_run_new(const struct query *q, struct query_error *err)
{
	struct query_run *x;
	size_t i;

	memset(err, 0, sizeof(*err));
	if (!q->schema) {
		error_set(err, 0, 0, "the query is not bound to a table (query_bind first)");
		return NULL;
	}
	if (q->base && baseline_load(q, err))
		return NULL;
	x = xcalloc(1, sizeof(*x));
	x->q = q;
	x->s = q->schema;
	x->pnames = xcalloc(q->plan.nparts + 1, sizeof(*x->pnames));
	for (i = 0; i < q->plan.nparts; i++)
		x->pnames[i].s = xstrdup(x->s->fields[q->plan.parts[i]].name);
	x->map = xcalloc(x->s->nfields + 1, sizeof(*x->map));
	query_run_end(x, 0);
	return x;
}

void query_run_end(struct query_run *r, uint64_t end_ns)
{
	const struct query *q = r->q;

	r->since_ns = q->optset & OPT_SINCE ? qtime_resolve(&q->since, end_ns) : 0;
	r->until_ns = q->optset & OPT_UNTIL ? qtime_resolve(&q->until, end_ns) : UINT64_MAX;
}

/* Add dt_ns to the span of the current tick's window, found from the newest. */
static void exec_bucket_add(struct query_run *r, uint64_t dt_ns)
{
	size_t i = r->nspans;

	while (i && r->spans[i - 1].bucket != r->bucket)
		i--;
	if (!i) {
		if (r->nspans == r->scap) {
			r->bytes -= r->scap * sizeof(*r->spans);
			r->scap = r->scap ? 2 * r->scap : 16;
			r->spans = xreallocarray(r->spans, r->scap, sizeof(*r->spans));
			r->bytes += r->scap * sizeof(*r->spans);
		}
		r->spans[r->nspans++] = (struct bucket_span){r->bucket, 0};
		i = r->nspans;
	}
	r->spans[i - 1].span_ns += dt_ns;
}

/* Where tick t of r's table starts: its time less its frame's span. */
static uint64_t run_tick_start(const struct query_run *r, const struct tick *t,
			       const struct frame **f)
{
	*f = tick_frame(t, r->s->table);
	return t->t_ns - (*f && (*f)->dt_ns < t->t_ns ? (*f)->dt_ns : 0);
}

bool query_run_covers(const struct query_run *r, const struct tick *t)
{
	const struct frame *f;
	uint64_t start = run_tick_start(r, t, &f);

	return start >= r->since_ns && start < r->until_ns;
}

void query_run_add(struct query_run *r, const struct tick *t)
{
	const struct frame *f;
	uint64_t start = run_tick_start(r, t, &f);

	if (!r->nseen++ || start < r->seen_from)
		r->seen_from = start;
	r->seen_to = t->t_ns > r->seen_to ? t->t_ns : r->seen_to;
	if (start < r->since_ns || start >= r->until_ns)
		return;
	r->nin++;
	r->t_ns = t->t_ns;
	if (!f)
		return;
	if (r->q->bucket_ns) {
		r->bucket = start - start % r->q->bucket_ns;
		exec_bucket_add(r, f->dt_ns);
	}
	r->span_ns += f->dt_ns;
	exec_stats(&r->stats, &f->stats);
	exec_frame(r, f);
}

struct result *query_run_result(struct query_run *r)
{
	struct result *res;
	size_t i;

	if (!r->q->plan.nkeys && (r->q->bucket_ns ? r->ngroups < r->nspans : !r->ngroups)) {
		/* no keys: one row (per window with a tick), events or not */
		struct rowview rv = {.cells = NULL, .map = r->map, .part = -1};

		for (i = 0; i < r->s->nfields; i++)
			r->map[i] = -1;
		if (!r->q->bucket_ns)
			exec_group(r, &rv);
		for (i = 0; r->q->bucket_ns && i < r->nspans; i++) {
			r->bucket = r->spans[i].bucket;
			exec_group(r, &rv);
		}
	}
	res = exec_result(r, (double)r->span_ns / 1e9);
	res->table = xstrdup(r->s->table);
	res->t_ns = r->t_ns;
	res->span_ns = r->span_ns;
	res->stats = r->stats;
	return res;
}

int query_run_check(const struct query_run *r, struct query_error *err)
{
	const struct query *q = r->q;
	char a[QTIME_BUF] = "the start", b[QTIME_BUF] = "the end", c[QTIME_BUF], d[QTIME_BUF];

	memset(err, 0, sizeof(*err));
	if (!(q->optset & (OPT_SINCE | OPT_UNTIL)))
		return 0;
	if (q->optset & OPT_SINCE)
		qtime_format(r->since_ns, false, a, sizeof(a));
	if (q->optset & OPT_UNTIL)
		qtime_format(r->until_ns, false, b, sizeof(b));
	if (r->since_ns >= r->until_ns) {
		error_set(err, q->upos, q->ulen, "until (%s) must come after since (%s)", b, a);
		return -1;
	}
	if (r->nin || !r->nseen)
		return 0;
	error_set(err, q->optset & OPT_SINCE ? q->spos : q->upos,
		  q->optset & OPT_SINCE ? q->slen : q->ulen,
		  "no ticks between %s and %s; the recording covers %s to %s", a, b,
		  qtime_format(r->seen_from, false, c, sizeof(c)),
		  qtime_format(r->seen_to, false, d, sizeof(d)));
	return -1;
}

size_t query_run_bytes(const struct query_run *r)
{
	return r->bytes;
}

/* Free the groups and the run. */
void query_run_free(struct query_run *r)
{
	const struct plan *pl;
	size_t i, j;

	if (!r)
		return;
	pl = &r->q->plan;
	for (i = 0; i < r->ngroups; i++) {
		struct group *g = &r->groups[i];

		for (j = 0; j < pl->nkeys; j++) {
			enum ftype t = r->s->fields[pl->keys[j]].type;

			if (t == FT_STR)
				free(g->kcells[j].s);
			else if (t == FT_IP)
				free(g->kcells[j].ip);
		}
		for (j = 0; j < pl->ncols; j++) {
			shist_free(g->acc[j].h);
			free(g->acc[j].vals);
		}
		free(g->acc);
		free(g->kcells);
		free(g->key);
	}
	free(r->groups);
	free(r->hash);
	free(r->spans);
	for (i = 0; i < pl->nparts; i++)
		free(r->pnames[i].s);
	free(r->pnames);
	free(r->map);
	shist_free(r->clip);
	free(r);
}

struct result *query_exec(const struct query *q, const struct window *w,
			  struct query_error *err)
{
	struct query_run *x = query_run_new(q, err);
	struct result *r;
	size_t t;

	if (!x)
		return NULL;
	if (w->nticks)
		query_run_end(x, w->ticks[w->nticks - 1].t_ns);
	for (t = 0; t < w->nticks; t++)
		query_run_add(x, &w->ticks[t]);
	if (query_run_check(x, err)) {
		query_run_free(x);
		return NULL;
	}
	r = query_run_result(x);
	query_run_free(x);
	return r;
}
