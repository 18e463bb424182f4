/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The tables the paths probe fills (pure data: no libbpf here). */
#ifndef LATOP_PATHS_SCHEMA_H
#define LATOP_PATHS_SCHEMA_H

#include "../../core/table.h"

/* Column indexes of paths_schema (per path shape x process, per tick). */
enum paths_col {
	PC_PATH, PC_LPORT, PC_PID, PC_COMM,
	PC_COUNT, PC_LAT, PC_TIME, PC_CALLS, PC_DOWN, PC_SELF, PC_BYTES_IN, PC_BYTES_OUT,
	PC_CGROUP, PC_UNIT, PC_CONTAINER,
	PC_NCOLS
};

/* Column indexes of path_events_schema (one row per slow or sampled request). */
enum path_events_col {
	PE_TS, PE_ID, PE_PATH, PE_LPORT, PE_PID, PE_TID, PE_COMM,
	PE_LADDR, PE_RADDR, PE_RPORT, PE_SEQ, PE_NTH, PE_START,
	PE_LAT, PE_CALLS, PE_DOWN, PE_SELF, PE_BYTES_IN, PE_BYTES_OUT,
	PE_CGROUP, PE_UNIT, PE_CONTAINER,
	PE_NCOLS
};

/* Column indexes of path_spans_schema (a request's timeline). */
enum path_spans_col {
	PS_ID, PS_ROW, PS_START, PS_DUR, PS_KIND, PS_LABEL,
	PS_LADDR, PS_LPORT, PS_RADDR, PS_RPORT, PS_SEQ, PS_N,
	PS_NCOLS
};

extern const struct schema paths_schema;
extern const struct schema path_events_schema;
extern const struct schema path_spans_schema;

#endif
