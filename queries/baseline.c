/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * BASELINE 'file': compare a result with the same query over another
 * recording (ntprof's latency amplification degree: loaded / baseline).
 *
 * The first run of a bound query with BASELINE reads the whole recording
 * through query_run: the query's canonical text without BASELINE, ORDER BY
 * and LIMIT, bound to the recording's schema of the same table.  Its rows are
 * kept in the query (struct baseline), sorted by their key tuple.  A ratio
 * column "C/base" of a result row is then C / C of the baseline row with the
 * same key values, as a real: null when the baseline has no such row, when
 * either value is null, or when the baseline's is 0.  Columns are matched by
 * name, so a baseline recorded with fewer fields gives null ratios for what
 * it lacks.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "../core/source.h"
#include "../core/xalloc.h"
#include "ast.h"

/* One baseline row in the index: its serialized key tuple. */
struct base_row {
	char *key;
	size_t len;
	size_t row;
};

void baseline_reset(struct baseline *b)
{
	size_t i;

	result_free(b->res);
	for (i = 0; i < b->nidx; i++)
		free(b->idx[i].key);
	free(b->idx);
	free(b->bcol);
	free(b->kcols);
	memset(b, 0, sizeof(*b));
}

/* Say why the baseline cannot be used, at the BASELINE value. */
static void base_fail(const struct query *q, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void base_fail(const struct query *q, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	error_set(&q->base->err, q->bpos, q->blen, "baseline '%.80s': %s", q->opts.baseline, why);
}

/* Return a reader's message without its leading "PATH: ". */
static const char *base_cause(const char *path, const char *cause)
{
	size_t n = strlen(path);

	if (!cause)
		return "cannot be read";
	return !strncmp(cause, path, n) && !strncmp(cause + n, ": ", 2) ? cause + n + 2 : cause;
}

/* Serialize the key values of row: column cols[k], or map[cols[k]] with a map. */
static char *base_key(const struct result_val *row, const size_t *cols, const int *map,
		      size_t n, size_t *len)
{
	size_t k, cap = 64, at = 0, need;
	char *b = xmalloc(cap);

	for (k = 0; k < n; k++) {
		const struct result_val *v = &row[map ? (size_t)map[cols[k]] : cols[k]];

		need = v->s ? strlen(v->s) + 2 : 9;
		if (at + need > cap) {
			cap = (at + need) * 2;
			b = xrealloc(b, cap);
		}
		b[at++] = v->s ? 1 : 0;
		if (v->s)
			memcpy(b + at, v->s, need - 1);
		else
			memcpy(b + at, &v->u, 8);
		at += need - 1;
	}
	*len = at;
	return b;
}

/* Order index entries by key bytes, then length (qsort, bsearch). */
static int base_row_cmp(const void *pa, const void *pb)
{
	const struct base_row *a = pa, *b = pb;
	int r = memcmp(a->key, b->key, a->len < b->len ? a->len : b->len);

	return r ? r : (a->len > b->len) - (a->len < b->len);
}

/* Match the plan's columns with res's by name and index res by key; -1 if a
 * key column differs. */
static int base_index(const struct query *q, struct result *res)
{
	const struct plan *pl = &q->plan;
	struct baseline *b = q->base;
	size_t i, k;

	b->bcol = xcalloc(pl->ncols + 1, sizeof(*b->bcol));
	b->kcols = xcalloc(pl->ncols + 1, sizeof(*b->kcols));
	for (i = 0; i < pl->ncols; i++) {
		b->bcol[i] = -1;
		if (i >= pl->nvisible || pl->cols[i].ratio_of >= 0)
			continue;
		for (k = 0; k < res->ncols; k++)
			if (!strcmp(res->cols[k].name, pl->cols[i].name))
				b->bcol[i] = (int)k;
		if (!pl->cols[i].key)
			continue;
		if (b->bcol[i] < 0 || res->cols[b->bcol[i]].type != pl->cols[i].type) {
			base_fail(q, "key '%.60s' has another type in this recording",
				  pl->cols[i].name);
			return -1;
		}
		b->kcols[b->nkeys++] = i;
	}
	b->idx = xcalloc(res->nrows + 1, sizeof(*b->idx));
	for (i = 0; i < res->nrows; i++) {
		b->idx[i].key = base_key(result_row(res, i), b->kcols, b->bcol, b->nkeys,
					 &b->idx[i].len);
		b->idx[i].row = i;
	}
	b->nidx = res->nrows;
	qsort(b->idx, b->nidx, sizeof(*b->idx), base_row_cmp);
	b->res = res;
	return 0;
}

/* Return the query q runs over the baseline: q without BASELINE, ORDER BY and
 * LIMIT, bound to schema s; NULL with the baseline's error set. */
static struct query *base_query(const struct query *q, const struct schema *s)
{
	struct query_error e;
	char *text = query_text(q);
	struct query *bq = query_parse(text, &e);

	free(text);
	if (!bq) {
		base_fail(q, "%s", e.msg);
		return NULL;
	}
	bq->optset &= ~(unsigned)OPT_BASELINE;
	free(bq->opts.baseline);
	bq->opts.baseline = NULL;
	free(bq->base);
	bq->base = NULL;
	ast_item_done(&bq->order);
	bq->has_order = false;
	bq->dir = DIR_DEFAULT;
	bq->has_limit = false;
	if (query_bind(bq, s, &e) < 0) {
		base_fail(q, "%s", e.msg);
		query_free(bq);
		return NULL;
	}
	return bq;
}

/* Run q over every tick of its baseline recording and keep the rows; the
 * baseline's error says why not. */
static void base_read(const struct query *q)
{
	const char *path = q->opts.baseline, *table = q->schema->table;
	const struct source_info *info;
	const struct schema *s;
	struct query *bq = NULL;
	struct query_run *run = NULL;
	struct query_error e;
	struct result *res;
	char *cause = NULL, *kept;
	struct source *src;
	struct tick t;
	int r;

	src = replay_open(path, &cause);
	if (!src) {
		base_fail(q, "%s", base_cause(path, cause));
		free(cause);
		return;
	}
	info = src->ops->info(src);
	s = source_schema(info, table);
	if (info->warning) {
		cause = xstrdup(base_cause(path, info->warning));
		if ((kept = strstr(cause, "; kept ")))
			*kept = 0;
		base_fail(q, "damaged: %s", cause);
	} else if (!s) {
		base_fail(q, "this recording has no table '%s'", table);
	} else if ((bq = base_query(q, s)) && (run = query_run_new(bq, &e))) {
		while ((r = source_read(src, &t, 0, &cause)) == 1) {
			query_run_add(run, &t);
			tick_done(&t);
		}
		if (r < 0) {
			base_fail(q, "%s", base_cause(path, cause));
		} else {
			res = query_run_result(run);
			if (base_index(q, res) < 0) {
				result_free(res);
				free(q->base->bcol);
				free(q->base->kcols);
				q->base->bcol = NULL;
				q->base->kcols = NULL;
			}
		}
	} else if (bq) {
		base_fail(q, "%s", e.msg);
	}
	free(cause);
	query_run_free(run);
	query_free(bq);
	source_close(src);
}

int baseline_load(const struct query *q, struct query_error *err)
{
	struct baseline *b = q->base;

	if (!b->res && !b->err.msg[0])
		base_read(q);
	if (b->res)
		return 0;
	*err = b->err;
	return -1;
}

/* Return a value as a number; false when it is null. */
static bool base_num(const struct result_val *v, bool real, double *d)
{
	if (v->null)
		return false;
	*d = real ? v->d : (double)v->u;
	return true;
}

void baseline_ratios(const struct query *q, struct result_val *vals, size_t nrows)
{
	const struct plan *pl = &q->plan;
	const struct baseline *b = q->base;
	const struct base_row *hit;
	struct base_row want;
	size_t i, j;
	double cur, old;

	if (!b->res)
		return;
	for (i = 0; i < nrows; i++) {
		struct result_val *row = vals + i * pl->ncols;
		const struct result_val *brow;

		want.key = base_key(row, b->kcols, NULL, b->nkeys, &want.len);
		hit = bsearch(&want, b->idx, b->nidx, sizeof(*b->idx), base_row_cmp);
		free(want.key);
		brow = hit ? result_row(b->res, hit->row) : NULL;
		for (j = 0; j < pl->ncols; j++) {
			int c = pl->cols[j].ratio_of, bc;

			if (c < 0)
				continue;
			row[j].null = true;
			bc = b->bcol[c];
			if (!brow || bc < 0 || !base_num(&row[c], pl->cols[c].real, &cur) ||
			    !base_num(&brow[bc], b->res->cols[bc].real, &old) || old == 0)
				continue;
			row[j].d = cur / old;
			row[j].null = false;
		}
	}
}
