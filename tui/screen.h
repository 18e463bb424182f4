/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The screen: the state of one TUI session and the loop that owns the
 * terminal.  Actions (keys.c) and the prompt change this state through the
 * screen_* calls; only screen.c decides when to draw.
 */
#ifndef LATOP_TUI_SCREEN_H
#define LATOP_TUI_SCREEN_H

#include <stdbool.h>
#include <stdint.h>
#include "../core/source.h"
#include "../queries/query.h"
#include "tui.h"
#include "theme.h"
#include "table_view.h"
#include "detail.h"
#include "header.h"
#include "prompt.h"
#include "keys.h"

#define SCREEN_STACK_MAX 16

struct screen {
	struct source *src;
	const struct source_info *info;
	const struct tui_opts *opts;
	bool color;			/* colors allowed (not NO_COLOR / --no-color) */

	size_t view;			/* index in views[] */
	char **view_query;		/* the last query text of each view, or NULL */
	struct query *query;		/* the bound current query */
	char *query_text;		/* its canonical text */
	const struct schema *schema;	/* its FROM table */
	char *stack[SCREEN_STACK_MAX];	/* drill-down: the query texts to go back to */
	size_t depth;

	struct window history;		/* owns the recent ticks, oldest first, within
					 * latoprc's history_mb */
	uint64_t trimmed;		/* history.dropped at the last malloc_trim */
	struct window win;		/* the query's window: a view of history's tail */
	uint64_t t_end;			/* newest tick shown (UINT64_MAX: the latest) */
	struct result *res;
	char *exec_error;

	struct table_view tv;
	struct detail detail;
	struct header header;
	struct prompt prompt;

	bool paused;			/* live: display frozen at t_end */
	bool playing;			/* replay: ticks advance on their own */
	int speed;			/* replay: index into the speed table */
	uint64_t next_play_ms;
	size_t cursor;			/* replay: index of the newest tick read */
	bool at_end;			/* replay: the last tick has been read */
	bool src_done;			/* the source ended or failed: stop reading */

	int key;			/* the key being handled (for actions shared by keys) */
	bool help;
	int help_top;
	char status[512];
	enum role status_role;
	uint64_t status_ms;		/* when status was set */
	size_t skips;			/* ticks skipped that the status line counts */
	uint64_t skips_ms;		/* the status_ms of the message that counts them */
	char search[128];
	bool quit;
};

/* Say something in the status line. */
void screen_status(struct screen *s, enum role r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Refine the current query with text typed by the user and apply it,
 * pushing the old query (when it changes); -1 with *err if it does not parse
 * or bind, *err_text then being the text err's positions refer to (caller
 * frees). */
int screen_refine(struct screen *s, const char *text, struct query_error *err,
		  char **err_text);
/* Drill into the selected row: push the query, filter on the row's keys and
 * group by one key finer. */
int screen_drill(struct screen *s);
/* Go back to the query before the last drill or refine; false if none. */
bool screen_back(struct screen *s);
/* Switch to view v (its last query, else its default). */
int screen_view(struct screen *s, size_t v);
/* Sort by result column col (flips if it is the sort column already). */
int screen_sort(struct screen *s, int col, bool flip);
/* Replay or paused live: show tick idx of the history/recording. */
int screen_seek(struct screen *s, long delta, bool absolute);
/* Show the tick that covers the time text names (queries/qtime.h: local
 * 'YYYY-MM-DD HH:MM[:SS]', RFC 3339, 'HH:MM[:SS]' on the shown tick's day,
 * or +DUR/-DUR from the newest tick shown), or the nearest end of the
 * recording or history, saying so; live, this pauses.  -1 with why filled
 * when text is not a time or there is no tick. */
int screen_goto(struct screen *s, const char *text, char *why, size_t n);
/* Pause or resume the display (live), play or pause (replay). */
void screen_pause(struct screen *s);
/* Write the history to a snapshot file (latop-YYYYMMDD-HHMMSS.snap) and say
 * where. */
void screen_save(struct screen *s);
/* Switch to the next theme of the cycle. */
void screen_theme_next(struct screen *s);
/* The replay speed factor. */
double screen_speed(const struct screen *s);
/* Change the replay speed by delta steps. */
void screen_speed_step(struct screen *s, int delta);
/* Index of the newest shown tick in the recording (replay). */
size_t screen_cursor(const struct screen *s);
/* How far back the history reaches: from the start of its oldest tick to
 * the end of its newest (0 when empty). */
uint64_t history_span_ns(const struct screen *s);

#endif
