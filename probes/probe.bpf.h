/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What every probe's BPF side has: the two pushdown filter slots and the
 * per-CPU health counters user space sums each tick (probe_util.h's
 * probe_percpu_sum).  Define PROBE_HEALTH_N, the number of health counters,
 * and include probes/filter.h before this header.
 */
#ifndef LATOP_PROBE_BPF_H
#define LATOP_PROBE_BPF_H

#ifndef PROBE_HEALTH_N
#error "define PROBE_HEALTH_N before including probe.bpf.h"
#endif

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

/* Return the filter user space installed last. */
static __always_inline const struct filter_prog *filter_cur(void)
{
	return &filters[filter_idx & 1];
}

#endif
