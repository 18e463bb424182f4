/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The syscalls probe: structs shared by syscalls.bpf.c and syscalls.c
 * (__u32/__u64 only).  Include <linux/types.h> (user space) or vmlinux.h
 * (BPF) first.
 */
#ifndef LATOP_SYSCALLS_H
#define LATOP_SYSCALLS_H

#include "../../core/lhist.h"

#define SYS_COMM_LEN 16
/* Slots of the stats array: latoprc syscall_max (a power of 2), by default
 * SYS_DEFAULT_KEYS or what fits the machine's memory.  The first ones, one a
 * CPU, are the overflow row's. */
#define SYS_DEFAULT_KEYS 65536
#define SYS_KEYS_MIN 1024
#define SYS_KEYS_MAX 1048576
#define SYS_SPARE_PART 16	/* a sixteenth of the slots are the spare stack's,
				 * for processes' overflow rows */
#define SYS_QUEUE_MIN 1024	/* free slots BPF has at hand after each tick, at least */
#define SYS_RINGBUF_BYTES (1 << 20)
#define SYS_DEAD_MAX 16384	/* exited threads a tick can name for early slot eviction */
#define SYS_RELEASE_MAX 1024	/* slots one run of release_slots hands back */
#define SYS_DEFAULT_MAX_EVENTS 4096	/* single events per tick when BUFFER is 0 */

/*
 * Where a call's time goes.  Each nanosecond of a call is in exactly one
 * state, so the components sum to its latency.  Order matches the schema's
 * runq..other columns.
 */
enum sys_state {
	ST_RUNQ,	/* preempted, runnable, waiting for a CPU */
	ST_BLOCK,	/* off CPU in iowait, or block softirq */
	ST_NET,		/* socket wait, transmit, net softirq */
	ST_MM,		/* reclaim, mmap lock wait, fault handling */
	ST_LOCK,	/* kernel lock contention, futex wait */
	ST_SOFTIRQ,	/* other softirqs */
	ST_SLEEP,	/* other voluntary waits */
	ST_OTHER,	/* on CPU, in the syscall */
	ST_NSTATES,
};

/* Optional perf counters read at on-CPU segment boundaries. */
enum sys_counter {
	CTR_TASKCLOCK,
	CTR_CYCLES,
	CTR_INSTRUCTIONS,
	CTR_N,
};

/* Health counters, one per-CPU array slot each. */
enum sys_health {
	H_DROPPED,	/* calls the pushdown filter or sampling dropped */
	H_LOST,		/* ring buffer full */
	H_OVERFLOW,	/* calls counted in the overflow row: their key had no slot */
	H_BUDGET,	/* single events over the per-tick budget (BUFFER) */
	H_UNSAVED,	/* calls in flight at a switch-out whose state had no task storage */
	H_N,
};

/* What the installed filter reads beyond ids (user space sets, BPF fetches). */
#define FILTER_NEED_COMM 1
#define FILTER_NEED_UID 2

/* The grain keys are made at (what the query needs, set with the filter). */
enum sys_grain {
	GRAIN_THREAD,	/* a key per thread */
	GRAIN_PROCESS,	/* a key per process, on each CPU (user space sums the CPUs) */
};

/* struct sys_key's owner: 0 is a free slot. */
#define SYS_OWNER_THREAD 1
#define SYS_OWNER_CPU0 2	/* a process key counted on CPU c: SYS_OWNER_CPU0 + c */

/*
 * A row: one thread's calls of one syscall under one name (tid 0 at process
 * grain: the process's calls on one CPU).  comm is the thread's name as the
 * kernel keeps it (NUL-padded, so equal names are equal words): a thread
 * renamed (exec, prctl, pthread_setname_np) makes its next calls in new rows
 * under the new name.  At process grain a key is one CPU's, so only that CPU
 * (one call at a time, tracepoints not being preempted) adds to its slot.
 * The cgroup is part of the key only when the query reads it: a thread
 * moved to another cgroup makes its next calls in new rows.
 */
struct sys_key {
	__u32 tgid;
	__u32 tid;
	__u32 nr;
	__u32 owner;		/* 0 free, SYS_OWNER_THREAD, or SYS_OWNER_CPU0 + cpu */
	__u64 comm[SYS_COMM_LEN / 8];
	__u64 cgroup;		/* the thread's cgroup v2 id when the query reads a
				 * cgroup field (not filter_nocgroup), else 0 */
};

/*
 * Monotonic per-key totals, one slot of the stats array; user space computes
 * per-tick deltas.  key is the slot's owner (key.owner 0: a free slot), and
 * BPF writes it last when it takes a slot.
 */
struct sys_stats {
	struct sys_key key;
	__u64 count;
	__u64 errors;
	__u64 lat_sum;
	__u64 lat_min;
	__u64 lat_max;
	__u64 offcpu;
	__u64 comp[ST_NSTATES];
	__u64 faults;
	__u64 cswitch;
	__u64 ctr[CTR_N];
	__u32 hist[LH_NBUCKETS];
};

/* One slow or sampled call, sent through the ring buffer. */
struct sys_event {
	__u64 ts_ns;		/* CLOCK_MONOTONIC at exit */
	__u32 tgid;
	__u32 tid;
	__u32 nr;
	__u32 pad;
	__u64 ret;		/* return value, negative errno as two's complement */
	__u64 lat;
	__u64 offcpu;
	__u64 comp[ST_NSTATES];
	char comm[SYS_COMM_LEN];
	__u64 cgroup;		/* the thread's cgroup v2 id */
};

#endif
