/*
 * The detail pane of one row, generic over tables: FT_HIST fields give the
 * latency histogram, FF_SUM FT_DUR fields the time breakdown, and the
 * "<table minus s>_events" table the recent single events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fmt.h"
#include "../core/xalloc.h"
#include "detail.h"
#include "draw.h"
#include "table_view.h"

#define EVENTS_MAX 32
#define GROUPS_MAX 4

/* A run of breakdown columns whose values add up to the total. */
struct group {
	size_t first, n;
};

static const struct {
	const char *label;
	double q;
} marks[] = {
	{"p50", 50}, {"p90", 90}, {"p99", 99}, {"p99.9", 99.9}, {"p99.99", 99.99},
};

/* Start closed and empty. */
void detail_init(struct detail *d)
{
	memset(d, 0, sizeof(*d));
}

/* Forget the row and everything computed for it. */
void detail_clear(struct detail *d)
{
	size_t i;

	result_free(d->res);
	d->res = NULL;
	free(d->fields);
	d->fields = NULL;
	free(d->where);
	d->where = NULL;
	free(d->error);
	d->error = NULL;
	for (i = 0; i < d->nevents; i++)
		free(d->events[i]);
	free(d->events);
	d->events = NULL;
	d->nevents = 0;
}

/* Free everything. */
void detail_done(struct detail *d)
{
	detail_clear(d);
}

/* Split v[0..n) into runs of two or more that each sum to total (the run
 * closest to it, within 1%); return how many. */
static size_t partition(const uint64_t *v, size_t n, uint64_t total, struct group *g, size_t max)
{
	size_t start = 0, ng = 0, e, best_e;
	uint64_t sum, diff, best;

	if (!total)
		return 0;
	while (start + 1 < n && ng < max) {
		best = UINT64_MAX;
		best_e = start;
		for (sum = v[start], e = start + 1; e < n && sum <= total + total / 100; e++) {
			sum += v[e];
			diff = sum > total ? sum - total : total - sum;
			if (diff < best) {
				best = diff;
				best_e = e;
			}
		}
		if (best <= total / 100) {
			g[ng++] = (struct group){start, best_e - start + 1};
			start = best_e + 1;
		} else {
			start++;
		}
	}
	return ng;
}

/* Whether events row cells match the keys of row i of r. */
static bool event_matches(const struct schema *es, const union cell *cells,
			  const struct result *r, size_t i)
{
	size_t c;

	for (c = 0; c < r->ncols; c++) {
		const struct result_val *v = result_row(r, i) + c;
		int f;

		if (!r->cols[c].key || (f = schema_field(es, r->cols[c].name)) < 0)
			continue;
		switch (es->fields[f].type) {
		case FT_STR:
			if (strcmp(cells[f].s ? cells[f].s : "", v->s ? v->s : ""))
				return false;
			break;
		case FT_U64:
		case FT_DUR:
		case FT_SIZE:
			if (cells[f].u != v->u)
				return false;
			break;
		default:
			break;
		}
	}
	return true;
}

/* One event as a line: time, thread, latency, its three biggest components. */
static char *event_line(const struct schema *es, const union cell *cells)
{
	char line[512], a[FMT_BUF], b[FMT_BUF];
	uint64_t v[64], lat = 0;
	int fi[64], ts = schema_field(es, "ts"), tid = schema_field(es, "tid"), latf = -1;
	size_t f, n = 0, k, o = 0, ng;
	struct group g[GROUPS_MAX];

	for (f = 0; f < es->nfields && n < 64; f++) {
		if (es->fields[f].type != FT_DUR)
			continue;
		if (!(es->fields[f].flags & FF_SUM)) {
			if (latf < 0)
				latf = (int)f;
			continue;
		}
		fi[n] = (int)f;
		v[n++] = cells[f].u;
	}
	if (latf >= 0)
		lat = cells[latf].u;
	o += (size_t)snprintf(line + o, sizeof(line) - o, "%s",
			      ts >= 0 ? fmt_time(cells[ts].u, a, sizeof(a)) : "");
	if (tid >= 0)
		o += (size_t)snprintf(line + o, sizeof(line) - o, "  tid %-7llu",
				      (unsigned long long)cells[tid].u);
	o += (size_t)snprintf(line + o, sizeof(line) - o, "  %8s ", fmt_dur(lat, a, sizeof(a)));
	ng = partition(v, n, lat, g, GROUPS_MAX);
	for (k = 0; ng && k < 3; k++) {
		size_t j, best = SIZE_MAX;
		const struct group *gl = &g[ng - 1];

		for (j = gl->first; j < gl->first + gl->n; j++)
			if (v[j] && (best == SIZE_MAX || v[j] > v[best]))
				best = j;
		if (best == SIZE_MAX)
			break;
		o += (size_t)snprintf(line + o, sizeof(line) - o, " %s %s %.0f%%",
				      es->fields[fi[best]].name, fmt_dur(v[best], b, sizeof(b)),
				      lat ? 100.0 * (double)v[best] / (double)lat : 0.0);
		v[best] = 0;
		if (o >= sizeof(line))
			break;
	}
	return xstrdup(line);
}

/* The events schema of table: "syscalls" -> "syscall_events". */
static const struct schema *events_schema(const struct source_info *info, const char *table)
{
	size_t n = strlen(table);
	char name[128];

	snprintf(name, sizeof(name), "%.*s_events", (int)(n && table[n - 1] == 's' ? n - 1 : n), table);
	return source_schema(info, name);
}

/* Collect the newest single events of row i of r from the window. */
static void events_collect(struct detail *d, const struct schema *es, const struct window *w,
			   const struct result *r, size_t i)
{
	size_t t, row;

	d->events = xcalloc(EVENTS_MAX, sizeof(char *));
	for (t = w->nticks; t-- > 0 && d->nevents < EVENTS_MAX;) {
		const struct frame *fr = tick_frame(&w->ticks[t], es->table);

		for (row = fr ? fr->nrows : 0; row-- > 0 && d->nevents < EVENTS_MAX;)
			if (event_matches(fr->schema, frame_row(fr, row), r, i))
				d->events[d->nevents++] = event_line(fr->schema, frame_row(fr, row));
	}
}

/* Build "from T where W show dist(h).., sum(f).." and record each column's field. */
static char *detail_query(struct detail *d, const struct schema *s)
{
	char *q = xasprintf("from %s where %s show", s->table, d->where), *n;
	size_t f, ncols = 0;

	d->fields = xcalloc(s->nfields, sizeof(int));
	for (f = 0; f < s->nfields; f++) {
		const struct field *fd = &s->fields[f];

		if (fd->type != FT_HIST && !(fd->flags & FF_SUM))
			continue;
		n = xasprintf("%s%s %s(%s)", q, ncols ? "," : "",
			      fd->type == FT_HIST ? "dist" : "sum", fd->name);
		free(q);
		q = n;
		d->fields[ncols++] = (int)f;
	}
	return q;
}

/* Run the detail query for row i of r over w. */
void detail_update(struct detail *d, const struct source_info *info, const struct schema *s,
		   const struct window *w, const struct result *r, size_t i)
{
	struct query_error err;
	const struct schema *es;
	struct query *q;
	char *text, buf[1024];

	detail_clear(d);
	d->schema = s;
	if (!r || i >= r->nrows)
		return;
	d->where = table_view_where(r, i);
	if (!d->where) {
		d->error = xstrdup("this result has no key columns to describe a row");
		return;
	}
	text = detail_query(d, s);
	q = query_parse(text, &err);
	if (q && query_bind(q, s, &err) == 0)
		d->res = query_exec(q, w, &err);
	if (!d->res) {
		query_error_format(text, &err, buf, sizeof(buf));
		d->error = xstrdup(buf);
	}
	query_free(q);
	free(text);
	es = events_schema(info, s->table);
	if (es)
		events_collect(d, es, w, r, i);
}

/* Pick how many buckets one histogram line covers so [lo, hi] fits in rows. */
static uint32_t hist_step(uint32_t lo, uint32_t hi, int rows)
{
	uint32_t g = 1;

	while (g < LH_NBUCKETS && (int)(hi / g - lo / g + 1) > rows)
		g *= 2;
	return g;
}

/* Draw histogram h in the box (y, x, hh, ww): one line per bucket group. */
static void hist_draw(const struct hist *h, int y, int x, int hh, int ww)
{
	char a[FMT_BUF], b[FMT_BUF], line[160];
	uint32_t lo = 0, hi = 0, g, k, ngroups;
	uint64_t maxc = 0, c;
	int row, barw, o;
	size_t m;

	if (!h || !h->count) {
		draw_text(y, x, ww, "(no latencies in this window)", theme_attr(ROLE_ROW_DIM));
		return;
	}
	o = snprintf(line, sizeof(line), "n %s", fmt_count(h->count, a, sizeof(a)));
	for (m = 0; m < sizeof(marks) / sizeof(marks[0]); m++) {
		if (m == 3) {
			draw_text(y++, x, ww, line, theme_attr(ROLE_HIST_MARK));
			hh--;
			o = 0;
		}
		o += snprintf(line + o, sizeof(line) - (size_t)o, "%s%s %s", o ? "  " : "", marks[m].label,
			      fmt_dur(hist_percentile(h, marks[m].q), a, sizeof(a)));
	}
	snprintf(line + o, sizeof(line) - (size_t)o, "  max %s", fmt_dur(h->max, a, sizeof(a)));
	draw_text(y, x, ww, line, theme_attr(ROLE_HIST_MARK));
	for (k = 0; k < LH_NBUCKETS; k++)
		if (h->b[k])
			hi = k;
	for (lo = 0; lo < LH_NBUCKETS && !h->b[lo]; lo++)
		;
	g = hist_step(lo, hi, hh - 1);
	ngroups = hi / g - lo / g + 1;
	for (k = 0; k < ngroups; k++) {
		uint32_t first = (lo / g + k) * g, j;

		for (c = 0, j = first; j < first + g && j < LH_NBUCKETS; j++)
			c += h->b[j];
		if (c > maxc)
			maxc = c;
	}
	barw = ww - 9 - 8 - 26;
	for (k = 0, row = 1; k < ngroups && row < hh; k++, row++) {
		uint32_t first = (lo / g + k) * g, j;
		char label[64] = "";

		for (c = 0, j = first; j < first + g && j < LH_NBUCKETS; j++)
			c += h->b[j];
		for (m = 0; m < sizeof(marks) / sizeof(marks[0]); m++) {
			uint32_t bk = lh_bucket(hist_percentile(h, marks[m].q));

			if (bk >= first && bk < first + g && strlen(label) + 8 < sizeof(label))
				snprintf(label + strlen(label), sizeof(label) - strlen(label), "%s%s",
					 label[0] ? " " : "", marks[m].label);
		}
		if (lh_bucket(h->max) >= first && lh_bucket(h->max) < first + g)
			snprintf(label + strlen(label), sizeof(label) - strlen(label), "%smax",
				 label[0] ? " " : "");
		draw_rtext(y + row, x, 8, fmt_dur(lh_bucket_low(first), a, sizeof(a)),
			   theme_attr(ROLE_ROW));
		if (barw > 0 && maxc)
			draw_bar(y + row, x + 9, (double)barw * (double)c / (double)maxc, '#',
				 theme_attr(ROLE_HIST_BAR));
		draw_rtext(y + row, x + 9 + (barw > 0 ? barw : 0), 7,
			   c ? fmt_count(c, b, sizeof(b)) : "", theme_attr(ROLE_ROW));
		if (label[0])
			draw_textf(y + row, x + 17 + (barw > 0 ? barw : 0), ww - 17 - (barw > 0 ? barw : 0),
				   theme_attr(ROLE_HIST_MARK), " %s %s", draw_glyph(G_MARK), label);
	}
}

/* Draw one stacked bar of the group's columns, bw cells wide. */
static void stack_draw(const char *const *names, const struct group *g, const uint64_t *v,
		       uint64_t total, int y, int x, int bw)
{
	double pos = 0;
	size_t j;

	for (j = g->first; j < g->first + g->n; j++) {
		double len = (double)bw * (double)v[j] / (double)total;
		int from = (int)(pos + 0.5), to;

		pos += len;
		to = (int)(pos + 0.5);
		if (to <= from)
			continue;
		if (theme_has_color()) {
			draw_bar(y, x + from, to - from, names[j][0], theme_attr(theme_bar_role(names[j])));
		} else {
			attrset(A_REVERSE);
			mvhline(y, x + from, (chtype)(unsigned char)names[j][0], to - from);
			attrset(A_NORMAL);
		}
	}
}

/* Draw the breakdown of the detail row in (y, x, hh, ww); return lines used. */
static int breakdown_draw(const struct detail *d, int y, int x, int hh, int ww)
{
	const struct result_val *row = result_row(d->res, 0);
	const char *names[64];
	uint64_t v[64], total = 0;
	size_t c, n = 0, ng, k, j;
	struct group g[GROUPS_MAX];
	char a[FMT_BUF], sw[8];
	int line = 0;

	for (c = 0; c < d->res->ncols && n < 64; c++) {
		const struct field *f = &d->schema->fields[d->fields[c]];

		if (f->type != FT_DUR || !(f->flags & FF_SUM))
			continue;
		if (!total) {
			total = row[c].null ? 0 : row[c].u;
			if (!total)
				return 0;
			draw_textf(y + line++, x, ww, theme_attr(ROLE_METER_LABEL),
				   "where the %s (%s) went:", f->name, fmt_dur(total, a, sizeof(a)));
			continue;
		}
		names[n] = f->name;
		v[n++] = row[c].null ? 0 : row[c].u;
	}
	if (!total)
		return 0;
	ng = partition(v, n, total, g, GROUPS_MAX);
	if (!ng) {
		g[0] = (struct group){0, n};
		ng = 1;
	}
	for (k = 0; k < ng && line < hh; k++) {
		stack_draw(names, &g[k], v, total, y + line++, x + 2, ww - 4);
		for (j = g[k].first; j < g[k].first + g[k].n && line < hh; j++) {
			if (!v[j])
				continue;
			snprintf(sw, sizeof(sw), "%c", names[j][0]);
			draw_text(y + line, x + 2, 1, theme_has_color() ? draw_glyph(G_FULL) : sw,
				  theme_has_color() ? theme_attr(theme_bar_role(names[j])) : A_REVERSE);
			draw_textf(y + line++, x + 3, ww - 3, theme_attr(ROLE_ROW), " %-9s %9s %5.1f%%",
				   names[j], fmt_dur(v[j], a, sizeof(a)),
				   100.0 * (double)v[j] / (double)total);
		}
	}
	return line;
}

/* Draw the title: the row's keys and its plain counters (hidden ones only
 * when measured: cycles reads 0 on machines without the counter). */
static void title_draw(const struct detail *d, int y, int w)
{
	char line[1024], a[FMT_BUF];
	size_t c, o;

	o = (size_t)snprintf(line, sizeof(line), " detail: %s ", d->where ? d->where : "no row selected");
	for (c = 0; d->res && d->res->nrows && c < d->res->ncols && o < sizeof(line); c++) {
		const struct field *f = &d->schema->fields[d->fields[c]];
		const struct result_val *v = result_row(d->res, 0) + c;

		if (f->type == FT_U64 && !v->null && !((f->flags & FF_HIDDEN) && v->u == 0))
			o += (size_t)snprintf(line + o, sizeof(line) - o, "  %s %s", f->name,
					      fmt_count(v->u, a, sizeof(a)));
	}
	draw_fill(y, 0, w, theme_attr(ROLE_TABLE_HEADER));
	draw_text(y, 0, w, line, theme_attr(ROLE_TABLE_HEADER));
}

/* Draw the pane in h lines from y. */
void detail_draw(const struct detail *d, int y, int h, int w)
{
	int lw = w / 2 > 40 ? w / 2 : (w < 40 ? w : 40), rx = lw + 2, rw = w - rx, line = 0;
	const struct hist *hist = NULL;
	size_t c, i;

	if (h < 2)
		return;
	title_draw(d, y, w);
	if (d->error) {
		draw_text(y + 1, 1, w - 1, d->error, theme_attr(ROLE_ERROR));
		return;
	}
	if (!d->res || !d->res->nrows) {
		draw_text(y + 1, 1, w - 1, "(no data for this row in the window)", theme_attr(ROLE_ROW_DIM));
		return;
	}
	for (c = 0; c < d->res->ncols && !hist; c++)
		if (d->res->cols[c].type == FT_HIST)
			hist = result_row(d->res, 0)[c].h;
	hist_draw(hist, y + 1, 1, h - 1, lw - 1);
	if (rw < 20)
		return;
	line = breakdown_draw(d, y + 1, rx, h - 1, rw);
	if (!d->nevents || line + 2 >= h - 1)
		return;
	draw_text(y + 1 + line++, rx, rw, "recent single events:", theme_attr(ROLE_METER_LABEL));
	for (i = 0; i < d->nevents && line < h - 1; i++)
		draw_text(y + 1 + line++, rx + 2, rw - 2, d->events[i], theme_attr(ROLE_ROW));
}
