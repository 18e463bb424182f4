/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The tables the flows probe fills (pure data: no libbpf here). */
#ifndef LATOP_FLOWS_SCHEMA_H
#define LATOP_FLOWS_SCHEMA_H

#include "../../core/table.h"

/* Column indexes of flows_schema, in order. */
enum flows_col {
	FC_FLOW, FC_LADDR, FC_LPORT, FC_RADDR, FC_RPORT, FC_RNET, FC_PID, FC_COMM, FC_NETNS,
	FC_COUNT, FC_LAT, FC_BYTES, FC_BYTES_IN, FC_BYTES_OUT, FC_EVICTED, FC_UNSOLICITED,
	FC_CGROUP, FC_UNIT, FC_CONTAINER,
	FC_NCOLS
};

/* Column indexes of flow_events_schema (one row per slow, sampled or unanswered request). */
enum flow_events_col {
	FE_COL_TS, FE_COL_ID, FE_COL_FLOW, FE_COL_LADDR, FE_COL_LPORT, FE_COL_RADDR,
	FE_COL_RPORT, FE_COL_RNET, FE_COL_PID, FE_COL_COMM, FE_COL_NETNS, FE_COL_KIND,
	FE_COL_LAT, FE_COL_COUNT, FE_COL_CGROUP, FE_COL_UNIT, FE_COL_CONTAINER,
	FE_COL_NCOLS
};

extern const struct schema flows_schema;
extern const struct schema flow_events_schema;

struct filter_prog;

/* Return the flows key fields f's query reads nothing of, as flows.h's
 * FLOW_* flags: FLOW_AGG and the fields to clear when the query reads
 * neither flow nor rport (no row of it is one connection's), else 0. */
uint32_t flows_key_mask(const struct filter_prog *f);

#endif
