/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Error messages with positions: setting them and showing a caret. */
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
