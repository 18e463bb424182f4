/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The detail pane: histogram, time breakdown and slow calls of one row.
 *
 * Tables it reads besides the row's own, when the row's table is a view's
 * main table: the view's events and spans tables (probes/views.h), found in
 * the source by name (syscalls -> syscall_events, locks -> lock_spans):
 *   T_events  single events (THRESHOLD / SAMPLE): rows whose key fields
 *             equal the selected row's are listed, newest first.  A field
 *             "id" (FT_U64) names the event for T_spans.
 *   T_spans   an event's timeline, one row per span:
 *               id    FT_U64 FF_KEY  the event (T_events.id)
 *               row   FT_STR FF_KEY  the line it is drawn on ("holder 4242 bgsnap")
 *               start FT_U64  "ns"   CLOCK_REALTIME ns, as T_events.ts
 *               dur   FT_DUR  "ns"
 *               kind  FT_STR         wait, hold, oncpu, offcpu, runq, call, request, ...
 *               label FT_STR         drawn on the span ("snapshot_state", "10.0.0.5:3306")
 *             The pane draws the selected event's spans on one time axis.
 */
#ifndef LATOP_TUI_DETAIL_H
#define LATOP_TUI_DETAIL_H

#include <stdbool.h>
#include "../core/source.h"
#include "../queries/query.h"

struct detail {
	bool open;
	char *where;		/* the row's key predicate */
	struct result *res;	/* the detail query's result (one row) */
	int *fields;		/* schema field of each result column */
	const struct schema *schema;
	char *error;		/* why the detail query failed */
	size_t nevents;
	char **events;		/* recent single events of the row, newest first */
	uint64_t *event_ids;	/* their "id" fields (0: none) */
	size_t sel;		/* the event whose timeline is drawn */
	uint64_t sel_id;	/* kept across updates while that event is in the window */
	bool sel_pinned;	/* chosen with { }, not the default (the slowest) */
	size_t nspans;
	struct detail_span *spans;	/* the selected event's timeline */
	size_t nrows;
	char **rows;		/* the timeline's row names, in order of first span */
};

struct detail_span {
	size_t row;		/* index into rows */
	uint64_t start, dur;
	char *kind, *label;
};

void detail_init(struct detail *d);
void detail_done(struct detail *d);
/* Run the detail query for row i of r over w (table schema s; the single
 * events and spans come from info's tables of s's view, above). */
void detail_update(struct detail *d, const struct source_info *info, const struct schema *s,
		   const struct window *w, const struct result *r, size_t i);
/* Forget the row (no selection) and everything computed for it. */
void detail_clear(struct detail *d);
/* Select the previous (dir -1) or next (+1) single event for the timeline;
 * false when there is none to move to. */
bool detail_select_event(struct detail *d, int dir);
/* Draw the pane in h lines from y, w columns wide. */
void detail_draw(const struct detail *d, int y, int h, int w);

#endif
