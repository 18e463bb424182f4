/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The sortable table of the current result: selection, scrolling, sort marks. */
#ifndef LATOP_TUI_TABLE_VIEW_H
#define LATOP_TUI_TABLE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include "../queries/query.h"

struct table_view {
	size_t sel;		/* selected row */
	size_t top;		/* first row shown */
	size_t hscroll;		/* value columns scrolled off to the left */
	char *sel_key;		/* key tuple of the selected row, followed across refreshes */
	int height;		/* rows shown at the last draw (for PgUp/PgDn) */
	int sort_col;		/* the column of the query's ORDER BY, or -1 */
	bool sort_desc;
	int y_header;		/* where the last draw put the header row */
	size_t ncols;		/* the last draw's column layout, for mouse clicks */
	int *col_x, *col_w;
};

void table_view_init(struct table_view *tv);
void table_view_done(struct table_view *tv);
/* Follow the selected key tuple into a new result; read the sort column
 * from the query's canonical text. */
void table_view_sync(struct table_view *tv, const struct result *r, const char *query_text);
/* Draw the header and rows in h lines from y, w columns wide. */
void table_view_draw(struct table_view *tv, const struct result *r, int y, int h, int w);
/* Move the selection by delta rows (clamped), remembering its key tuple. */
void table_view_move(struct table_view *tv, const struct result *r, long delta);
/* Select row i (clamped). */
void table_view_select(struct table_view *tv, const struct result *r, size_t i);
/* Scroll value columns by delta. */
void table_view_hscroll(struct table_view *tv, const struct result *r, int delta);
/* The column under screen column x of the header row, or -1. */
int table_view_hit(const struct table_view *tv, int x);
/* Select the next (dir 1) or previous (-1) row, after the selection when
 * skip, whose key columns contain text; false if none does. */
bool table_view_search(struct table_view *tv, const struct result *r, const char *text,
		       int dir, bool skip);
/* "pid == 1234 and comm == 'x'" for row i's keys but GROUP BY time(...)'s
 * window (caller frees), or NULL if the result has no other key column. */
char *table_view_where(const struct result *r, size_t i);

#endif
