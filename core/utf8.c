/* SPDX-License-Identifier: GPL-3.0-or-later */
/* UTF-8 checks, cleaning and widths (see utf8.h). */
#include <locale.h>
#include <pthread.h>
#include <string.h>
#include <wchar.h>
#include "utf8.h"
#include "xalloc.h"

int utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	int n, i;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	/* The second byte's range rules out overlongs, surrogates and > U+10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* The code point of the well-formed n-byte sequence at s. */
static unsigned utf8_cp(const unsigned char *s, int n)
{
	unsigned cp = n == 1 ? s[0] : s[0] & (0x7f >> n);
	int i;

	for (i = 1; i < n; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

char *utf8_clean(const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	/* Each input byte becomes at most 3 (U+FFFD). */
	char *out = xmalloc(strlen((const char *)p) * 3 + 1), *o = out;

	while (*p) {
		int n = utf8_len(p);
		unsigned cp = n ? utf8_cp(p, n) : 0;

		if (!n) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			p++;
			continue;
		}
		if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
			*o++ = '?';
		else
			memcpy(o, p, (size_t)n), o += n;
		p += n;
	}
	*o = 0;
	return out;
}

static locale_t utf8_loc;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void utf8_loc_open(void)
{
	utf8_loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

int utf8_width(const char *s)
{
	/* wcwidth(3) reads LC_CTYPE: a C.UTF-8 locale of our own on this
	 * thread while measuring, so that `latop report` under LANG=C
	 * measures as a UTF-8 terminal shows. */
	const unsigned char *p = (const unsigned char *)s;
	locale_t old = (locale_t)0;
	int w = 0;

	pthread_once(&utf8_once, utf8_loc_open);
	if (utf8_loc)
		old = uselocale(utf8_loc);
	while (*p) {
		int n = utf8_len(p), cw;

		if (!n) {
			w++, p++;
			continue;
		}
		cw = utf8_loc ? wcwidth((wchar_t)utf8_cp(p, n)) : 1;
		w += cw < 0 ? 1 : cw;
		p += n;
	}
	if (utf8_loc)
		uselocale(old);
	return w;
}
