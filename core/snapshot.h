/*
 * Snapshot files (DESIGN.md section 5).
 *
 *   header  : "LATOPSNP" magic, u16 major, u16 minor, host, kernel,
 *             boot offset, clock id, start time
 *   chunks  : u32 type, u32 payload length, u32 crc32(payload), payload
 *             SCHEMA  one table's schema (name, fields with type/flags/unit/help)
 *             FRAMES  one tick: t_ns + frames, zstd-compressed
 *             INDEX   (t_ns, file offset) per FRAMES chunk, written at close
 *   trailer : the INDEX chunk is last; a reader without it rebuilds it by scanning.
 *
 * The writer writes PATH.tmp (mode 0600) and renames it on close; a killed
 * recorder leaves PATH.tmp whose complete chunks are all readable.  Readers
 * reject unknown major versions, bad CRCs and truncation with a message that
 * names the byte offset, and keep every complete chunk before the damage.
 */
#ifndef LATOP_SNAPSHOT_H
#define LATOP_SNAPSHOT_H

#include <stdio.h>
#include <stdint.h>
#include "table.h"
#include "source.h"

#define SNAP_MAJOR 2
#define SNAP_MINOR 0

struct snap_writer;
struct snap_reader;

struct snap_writer *snap_create(const char *path, const struct source_info *info,
				char **cause);
/* Write a tick; schemas are written the first time a table is seen. */
int snap_write_tick(struct snap_writer *w, const struct tick *t, char **cause);
/* Write the index, fsync, rename PATH.tmp to PATH.  Frees w. */
int snap_close(struct snap_writer *w, char **cause);
/* Abandon: leave PATH.tmp as it is (readable prefix).  Frees w. */
void snap_abandon(struct snap_writer *w);

/* Open for reading.  A damaged file still opens if any tick precedes the
 * damage; *warning then says what was lost and where (caller frees). */
struct snap_reader *snap_open(const char *path, char **cause, char **warning);
const struct source_info *snap_info(struct snap_reader *r);
size_t snap_nticks(struct snap_reader *r);
/* Read tick idx; 0 ok, -1 error with *cause. */
int snap_read_tick(struct snap_reader *r, size_t idx, struct tick *out, char **cause);
void snap_free(struct snap_reader *r);

#endif
