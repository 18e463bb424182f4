/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The key table and its actions.  Actions change state and return reactions. */
#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "../core/xalloc.h"

#include "keys.h"
#include "screen.h"
#include "views.h"

/* Open the help screen. */
static int act_help(struct screen *s)
{
	s->help = true;
	s->help_top = 0;
	return R_REDRAW;
}

/* Open the incremental search line. */
static int act_search(struct screen *s)
{
	prompt_open(s, PROMPT_SEARCH, "");
	return R_REDRAW;
}

/* Jump to the next row matching the last search. */
static int act_search_next(struct screen *s)
{
	if (!s->search[0] || !s->res)
		return R_NONE;
	if (!table_view_search(&s->tv, s->res, s->search, 1, true))
		screen_status(s, ROLE_ERROR, "no row matches '%s'", s->search);
	return R_REDRAW | R_DETAIL;
}

/* Jump to the previous row matching the last search. */
static int act_search_prev(struct screen *s)
{
	if (!s->search[0] || !s->res)
		return R_NONE;
	if (!table_view_search(&s->tv, s->res, s->search, -1, true))
		screen_status(s, ROLE_ERROR, "no row matches '%s'", s->search);
	return R_REDRAW | R_DETAIL;
}

/* Open the query line prefilled with "where ". */
static int act_filter(struct screen *s)
{
	prompt_open(s, PROMPT_QUERY, "where ");
	return R_REDRAW;
}

/* Open an empty query line. */
static int act_query(struct screen *s)
{
	prompt_open(s, PROMPT_QUERY, "");
	return R_REDRAW;
}

/* Freeze or resume the display (live); play or pause (replay). */
static int act_pause(struct screen *s)
{
	screen_pause(s);
	return R_REDRAW | R_REQUERY;
}

/* Sort by the column to the right of the sort column. */
static int act_sort_next(struct screen *s)
{
	if (!s->res || !s->res->ncols)
		return R_NONE;
	screen_sort(s, (int)((size_t)(s->tv.sort_col + 1) % s->res->ncols), false);
	return R_REDRAW | R_REQUERY;
}

/* Sort by the column to the left of the sort column. */
static int act_sort_prev(struct screen *s)
{
	if (!s->res || !s->res->ncols)
		return R_NONE;
	screen_sort(s, s->tv.sort_col <= 0 ? (int)s->res->ncols - 1 : s->tv.sort_col - 1, false);
	return R_REDRAW | R_REQUERY;
}

/* Invert the sort order. */
static int act_invert(struct screen *s)
{
	if (!s->res || !s->res->ncols)
		return R_NONE;
	screen_sort(s, s->tv.sort_col < 0 ? 0 : s->tv.sort_col, true);
	return R_REDRAW | R_REQUERY;
}

/* Drill into the selected row. */
static int act_drill(struct screen *s)
{
	screen_drill(s);
	return R_REDRAW | R_REQUERY;
}

/* Go back to the query before the last drill-down. */
static int act_back(struct screen *s)
{
	if (!screen_back(s))
		screen_status(s, ROLE_STATUS, "nothing to go back to");
	return R_REDRAW | R_REQUERY;
}

/* Open or close the detail pane. */
static int act_detail(struct screen *s)
{
	s->detail.open = !s->detail.open;
	return R_REDRAW | R_DETAIL;
}

/* Save the history as a snapshot. */
static int act_save(struct screen *s)
{
	screen_save(s);
	return R_REDRAW;
}

/* Quit. */
static int act_quit(struct screen *s)
{
	s->quit = true;
	return R_QUIT;
}

/* Switch to the view bound to the key pressed. */
static int act_view(struct screen *s)
{
	size_t v;

	for (v = 0; v < views_len; v++)
		if ((unsigned char)views[v].key == s->key)
			break;
	if (v == views_len)
		return R_NONE;
	screen_view(s, v);
	return R_REDRAW | R_REQUERY;
}

/* Move the selection by n rows. */
static int move_sel(struct screen *s, long n)
{
	if (!s->res)
		return R_NONE;
	table_view_move(&s->tv, s->res, n);
	return R_REDRAW | R_DETAIL;
}

/* Select the row above. */
static int act_up(struct screen *s) { return move_sel(s, -1); }
/* Select the row below. */
static int act_down(struct screen *s) { return move_sel(s, 1); }
/* Select a page up. */
static int act_pgup(struct screen *s) { return move_sel(s, -(long)(s->tv.height > 1 ? s->tv.height - 1 : 1)); }
/* Select a page down. */
static int act_pgdn(struct screen *s) { return move_sel(s, s->tv.height > 1 ? s->tv.height - 1 : 1); }

/* Select the first row. */
static int act_home(struct screen *s)
{
	if (!s->res)
		return R_NONE;
	table_view_select(&s->tv, s->res, 0);
	return R_REDRAW | R_DETAIL;
}

/* Select the last row. */
static int act_end(struct screen *s)
{
	if (!s->res || !s->res->nrows)
		return R_NONE;
	table_view_select(&s->tv, s->res, s->res->nrows - 1);
	return R_REDRAW | R_DETAIL;
}

/* Scroll the columns left. */
static int act_scroll_left(struct screen *s)
{
	if (s->res)
		table_view_hscroll(&s->tv, s->res, -1);
	return R_REDRAW;
}

/* Scroll the columns right. */
static int act_scroll_right(struct screen *s)
{
	if (s->res)
		table_view_hscroll(&s->tv, s->res, 1);
	return R_REDRAW;
}

/* Step n ticks in time (replay, or paused live history). */
static int step(struct screen *s, long n)
{
	screen_seek(s, n, false);
	return R_REDRAW | R_REQUERY;
}

/* Replay: one tick back; live: scroll the columns left. */
static int act_left(struct screen *s)
{
	return s->opts->replay ? step(s, -1) : act_scroll_left(s);
}

/* Replay: one tick forward; live: scroll the columns right. */
static int act_right(struct screen *s)
{
	return s->opts->replay ? step(s, 1) : act_scroll_right(s);
}

/* One tick back. */
static int act_back1(struct screen *s) { return step(s, -1); }
/* One tick forward. */
static int act_fwd1(struct screen *s) { return step(s, 1); }
/* Ten ticks back. */
static int act_back10(struct screen *s) { return step(s, -10); }
/* Ten ticks forward. */
static int act_fwd10(struct screen *s) { return step(s, 10); }

/* Go to the first tick. */
static int act_first(struct screen *s)
{
	screen_seek(s, 0, true);
	return R_REDRAW | R_REQUERY;
}

/* Open the go-to line: a time to show. */
static int act_goto(struct screen *s)
{
	prompt_open(s, PROMPT_GOTO, "");
	return R_REDRAW;
}

/* Go to the last tick. */
static int act_last(struct screen *s)
{
	screen_seek(s, -1, true);
	return R_REDRAW | R_REQUERY;
}

/* Play faster. */
static int act_faster(struct screen *s)
{
	screen_speed_step(s, 1);
	return R_REDRAW;
}

/* Play slower. */
static int act_slower(struct screen *s)
{
	screen_speed_step(s, -1);
	return R_REDRAW;
}

/* Switch to the next theme. */
static int act_theme(struct screen *s)
{
	screen_theme_next(s);
	return R_REDRAW;
}

/* Detail pane: the timeline of the previous single event in the list. */
static int act_event_prev(struct screen *s)
{
	if (!s->detail.open || !detail_select_event(&s->detail, -1))
		return R_NONE;
	return R_REDRAW | R_DETAIL;
}

/* Detail pane: the timeline of the next single event in the list. */
static int act_event_next(struct screen *s)
{
	if (!s->detail.open || !detail_select_event(&s->detail, 1))
		return R_NONE;
	return R_REDRAW | R_DETAIL;
}

/* Redraw everything (the terminal was resized or garbled). */
static int act_refresh(struct screen *s)
{
	clearok(curscr, TRUE);
	return R_REDRAW;
}

/* The keys before the views' (one row each, from probes/views.c), and after. */
static const struct key_action keys_head[] = {
	{KEY_F(1), "F1", act_help, "help (this screen)"},
	{'?', "?", act_help, NULL},
	{'h', "h", act_help, NULL},
	{':', ":", act_query, "type a query, or a fragment that refines the current one"},
	{KEY_F(4), "F4", act_filter, "filter: the query line prefilled with 'where '"},
	{'\\', "\\", act_filter, NULL},
	{KEY_F(3), "F3", act_search, "search the key columns as you type"},
	{'/', "/", act_search, NULL},
	{'n', "n", act_search_next, "next search match"},
	{'N', "N", act_search_prev, "previous search match"},
	{KEY_F(5), "F5", act_pause, "live: freeze the display (ticks keep coming); replay: play/pause"},
	{' ', "Space", act_pause, NULL},
	{KEY_F(6), "F6", act_sort_next, "sort by the next column"},
	{'>', ">", act_sort_next, NULL},
	{'<', "<", act_sort_prev, "sort by the previous column"},
	{'I', "I", act_invert, "invert the sort order"},
	{'\n', "Enter", act_drill, "drill down: this row's keys as a filter, grouped one key finer"},
	{KEY_ENTER, "Enter", act_drill, NULL},
	{KEY_BACKSPACE, "Backspace", act_back, "back to the query before the last drill-down"},
	{127, "Backspace", act_back, NULL},
	{27, "Esc", act_back, NULL},
	{'\t', "Tab", act_detail, "detail pane: histogram, time breakdown, slow calls"},
	{'d', "d", act_detail, NULL},
	{'{', "{", act_event_prev, "detail pane: timeline of the newer single event"},
	{'}', "}", act_event_next, "detail pane: timeline of the older single event"},
	{'s', "s", act_save, "save the recent ticks as a snapshot (latop-DATE-TIME.snap)"},
};

static const struct key_action keys_tail[] = {
	{KEY_UP, "Up", act_up, "select the row above"},
	{'k', "k", act_up, NULL},
	{KEY_DOWN, "Down", act_down, "select the row below"},
	{'j', "j", act_down, NULL},
	{KEY_PPAGE, "PgUp", act_pgup, "a page up"},
	{KEY_NPAGE, "PgDn", act_pgdn, "a page down"},
	{KEY_HOME, "Home", act_home, "first row"},
	{KEY_END, "End", act_end, "last row"},
	{KEY_SLEFT, "S-Left", act_scroll_left, "scroll the value columns left"},
	{KEY_SRIGHT, "S-Right", act_scroll_right, "scroll the value columns right"},
	{KEY_LEFT, "Left", act_left, "replay: one tick back (live: scroll left)"},
	{KEY_RIGHT, "Right", act_right, "replay: one tick forward (live: scroll right)"},
	{',', ",", act_back1, "one tick back (live: pauses and steps through the history)"},
	{'.', ".", act_fwd1, "one tick forward"},
	{'[', "[", act_back10, "ten ticks back"},
	{']', "]", act_fwd10, "ten ticks forward"},
	{'g', "g", act_first, "first tick of the recording (or history)"},
	{'G', "G", act_last, "last tick"},
	{'@', "@", act_goto, "go to a time: 10:05:00, '2026-11-25 10:05', +30s, -1m"},
	{'+', "+", act_faster, "replay: play faster"},
	{'-', "-", act_slower, "replay: play slower"},
	{'t', "t", act_theme, "next color theme"},
	{12, "^L", act_refresh, "redraw the screen"},
	{'q', "q", act_quit, "quit"},
	{KEY_F(10), "F10", act_quit, NULL},
};

#define NHEAD (sizeof(keys_head) / sizeof(keys_head[0]))
#define NTAIL (sizeof(keys_tail) / sizeof(keys_tail[0]))

const struct key_action *keys_table(size_t *n)
{
	static struct key_action *table;
	static char labels[256], help[512];
	size_t v, lo = 0, ho;

	if (!table) {
		table = xcalloc(NHEAD + views_len + NTAIL, sizeof(*table));
		memcpy(table, keys_head, sizeof(keys_head));
		ho = (size_t)snprintf(help, sizeof(help), "views:");
		for (v = 0; v < views_len; v++) {
			struct key_action *k = &table[NHEAD + v];

			k->key = (unsigned char)views[v].key;
			k->label = &labels[lo];
			lo += (size_t)snprintf(&labels[lo], sizeof(labels) - lo, "%c", views[v].key) + 1;
			k->act = act_view;
			k->help = v ? NULL : help;
			ho += (size_t)snprintf(help + ho, sizeof(help) - ho, " %c %s", views[v].key,
					       views[v].name);
		}
		memcpy(table + NHEAD + views_len, keys_tail, sizeof(keys_tail));
	}
	*n = NHEAD + views_len + NTAIL;
	return table;
}

int keys_handle(struct screen *s, int ch)
{
	size_t i, keys_len;
	const struct key_action *keys = keys_table(&keys_len);

	s->key = ch;
	for (i = 0; i < keys_len; i++)
		if (keys[i].key == ch)
			return keys[i].act(s);
	return R_NONE;
}
