/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Error messages with positions: setting them, suggesting fixes, showing a caret. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "ast.h"

void error_set(struct query_error *err, int pos, int len, const char *fmt, ...)
{
	va_list ap;

	err->pos = pos;
	err->len = len;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

/* Return the edit distance (insert, delete, substitute, transpose) of a and b. */
static size_t error_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t *d, r;

	if (la > 64 || lb > 64)
		return 64;
	d = calloc((la + 1) * (lb + 1), sizeof(*d));
	if (!d)
		return 64;
#define D(x, y) d[(x) * (lb + 1) + (y)]
	for (i = 0; i <= la; i++)
		D(i, 0) = i;
	for (j = 0; j <= lb; j++)
		D(0, j) = j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			size_t c = D(i - 1, j - 1) + (a[i - 1] != b[j - 1]);

			if (D(i - 1, j) + 1 < c)
				c = D(i - 1, j) + 1;
			if (D(i, j - 1) + 1 < c)
				c = D(i, j - 1) + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    D(i - 2, j - 2) + 1 < c)
				c = D(i - 2, j - 2) + 1;
			D(i, j) = c;
		}
	}
	r = D(la, lb);
#undef D
	free(d);
	return r;
}

const char *error_suggest(const char *word, const char *const *cands, size_t n)
{
	size_t i, best = SIZE_MAX, len = strlen(word);
	size_t limit = len <= 4 ? 1 : 2;
	const char *pick = NULL;

	for (i = 0; i < n && cands[i]; i++) {
		size_t dist;

		if (!strcmp(cands[i], word))
			continue;
		dist = error_distance(word, cands[i]);
		if (dist <= limit && dist < len && dist < best) {
			best = dist;
			pick = cands[i];
		}
	}
	return pick;
}

/* Return the number of characters (not UTF-8 continuation bytes) in s[0..n). */
static int error_width(const char *s, int n)
{
	int i, w = 0;

	for (i = 0; i < n && s[i]; i++)
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	return w;
}

void query_error_format(const char *text, const struct query_error *err,
			char *buf, size_t n)
{
	int len = (int)strlen(text), pos = err->pos, line = 1, start = 0, end, i, w, off;
	size_t used;

	if (!n)
		return;
	if (pos < 0)
		pos = 0;
	if (pos > len)
		pos = len;
	for (i = 0; i < pos; i++) {
		if (text[i] == '\n') {
			line++;
			start = i + 1;
		}
	}
	end = start;
	while (end < len && text[end] != '\n')
		end++;
	if (strchr(text, '\n'))
		used = (size_t)snprintf(buf, n, "line %d, column %d: %s\n  %.*s\n  ", line,
					pos - start + 1, err->msg, end - start, text + start);
	else
		used = (size_t)snprintf(buf, n, "column %d: %s\n  %.*s\n  ", pos + 1, err->msg,
					end - start, text + start);
	off = error_width(text + start, pos - start);
	w = err->len > 0 ? error_width(text + pos, err->len < end - pos ? err->len : end - pos) : 0;
	if (w < 1)
		w = 1;
	if (used >= n)
		used = n - 1;
	for (i = 0; i < off + w && used + 1 < n; i++, used++)
		buf[used] = i < off ? ' ' : '^';
	if (used < n)
		buf[used] = 0;
}
