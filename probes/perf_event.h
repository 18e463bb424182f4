/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A thin perf_event_open wrapper (no libperf): one counting event per CPU,
 * opened by name, for BPF programs to read from a PERF_EVENT_ARRAY.
 */
#ifndef LATOP_PERF_EVENT_H
#define LATOP_PERF_EVENT_H

#include <stdint.h>
#include <stdbool.h>

struct perf_counters {
	char name[32];
	int ncpus;
	int *fds;		/* ncpus entries, -1 for CPUs that are offline */
};

/* Find the perf type and config of a counter name ("task-clock", "cycles"...). */
bool perf_event_lookup(const char *name, uint32_t *type, uint64_t *config);
/* Open name on every possible CPU (pid -1).  NULL and *cause on failure (the
 * errno is in *err: ENOENT/EOPNOTSUPP mean this machine has no such counter). */
struct perf_counters *perf_counters_open(const char *name, int *err, char **cause);
/* Return the sum of the counter over all CPUs. */
uint64_t perf_counters_read(const struct perf_counters *c);
/* Store each CPU's fd in a BPF_MAP_TYPE_PERF_EVENT_ARRAY at index cpu. */
int perf_counters_to_map(const struct perf_counters *c, int map_fd, char **cause);
void perf_counters_free(struct perf_counters *c);

#endif
