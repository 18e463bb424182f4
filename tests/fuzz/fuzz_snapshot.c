/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the snapshot reader: open the input as a file, read
 * every tick, free.  When the first byte is odd, the rest is used with every
 * chunk's CRCs recomputed first, so mutations get past snap_open's checks to
 * the decoders snap_read_tick runs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include "core/snapshot.h"

/* Return the little-endian u32 at p. */
static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Store v little-endian at p. */
static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/*
 * Recompute the header and chunk CRCs of a candidate file in place: each
 * chunk head (sync, type, length, payload CRC, head CRC) that starts with the
 * sync word gets CRCs that match.
 */
static void fix_crcs(uint8_t *p, size_t len)
{
	size_t off;

	if (len < 20)
		return;
	off = le32(p + 12);
	if (off > len - 20)
		return;
	put_le32(p + 16, (uint32_t)crc32(0, p + 20, (uInt)off));
	off += 20;
	while (len - off >= 20 && le32(p + off) == 0x4b48434c) {
		uint32_t n = le32(p + off + 8);

		if (n > len - off - 20)
			return;
		put_le32(p + off + 12, (uint32_t)crc32(0, p + off + 20, n));
		put_le32(p + off + 16, (uint32_t)crc32(0, p + off, 16));
		off += 20 + (size_t)n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], *cause = NULL, *warning = NULL;
	struct snap_reader *r;
	uint8_t *copy;
	size_t i;
	int fd;

	if (size < 1)
		return 0;
	copy = malloc(size);
	memcpy(copy, data + 1, size - 1);
	if (data[0] & 1)
		fix_crcs(copy, size - 1);
	fd = memfd_create("fuzz_snapshot", MFD_CLOEXEC);
	if (fd < 0 || write(fd, copy, size - 1) != (ssize_t)(size - 1))
		abort();
	free(copy);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = snap_open(path, &cause, &warning);
	if (r) {
		for (i = 0; i < snap_nticks(r); i++) {
			struct tick t;

			if (snap_read_tick(r, i, &t, &cause) == 0) {
				tick_done(&t);
			} else {
				free(cause);
				cause = NULL;
			}
		}
		snap_free(r);
	}
	free(cause);
	free(warning);
	close(fd);
	return 0;
}
