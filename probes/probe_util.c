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

size_t probe_prog_fds(struct bpf_object *obj, int *out, size_t max)
{
	struct bpf_program *prog;
	size_t n = 0;

	bpf_object__for_each_program(prog, obj) {
		if (n < max && bpf_program__autoload(prog) && bpf_program__fd(prog) >= 0)
			out[n++] = bpf_program__fd(prog);
	}
	return n;
}
