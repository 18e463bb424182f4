/*
 * Pieces every probe's user side repeats: summing per-CPU counters,
 * checking a pushed-down filter program, listing loaded program fds, and
 * the tick delta of a monotonic total.
 * Uses libbpf; probes/ only.
 */
#ifndef LATOP_PROBE_UTIL_H
#define LATOP_PROBE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "filter.h"

struct bpf_object;

/* Return cur - prev for a monotonic total (cur when the key restarted). */
static inline uint64_t delta(uint64_t cur, uint64_t prev)
{
	return cur >= prev ? cur - prev : cur;
}

/* Sum keys 0..n-1 of the per-CPU u64 array map fd over ncpus CPUs into sum;
 * a key that cannot be read sums to 0. */
void probe_percpu_sum(int fd, int ncpus, uint64_t *sum, uint32_t n);

/* Check that f is a well-formed postfix program whose tests are any term but
 * FTERM_NONE with comm tested by ==, != or prefix only; fill *cause, naming
 * the probe, if not. */
int probe_filter_check(const char *probe, const struct filter_prog *f, char **cause);

/* List into out (at most max) the fds of obj's programs that were loaded. */
size_t probe_prog_fds(struct bpf_object *obj, int *out, size_t max);

#endif
