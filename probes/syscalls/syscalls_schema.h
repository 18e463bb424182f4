/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The tables the syscalls probe fills (pure data: no libbpf here). */
#ifndef LATOP_SYSCALLS_SCHEMA_H
#define LATOP_SYSCALLS_SCHEMA_H

#include "../../core/table.h"

/* Column indexes of syscalls_schema, in order. */
enum syscalls_col {
	SC_PID, SC_TID, SC_COMM, SC_SYSCALL,
	SC_COUNT, SC_ERRORS, SC_LAT, SC_TIME, SC_ONCPU, SC_OFFCPU,
	SC_RUNQ, SC_BLOCK, SC_NET, SC_MM, SC_LOCK, SC_SOFTIRQ, SC_SLEEP, SC_OTHER,
	SC_FAULTS, SC_CSWITCH, SC_TASKCLOCK, SC_CYCLES, SC_INSTRUCTIONS,
	SC_CGROUP, SC_UNIT, SC_CONTAINER,
	SC_NCOLS
};

/* Column indexes of syscall_events_schema (one row per slow or sampled call). */
enum syscall_events_col {
	SE_TS, SE_PID, SE_TID, SE_COMM, SE_SYSCALL, SE_LAT, SE_RET,
	SE_ONCPU, SE_OFFCPU, SE_RUNQ, SE_BLOCK, SE_NET, SE_MM, SE_LOCK, SE_SOFTIRQ,
	SE_SLEEP, SE_OTHER, SE_CGROUP, SE_UNIT, SE_CONTAINER,
	SE_NCOLS
};

extern const struct schema syscalls_schema;
extern const struct schema syscall_events_schema;

#endif
