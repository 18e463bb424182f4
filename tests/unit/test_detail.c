/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The detail pane's single events and timelines (tui/detail.h): which event
 * is chosen, its spans gathered from the window, { } moving the choice, and
 * the drawing read back from curses' screen buffer.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <curses.h>
#include "core/xalloc.h"
#include "tui/detail.h"
#include "tui/draw.h"
#include "tui/theme.h"
#include "tap.h"

#define MS 1000000ULL
#define T0 1700000000000000000ULL

/* Small tables under the locks view's names: the pane finds a table's events
 * and spans through its view (probes/views.h), by name in the source. */
static const struct field demo_fields[] = {
	{"lock", FT_STR, FF_KEY, "", "lock"},
	{"count", FT_U64, FF_SUM, "", "waits"},
	{"wait", FT_HIST, 0, "ns", "waits"},
};
static const struct schema demos = {"locks", "demo", 3, demo_fields};
static const struct field ev_fields[] = {
	{"ts", FT_U64, FF_KEY, "ns", "time"},
	{"id", FT_U64, FF_KEY, "", "event id"},
	{"lock", FT_STR, FF_KEY, "", "lock"},
	{"wait", FT_DUR, FF_TOTAL, "ns", "wait"},
};
static const struct schema demo_events = {"lock_events", "events", 4, ev_fields};
static const struct field sp_fields[] = {
	{"id", FT_U64, FF_KEY, "", "event"},
	{"row", FT_STR, FF_KEY, "", "row"},
	{"start", FT_U64, 0, "ns", "start"},
	{"dur", FT_DUR, 0, "ns", "length"},
	{"kind", FT_STR, 0, "", "kind"},
	{"label", FT_STR, 0, "", "label"},
};
static const struct schema demo_spans = {"lock_spans", "spans", 6, sp_fields};

static void event(struct frame *f, uint64_t id, const char *lock, uint64_t wait)
{
	union cell *r = frame_add_row(f);

	r[0].u = T0 + id * MS;
	r[1].u = id;
	cell_set_str(&r[2], lock);
	r[3].u = wait;
}

static void span(struct frame *f, uint64_t id, const char *row, uint64_t start_ms,
		 uint64_t dur_ms, const char *kind, const char *label)
{
	union cell *r = frame_add_row(f);

	r[0].u = id;
	cell_set_str(&r[1], row);
	r[2].u = T0 + start_ms * MS;
	r[3].u = dur_ms * MS;
	cell_set_str(&r[4], kind);
	cell_set_str(&r[5], label);
}

/* Whether some line of the screen contains s; its line number in *at. */
static bool screen_has(const char *s, int *at)
{
	char line[512];
	int y;

	for (y = 0; y < LINES; y++) {
		mvinnstr(y, 0, line, (int)sizeof(line) - 1);
		if (strstr(line, s)) {
			if (at)
				*at = y;
			return true;
		}
	}
	return false;
}

int main(void)
{
	const struct schema *schemas[] = {&demos, &demo_events, &demo_spans};
	struct source_info info = {.nschemas = 3, .schemas = schemas};
	struct query_error err;
	struct detail d;
	struct window w;
	struct tick t;
	struct frame *f, *ev, *sp;
	struct query *q;
	struct result *res;
	struct hist *h = hist_new();
	SCREEN *scr;
	FILE *out, *in;
	int yh = -1, yw = -1;
	char line[512];

	window_init(&w, 10000 * MS);
	tick_init(&t, T0 + 1000 * MS);
	f = frame_new(&demos, t.t_ns, 1000 * MS);
	hist_add(h, 12 * MS);
	hist_add(h, 40 * MS);
	hist_add(h, 3 * MS);
	{
		union cell *r = frame_add_row(f);

		cell_set_str(&r[0], "0x7f00");
		r[1].u = 3;
		cell_set_hist(&r[2], h);
	}
	ev = frame_new(&demo_events, t.t_ns, 1000 * MS);
	event(ev, 7, "0x7f00", 12 * MS);
	event(ev, 8, "0x7f00", 40 * MS);	/* the slowest */
	event(ev, 9, "0x7f00", 3 * MS);
	event(ev, 10, "0xdead", 90 * MS);	/* another lock: not this row's */
	sp = frame_new(&demo_spans, t.t_ns, 1000 * MS);
	span(sp, 8, "holder 4242 bgsnap", 100, 40, "hold", "");
	span(sp, 8, "holder 4242 bgsnap", 100, 30, "sample", "snapshot_state");
	span(sp, 8, "holder 4242 bgsnap", 130, 10, "offcpu", "write");
	span(sp, 8, "waiter 4250 req", 101, 39, "wait", "");
	span(sp, 7, "waiter 4251 req", 0, 12, "wait", "");
	span(sp, 10, "waiter 1 other", 0, 90, "wait", "");
	tick_add(&t, f);
	tick_add(&t, ev);
	tick_add(&t, sp);
	window_push(&w, &t);

	q = query_parse("from locks group by lock show count, p99(wait)", &err);
	ok(q && query_bind(q, &demos, &err) == 0, "the row query binds");
	res = query_exec(q, &w, &err);
	ok(res && res->nrows == 1, "one row");

	detail_init(&d);
	d.open = true;
	detail_update(&d, &info, &demos, &w, res, 0);
	ok(d.nevents == 3, "the row's three events, not the other lock's (%zu)", d.nevents);
	ok(d.sel_id == 8, "the slowest event is chosen (id %llu)", (unsigned long long)d.sel_id);
	ok(d.nspans == 4 && d.nrows == 2 && !strcmp(d.rows[0], "holder 4242 bgsnap") &&
	   !strcmp(d.rows[1], "waiter 4250 req"),
	   "its four spans on two rows, in order of first span (%zu, %zu)", d.nspans, d.nrows);

	/* Draw into curses' buffer (output to /dev/null) and read it back. */
	setenv("TERM", "xterm", 0);
	out = fopen("/dev/null", "w");
	in = fopen("/dev/null", "r");
	scr = out && in ? newterm(NULL, out, in) : NULL;
	if (!scr) {
		skip("no terminal description for TERM=%s", getenv("TERM"));
		skip("(drawing)");
		skip("(drawing)");
	} else {
		resizeterm(30, 120);
		draw_init(false);
		theme_load("mono", false, NULL);
		detail_draw(&d, 0, 30, 120);
		ok(screen_has("timeline of event", NULL) && screen_has("[0 .. 40", NULL),
		   "a timeline title with its 40 ms scale");
		ok(screen_has("holder 4242 bgsnap", &yh) && screen_has("waiter 4250 req", &yw) &&
		   yw == yh + 1, "holder and waiter on consecutive lines (%d, %d)", yh, yw);
		if (yh >= 0)
			mvinnstr(yh, 0, line, 119);
		ok(yh >= 0 && strstr(line, "snapshot_state"),
		   "the function the holder ran is drawn on its span: %s", yh >= 0 ? line : "");
		ok(screen_has("snapshot_state 30.0ms (75%)", NULL) &&
		   screen_has("write 10.0ms (25%)", NULL), "and summed under the axis");
		endwin();
		delscreen(scr);
	}

	/* Newest first: 9, 8, 7. */
	ok(detail_select_event(&d, 1) && d.sel_id == 7, "} moves to the older event (%llu)",
	   (unsigned long long)d.sel_id);
	ok(!detail_select_event(&d, 1), "and stops at the oldest");
	detail_update(&d, &info, &demos, &w, res, 0);
	ok(d.sel_id == 7 && d.nspans == 1 && d.nrows == 1 && !strcmp(d.rows[0], "waiter 4251 req"),
	   "the choice survives an update, with event 7's own span");
	ok(detail_select_event(&d, -1) && detail_select_event(&d, -1) && d.sel_id == 9,
	   "{ moves back to the newest");
	ok(!detail_select_event(&d, -1), "and stops there");
	detail_update(&d, &info, &demos, &w, res, 0);
	ok(d.sel_id == 9 && d.nspans == 0, "event 9 has no spans: no timeline");

	detail_done(&d);
	result_free(res);
	query_free(q);
	window_done(&w);
	hist_free(h);
	if (out)
		fclose(out);
	if (in)
		fclose(in);
	tap_done();
}
