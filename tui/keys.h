/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The key table: an action changes state and returns reaction flags; it never draws. */
#ifndef LATOP_TUI_KEYS_H
#define LATOP_TUI_KEYS_H

#include <stddef.h>

struct screen;

enum reaction {
	R_NONE = 0,
	R_REDRAW = 1 << 0,	/* draw again */
	R_REQUERY = 1 << 1,	/* run the query again over the window */
	R_DETAIL = 1 << 2,	/* the selected row changed: rerun the detail query */
	R_QUIT = 1 << 3,
};

struct key_action {
	int key;		/* a curses key code or character */
	const char *label;	/* how help shows the key */
	int (*act)(struct screen *s);
	const char *help;	/* what it does (entries sharing act share a help line) */
};

/*
 * Every key, in help order: the fixed keys with one row per view (its key,
 * from probes/views.h) among them.  *n gets how many.  Built on first use;
 * stays valid.
 */
const struct key_action *keys_table(size_t *n);

/* Run the action bound to ch; return reaction flags. */
int keys_handle(struct screen *s, int ch);

#endif
