/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The syscalls tables: per syscall x thread aggregates, and single events. */
#include <linux/types.h>
#include "../filter.h"
#include "../../core/cgroup.h"
#include "systbl.h"
#include "syscalls_schema.h"

static const char *syscall_domain_name(size_t i)
{
	const struct syscall_ent *e = syscall_at(i);

	return e ? e->name : NULL;
}

static bool syscall_domain_valid(const char *s)
{
	return syscall_nr(s) >= 0;
}

static int64_t syscall_domain_value(const char *s)
{
	return syscall_nr(s);
}

/* Syscall names; the kernel tests their numbers. */
static const struct field_domain syscall_domain = {
	syscall_domain_name, syscall_domain_valid, syscall_domain_value,
};

/*
 * The time of a call (lat) splits two ways, each summing to it exactly:
 *   oncpu + offcpu, and
 *   runq + block + net + mm + lock + softirq + sleep + other.
 * The second split is marked FF_PART and its total FF_TOTAL: queries can
 * unpivot it into one row per subsystem (man latop-query, SUBSYSTEMS).
 */
static const struct field syscalls_fields[SC_NCOLS] = {
	[SC_PID]     = {"pid", FT_U64, FF_KEY | FF_PUSH, "", "process id (tgid)", FTERM_PID},
	[SC_TID]     = {"tid", FT_U64, FF_KEY | FF_PUSH | FF_HIDDEN, "", "thread id", FTERM_TID},
	[SC_COMM]    = {"comm", FT_STR, FF_KEY | FF_PUSH, "", "thread name when it made the calls", FTERM_COMM},
	[SC_SYSCALL] = {"syscall", FT_STR, FF_KEY | FF_PUSH, "", "system call name", FTERM_SYSCALL, &syscall_domain},
	[SC_COUNT]   = {"count", FT_U64, FF_SUM, "", "calls completed (exit, exit_group: entered, "
			"with no lat)"},
	[SC_ERRORS]  = {"errors", FT_U64, FF_SUM, "", "calls that returned an error"},
	[SC_LAT]     = {"lat", FT_HIST, FF_PUSH, "ns", "latency of each call, entry to exit", FTERM_LAT},
	[SC_TIME]    = {"time", FT_DUR, FF_SUM | FF_TOTAL, "ns", "total time in calls (sum of lat)"},
	[SC_ONCPU]   = {"oncpu", FT_DUR, FF_SUM, "ns", "time on a CPU during calls"},
	[SC_OFFCPU]  = {"offcpu", FT_DUR, FF_SUM, "ns", "time off CPU during calls (blocked or runnable)"},
	[SC_RUNQ]    = {"runq", FT_DUR, FF_SUM | FF_PART, "ns", "scheduler: runnable but waiting for a CPU"},
	[SC_BLOCK]   = {"block", FT_DUR, FF_SUM | FF_PART, "ns", "block I/O: waiting on I/O, block softirqs"},
	[SC_NET]     = {"net", FT_DUR, FF_SUM | FF_PART, "ns", "network: socket waits, transmit, net softirqs"},
	[SC_MM]      = {"mm", FT_DUR, FF_SUM | FF_PART, "ns", "memory: reclaim, mmap lock, page-fault handling"},
	[SC_LOCK]    = {"lock", FT_DUR, FF_SUM | FF_PART, "ns", "lock waits: kernel lock contention, futex waits"},
	[SC_SOFTIRQ] = {"softirq", FT_DUR, FF_SUM | FF_PART, "ns", "other softirqs run during calls (timers, tasklets, rcu)"},
	[SC_SLEEP]   = {"sleep", FT_DUR, FF_SUM | FF_PART, "ns", "other voluntary waits (pipes, poll, timers)"},
	[SC_OTHER]   = {"other", FT_DUR, FF_SUM | FF_PART, "ns", "on-CPU kernel work not in a subsystem above"},
	[SC_FAULTS]  = {"faults", FT_U64, FF_SUM, "", "page faults taken during calls"},
	[SC_CSWITCH] = {"cswitch", FT_U64, FF_SUM, "", "context switches during calls"},
	[SC_TASKCLOCK] = {"taskclock", FT_DUR, FF_SUM | FF_HIDDEN, "ns", "cpu-clock perf counter during calls"},
	[SC_CYCLES]  = {"cycles", FT_U64, FF_SUM | FF_HIDDEN, "", "CPU cycles during calls (hardware counter)"},
	[SC_INSTRUCTIONS] = {"instructions", FT_U64, FF_SUM | FF_HIDDEN, "", "instructions retired during calls (hardware counter)"},
	[SC_CGROUP]  = {"cgroup", FT_STR, FF_KEY | FF_PUSH | FF_HIDDEN, "", "cgroup v2 path of the thread when it made the calls", FTERM_CGROUP, &cgroup_domain},
	[SC_UNIT]    = {"unit", FT_STR, FF_KEY | FF_HIDDEN, "", "systemd unit of the cgroup"},
	[SC_CONTAINER] = {"container", FT_STR, FF_KEY | FF_HIDDEN, "", "container id (12 digits) of the cgroup"},
};

const struct schema syscalls_schema = {
	.table = "syscalls",
	.help = "per-syscall cost by process and kernel subsystem",
	.nfields = SC_NCOLS,
	.fields = syscalls_fields,
};

static const struct field syscall_events_fields[SE_NCOLS] = {
	[SE_TS]      = {"ts", FT_U64, FF_KEY, "ns", "end of the call, CLOCK_REALTIME ns (a key: one row per call)"},
	[SE_PID]     = {"pid", FT_U64, FF_KEY | FF_PUSH, "", "process id (tgid)", FTERM_PID},
	[SE_TID]     = {"tid", FT_U64, FF_KEY | FF_PUSH, "", "thread id", FTERM_TID},
	[SE_COMM]    = {"comm", FT_STR, FF_KEY | FF_PUSH, "", "thread name", FTERM_COMM},
	[SE_SYSCALL] = {"syscall", FT_STR, FF_KEY | FF_PUSH, "", "system call name", FTERM_SYSCALL, &syscall_domain},
	[SE_LAT]     = {"lat", FT_DUR, FF_PUSH | FF_TOTAL, "ns", "latency of this call", FTERM_LAT},
	[SE_RET]     = {"ret", FT_U64, 0, "", "return value (negative errno as two's complement)"},
	[SE_ONCPU]   = {"oncpu", FT_DUR, FF_SUM, "ns", "time on a CPU"},
	[SE_OFFCPU]  = {"offcpu", FT_DUR, FF_SUM, "ns", "time off CPU"},
	[SE_RUNQ]    = {"runq", FT_DUR, FF_SUM | FF_PART, "ns", "runnable, waiting for a CPU"},
	[SE_BLOCK]   = {"block", FT_DUR, FF_SUM | FF_PART, "ns", "block I/O"},
	[SE_NET]     = {"net", FT_DUR, FF_SUM | FF_PART, "ns", "network"},
	[SE_MM]      = {"mm", FT_DUR, FF_SUM | FF_PART, "ns", "memory management"},
	[SE_LOCK]    = {"lock", FT_DUR, FF_SUM | FF_PART, "ns", "lock waits"},
	[SE_SOFTIRQ] = {"softirq", FT_DUR, FF_SUM | FF_PART, "ns", "other softirqs"},
	[SE_SLEEP]   = {"sleep", FT_DUR, FF_SUM | FF_PART, "ns", "other voluntary waits"},
	[SE_OTHER]   = {"other", FT_DUR, FF_SUM | FF_PART, "ns", "other on-CPU kernel work"},
	[SE_CGROUP]  = {"cgroup", FT_STR, FF_KEY | FF_PUSH | FF_HIDDEN, "", "cgroup v2 path of the thread", FTERM_CGROUP, &cgroup_domain},
	[SE_UNIT]    = {"unit", FT_STR, FF_KEY | FF_HIDDEN, "", "systemd unit of the cgroup"},
	[SE_CONTAINER] = {"container", FT_STR, FF_KEY | FF_HIDDEN, "", "container id (12 digits) of the cgroup"},
};

const struct schema syscall_events_schema = {
	.table = "syscall_events",
	.help = "single syscalls above THRESHOLD or sampled with SAMPLE",
	.nfields = SE_NCOLS,
	.fields = syscall_events_fields,
};
