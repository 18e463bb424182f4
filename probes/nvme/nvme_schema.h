/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The tables the nvme probe fills (pure data: no libbpf here). */
#ifndef LATOP_NVME_SCHEMA_H
#define LATOP_NVME_SCHEMA_H

#include "../../core/table.h"

#define NVME_NSTAGES 10		/* stage columns, in enum nvme_stage order */

/* Column indexes of nvme_schema, in order. */
enum nvme_col {
	NC_SIDE, NC_SESSION, NC_OP, NC_SIZE, NC_QID, NC_CNTLID,
	NC_COUNT, NC_MISFIT, NC_LAT, NC_TIME,
	NC_STAGE0,				/* queue .. t_send: FF_PART durations */
	NC_HIST0 = NC_STAGE0 + NVME_NSTAGES,	/* queue_lat .. t_send_lat: histograms */
	NC_NCOLS = NC_HIST0 + NVME_NSTAGES
};

/* Column indexes of nvme_events_schema (one row per I/O or target command). */
enum nvme_events_col {
	NE_TS, NE_ID, NE_SIDE, NE_SESSION, NE_OP, NE_SIZE, NE_QID, NE_CNTLID, NE_CID, NE_SEQ,
	NE_LAT,
	NE_STAGE0,
	NE_NCOLS = NE_STAGE0 + NVME_NSTAGES
};

/* Column indexes of nvme_spans (an I/O's stages on one time axis, for the detail pane). */
enum nvme_spans_col {
	NP_ID, NP_ROW, NP_START, NP_DUR, NP_KIND, NP_LABEL,
	NP_NCOLS
};

extern const struct schema nvme_schema;
extern const struct schema nvme_spans_schema;
extern const struct schema nvme_events_schema;

/* The stage names, in column order ("queue", ... "t_send"). */
extern const char *const nvme_stage_names[NVME_NSTAGES];

struct filter_prog;
/* Return the NVME_NO_*_KEY flags (nvme.h) of the stats key fields the query
 * behind f reads nothing of: none unless f says what it reads of the nvme
 * table (fields_known, fields_table 0), the stats' table. */
uint32_t nvme_key_mask(const struct filter_prog *f);

/* Name an NVMe opcode ("read", "write", "flush", else "op<N>") into buf. */
const char *nvme_op_name(unsigned op, char *buf, size_t len);

#endif
