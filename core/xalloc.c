/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Allocation that never returns NULL. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xalloc.h"

/* Report that memory ran out and stop. */
static void xalloc_die(size_t size)
{
	fprintf(stderr, "latop: out of memory (allocating %zu bytes)\n", size);
	abort();
}

/* Allocate size bytes (at least one). */
void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		xalloc_die(size);
	return p;
}

/* Allocate a zeroed array. */
void *xcalloc(size_t nmemb, size_t size)
{
	void *p;

	if (!nmemb || !size)
		nmemb = size = 1;
	p = calloc(nmemb, size);
	if (!p)
		xalloc_die(nmemb * size);
	return p;
}

/* Resize ptr to size bytes (at least one). */
void *xrealloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size ? size : 1);

	if (!p)
		xalloc_die(size);
	return p;
}

void *xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	if (size && nmemb > (size_t)-1 / size)
		xalloc_die((size_t)-1);
	return xrealloc(ptr, nmemb * size);
}

/* Copy a string. */
char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		xalloc_die(strlen(s) + 1);
	return p;
}

/* Copy at most n bytes of a string, always terminated. */
char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (!p)
		xalloc_die(n + 1);
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		xalloc_die(strlen(fmt));
	return s;
}
