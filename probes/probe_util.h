/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Pieces every probe's user side repeats: summing per-CPU counters,
 * checking a pushed-down filter program, listing loaded program fds, the
 * tick delta of a monotonic total and of a histogram's buckets.
 * Uses libbpf; probes/ only.
 */
#ifndef LATOP_PROBE_UTIL_H
#define LATOP_PROBE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "filter.h"
#include "../core/hist.h"
#include "../core/table.h"

struct bpf_object;

/* Return cur - prev for a monotonic total (cur when the key restarted). */
static inline uint64_t delta(uint64_t cur, uint64_t prev)
{
	return cur >= prev ? cur - prev : cur;
}

/*
 * What a probe's totals know of a histogram's extremes beyond its buckets:
 * the smallest and largest value since the key was made, and whether each
 * moved this tick (then it is this tick's own, exact).
 */
struct probe_extremes {
	bool has_min, has_max;
	bool min_moved, max_moved;
	uint64_t min, max;
};

/* The extremes of a key whose totals keep their all-time min and max (and
 * count), given last tick's: each moved when it is new or went further. */
static inline struct probe_extremes probe_extremes_minmax(uint64_t min, uint64_t max,
							  uint64_t prev_min, uint64_t prev_max,
							  uint64_t prev_count)
{
	return (struct probe_extremes){
		.has_min = true, .has_max = true, .min = min, .max = max,
		.min_moved = !prev_count || min < prev_min,
		.max_moved = !prev_count || max > prev_max,
	};
}

/*
 * Set histogram cell c to one tick of a histogram: buckets cur - prev, two
 * LH_NBUCKETS histograms of monotonic u32 counts, and their count, sum as
 * given, and extremes: each one that moved this tick is exact, the others
 * are the bounds of the first and last bucket that moved, clamped to the
 * all-time extremes ex knows (the last bucket has no upper bound: the
 * all-time max stands for it, or without one the bucket's lower bound).
 * Counts and sum are then multiplied by n when n > 1, for 1/n sampling.
 * Built sparse in one pass over the buckets, no dense copy.
 */
void probe_cell_hist(union cell *c, const uint32_t *cur, const uint32_t *prev, uint64_t sum,
		     const struct probe_extremes *ex, uint64_t n);

/* Sum keys 0..n-1 of the per-CPU u64 array map fd over ncpus CPUs into sum;
 * a key that cannot be read sums to 0. */
/*
 * Set a row's cgroup, unit and container cells (c[0], c[1], c[2], in that
 * order in every schema that has them) from cgroup v2 id (core/cgroup.h;
 * 0: the three empty).
 */
void probe_cgroup_cells(union cell *c, uint64_t id);

void probe_percpu_sum(int fd, int ncpus, uint64_t *sum, uint32_t n);

/* Check test entry i of a filter (an op other than and, or, not) for probe;
 * return 0 when the probe can run it, else -1 with *cause filled. */
typedef int probe_filter_leaf_fn(const char *probe, const struct filter_entry *e, uint32_t i,
				 char **cause);

/* The check of probes that test any term but FTERM_NONE, comm by ==, != or
 * prefix only. */
probe_filter_leaf_fn probe_filter_leaf;

/* Check that f is a well-formed postfix program of at most
 * FILTER_MAX_ENTRIES entries whose tests all pass leaf; fill *cause, naming
 * the probe, if not. */
int probe_filter_check(const char *probe, const struct filter_prog *f, probe_filter_leaf_fn *leaf,
		       char **cause);

/* The frame stat one of a probe's health counters adds to. */
enum probe_stat {
	PSTAT_NONE,		/* kept for the probe's own use */
	PSTAT_DROPPED,		/* left out by design: filter, sampling, BUFFER */
	PSTAT_LOST,		/* lost: a ring buffer or stack map was full */
	PSTAT_EVICTED,		/* not counted: a map was full or an entry given up */
	PSTAT_OVERFLOW,		/* counted in the table's overflow row: no key had room */
};

#define PROBE_HEALTH_MAX 8	/* counters one probe keeps */

/*
 * A probe's health counters: a per-CPU u64 array map of n counters in its
 * BPF object (index: the probe's own enum), where each one's tick delta
 * goes, and what the last tick read.
 */
struct probe_health {
	int fd, ncpus;
	uint32_t n;
	const enum probe_stat *to;
	uint64_t prev[PROBE_HEALTH_MAX];
	uint64_t delta[PROBE_HEALTH_MAX];	/* each counter's delta at the last tick */
};

/* Start h on the map fd (n <= PROBE_HEALTH_MAX counters): what they count
 * already is not this tick's, so the first tick counts from here. */
void probe_health_init(struct probe_health *h, int fd, int ncpus, const enum probe_stat *to,
		       uint32_t n);

/* Read the counters and add each one's delta since the last read to the
 * stat of st it belongs to (st's stats start at 0 in a new frame). */
void probe_health_tick(struct probe_health *h, struct frame_stats *st);

/*
 * The size of one of a probe's tables: latoprc's key (a count from min to
 * max, rounded up to a power of two when pow2), else def.  A bad value is
 * said as a latoprc warning naming key, unit and the range, and def used.
 */
uint32_t probe_size_option(const char *key, uint32_t min, uint32_t max, uint32_t def, bool pow2,
			   const char *unit);

/*
 * A default size that fits the machine: want, halved while want entries of
 * bytes_each would take more than 1/64 of physical memory, down to min
 * (powers of two stay powers of two).
 */
uint32_t probe_size_fit(uint32_t want, uint32_t min, size_t bytes_each);

/*
 * Fill c, for `latop probes`, with what a table holds: stage names it and
 * its latoprc key, the hook column reads "N UNIT", and why says the kernel
 * memory it takes (bytes_each an entry; allocated at load when prealloc,
 * else as entries come) and then full_text, what happens when it is full.
 * The label is kept in static storage, one of PROBE_CAPACITY_SLOTS used in
 * turn (more than all probes' tables).
 */
#define PROBE_CAPACITY_SLOTS 64
struct hook_choice;
void probe_capacity(struct hook_choice *c, const char *stage, uint32_t n,
		    const char *unit, double bytes_each, bool prealloc, const char *full_text);

/* Return whether the entry (key, value) of a matching table is stale. */
typedef bool probe_stale_fn(const void *key, const void *value, void *arg);

/*
 * Delete from the hash map fd (keys of key_size bytes, values of value_size)
 * every entry stale says is stale, read again just before it goes; return
 * how many went.  BPF programs change the map meanwhile: an entry made or
 * ended during the sweep may be passed over, never counted twice.
 */
uint64_t probe_sweep_hash(int fd, size_t key_size, size_t value_size, probe_stale_fn *stale,
			  void *arg);

struct bpf_object_skeleton;
/* Attach every program of a loaded skeleton (VIEW_bpf.skeleton): 0, or -1
 * with *cause naming probe and the error. */
int probe_attach_skel(const char *probe, struct bpf_object_skeleton *s, char **cause);

/* List into out (at most max) the fds of obj's programs that were loaded. */
size_t probe_prog_fds(struct bpf_object *obj, int *out, size_t max);

/* An epoll fd that becomes readable once for each wakeup of BPF ring
 * buffer ring_fd (edge-triggered: data a drain leaves in the ring does not
 * keep it so): a probe's wake_fd.  -1 with errno. */
int probe_wake_open(int ring_fd);

/* Take the edge of wake fd epfd, so it is quiet until the next wakeup. */
void probe_wake_take(int epfd);

#endif
