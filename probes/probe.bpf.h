/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What every probe's BPF side has: the two pushdown filter slots and the
 * per-CPU health counters user space sums each tick (probe_util.h's
 * probe_percpu_sum).  Define PROBE_HEALTH_N, the number of health counters,
 * and include probes/filter.h before this header.  A probe that sends single
 * events also defines PROBE_MAX_EVENTS (its budget per tick without BUFFER)
 * and PROBE_HEALTH_BUDGET (the counter of events over it), and gets
 * budget_take(), budget_max() and events_used, which user space zeroes every
 * tick.
 */
#ifndef LATOP_PROBE_BPF_H
#define LATOP_PROBE_BPF_H

#ifndef PROBE_HEALTH_N
#error "define PROBE_HEALTH_N before including probe.bpf.h"
#endif

/*
 * The cgroup v2 id of task (the current one, from bpf_get_current_task_btf(),
 * in a program that cannot sleep): what bpf_get_current_cgroup_id() returns,
 * read through the task's css_set without that helper's call and RCU section,
 * which cost about 50 ns a call on a kernel with return-thunk mitigations.
 */
static __always_inline __u64 task_cgroup_id(struct task_struct *task)
{
	return task->cgroups->dfl_cgrp->kn->id;
}

/* Two filter slots: user space writes the idle one, then flips filter_idx. */
struct filter_prog filters[2] = {};
volatile __u32 filter_idx = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROBE_HEALTH_N);
	__type(key, __u32);
	__type(value, __u64);
} health SEC(".maps");

/* Add n to health counter idx on this CPU. */
static __always_inline void health_add(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&health, &idx);

	if (v)
		*v += n;
}

/* Count one health event (drop, loss, eviction) on this CPU. */
static __always_inline void health_inc(__u32 idx)
{
	health_add(idx, 1);
}

#define PROBE_ENOMEM 12
#define PROBE_EEXIST 17

/*
 * Return key's entry in the hash map stats, made from zero (its value size)
 * when new; when the map has no room for it, entry 0 of the one-entry array
 * map overflow, with *over set (the caller counts it in its health).
 *
 * reserve is NULL, or a preallocated hash of the same key and value for a
 * stats hash that is not preallocated: the kernel's allocator keeps only a
 * few elements of a big value ready per CPU (1 to 3 of 5 KB) and makes more
 * after the program returns (irq_work), so the second new key on a CPU in a
 * burst finds none (-ENOMEM) though the hash is far from full.  Such a key
 * is made in reserve, which user space reads with stats.
 */
static __always_inline void *stats_or_reserve(void *stats, void *reserve, void *overflow,
					      const void *key, const void *zero, bool *over)
{
	void *v = bpf_map_lookup_elem(stats, key);
	__u32 first = 0;
	long err;

	*over = false;
	if (v)
		return v;
	if (reserve) {
		v = bpf_map_lookup_elem(reserve, key);
		if (v)
			return v;
	}
	err = bpf_map_update_elem(stats, key, zero, BPF_NOEXIST);	/* EEXIST: another CPU won */
	v = bpf_map_lookup_elem(stats, key);
	if (v)
		return v;
	if (reserve && err == -PROBE_ENOMEM) {
		bpf_map_update_elem(reserve, key, zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(reserve, key);
		if (v)
			return v;
	}
	*over = true;
	return bpf_map_lookup_elem(overflow, &first);
}

/* stats_or_reserve for a stats hash without a reserve. */
static __always_inline void *stats_or_overflow(void *stats, void *overflow, const void *key,
					       const void *zero, bool *over)
{
	return stats_or_reserve(stats, NULL, overflow, key, zero, over);
}

/* Return the filter user space installed last. */
static __always_inline const struct filter_prog *filter_cur(void)
{
	return &filters[filter_idx & 1];
}

#ifdef PROBE_MAX_EVENTS
/* Single events sent this tick; user space zeroes it every tick. */
volatile __u64 events_used = 0;

/* This tick's budget: the query's BUFFER, else the probe's default. */
static __always_inline __u64 budget_max(void)
{
	const struct filter_prog *f = filter_cur();

	return f->max_events ? f->max_events : PROBE_MAX_EVENTS;
}

/* Take one event's place in this tick's budget; false (counted) when spent. */
static __always_inline bool budget_take(void)
{
	if (events_used >= budget_max()) {
		health_inc(PROBE_HEALTH_BUDGET);
		return false;
	}
	__sync_fetch_and_add(&events_used, 1);
	return true;
}
#endif

#endif
