/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The detail pane of one row, generic over tables: FT_HIST fields give the
 * latency histogram, FF_SUM FT_DUR fields the time breakdown, and the
 * events table of the table's view (probes/views.h) the recent single events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fmt.h"
#include "../core/xalloc.h"
#include "detail.h"
#include "draw.h"
#include "table_view.h"
#include "views.h"

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
	free(d->event_ids);
	d->event_ids = NULL;
	d->nevents = 0;
	d->sel = 0;
	for (i = 0; i < d->nspans; i++) {
		free(d->spans[i].kind);
		free(d->spans[i].label);
	}
	free(d->spans);
	d->spans = NULL;
	d->nspans = 0;
	for (i = 0; i < d->nrows; i++)
		free(d->rows[i]);
	free(d->rows);
	d->rows = NULL;
	d->nrows = 0;
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

		if (!r->cols[c].key || r->cols[c].time ||
		    (f = schema_field(es, r->cols[c].name)) < 0)
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

/* The schema info gives for t, a view's events or spans table; NULL for either NULL. */
static const struct schema *side_schema(const struct source_info *info, const struct schema *t)
{
	return t ? source_schema(info, t->table) : NULL;
}

/* The field of es holding an event's whole duration: the FF_TOTAL one, else
 * "lat", else the first duration that is not a part; -1 if none. */
static int event_lat_field(const struct schema *es)
{
	size_t f;
	int lat = schema_field(es, "lat");

	for (f = 0; f < es->nfields; f++)
		if (es->fields[f].type == FT_DUR && (es->fields[f].flags & FF_TOTAL))
			return (int)f;
	if (lat >= 0 && es->fields[lat].type == FT_DUR)
		return lat;
	for (f = 0; f < es->nfields; f++)
		if (es->fields[f].type == FT_DUR && !(es->fields[f].flags & FF_SUM))
			return (int)f;
	return -1;
}

/* Collect the newest single events of row i of r from the window, and
 * choose the one whose timeline is drawn: the one chosen before while it
 * is still here, else the slowest. */
static void events_collect(struct detail *d, const struct schema *es, const struct window *w,
			   const struct result *r, size_t i)
{
	int idf = schema_field(es, "id"), latf = event_lat_field(es);
	uint64_t worst = 0;
	size_t t, row, k;
	bool found = false;

	d->events = xcalloc(EVENTS_MAX, sizeof(char *));
	d->event_ids = xcalloc(EVENTS_MAX, sizeof(uint64_t));
	for (t = w->nticks; t-- > 0 && d->nevents < EVENTS_MAX;) {
		const struct frame *fr = tick_frame(&w->ticks[t], es->table);

		for (row = fr ? fr->nrows : 0; row-- > 0 && d->nevents < EVENTS_MAX;) {
			const union cell *c = frame_row(fr, row);

			if (!event_matches(fr->schema, c, r, i))
				continue;
			k = d->nevents++;
			d->events[k] = event_line(fr->schema, c);
			d->event_ids[k] = idf >= 0 && fr->schema->fields[idf].type == FT_U64 ? c[idf].u : 0;
			if (d->sel_pinned && d->event_ids[k] == d->sel_id) {
				d->sel = k;
				found = true;
			} else if (!found && latf >= 0 && (k == 0 || c[latf].u > worst)) {
				worst = c[latf].u;
				d->sel = k;
			}
		}
	}
	if (!found)
		d->sel_pinned = false;
	if (d->nevents)
		d->sel_id = d->event_ids[d->sel];
}

/* The cell of field name in a row of schema s if it has type t, else NULL. */
static const union cell *cell_of(const struct schema *s, const union cell *row, const char *name,
				 enum ftype t)
{
	int f = schema_field(s, name);

	return f >= 0 && s->fields[f].type == t ? &row[f] : NULL;
}

/* Gather the spans of event id from the window, rows in order of first span. */
static void spans_collect(struct detail *d, const struct schema *ss, const struct window *w,
			  uint64_t id)
{
	size_t t, row, cap = 0, k;

	for (t = 0; t < w->nticks; t++) {
		const struct frame *fr = tick_frame(&w->ticks[t], ss->table);

		for (row = 0; fr && row < fr->nrows; row++) {
			const union cell *c = frame_row(fr, row);
			const union cell *ci = cell_of(fr->schema, c, "id", FT_U64);
			const union cell *cr = cell_of(fr->schema, c, "row", FT_STR);
			const union cell *cs = cell_of(fr->schema, c, "start", FT_U64);
			const union cell *cd = cell_of(fr->schema, c, "dur", FT_DUR);
			const union cell *ck = cell_of(fr->schema, c, "kind", FT_STR);
			const union cell *cl = cell_of(fr->schema, c, "label", FT_STR);
			const char *rname = cr && cr->s ? cr->s : "";
			struct detail_span *sp;

			if (!ci || !cs || !cd || ci->u != id)
				continue;
			for (k = 0; k < d->nrows && strcmp(d->rows[k], rname); k++)
				;
			if (k == d->nrows) {
				d->rows = xreallocarray(d->rows, d->nrows + 1, sizeof(*d->rows));
				d->rows[d->nrows++] = xstrdup(rname);
			}
			if (d->nspans == cap) {
				cap = cap ? 2 * cap : 32;
				d->spans = xreallocarray(d->spans, cap, sizeof(*d->spans));
			}
			sp = &d->spans[d->nspans++];
			sp->row = k;
			sp->start = cs->u;
			sp->dur = cd->u;
			sp->kind = xstrdup(ck && ck->s ? ck->s : "");
			sp->label = xstrdup(cl && cl->s ? cl->s : "");
		}
	}
}

bool detail_select_event(struct detail *d, int dir)
{
	if (!d->nevents || (dir < 0 && d->sel == 0) || (dir > 0 && d->sel + 1 >= d->nevents))
		return false;
	d->sel = dir < 0 ? d->sel - 1 : d->sel + 1;
	d->sel_id = d->event_ids[d->sel];
	d->sel_pinned = true;
	return true;
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

void detail_update(struct detail *d, const struct source_info *info, const struct schema *s,
		   const struct window *w, const struct result *r, size_t i)
{
	struct query_error err;
	const struct schema *es, *ss;
	const struct view *v;
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
	v = views_by_table(s->table);
	es = side_schema(info, v ? v->events : NULL);
	if (es)
		events_collect(d, es, w, r, i);
	ss = side_schema(info, v ? v->spans : NULL);
	if (ss && d->nevents && d->sel_id)
		spans_collect(d, ss, w, d->sel_id);
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

/* The theme role of a span kind (roles are named for breakdown parts). */
static attr_t span_attr(const char *kind)
{
	static const struct {
		const char *kind, *part;
	} map[] = {
		{"wait", "lock"}, {"lock", "lock"}, {"hold", "mm"}, {"release", "mm"},
		{"oncpu", "oncpu"}, {"sample", "oncpu"}, {"offcpu", "offcpu"}, {"runq", "runq"},
		{"block", "block"}, {"io", "block"}, {"net", "net"}, {"call", "net"},
		{"sleep", "sleep"}, {"request", "other"},
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(kind, map[i].kind))
			return theme_attr(theme_bar_role(map[i].part));
	return theme_attr(ROLE_TIMELINE);
}

static const struct detail_span *sort_spans;

/* Longer spans first, so short ones are drawn over them. */
static int span_cmp(const void *a, const void *b)
{
	uint64_t da = sort_spans[*(const size_t *)a].dur, db = sort_spans[*(const size_t *)b].dur;

	return da < db ? 1 : da > db ? -1 : 0;
}

/* Draw one row's labels by their summed time: "  snapshot_state 81%  write 12%". */
static void labels_draw(const struct detail *d, size_t row, uint64_t total, int y, int x, int ww)
{
	char line[512], a[FMT_BUF];
	const char *names[16];
	uint64_t sum[16];
	size_t i, k, n = 0, o;

	for (i = 0; i < d->nspans; i++) {
		const struct detail_span *sp = &d->spans[i];

		if (sp->row != row || !sp->label[0])
			continue;
		for (k = 0; k < n && strcmp(names[k], sp->label); k++)
			;
		if (k == n && n < 16) {
			names[n] = sp->label;
			sum[n++] = 0;
		}
		if (k < n)
			sum[k] += sp->dur;
	}
	o = (size_t)snprintf(line, sizeof(line), "%s:", d->rows[row]);
	while (n && o < sizeof(line)) {
		size_t best = 0;

		for (k = 1; k < n; k++)
			if (sum[k] > sum[best])
				best = k;
		o += (size_t)snprintf(line + o, sizeof(line) - o, "  %s %s (%.0f%%)", names[best],
				      fmt_dur(sum[best], a, sizeof(a)),
				      total ? 100.0 * (double)sum[best] / (double)total : 0.0);
		names[best] = names[--n];
		sum[best] = sum[n];
	}
	draw_text(y, x, ww, line, theme_attr(ROLE_ROW));
}

/* How many lines the timeline wants: title, one per row, one per labelled row. */
static int timeline_lines(const struct detail *d)
{
	size_t r, i;
	int n = 1 + (int)d->nrows;

	for (r = 0; r < d->nrows; r++)
		for (i = 0; i < d->nspans; i++)
			if (d->spans[i].row == r && d->spans[i].label[0]) {
				n++;
				break;
			}
	return n;
}

/*
 * Draw the selected event's spans on one time axis in (y, x, hh, ww): a
 * title with the scale, one line per row (its name, then its spans, longest
 * first so short ones stay visible, labelled where they fit), then each
 * row's labels with their summed time.
 */
static void timeline_draw(const struct detail *d, int y, int x, int hh, int ww)
{
	uint64_t t0 = UINT64_MAX, t1 = 0, span;
	size_t i, r, *order;
	int lw = 8, axis, line = 0;
	char a[FMT_BUF];

	for (i = 0; i < d->nspans; i++) {
		if (d->spans[i].start < t0)
			t0 = d->spans[i].start;
		if (d->spans[i].start + d->spans[i].dur > t1)
			t1 = d->spans[i].start + d->spans[i].dur;
	}
	span = t1 > t0 ? t1 - t0 : 1;
	for (r = 0; r < d->nrows; r++)
		if (draw_width(d->rows[r]) > lw)
			lw = draw_width(d->rows[r]);
	if (lw > ww / 3)
		lw = ww / 3;
	axis = ww - lw - 1;
	if (axis < 8 || hh < 2)
		return;
	draw_textf(y + line, x, ww, theme_attr(ROLE_METER_LABEL),
		   "timeline of event %zu/%zu ({ } choose): %s  [0 .. %s]", d->sel + 1, d->nevents,
		   d->sel < d->nevents ? d->events[d->sel] : "", fmt_dur(span, a, sizeof(a)));
	line++;
	order = xcalloc(d->nspans, sizeof(*order));
	for (i = 0; i < d->nspans; i++)
		order[i] = i;
	sort_spans = d->spans;
	qsort(order, d->nspans, sizeof(*order), span_cmp);
	for (r = 0; r < d->nrows && line < hh; r++, line++) {
		draw_text(y + line, x, lw, d->rows[r], theme_attr(ROLE_ROW));
		draw_fill(y + line, x + lw + 1, axis, theme_attr(ROLE_TIMELINE));
		for (i = 0; i < d->nspans; i++) {
			const struct detail_span *sp = &d->spans[order[i]];
			int c0 = (int)((double)(sp->start - t0) * axis / (double)span);
			int c1 = (int)((double)(sp->start + sp->dur - t0) * axis / (double)span + 0.5);
			attr_t at = theme_has_color() ? span_attr(sp->kind) | A_REVERSE : A_REVERSE;
			char fill[2] = {sp->kind[0] ? sp->kind[0] : '#', 0};

			if (sp->row != r)
				continue;
			if (c0 >= axis)
				c0 = axis - 1;
			if (c1 <= c0)
				c1 = c0 + 1;
			if (c1 > axis)
				c1 = axis;
			for (int c = c0; c < c1; c++)
				draw_text(y + line, x + lw + 1 + c, 1, theme_has_color() ? " " : fill, at);
			if (sp->label[0] && c1 - c0 >= 4)
				draw_text(y + line, x + lw + 1 + c0, c1 - c0, sp->label, at);
		}
	}
	free(order);
	for (r = 0; r < d->nrows && line < hh; r++) {
		for (i = 0; i < d->nspans && !(d->spans[i].row == r && d->spans[i].label[0]); i++)
			;
		if (i < d->nspans)
			labels_draw(d, r, span, y + line++, x + 2, ww - 2);
	}
}

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
	if (d->nspans) {
		/* The timeline takes the full width at the bottom, leaving the
		 * histogram at least 4 lines. */
		int th = timeline_lines(d);

		if (th > h - 5)
			th = h - 5;
		if (th >= 2) {
			timeline_draw(d, y + h - th, 1, th, w - 1);
			h -= th;
		}
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
	for (i = 0; i < d->nevents && line < h - 1; i++) {
		if (d->nspans && i == d->sel)
			draw_text(y + 1 + line, rx, 2, draw_glyph(G_MARK), theme_attr(ROLE_HIST_MARK));
		draw_text(y + 1 + line++, rx + 2, rw - 2, d->events[i], theme_attr(ROLE_ROW));
	}
}
