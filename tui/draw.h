/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Drawing primitives on stdscr that know display widths and UTF-8 fallbacks. */
#ifndef LATOP_TUI_DRAW_H
#define LATOP_TUI_DRAW_H

#include <stdbool.h>
#include <curses.h>
#include "theme.h"

/* Glyphs with an ASCII fallback. */
enum glyph { G_UP, G_DOWN, G_FULL, G_MARK, G_PLAY, G_PAUSE, G_HLINE, G_COUNT };

/* Say whether the terminal takes UTF-8 (else glyphs are ASCII). */
void draw_init(bool utf8);
bool draw_utf8(void);
const char *draw_glyph(enum glyph g);
/* Display columns of s. */
int draw_width(const char *s);
/* Draw s at (y, x) clipped to w columns; return the columns used. */
int draw_text(int y, int x, int w, const char *s, attr_t a);
/* Draw s right-aligned in w columns. */
void draw_rtext(int y, int x, int w, const char *s, attr_t a);
/* Formatted draw_text. */
int draw_textf(int y, int x, int w, attr_t a, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Fill w columns with spaces. */
void draw_fill(int y, int x, int w, attr_t a);
/* Draw a horizontal bar of len cells (eighths with UTF-8); c is the ASCII fill.
 * Return the cells drawn. */
int draw_bar(int y, int x, double len, char c, attr_t a);

#endif
