/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Query results as Prometheus and OpenMetrics text (see expose.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../core/utf8.h"
#include "../core/xalloc.h"
#include "expose.h"

/* The admitted rows: their label text, in an open-addressing hash that
 * never holds more than max_series (+1 free slot at least). */
struct expose_keys {
	size_t n, cap;
	char **slot;
};

enum fam_kind { FAM_COUNTER, FAM_GAUGE, FAM_HIST };

struct expose_keys *expose_keys_new(void)
{
	struct expose_keys *k = xcalloc(1, sizeof(*k));

	k->cap = 64;
	k->slot = xcalloc(k->cap, sizeof(*k->slot));
	return k;
}

void expose_keys_free(struct expose_keys *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->cap; i++)
		free(k->slot[i]);
	free(k->slot);
	free(k);
}

/* FNV-1a of s. */
static uint64_t keys_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* The slot that holds s, or the empty one where it would go. */
static size_t keys_find(const struct expose_keys *k, const char *s)
{
	size_t i = (size_t)keys_hash(s) & (k->cap - 1);

	while (k->slot[i] && strcmp(k->slot[i], s))
		i = (i + 1) & (k->cap - 1);
	return i;
}

/* Add s (a copy) to k. */
static void keys_add(struct expose_keys *k, const char *s)
{
	size_t i;

	if (2 * (k->n + 1) > k->cap) {
		struct expose_keys big = {k->n, k->cap * 2, xcalloc(k->cap * 2, sizeof(char *))};

		for (i = 0; i < k->cap; i++)
			if (k->slot[i])
				big.slot[keys_find(&big, k->slot[i])] = k->slot[i];
		free(k->slot);
		*k = big;
	}
	k->slot[keys_find(k, s)] = xstrdup(s);
	k->n++;
}

/* Append s to out sanitized for a metric or label name: [a-zA-Z0-9_],
 * runs of anything else one '_', no '_' at either end. */
static void put_sanitized(FILE *out, const char *s)
{
	bool under = false, any = false;

	for (; *s; s++) {
		bool ok = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			  (*s >= '0' && *s <= '9');

		if (!ok) {
			under = any;
			continue;
		}
		if (under)
			fputc('_', out);
		fputc(*s, out);
		under = false;
		any = true;
	}
	if (!any)
		fputc('x', out);
}

/*
 * Append s escaped as the exposition formats want, valid UTF-8 (a byte that
 * is not becomes U+FFFD): backslash and newline always, '"' when quote is
 * set (label values always, HELP text in OpenMetrics).
 */
static void put_escaped(FILE *out, const char *s, bool quote)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p) {
		int n = utf8_len(p);

		if (*p == '\\' || (quote && *p == '"'))
			fprintf(out, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", out);
		else if (n == 0)
			fputs("\xef\xbf\xbd", out);
		else
			fwrite(p, 1, (size_t)n, out);
		p += n ? n : 1;
	}
}

/* Append ns nanoseconds as seconds, exactly ("0.000000127", "3", "1.5"). */
static void put_seconds(FILE *out, uint64_t ns)
{
	char frac[16];
	int n;

	snprintf(frac, sizeof(frac), "%09llu", (unsigned long long)(ns % 1000000000ULL));
	for (n = 9; n > 0 && frac[n - 1] == '0'; n--)
		;
	fprintf(out, "%llu", (unsigned long long)(ns / 1000000000ULL));
	if (n)
		fprintf(out, ".%.*s", n, frac);
}

/* Append a column's value in its family's unit. */
static void put_value(FILE *out, const struct result_col *c, const struct result_val *v)
{
	if (!c->real) {
		if (c->type == FT_DUR)
			put_seconds(out, v->u);
		else
			fprintf(out, "%llu", (unsigned long long)v->u);
		return;
	}
	fprintf(out, "%.10g", c->type == FT_DUR ? v->d / 1e9 : v->d);
}

/* The family kind of column c, or -1 when it is no metric (a key, text). */
static int fam_kind(const struct result_col *c)
{
	if (c->key || c->type == FT_STR || c->type == FT_IP)
		return -1;
	if (c->type == FT_HIST)
		return FAM_HIST;
	return c->cumulative ? FAM_COUNTER : FAM_GAUGE;
}

/* The unit of column c's family: "seconds", "bytes" or NULL. */
static const char *fam_unit(const struct result_col *c)
{
	if (c->ratio)
		return NULL;
	if (c->type == FT_DUR || c->type == FT_HIST)
		return "seconds";
	if (c->type == FT_SIZE)
		return "bytes";
	return NULL;
}

/* The family name of column c (without _total), as a new string: base
 * alone, or (full, when base collides with another column's) the whole
 * column name. */
static char *fam_name(const char *name, const struct result_col *c, bool full)
{
	const char *col = c->name, *unit = fam_unit(c);
	size_t len = strlen(col);
	char *base, *buf = NULL;
	size_t n = 0;
	FILE *m;

	if (full)
		base = xstrdup(col);
	else if (!strcmp(col, "count"))
		base = xstrdup("events");
	else if ((!strncmp(col, "sum(", 4) || !strncmp(col, "dist(", 5)) && col[len - 1] == ')')
		base = xstrndup(strchr(col, '(') + 1, len - 2 - (size_t)(strchr(col, '(') - col));
	else
		base = xstrdup(col);
	m = open_memstream(&buf, &n);
	if (!m)
		abort();
	fputs("latop_", m);
	put_sanitized(m, name);
	fputc('_', m);
	put_sanitized(m, base);
	if (unit)
		fprintf(m, "_%s", unit);
	fclose(m);
	free(base);
	return buf;
}

/* Append the label text of row (its key columns), without braces. */
static void put_labels(FILE *out, const struct result *r, const struct result_val *row,
		       bool other)
{
	bool first = true;

	for (size_t j = 0; j < r->ncols; j++) {
		const struct result_col *c = &r->cols[j];
		bool text = c->type == FT_STR || c->type == FT_IP;

		if (!c->key)
			continue;
		fputs(first ? "" : ",", out);
		first = false;
		put_sanitized(out, c->name);
		fputs("=\"", out);
		if (other)
			fputs(text ? TABLE_OTHER : "0", out);
		else if (row[j].null)
			;
		else if (text)
			put_escaped(out, row[j].s, true);
		else
			fprintf(out, "%llu", (unsigned long long)row[j].u);
		fputc('"', out);
	}
}

/* Append a sample line: name suffix {labels[,extra]} value-follows. */
static void put_series(FILE *out, const char *fam, const char *suffix, const char *labels,
		       const char *extra)
{
	fprintf(out, "%s%s", fam, suffix);
	if (*labels || extra)
		fprintf(out, "{%s%s%s}", labels, *labels && extra ? "," : "", extra ? extra : "");
	fputc(' ', out);
}

/* Append histogram h's samples under family fam. */
static void put_hist(FILE *out, const char *fam, const char *labels, const struct hist *h)
{
	uint64_t cum = 0;
	uint32_t i = 0;
	unsigned e, k;
	char *le = NULL;
	size_t lelen = 0;

	for (e = EXPOSE_LOW_EXP; e < LH_MAX_EXP; e++)
		for (k = 0; k < EXPOSE_PER_OCTAVE; k++) {
			uint64_t bound = ((uint64_t)LH_SUB + k * (LH_SUB / EXPOSE_PER_OCTAVE))
					 << (e - LH_SUB_BITS);
			FILE *m;

			if (bound > lh_bucket_low(LH_NBUCKETS - 1))
				break;
			for (; i < LH_NBUCKETS && lh_bucket_low(i) < bound; i++)
				cum += h ? h->b[i] : 0;
			m = open_memstream(&le, &lelen);
			if (!m)
				abort();
			fputs("le=\"", m);
			put_seconds(m, bound - 1);
			fputc('"', m);
			fclose(m);
			put_series(out, fam, "_bucket", labels, le);
			fprintf(out, "%llu\n", (unsigned long long)cum);
			free(le);
			le = NULL;
		}
	for (; i < LH_NBUCKETS; i++)
		cum += h ? h->b[i] : 0;
	put_series(out, fam, "_bucket", labels, "le=\"+Inf\"");
	fprintf(out, "%llu\n", (unsigned long long)cum);
	put_series(out, fam, "_sum", labels, NULL);
	put_seconds(out, h ? h->sum : 0);
	fputc('\n', out);
	put_series(out, fam, "_count", labels, NULL);
	fprintf(out, "%llu\n", (unsigned long long)cum);
}

/* The label text of row i, as a new string. */
static char *row_labels(const struct result *r, size_t i, bool other)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);

	if (!m)
		abort();
	put_labels(m, r, other ? NULL : result_row(r, i), other);
	fclose(m);
	return buf;
}

size_t expose_result(FILE *out, const struct result *r, const struct expose_opts *o,
		     struct expose_keys *keys)
{
	size_t max = o->max_series ? o->max_series : EXPOSE_MAX_SERIES;
	const char *name = o->name ? o->name : r->table ? r->table : "query";
	bool *own = xcalloc(r->nrows + 1, sizeof(*own));
	char **labels = xcalloc(r->nrows + 1, sizeof(*labels));
	char **fams = xcalloc(r->ncols + 1, sizeof(*fams));
	struct result_val *other = xcalloc(r->ncols + 1, sizeof(*other));
	char *other_labels = row_labels(r, 0, true);
	size_t i, j, nother = 0, admitted = 0;
	bool haskey = false;

	for (j = 0; j < r->ncols; j++)
		haskey |= r->cols[j].key;
	for (i = 0; i < r->nrows; i++) {
		labels[i] = row_labels(r, i, false);
		if (!haskey) {
			own[i] = true;
		} else if (!strcmp(labels[i], other_labels)) {
			/* The table's own overflow row: it joins the overflow series. */
			own[i] = false;
		} else if (keys) {
			if (keys->slot[keys_find(keys, labels[i])]) {
				own[i] = true;
			} else if (keys->n < max) {
				keys_add(keys, labels[i]);
				own[i] = true;
			}
		} else {
			own[i] = admitted < max;
		}
		admitted += own[i];
		if (own[i])
			continue;
		nother++;
		for (j = 0; j < r->ncols; j++) {
			const struct result_val *v = &result_row(r, i)[j];

			if (fam_kind(&r->cols[j]) == FAM_HIST && v->h) {
				if (!other[j].h)
					other[j].h = hist_new();
				hist_merge(other[j].h, v->h);
			} else if (fam_kind(&r->cols[j]) == FAM_COUNTER && !v->null) {
				if (r->cols[j].real)
					other[j].d += v->d;
				else
					other[j].u += v->u;
			}
		}
	}
	/* Family names, the whole column name where two would collide. */
	for (j = 0; j < r->ncols; j++) {
		if (fam_kind(&r->cols[j]) < 0)
			continue;
		fams[j] = fam_name(name, &r->cols[j], false);
		for (size_t k = 0; k < j; k++)
			if (fams[k] && !strcmp(fams[k], fams[j])) {
				free(fams[j]);
				fams[j] = fam_name(name, &r->cols[j], true);
				break;
			}
	}
	for (j = 0; j < r->ncols; j++) {
		const struct result_col *c = &r->cols[j];
		int kind = fam_kind(c);
		const char *unit = fam_unit(c);
		const char *suffix = kind == FAM_COUNTER ? "_total" : "";

		if (kind < 0)
			continue;
		/* Prometheus text names a counter's family by its sample name. */
		fprintf(out, "# HELP %s%s ", fams[j], o->openmetrics ? "" : suffix);
		put_escaped(out, c->name, o->openmetrics);
		if (o->help) {
			fputs(" of latop query: ", out);
			put_escaped(out, o->help, o->openmetrics);
		}
		fprintf(out, "\n# TYPE %s%s %s\n", fams[j], o->openmetrics ? "" : suffix,
			kind == FAM_HIST ? "histogram" : kind == FAM_COUNTER ? "counter" : "gauge");
		if (o->openmetrics && unit)
			fprintf(out, "# UNIT %s %s\n", fams[j], unit);
		for (i = 0; i <= r->nrows; i++) {
			const struct result_val *v = i < r->nrows ? &result_row(r, i)[j] : &other[j];
			const char *l = i < r->nrows ? labels[i] : other_labels;

			if (i < r->nrows ? !own[i] : !nother || kind == FAM_GAUGE)
				continue;
			if (kind == FAM_HIST) {
				put_hist(out, fams[j], l, v->null ? NULL : v->h);
				continue;
			}
			if (v->null)
				continue;
			put_series(out, fams[j], suffix, l, NULL);
			put_value(out, c, v);
			fputc('\n', out);
		}
	}
	for (i = 0; i < r->nrows; i++)
		free(labels[i]);
	for (j = 0; j < r->ncols; j++) {
		free(fams[j]);
		hist_free(other[j].h);
	}
	free(other_labels);
	free(other);
	free(fams);
	free(labels);
	free(own);
	return nother;
}

void expose_end(FILE *out, bool openmetrics)
{
	if (openmetrics)
		fputs("# EOF\n", out);
}

const char *expose_content_type(bool openmetrics)
{
	return openmetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
			   : "text/plain; version=0.0.4; charset=utf-8";
}
