/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The query and search line: GNU readline through its callback interface. */
#ifndef LATOP_TUI_PROMPT_H
#define LATOP_TUI_PROMPT_H

#include <stdbool.h>

struct screen;

enum prompt_mode { PROMPT_OFF, PROMPT_QUERY, PROMPT_SEARCH, PROMPT_GOTO };

struct prompt {
	enum prompt_mode mode;
	char *error;		/* query_error_format output of the last Enter */
	char *hint;		/* completion candidates */
	char history_path[4096];
	bool history_from_rc;	/* the rc file named history_path */
};

/* Set readline up for curses and load the history; 0 or -1 with *cause. */
int prompt_init(struct prompt *p, char **cause);
/* Save the history and let readline go. */
void prompt_done(struct prompt *p);
/* Open the line in mode m with text prefilled. */
void prompt_open(struct screen *s, enum prompt_mode m, const char *prefill);
/* Feed one key to the open line; return reaction flags (keys.h). */
int prompt_key(struct screen *s, int ch);
/* Lines the prompt area takes now. */
int prompt_height(const struct screen *s);
/* Draw the prompt area ending at line y_last, w wide, and place the cursor. */
void prompt_draw(const struct screen *s, int y_last, int w);

#endif
