/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The tables the locks probe fills (pure data: no libbpf here). */
#ifndef LATOP_LOCKS_SCHEMA_H
#define LATOP_LOCKS_SCHEMA_H

#include "../../core/table.h"

/* Column indexes of locks_schema, in order. */
enum locks_col {
	LC_LOCK, LC_KIND, LC_SYM, LC_PID, LC_PROCESS, LC_COMM, LC_HOLDER, LC_HOLDER_COMM,
	LC_HOLDER_FN, LC_HOLDER_FNS,
	LC_COUNT, LC_BELOW, LC_WAITERS, LC_WAIT, LC_HOLD, LC_TIME, LC_HOLDER_OFFCPU,
	LC_SAMPLES, LC_CGROUP, LC_UNIT, LC_CONTAINER,
	LC_NCOLS
};

/* Column indexes of lock_events_schema (one row per slow or sampled wait). */
enum lock_events_col {
	LE_TS, LE_ID, LE_LOCK, LE_KIND, LE_SYM, LE_PID, LE_PROCESS, LE_TID, LE_COMM,
	LE_HOLDER, LE_HOLDER_COMM, LE_HOLDER_FN, LE_HOLDER_STACK,
	LE_WAIT, LE_HOLD, LE_HOLDER_OFFCPU, LE_HOLDER_RUNQ, LE_HOLDER_IO, LE_SAMPLES,
	LE_CGROUP, LE_UNIT, LE_CONTAINER,
	LE_NCOLS
};

/* Column indexes of lock_spans_schema (the timeline of an event; tui/detail.h). */
enum lock_spans_col {
	LS_ID, LS_ROW, LS_START, LS_DUR, LS_KIND, LS_LABEL,
	LS_NCOLS
};

extern const struct schema locks_schema;
extern const struct schema lock_events_schema;
extern const struct schema lock_spans_schema;

/* Lock kind names in enum lk_kind order (locks.h), NULL-terminated. */
extern const char *const lock_kind_names[];

#endif
