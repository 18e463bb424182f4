/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Build, copy, free and print the query AST in canonical form. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "../core/xalloc.h"
#include "ast.h"

const char *const ast_funcs[] = {
	"count", "rate", "sum", "min", "max", "avg", "stddev", "p50", "p90", "p99",
	"p999", "p9999", "dist", NULL,
};

const char *const ast_cmp_text[] = {"==", "!=", "<", "<=", ">", ">="};

static const char *const ast_opt_names[OPT_COUNT] = {
	"window", "every", "sample", "threshold", "buffer", "baseline", "since", "until",
};

struct query *ast_query_new(void)
{
	struct query *q = xcalloc(1, sizeof(*q));

	q->opts.window_ns = 5000000000ULL;
	q->opts.every_ns = 1000000000ULL;
	q->opts.sample_n = 1;
	q->plan.order_col = -1;
	q->plan.count_field = -1;
	q->plan.hist_field = -1;
	q->plan.part_key = -1;
	q->plan.bytes_field = -1;
	q->plan.size_field = -1;
	return q;
}

enum agg ast_func(const char *name, double *pct)
{
	static const struct { const char *name; enum agg agg; } fn[] = {
		{"count", AGG_COUNT}, {"rate", AGG_RATE}, {"sum", AGG_SUM},
		{"min", AGG_MIN}, {"max", AGG_MAX}, {"avg", AGG_AVG},
		{"stddev", AGG_STDDEV}, {"dist", AGG_DIST},
	};
	size_t i, n;
	double v;

	for (i = 0; i < sizeof(fn) / sizeof(fn[0]); i++)
		if (!strcmp(name, fn[i].name))
			return fn[i].agg;
	if (name[0] != 'p' || !name[1])
		return AGG_NONE;
	n = strlen(name + 1);
	if (n > 6 || strspn(name + 1, "0123456789") != n)
		return AGG_NONE;
	if (!strcmp(name, "p100")) {
		*pct = 100.0;
		return AGG_PCT;
	}
	v = (name[1] - '0') * (n > 1 ? 10.0 : 1.0) + (n > 1 ? name[2] - '0' : 0);
	for (i = 3; i <= n; i++)
		v += (name[i] - '0') / (i == 3 ? 10.0 : i == 4 ? 100.0 : i == 5 ? 1e3 : 1e4);
	*pct = v;
	return AGG_PCT;
}

/* Free a predicate tree. */
void ast_pred_free(struct pred *p)
{
	size_t i;

	if (!p)
		return;
	ast_pred_free(p->l);
	ast_pred_free(p->r);
	free(p->f.name);
	for (i = 0; i < p->nvals; i++) {
		free(p->vals[i].s);
		free(p->vals[i].raw);
	}
	free(p->vals);
	if (p->re_ok)
		regfree(&p->re);
	free(p);
}

/* Copy a predicate tree (unbound: compiled patterns are not copied). */
struct pred *ast_pred_dup(const struct pred *p)
{
	struct pred *d;
	size_t i;

	if (!p)
		return NULL;
	d = xmalloc(sizeof(*d));
	*d = *p;
	d->re_ok = false;
	d->l = ast_pred_dup(p->l);
	d->r = ast_pred_dup(p->r);
	d->f.name = p->f.name ? xstrdup(p->f.name) : NULL;
	d->f.idx = -1;
	d->vals = p->nvals ? xcalloc(p->nvals, sizeof(*d->vals)) : NULL;
	for (i = 0; i < p->nvals; i++) {
		d->vals[i] = p->vals[i];
		d->vals[i].s = p->vals[i].s ? xstrdup(p->vals[i].s) : NULL;
		d->vals[i].raw = p->vals[i].raw ? xstrdup(p->vals[i].raw) : NULL;
	}
	return d;
}

/* Free what an item owns. */
void ast_item_done(struct item *it)
{
	free(it->func);
	free(it->f.name);
	free(it->as);
	memset(it, 0, sizeof(*it));
}

/* Copy an item. */
void ast_item_copy(struct item *dst, const struct item *src)
{
	*dst = *src;
	dst->func = src->func ? xstrdup(src->func) : NULL;
	dst->f.name = src->f.name ? xstrdup(src->f.name) : NULL;
	dst->f.idx = -1;
	dst->as = src->as ? xstrdup(src->as) : NULL;
}

/* Free what a plan owns and reset it. */
void ast_plan_done(struct plan *pl)
{
	size_t i;

	for (i = 0; i < pl->ncols; i++) {
		free(pl->cols[i].name);
		free(pl->cols[i].text);
	}
	free(pl->cols);
	free(pl->keys);
	free(pl->parts);
	free(pl->xfields);
	memset(pl, 0, sizeof(*pl));
	pl->order_col = -1;
	pl->count_field = -1;
	pl->hist_field = -1;
	pl->part_key = -1;
	pl->bytes_field = -1;
	pl->size_field = -1;
}

/* Free a query. */
void query_free(struct query *q)
{
	size_t i;

	if (!q)
		return;
	free(q->table);
	ast_pred_free(q->where);
	for (i = 0; i < q->ngroup; i++)
		free(q->group[i].name);
	free(q->group);
	free(q->bucket_raw);
	for (i = 0; i < q->nshow; i++)
		ast_item_done(&q->show[i]);
	free(q->show);
	ast_item_done(&q->order);
	for (i = 0; i < OPT_COUNT; i++)
		free(q->optraw[i]);
	free(q->opts.baseline);
	if (q->base)
		baseline_reset(q->base);
	free(q->base);
	ast_plan_done(&q->plan);
	free(q);
}

char *ast_item_text(const struct item *it)
{
	if (!it->func)
		return xstrdup(it->f.name);
	return xasprintf("%s(%s)", it->func, it->f.name ? it->f.name : "");
}

/* A growable string for printing. */
struct sbuf {
	char *s;
	size_t n, cap;
};

/* Append a formatted string. */
static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (b->n + (size_t)n + 1 > b->cap) {
		b->cap = (b->n + (size_t)n + 1) * 2;
		b->s = xrealloc(b->s, b->cap);
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
	va_end(ap);
	b->n += (size_t)n;
}

/* Append s as a quoted string, escaping ' and \. */
static void sb_quote(struct sbuf *b, const char *s)
{
	sb_printf(b, "'");
	for (; *s; s++)
		sb_printf(b, "%s%c", *s == '\'' || *s == '\\' ? "\\" : "", *s);
	sb_printf(b, "'");
}

/* Append a literal. */
static void ast_print_value(struct sbuf *b, const struct value *v)
{
	if (v->kind == V_STR)
		sb_quote(b, v->s);
	else
		sb_printf(b, "%s", v->raw);
}

/* Binding strength: OR 1, AND 2, NOT 3, leaves 4. */
static int ast_prec(const struct pred *p)
{
	return p->kind == P_OR ? 1 : p->kind == P_AND ? 2 : p->kind == P_NOT ? 3 : 4;
}

/* Append a predicate, parenthesizing children that bind looser than min. */
static void ast_print_pred(struct sbuf *b, const struct pred *p, int min)
{
	bool paren = ast_prec(p) < min;
	size_t i;

	if (paren)
		sb_printf(b, "(");
	switch (p->kind) {
	case P_AND:
	case P_OR:
		ast_print_pred(b, p->l, ast_prec(p));
		sb_printf(b, p->kind == P_AND ? " and " : " or ");
		ast_print_pred(b, p->r, ast_prec(p) + 1);
		break;
	case P_NOT:
		sb_printf(b, "not ");
		ast_print_pred(b, p->l, 3);
		break;
	case P_CMP:
		sb_printf(b, "%s %s ", p->f.name, ast_cmp_text[p->op]);
		ast_print_value(b, &p->vals[0]);
		break;
	case P_IN:
		sb_printf(b, "%s in (", p->f.name);
		for (i = 0; i < p->nvals; i++) {
			sb_printf(b, "%s", i ? ", " : "");
			ast_print_value(b, &p->vals[i]);
		}
		sb_printf(b, ")");
		break;
	case P_MATCH:
		sb_printf(b, "%s ~ ", p->f.name);
		sb_quote(b, p->vals[0].s);
		break;
	}
	if (paren)
		sb_printf(b, ")");
}

/* Append an item with its AS name. */
static void ast_print_item(struct sbuf *b, const struct item *it)
{
	char *t = ast_item_text(it);

	sb_printf(b, "%s%s", t, it->base ? "/base" : "");
	free(t);
	if (it->as)
		sb_printf(b, " as %s", it->as);
}

char *query_text(const struct query *q)
{
	struct sbuf b = {0};
	size_t i;

	sb_printf(&b, "%s", "");
	if (q->table)
		sb_printf(&b, " from %s", q->table);
	if (q->where) {
		sb_printf(&b, " where ");
		ast_print_pred(&b, q->where, 0);
	}
	if (q->has_group) {
		sb_printf(&b, " group by");
		if (q->bucket_ns)
			sb_printf(&b, " time(%s)%s", q->bucket_raw, q->ngroup ? "," : "");
		for (i = 0; i < q->ngroup; i++)
			sb_printf(&b, "%s %s", i ? "," : "", q->group[i].name);
	}
	if (q->has_show) {
		sb_printf(&b, " show");
		for (i = 0; i < q->nshow; i++) {
			sb_printf(&b, "%s ", i ? "," : "");
			ast_print_item(&b, &q->show[i]);
		}
	}
	if (q->has_order) {
		sb_printf(&b, " order by ");
		ast_print_item(&b, &q->order);
		if (q->dir != DIR_DEFAULT)
			sb_printf(&b, q->dir == DIR_ASC ? " asc" : " desc");
	}
	if (q->has_limit)
		sb_printf(&b, " limit %llu", (unsigned long long)q->limit);
	for (i = 0; i < OPT_COUNT; i++) {
		if (!(q->optset & (1u << i)))
			continue;
		sb_printf(&b, " %s ", ast_opt_names[i]);
		if (1u << i == OPT_BASELINE)
			sb_quote(&b, q->opts.baseline);
		else
			sb_printf(&b, "%s", q->optraw[i]);
	}
	memmove(b.s, b.s + (b.n ? 1 : 0), b.n + (b.n ? 0 : 1));
	return b.s;
}

/* Return the FROM table, or NULL. */
const char *query_table(const struct query *q)
{
	return q->table;
}

bool query_option_given(const struct query *q, const char *name)
{
	int i;

	for (i = 0; i < OPT_COUNT; i++)
		if (!strcmp(ast_opt_names[i], name))
			return q->optset & (1u << i);
	return false;
}

char *query_options_written(const struct query *q, unsigned mask)
{
	unsigned want = (mask & QOK_KERNEL ? OPT_SAMPLE | OPT_THRESHOLD | OPT_BUFFER : 0) |
			(mask & QOK_TICK ? OPT_EVERY : 0) |
			(mask & QOK_VIEW ? OPT_WINDOW | OPT_BASELINE | OPT_SINCE | OPT_UNTIL : 0);
	struct sbuf b = {0};
	int i;

	for (i = 0; i < OPT_COUNT; i++) {
		if (!(q->optset & want & (1u << i)))
			continue;
		sb_printf(&b, "%s%s ", b.n ? ", " : "", ast_opt_names[i]);
		if (1u << i == OPT_BASELINE)
			sb_quote(&b, q->opts.baseline);
		else
			sb_printf(&b, "%s", q->optraw[i]);
	}
	return b.s;
}

/* Return the options (defaults where not written). */
const struct query_opts *query_options(const struct query *q)
{
	return &q->opts;
}
