/* SPDX-License-Identifier: GPL-3.0-or-later */
/* LEB128 varints for the compact encodings (histograms, snapshot payloads). */
#ifndef LATOP_VARINT_H
#define LATOP_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define VARINT_MAX_BYTES 10

/* Write v at buf (room for VARINT_MAX_BYTES); return the bytes written. */
static inline size_t varint_put(uint8_t *buf, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		buf[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	buf[n++] = (uint8_t)v;
	return n;
}

/* Read a varint from buf[0..len); return bytes used, 0 if truncated or too long. */
static inline size_t varint_get(const uint8_t *buf, size_t len, uint64_t *v)
{
	uint64_t r = 0;
	size_t i;

	*v = 0;
	for (i = 0; i < len && i < VARINT_MAX_BYTES; i++) {
		uint8_t b = buf[i];

		if (i == VARINT_MAX_BYTES - 1 && b > 1)
			return 0;
		r |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*v = r;
			return i + 1;
		}
	}
	return 0;
}

#endif
