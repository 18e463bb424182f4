/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Little-endian byte buffers: a growing writer and a bounds-checked reader. */
#ifndef LATOP_WIRE_H
#define LATOP_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* A growing output buffer. */
struct wbuf {
	uint8_t *p;
	size_t len, cap;
};

void wbuf_init(struct wbuf *b);
void wbuf_done(struct wbuf *b);
void wbuf_reset(struct wbuf *b);
/* Make room for n more bytes and return where they go (advance len yourself). */
uint8_t *wbuf_room(struct wbuf *b, size_t n);
void wbuf_bytes(struct wbuf *b, const void *p, size_t n);
void wbuf_u8(struct wbuf *b, uint8_t v);
void wbuf_u16(struct wbuf *b, uint16_t v);
void wbuf_u32(struct wbuf *b, uint32_t v);
void wbuf_u64(struct wbuf *b, uint64_t v);
void wbuf_varint(struct wbuf *b, uint64_t v);
/* A string as varint length + bytes, cut to max_bytes. */
void wbuf_str(struct wbuf *b, const char *s, size_t max_bytes);

/* A reader over len bytes; the first failure is kept in err (malloc'd). */
struct rbuf {
	const uint8_t *p;
	size_t len, pos;
	char *err;
};

void rbuf_init(struct rbuf *r, const void *p, size_t len);
void rbuf_done(struct rbuf *r);
/* Record a failure at the current position ("WHAT at byte N"), unless one is
 * recorded already (the first stays); return -1. */
int rbuf_fail(struct rbuf *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
size_t rbuf_left(const struct rbuf *r);
/* Each returns 0, or -1 with r->err naming what and where. */
int rbuf_u8(struct rbuf *r, uint8_t *v, const char *what);
int rbuf_u16(struct rbuf *r, uint16_t *v, const char *what);
int rbuf_u32(struct rbuf *r, uint32_t *v, const char *what);
int rbuf_u64(struct rbuf *r, uint64_t *v, const char *what);
int rbuf_varint(struct rbuf *r, uint64_t *v, const char *what);
/* A varint no larger than max. */
int rbuf_count(struct rbuf *r, uint64_t *v, uint64_t max, const char *what);
/* Point *p at the next n bytes. */
int rbuf_bytes(struct rbuf *r, const uint8_t **p, size_t n, const char *what);
/* A varint length + bytes, at most max_bytes, as a new NUL-terminated string. */
int rbuf_str(struct rbuf *r, char **s, size_t max_bytes, const char *what);

#endif
