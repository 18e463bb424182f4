/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Allocation that never returns NULL: out of memory aborts with a message. */
#ifndef LATOP_XALLOC_H
#define LATOP_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *ptr, size_t size);
/* Grow an array of nmemb elements of size bytes, checking the multiplication. */
void *xreallocarray(void *ptr, size_t nmemb, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* Format into a new string (for `char **cause` messages; caller frees). */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
