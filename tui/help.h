/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The help screen: every key from the key table, and a query cheat sheet. */
#ifndef LATOP_TUI_HELP_H
#define LATOP_TUI_HELP_H

/* Lines the help text has (for scrolling). */
int help_lines(void);
/* Draw the help screen from line top of the text, h lines, w wide. */
void help_draw(int top, int h, int w);

#endif
