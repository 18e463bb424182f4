/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The table of the current result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/xalloc.h"
#include "draw.h"
#include "table_view.h"

#define KEY_W_MAX 40		/* widest a key column gets */
#define MEASURE_ROWS 1000	/* rows measured to fit column widths */

/* Start with no selection and no layout. */
void table_view_init(struct table_view *tv)
{
	memset(tv, 0, sizeof(*tv));
	tv->sort_col = -1;
}

/* Free the remembered key and layout. */
void table_view_done(struct table_view *tv)
{
	free(tv->sel_key);
	free(tv->col_x);
	free(tv->col_w);
	table_view_init(tv);
}

/* Format cell (i, c) of r into buf. */
static void cell_text(const struct result *r, size_t i, size_t c, char *buf, size_t n)
{
	result_format_val(r, c, result_row(r, i) + c, buf, n);
}

/* Row i's key tuple as one string (caller frees). */
static char *row_key(const struct result *r, size_t i)
{
	char buf[256], *key = xstrdup(""), *k;
	size_t c;

	for (c = 0; c < r->ncols; c++) {
		if (!r->cols[c].key)
			continue;
		cell_text(r, i, c, buf, sizeof(buf));
		k = xasprintf("%s%s\x1f", key, buf);
		free(key);
		key = k;
	}
	return key;
}

/* Remember the selected row's key tuple. */
static void remember(struct table_view *tv, const struct result *r)
{
	free(tv->sel_key);
	tv->sel_key = r->nrows ? row_key(r, tv->sel) : NULL;
}

/* Find the sort column in the canonical query text's ORDER BY (bind's default without). */
static void sort_from_text(struct table_view *tv, const struct result *r, const char *text)
{
	const char *p = NULL, *q, *rest;
	size_t c, best_len = 0;

	tv->sort_col = -1;
	tv->sort_desc = false;
	for (q = text; q && (q = strcasestr(q, "order by ")); q++)
		p = q + strlen("order by ");
	if (!p) {
		for (c = 0; c < r->ncols && r->cols[c].key; c++)
			;
		tv->sort_col = c < r->ncols ? (int)c : (r->ncols ? 0 : -1);
		tv->sort_desc = c < r->ncols;
		return;
	}
	for (c = 0; c < r->ncols; c++) {
		size_t n = strlen(r->cols[c].name);

		if (n > best_len && !strncasecmp(p, r->cols[c].name, n) &&
		    (p[n] == '\0' || p[n] == ' ')) {
			tv->sort_col = (int)c;
			best_len = n;
		}
	}
	rest = p + best_len;
	while (*rest == ' ')
		rest++;
	tv->sort_desc = !strncasecmp(rest, "desc", 4);
}

void table_view_sync(struct table_view *tv, const struct result *r, const char *query_text)
{
	size_t i;

	sort_from_text(tv, r, query_text);
	if (!r->nrows) {
		tv->sel = tv->top = 0;
		return;
	}
	if (tv->sel_key) {
		for (i = 0; i < r->nrows; i++) {
			char *k = row_key(r, i);
			bool same = !strcmp(k, tv->sel_key);

			free(k);
			if (same) {
				tv->sel = i;
				return;
			}
		}
	}
	if (tv->sel >= r->nrows)
		tv->sel = r->nrows - 1;
	remember(tv, r);
}

void table_view_select(struct table_view *tv, const struct result *r, size_t i)
{
	if (!r->nrows)
		return;
	tv->sel = i < r->nrows ? i : r->nrows - 1;
	remember(tv, r);
}

void table_view_move(struct table_view *tv, const struct result *r, long delta)
{
	long i = (long)tv->sel + delta;

	table_view_select(tv, r, i < 0 ? 0 : (size_t)i);
}

void table_view_hscroll(struct table_view *tv, const struct result *r, int delta)
{
	size_t c, nvals = 0;

	for (c = 0; c < r->ncols; c++)
		nvals += !r->cols[c].key;
	if (delta < 0 && tv->hscroll > 0)
		tv->hscroll--;
	else if (delta > 0 && tv->hscroll + 1 < nvals)
		tv->hscroll++;
}

int table_view_hit(const struct table_view *tv, int x)
{
	size_t c;

	for (c = 0; c < tv->ncols; c++)
		if (tv->col_w[c] > 0 && x >= tv->col_x[c] && x < tv->col_x[c] + tv->col_w[c] + 1)
			return (int)c;
	return -1;
}

/* Fit each column's width to its name and the values of the first rows. */
static void widths_fit(const struct table_view *tv, const struct result *r, int *wd)
{
	char buf[256];
	size_t c, i, n = r->nrows < MEASURE_ROWS ? r->nrows : MEASURE_ROWS;

	for (c = 0; c < r->ncols; c++) {
		wd[c] = draw_width(r->cols[c].name) + ((int)c == tv->sort_col);
		for (i = 0; i < n; i++) {
			int cw;

			cell_text(r, i, c, buf, sizeof(buf));
			cw = draw_width(buf);
			if (cw > wd[c])
				wd[c] = cw;
		}
		if (r->cols[c].key && wd[c] > KEY_W_MAX)
			wd[c] = KEY_W_MAX;
	}
}

/* Lay the columns out from x = 0: keys always, values from hscroll on. */
static void layout(struct table_view *tv, const struct result *r, const int *wd, int w)
{
	size_t c, nval = 0;
	int x = 0;

	tv->ncols = r->ncols;
	tv->col_x = xreallocarray(tv->col_x, r->ncols ? r->ncols : 1, sizeof(int));
	tv->col_w = xreallocarray(tv->col_w, r->ncols ? r->ncols : 1, sizeof(int));
	for (c = 0; c < r->ncols; c++) {
		tv->col_x[c] = x;
		tv->col_w[c] = 0;
		if (!r->cols[c].key && nval++ < tv->hscroll)
			continue;
		if (x >= w)
			continue;
		tv->col_w[c] = x + wd[c] > w ? w - x : wd[c];
		x += wd[c] + 1;
	}
}

/* Draw the header row with the sort mark. */
static void header_row(const struct table_view *tv, const struct result *r, int y, int w)
{
	char buf[300];
	size_t c;

	draw_fill(y, 0, w, theme_attr(ROLE_TABLE_HEADER));
	for (c = 0; c < r->ncols; c++) {
		bool sorted = (int)c == tv->sort_col;
		attr_t a = theme_attr(sorted ? ROLE_TABLE_SORT : ROLE_TABLE_HEADER);

		if (!tv->col_w[c])
			continue;
		snprintf(buf, sizeof(buf), "%s%s", r->cols[c].name,
			 sorted ? draw_glyph(tv->sort_desc ? G_DOWN : G_UP) : "");
		if (r->cols[c].key)
			draw_text(y, tv->col_x[c], tv->col_w[c], buf, a);
		else
			draw_rtext(y, tv->col_x[c], tv->col_w[c], buf, a);
	}
}

/* Draw row i at line y. */
/* Return whether rows i and j have the same keys but the part key. */
static bool same_but_part(const struct result *r, size_t i, size_t j)
{
	const struct result_val *a = result_row(r, i), *b = result_row(r, j);
	char x[256], y[256];
	size_t c;

	for (c = 0; c < r->ncols; c++) {
		if (!r->cols[c].key || r->cols[c].part)
			continue;
		cell_text(r, i, c, x, sizeof(x));
		cell_text(r, j, c, y, sizeof(y));
		if (strcmp(x, y) || a[c].null != b[c].null)
			return false;
	}
	return true;
}

/*
 * Return the BASELINE ratio column to mark in row i as the stage that grew
 * most, or -1: among the row's stage ratios the largest; or, when rows are
 * stages (the part key is a column), the row's first ratio of a duration if
 * it is the largest of the rows with the same other keys.  Only ratios
 * above 1.
 */
static long top_stage_ratio(const struct result *r, size_t i)
{
	const struct result_val *row = result_row(r, i);
	long best = -1, first = -1;
	bool by_part = false;
	size_t c, j;

	for (c = 0; c < r->ncols; c++) {
		if (r->cols[c].key && r->cols[c].part)
			by_part = true;
		if (!r->cols[c].ratio || row[c].null)
			continue;
		if (first < 0 && c > 0 && r->cols[c - 1].type == FT_DUR)
			first = (long)c;
		if (r->cols[c].part && (best < 0 || row[c].d > row[best].d))
			best = (long)c;
	}
	if (by_part && best < 0 && first >= 0) {
		for (j = 0; j < r->nrows; j++) {
			const struct result_val *o = result_row(r, j) + first;

			if (j != i && !o->null && o->d > row[first].d && same_but_part(r, i, j))
				return -1;
		}
		best = first;
	}
	return best >= 0 && row[best].d > 1.0 ? best : -1;
}

static void body_row(const struct table_view *tv, const struct result *r, size_t i, int y, int w)
{
	attr_t a = theme_attr(i == tv->sel ? ROLE_SELECTION : ROLE_ROW);
	long top = top_stage_ratio(r, i);
	char buf[256];
	size_t c;

	draw_fill(y, 0, w, a);
	for (c = 0; c < r->ncols; c++) {
		const struct result_val *v = result_row(r, i) + c;
		attr_t ca = a;

		if (!tv->col_w[c])
			continue;
		if (v->null && i != tv->sel)
			ca = theme_attr(ROLE_ROW_DIM);
		if ((long)c == top)	/* the stage that grew most against BASELINE */
			ca = theme_attr(ROLE_METER_BAD) | A_BOLD;
		cell_text(r, i, c, buf, sizeof(buf));
		if (r->cols[c].key)
			draw_text(y, tv->col_x[c], tv->col_w[c], buf, ca);
		else
			draw_rtext(y, tv->col_x[c], tv->col_w[c], buf, ca);
	}
}

void table_view_draw(struct table_view *tv, const struct result *r, int y, int h, int w)
{
	int *wd, line;
	size_t i;

	tv->y_header = y;
	tv->height = h - 1;
	if (h < 1)
		return;
	wd = xcalloc(r->ncols ? r->ncols : 1, sizeof(int));
	widths_fit(tv, r, wd);
	layout(tv, r, wd, w);
	free(wd);
	header_row(tv, r, y, w);
	if (tv->height < 1)
		return;
	if (tv->sel < tv->top)
		tv->top = tv->sel;
	if (tv->sel >= tv->top + (size_t)tv->height)
		tv->top = tv->sel - (size_t)tv->height + 1;
	if (!r->nrows)
		draw_text(y + 1, 1, w - 1, "(no rows in this window)", theme_attr(ROLE_ROW_DIM));
	for (line = 0, i = tv->top; line < tv->height && i < r->nrows; line++, i++)
		body_row(tv, r, i, y + 1 + line, w);
}

/* Whether a key column of row i contains text (case-insensitive). */
static bool row_matches(const struct result *r, size_t i, const char *text)
{
	char buf[256];
	size_t c;

	for (c = 0; c < r->ncols; c++) {
		if (!r->cols[c].key)
			continue;
		cell_text(r, i, c, buf, sizeof(buf));
		if (strcasestr(buf, text))
			return true;
	}
	return false;
}

bool table_view_search(struct table_view *tv, const struct result *r, const char *text,
		       int dir, bool skip)
{
	size_t k, i, n = r->nrows, start = skip ? 1 : 0;

	if (!n || !*text)
		return false;
	for (k = start; k < start + n; k++) {
		i = dir > 0 ? (tv->sel + k) % n : (tv->sel + n - k % n) % n;
		if (row_matches(r, i, text)) {
			table_view_select(tv, r, i);
			return true;
		}
	}
	return false;
}

/* Write v as a query literal of type t into buf. */
static void literal(const struct result *r, size_t c, const struct result_val *v,
		    char *buf, size_t n)
{
	size_t o = 0;
	const char *s;

	switch (r->cols[c].type) {
	case FT_U64:
		snprintf(buf, n, "%llu", (unsigned long long)v->u);
		break;
	case FT_DUR:
		snprintf(buf, n, "%lluns", (unsigned long long)v->u);
		break;
	case FT_SIZE:
		snprintf(buf, n, "%lluB", (unsigned long long)v->u);
		break;
	case FT_STR:
		buf[o++] = '\'';
		for (s = v->s ? v->s : ""; *s && o + 4 < n; s++) {
			if (*s == '\'' || *s == '\\')
				buf[o++] = '\\';
			buf[o++] = *s;
		}
		buf[o++] = '\'';
		buf[o] = '\0';
		break;
	default:
		result_format_val(r, c, v, buf, n);
		break;
	}
}

char *table_view_where(const struct result *r, size_t i)
{
	char buf[300], *where = NULL, *w;
	size_t c;

	for (c = 0; c < r->ncols; c++) {
		if (!r->cols[c].key || r->cols[c].time)	/* time(...)'s window: no field */
			continue;
		literal(r, c, result_row(r, i) + c, buf, sizeof(buf));
		w = where ? xasprintf("%s and %s == %s", where, r->cols[c].name, buf)
			  : xasprintf("%s == %s", r->cols[c].name, buf);
		free(where);
		where = w;
	}
	return where;
}
