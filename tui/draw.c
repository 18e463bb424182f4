/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Width-aware text and bars on stdscr. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "draw.h"

static bool utf8;

static const char *const glyphs[G_COUNT][2] = {
	[G_UP] = {"^", "\u25b2"},
	[G_DOWN] = {"v", "\u25bc"},
	[G_FULL] = {"#", "\u2588"},
	[G_MARK] = {"<", "\u25c0"},
	[G_PLAY] = {">", "\u25b6"},
	[G_PAUSE] = {"||", "\u275a\u275a"},
	[G_HLINE] = {"-", "\u2500"},
};

/* Partial blocks for eighths of a cell, 1/8 .. 7/8. */
static const char *const eighths[8] = {
	"", "\u258f", "\u258e", "\u258d", "\u258c", "\u258b", "\u258a", "\u2589",
};

void draw_init(bool on)
{
	utf8 = on;
}

/* Whether glyphs are UTF-8. */
bool draw_utf8(void)
{
	return utf8;
}

/* A glyph for this terminal. */
const char *draw_glyph(enum glyph g)
{
	return glyphs[g][utf8];
}

/* Decode one character of s into *wc; return its bytes (at least 1). */
static size_t char_next(const char *s, wchar_t *wc, mbstate_t *st)
{
	size_t n = mbrtowc(wc, s, MB_CUR_MAX, st);

	if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
		memset(st, 0, sizeof(*st));
		*wc = L'?';
		return 1;
	}
	return n;
}

int draw_width(const char *s)
{
	mbstate_t st;
	wchar_t wc;
	int w = 0, cw;

	memset(&st, 0, sizeof(st));
	while (*s) {
		s += char_next(s, &wc, &st);
		cw = wcwidth(wc);
		w += cw < 0 ? 1 : cw;
	}
	return w;
}

int draw_text(int y, int x, int w, const char *s, attr_t a)
{
	mbstate_t st;
	wchar_t wc, out[2] = {0};
	int used = 0, cw;

	if (w <= 0)
		return 0;
	memset(&st, 0, sizeof(st));
	attrset(a);
	move(y, x);
	while (*s) {
		s += char_next(s, &wc, &st);
		cw = wcwidth(wc);
		if (cw < 0) {
			wc = L'?';
			cw = 1;
		}
		if (used + cw > w)
			break;
		out[0] = wc;
		addnwstr(out, 1);
		used += cw;
	}
	attrset(A_NORMAL);
	return used;
}

void draw_rtext(int y, int x, int w, const char *s, attr_t a)
{
	int sw = draw_width(s);

	if (sw < w)
		draw_fill(y, x, w - sw, a);
	draw_text(y, x + (sw < w ? w - sw : 0), w, s, a);
}

int draw_textf(int y, int x, int w, attr_t a, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return draw_text(y, x, w, buf, a);
}

void draw_fill(int y, int x, int w, attr_t a)
{
	if (w <= 0)
		return;
	attrset(a);
	mvhline(y, x, ' ', w);
	attrset(A_NORMAL);
}

int draw_bar(int y, int x, double len, char c, attr_t a)
{
	int full = (int)len, i, part;

	if (len <= 0)
		return 0;
	attrset(a);
	move(y, x);
	if (!utf8) {
		int n = (int)(len + 0.5);

		for (i = 0; i < n; i++)
			addch((chtype)(unsigned char)c);
		attrset(A_NORMAL);
		return n;
	}
	for (i = 0; i < full; i++)
		addstr(glyphs[G_FULL][1]);
	part = (int)((len - full) * 8);
	if (part > 0)
		addstr(eighths[part]);
	attrset(A_NORMAL);
	return full + (part > 0);
}
