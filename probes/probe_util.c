/*
 * Pieces every probe's user side repeats; see probe_util.h.
 */
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "../core/xalloc.h"
#include "probe_util.h"

void probe_percpu_sum(int fd, int ncpus, uint64_t *sum, uint32_t n)
{
	uint64_t *v = xcalloc(ncpus, sizeof(*v));
	uint32_t i;
	int c;

	for (i = 0; i < n; i++) {
		sum[i] = 0;
		if (bpf_map_lookup_elem(fd, &i, v))
			continue;
		for (c = 0; c < ncpus; c++)
			sum[i] += v[c];
	}
	free(v);
}
