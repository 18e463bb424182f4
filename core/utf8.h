/* SPDX-License-Identifier: GPL-3.0-or-later */
/* UTF-8: what is well formed, and text made safe and measured for a terminal. */
#ifndef LATOP_UTF8_H
#define LATOP_UTF8_H

/*
 * Return the length of the well-formed UTF-8 sequence at s (1 to 4), or 0
 * if the bytes there do not form one (RFC 3629's table: no overlong forms,
 * no surrogates, nothing above U+10FFFF).  Reads at most up to s's first
 * byte that does not continue a sequence (a NUL ends it).
 */
int utf8_len(const unsigned char *s);

/*
 * Return s as text to print on a terminal (malloc'd): well-formed UTF-8
 * passes through; each byte that starts no well-formed sequence (a name cut
 * inside a character, Latin-1) becomes U+FFFD, and each control character
 * (C0, DEL and C1: a comm may hold an escape sequence) becomes '?', as
 * ps(1) shows them.  NULL is "".
 */
char *utf8_clean(const char *s);

/*
 * Return the columns a terminal gives s, which utf8_clean made: wcwidth(3)
 * of each character in a UTF-8 locale (two for a wide one, none for a
 * combining mark), whatever the process's locale; one a character where
 * the C library has no UTF-8 locale.
 */
int utf8_width(const char *s);

#endif
