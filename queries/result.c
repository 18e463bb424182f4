/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Results: free them and print them as aligned text, JSON or CSV.
 *
 * JSON is one object per line (JSON Lines), keyed by column name: integers
 * as numbers (durations in ns, sizes in bytes), real durations and sizes
 * rounded to integers, other reals with up to 3 decimals, null for no
 * value, dist() as {"count":N,"buckets":[[low,count],...]}.  BASELINE ratios
 * are reals ("p99(lat)/base": 3.52); text shows them as 3.52x.  CSV has a
 * header row, the same numbers, RFC 4180 quoting, and empty fields for null.
 * JSON and CSV are valid UTF-8 (a byte that starts no well-formed sequence
 * is U+FFFD); text gives strings whole, stray bytes as U+FFFD and control
 * characters as '?', and pads by the columns a terminal shows, not bytes.
 * GROUP BY time(...)'s time column is local time: "2026-11-25 10:00:10" as
 * text, RFC 3339 with the offset ("2026-11-25T10:00:10+01:00") in JSON
 * (a string) and CSV.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../core/fmt.h"
#include "../core/json.h"
#include "../core/utf8.h"
#include "../core/xalloc.h"
#include "ast.h"
#include "qtime.h"

/* Free a result and every value it owns. */
void result_free(struct result *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nrows * r->ncols; i++) {
		free(r->vals[i].s);
		hist_free(r->vals[i].h);
	}
	for (i = 0; i < r->ncols; i++)
		free(r->cols[i].name);
	free(r->cols);
	free(r->vals);
	free(r->table);
	free(r);
}

/* Print a real with up to 3 decimals, without trailing zeros. */
static void result_real(FILE *out, double d)
{
	char buf[64];
	size_t n;

	snprintf(buf, sizeof(buf), "%.3f", d);
	n = strlen(buf);
	while (n && buf[n - 1] == '0')
		buf[--n] = 0;
	if (n && buf[n - 1] == '.')
		buf[--n] = 0;
	fputs(strcmp(buf, "-0") ? buf : "0", out);
}

/* Print a histogram as a JSON object of its non-empty buckets. */
static void result_json_hist(FILE *out, const struct hist *h)
{
	uint32_t i;
	bool first = true;

	fprintf(out, "{\"count\":%llu,\"buckets\":[", (unsigned long long)h->count);
	for (i = 0; i < LH_NBUCKETS; i++) {
		if (!h->b[i])
			continue;
		fprintf(out, "%s[%llu,%llu]", first ? "" : ",",
			(unsigned long long)lh_bucket_low(i), (unsigned long long)h->b[i]);
		first = false;
	}
	fputs("]}", out);
}

/* Print a number as JSON and CSV both show it. */
static void result_number(FILE *out, const struct result_col *c, const struct result_val *v)
{
	if (!c->real)
		fprintf(out, "%llu", (unsigned long long)v->u);
	else if (c->type == FT_DUR || c->type == FT_SIZE)
		fprintf(out, "%.0f", round(v->d));
	else
		result_real(out, v->d);
}

/* Print one value as JSON. */
static void result_json_val(FILE *out, const struct result_col *c, const struct result_val *v)
{
	char t[QTIME_BUF];

	if (v->null)
		fputs("null", out);
	else if (c->time)
		json_str(out, qtime_format(v->u, true, t, sizeof(t)));
	else if (c->type == FT_STR || c->type == FT_IP)
		json_str(out, v->s ? v->s : "");
	else if (c->type == FT_HIST)
		result_json_hist(out, v->h);
	else
		result_number(out, c, v);
}

/* Print a CSV field, quoting it when it holds a comma, quote or newline;
 * valid UTF-8 whatever s holds (a byte that starts no well-formed
 * sequence is U+FFFD, as in JSON). */
static void result_csv_str(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	bool quote = strpbrk(s, ",\"\r\n") != NULL;

	if (quote)
		fputc('"', out);
	while (*p) {
		int n = utf8_len(p);

		if (*p == '"')
			fputc('"', out);
		if (n)
			fwrite(p, 1, (size_t)n, out);
		else
			fputs("\xef\xbf\xbd", out);
		p += n ? n : 1;
	}
	if (quote)
		fputc('"', out);
}

/* Print one value as CSV. */
static void result_csv_val(FILE *out, const struct result_col *c, const struct result_val *v)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *m;

	char t[QTIME_BUF];

	if (v->null)
		return;
	if (c->time) {
		fputs(qtime_format(v->u, true, t, sizeof(t)), out);
	} else if (c->type == FT_STR || c->type == FT_IP) {
		result_csv_str(out, v->s ? v->s : "");
	} else if (c->type == FT_HIST) {
		m = open_memstream(&buf, &n);
		if (!m)
			return;
		result_json_hist(m, v->h);
		fclose(m);
		result_csv_str(out, buf);
		free(buf);
	} else {
		result_number(out, c, v);
	}
}

/*
 * Return one cell as text (malloc'd): a string whole, made safe for a
 * terminal (utf8_clean); anything else as the TUI formats it.
 */
static char *result_text_cell(const struct result *r, size_t col, const struct result_val *v)
{
	const struct result_col *c = &r->cols[col];
	char b[64];

	if (!v->null && !c->time && (c->type == FT_STR || c->type == FT_IP))
		return utf8_clean(v->s);
	result_format_val(r, col, v, b, sizeof(b));
	return utf8_clean(b);
}

/* Print rows as aligned text with a header: columns as wide as a terminal
 * shows their widest cell, strings never cut. */
static void result_text(FILE *out, const struct result *r)
{
	size_t i, j, n = (r->nrows + 1) * r->ncols, *w = xcalloc(r->ncols + 1, sizeof(*w));
	char **cells = xcalloc(n + 1, sizeof(*cells));
	size_t *cw = xcalloc(n + 1, sizeof(*cw));	/* each cell's columns */

	for (i = 0; i <= r->nrows; i++)
		for (j = 0; j < r->ncols; j++) {
			size_t c = i * r->ncols + j;

			cells[c] = i ? result_text_cell(r, j, &result_row(r, i - 1)[j])
				     : utf8_clean(r->cols[j].name);
			cw[c] = (size_t)utf8_width(cells[c]);
			if (cw[c] > w[j])
				w[j] = cw[c];
		}
	for (i = 0; i <= r->nrows; i++) {
		for (j = 0; j < r->ncols; j++) {
			const char *s = cells[i * r->ncols + j];
			bool left = r->cols[j].type == FT_STR || r->cols[j].type == FT_IP ||
				    r->cols[j].time;
			bool last = j + 1 == r->ncols;
			size_t pad = w[j] - cw[i * r->ncols + j];

			fprintf(out, "%s", j ? "  " : "");
			if (!left)
				fprintf(out, "%*s", (int)pad, "");
			fputs(s, out);
			if (left && !last)
				fprintf(out, "%*s", (int)pad, "");
		}
		fputc('\n', out);
	}
	for (i = 0; i < n; i++)
		free(cells[i]);
	free(cells);
	free(cw);
	free(w);
}

void result_print(FILE *out, const struct result *r, enum result_format fmt)
{
	size_t i, j;

	if (fmt == RF_TEXT) {
		result_text(out, r);
		return;
	}
	if (fmt == RF_CSV) {
		for (j = 0; j < r->ncols; j++) {
			fputs(j ? "," : "", out);
			result_csv_str(out, r->cols[j].name);
		}
		fputc('\n', out);
	}
	for (i = 0; i < r->nrows; i++) {
		const struct result_val *row = result_row(r, i);

		if (fmt == RF_JSON)
			fputc('{', out);
		for (j = 0; j < r->ncols; j++) {
			if (fmt == RF_CSV) {
				fputs(j ? "," : "", out);
				result_csv_val(out, &r->cols[j], &row[j]);
				continue;
			}
			fputs(j ? "," : "", out);
			json_str(out, r->cols[j].name);
			fputc(':', out);
			result_json_val(out, &r->cols[j], &row[j]);
		}
		fputs(fmt == RF_CSV ? "\n" : "}\n", out);
	}
}

void result_format_val(const struct result *r, size_t col, const struct result_val *v,
		       char *buf, size_t n)
{
	const struct result_col *c = &r->cols[col];
	uint64_t u = c->real ? (uint64_t)llround(v->d < 0 ? 0 : v->d) : v->u;
	char tmp[FMT_BUF];

	if (!n)
		return;
	if (v->null) {
		snprintf(buf, n, "-");
		return;
	}
	if (c->time) {
		qtime_format(v->u, false, buf, n);
		return;
	}
	if (c->ratio) {
		snprintf(buf, n, v->d < 10 ? "%.2fx" : v->d < 1000 ? "%.1fx" : "%.0fx", v->d);
		return;
	}
	switch (c->type) {
	case FT_STR:
	case FT_IP:
		snprintf(buf, n, "%s", v->s ? v->s : "");
		return;
	case FT_HIST:
		snprintf(buf, n, "%s", fmt_count(v->h ? v->h->count : 0, tmp, sizeof(tmp)));
		return;
	case FT_DUR:
		snprintf(buf, n, "%s", fmt_dur(u, tmp, sizeof(tmp)));
		return;
	case FT_SIZE:
		snprintf(buf, n, "%s", fmt_size(u, tmp, sizeof(tmp)));
		return;
	default:
		if (c->key)
			snprintf(buf, n, "%llu", (unsigned long long)v->u);
		else if (c->real && v->d < 10)
			snprintf(buf, n, "%.2f", v->d);
		else if (c->real && v->d < 1000)
			snprintf(buf, n, "%.1f", v->d);
		else
			snprintf(buf, n, "%s", fmt_count(u, tmp, sizeof(tmp)));
	}
}
