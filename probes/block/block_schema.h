/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The tables the block probe fills (pure data: no libbpf here). */
#ifndef LATOP_BLOCK_SCHEMA_H
#define LATOP_BLOCK_SCHEMA_H

#include "../../core/table.h"

/* Column indexes of block_schema, in order. */
enum block_col {
	BC_DEV, BC_OP, BC_SIZE, BC_PID, BC_COMM,
	BC_COUNT, BC_ERRORS, BC_REQUEUES, BC_MERGES, BC_BYTES, BC_LAT, BC_TIME,
	BC_ALLOC, BC_PLUG, BC_SCHED, BC_DEVICE,
	BC_ALLOC_LAT, BC_PLUG_LAT, BC_SCHED_LAT, BC_DEVICE_LAT,
	BC_INFLIGHT, BC_QUEUED, BC_CGROUP, BC_UNIT, BC_CONTAINER,
	BC_NCOLS
};

/* Column indexes of block_events_schema (one row per slow or sampled request). */
enum block_events_col {
	BE_TS, BE_ID, BE_DEV, BE_OP, BE_SIZE, BE_PID, BE_TID, BE_COMM, BE_SECTOR,
	BE_LAT, BE_ALLOC, BE_PLUG, BE_SCHED, BE_DEVICE, BE_REQUEUES, BE_ERROR,
	BE_CGROUP, BE_UNIT, BE_CONTAINER,
	BE_NCOLS
};

/* Column indexes of block_spans_schema (each event's stages on a time axis). */
enum block_spans_col {
	BS_COL_ID, BS_COL_ROW, BS_COL_START, BS_COL_DUR, BS_COL_KIND, BS_COL_LABEL,
	BS_COL_N
};

extern const struct schema block_schema;
extern const struct schema block_events_schema;
extern const struct schema block_spans_schema;

struct filter_prog;
/* Return the FILTER_NO_*_KEY flags (block.h) of the stats key fields the
 * query behind f reads nothing of: none unless f says what it reads of the
 * block table (fields_known, fields_table 0), the stats' table. */
uint32_t block_key_mask(const struct filter_prog *f);

#endif
