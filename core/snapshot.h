/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Snapshot files: what `latop record` writes and report, replay and BASELINE
 * read.  The byte layout (version 2: a header and its copy, then chunks with a
 * sync word and CRCs over every byte that changes meaning) is described at the
 * top of core/snapshot.c; what users are told of it, in latop(1), SNAPSHOT FILES.
 *
 * The writer writes PATH.tmp (mode 0600; PATH.XXXXXX.tmp when PATH.tmp
 * exists, which it never follows nor truncates) and renames it on close
 * onto nothing or a regular file; a killed recorder leaves that file, whose
 * complete chunks are all readable, and a failed write cuts it back to its
 * last complete chunk.  Readers reject unknown major versions, pass damaged
 * chunks with a warning that names the byte offset, and keep every intact
 * chunk before and after the damage.
 */
#ifndef LATOP_SNAPSHOT_H
#define LATOP_SNAPSHOT_H

#include <stdio.h>
#include <stdint.h>
#include "table.h"
#include "source.h"

#define SNAP_MAJOR 2
#define SNAP_MINOR 1	/* 1: frames carry an overflow count */

struct snap_writer;
struct snap_reader;

/* 0 when path can take a recording: nothing there or a regular file (not a
 * device, FIFO, socket, directory or symbolic link), in a directory this
 * process can write; else -1 with *cause naming what is wrong. */
int snap_check_target(const char *path, char **cause);
/* Check path again, create its temporary file (mode 0600) and write the
 * header; NULL with *cause. */
struct snap_writer *snap_create(const char *path, const struct source_info *info,
				char **cause);
/* The file the writer writes until close (PATH.tmp or PATH.XXXXXX.tmp). */
const char *snap_tmp_path(const struct snap_writer *w);
/* How many ticks that file holds whole. */
size_t snap_ticks_written(const struct snap_writer *w);
/* Write a tick; schemas are written the first time a table is seen. */
int snap_write_tick(struct snap_writer *w, const struct tick *t, char **cause);
/* Bytes the file holds now (header, schemas and ticks written whole). */
uint64_t snap_bytes(const struct snap_writer *w);
/* Write a tick as snap_write_tick does unless the file holds a tick already
 * and, with this one, would pass max_bytes once closed (its index counted):
 * then write nothing and return 1 (max_bytes 0: no limit).  0 written, -1
 * error with *cause. */
int snap_write_tick_max(struct snap_writer *w, const struct tick *t, uint64_t max_bytes,
			char **cause);
/* Write the index, fsync, rename the temporary file to PATH.  Frees w; on
 * failure the temporary file keeps every tick written. */
int snap_close(struct snap_writer *w, char **cause);
/* Abandon: leave the temporary file as it is (readable prefix).  Frees w. */
void snap_abandon(struct snap_writer *w);

/* Open for reading.  A damaged file still opens if any tick precedes the
 * damage; *warning then says what was lost and where (caller frees). */
struct snap_reader *snap_open(const char *path, char **cause, char **warning);
const struct source_info *snap_info(struct snap_reader *r);
size_t snap_nticks(struct snap_reader *r);
/* Read tick idx into out; 0 ok, -1 error with *cause naming the tick and its
 * offset. */
int snap_read_tick(struct snap_reader *r, size_t idx, struct tick *out, char **cause);
void snap_free(struct snap_reader *r);

#endif
