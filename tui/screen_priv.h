/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What the parts of the screen share and nothing else needs: the loop
 * (screen.c), the query stack (stack.c) and time travel over the tick
 * history (timetravel.c).
 */
#ifndef LATOP_TUI_SCREEN_PRIV_H
#define LATOP_TUI_SCREEN_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include "screen.h"

#define SPEED_1X 2	/* the index of 1x in the replay speed table (timetravel.c) */

/* Now on the monotonic clock, in ms. */
uint64_t now_ms(void);

/* Whether an error is showing on the status line: a message that only
 * says what a key did (shown elsewhere too) waits until it is gone. */
bool screen_error_shown(const struct screen *s);

/* Forget every query to go back to. */
void stack_clear(struct screen *s);

/* Bound the history's memory by latoprc's history_mb (default
 * HISTORY_MB_DEFAULT). */
#define HISTORY_MB_DEFAULT 64
void history_bound(struct screen *s);
/* Add a tick to the history (taking it), dropping the oldest beyond its bound;
 * what they held goes back to the system. */
void history_push(struct screen *s, struct tick *t);
/* Rerun the detail query for the selected row, if the detail pane is open. */
void detail_refresh(struct screen *s);
/* Run the query over the window ending at t_end; the result or the error is
 * left in s->res or s->exec_error. */
void requery(struct screen *s);

#endif
