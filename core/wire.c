/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Little-endian byte buffers: a growing writer and a bounds-checked reader. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "varint.h"
#include "wire.h"
#include "xalloc.h"

/* Start an empty buffer. */
void wbuf_init(struct wbuf *b)
{
	b->p = NULL;
	b->len = b->cap = 0;
}

/* Free a buffer's storage. */
void wbuf_done(struct wbuf *b)
{
	free(b->p);
	wbuf_init(b);
}

/* Empty a buffer, keeping its storage. */
void wbuf_reset(struct wbuf *b)
{
	b->len = 0;
}

uint8_t *wbuf_room(struct wbuf *b, size_t n)
{
	if (n > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap - b->len < n) {
			if (cap > SIZE_MAX / 2)
				cap = SIZE_MAX;
			else
				cap *= 2;
		}
		b->p = xrealloc(b->p, cap);
		b->cap = cap;
	}
	return b->p + b->len;
}

/* Append n bytes. */
void wbuf_bytes(struct wbuf *b, const void *p, size_t n)
{
	if (!n)
		return;
	memcpy(wbuf_room(b, n), p, n);
	b->len += n;
}

/* Append one byte. */
void wbuf_u8(struct wbuf *b, uint8_t v)
{
	wbuf_bytes(b, &v, 1);
}

/* Append v as n little-endian bytes. */
static void wbuf_le(struct wbuf *b, uint64_t v, size_t n)
{
	uint8_t *p = wbuf_room(b, n);
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	b->len += n;
}

/* Append a little-endian u16. */
void wbuf_u16(struct wbuf *b, uint16_t v)
{
	wbuf_le(b, v, 2);
}

/* Append a little-endian u32. */
void wbuf_u32(struct wbuf *b, uint32_t v)
{
	wbuf_le(b, v, 4);
}

/* Append a little-endian u64. */
void wbuf_u64(struct wbuf *b, uint64_t v)
{
	wbuf_le(b, v, 8);
}

/* Append a LEB128 varint. */
void wbuf_varint(struct wbuf *b, uint64_t v)
{
	b->len += varint_put(wbuf_room(b, VARINT_MAX_BYTES), v);
}

void wbuf_str(struct wbuf *b, const char *s, size_t max_bytes)
{
	size_t n = s ? strnlen(s, max_bytes) : 0;

	wbuf_varint(b, n);
	wbuf_bytes(b, s, n);
}

/* Start reading len bytes at p. */
void rbuf_init(struct rbuf *r, const void *p, size_t len)
{
	r->p = p;
	r->len = len;
	r->pos = 0;
	r->err = NULL;
}

/* Free the reader's error message. */
void rbuf_done(struct rbuf *r)
{
	free(r->err);
	r->err = NULL;
}

int rbuf_fail(struct rbuf *r, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	if (r->err)
		return -1;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	r->err = xasprintf("%s at byte %zu", msg ? msg : fmt, r->pos);
	free(msg);
	return -1;
}

/* Return how many bytes are left. */
size_t rbuf_left(const struct rbuf *r)
{
	return r->len - r->pos;
}

/* Read n little-endian bytes. */
static int rbuf_le(struct rbuf *r, uint64_t *v, size_t n, const char *what)
{
	size_t i;

	if (rbuf_left(r) < n)
		return rbuf_fail(r, "%s cut short (%zu of %zu bytes)", what, rbuf_left(r), n);
	*v = 0;
	for (i = 0; i < n; i++)
		*v |= (uint64_t)r->p[r->pos + i] << (8 * i);
	r->pos += n;
	return 0;
}

int rbuf_u8(struct rbuf *r, uint8_t *v, const char *what)
{
	uint64_t x = 0;

	if (rbuf_le(r, &x, 1, what))
		return -1;
	*v = (uint8_t)x;
	return 0;
}

/* Read a little-endian u16. */
int rbuf_u16(struct rbuf *r, uint16_t *v, const char *what)
{
	uint64_t x = 0;

	if (rbuf_le(r, &x, 2, what))
		return -1;
	*v = (uint16_t)x;
	return 0;
}

/* Read a little-endian u32. */
int rbuf_u32(struct rbuf *r, uint32_t *v, const char *what)
{
	uint64_t x = 0;

	if (rbuf_le(r, &x, 4, what))
		return -1;
	*v = (uint32_t)x;
	return 0;
}

/* Read a little-endian u64. */
int rbuf_u64(struct rbuf *r, uint64_t *v, const char *what)
{
	return rbuf_le(r, v, 8, what);
}

/* Read a LEB128 varint. */
int rbuf_varint(struct rbuf *r, uint64_t *v, const char *what)
{
	size_t n = varint_get(r->p + r->pos, rbuf_left(r), v);

	if (!n)
		return rbuf_fail(r, "bad or cut-short number for %s", what);
	r->pos += n;
	return 0;
}

int rbuf_count(struct rbuf *r, uint64_t *v, uint64_t max, const char *what)
{
	if (rbuf_varint(r, v, what))
		return -1;
	if (*v > max)
		return rbuf_fail(r, "%s %llu exceeds the limit of %llu", what,
				 (unsigned long long)*v, (unsigned long long)max);
	return 0;
}

int rbuf_bytes(struct rbuf *r, const uint8_t **p, size_t n, const char *what)
{
	if (rbuf_left(r) < n)
		return rbuf_fail(r, "%s cut short (%zu of %zu bytes)", what, rbuf_left(r), n);
	*p = r->p + r->pos;
	r->pos += n;
	return 0;
}

int rbuf_str(struct rbuf *r, char **s, size_t max_bytes, const char *what)
{
	const uint8_t *p = NULL;
	uint64_t n;

	if (rbuf_count(r, &n, max_bytes, what) || rbuf_bytes(r, &p, (size_t)n, what))
		return -1;
	if (memchr(p, 0, (size_t)n))
		return rbuf_fail(r, "%s contains a NUL byte", what);
	*s = xstrndup((const char *)p, (size_t)n);
	return 0;
}
