/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Pieces every probe's user side repeats; see probe_util.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/epoll.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "../core/cgroup.h"
#include "../core/config.h"
#include "../core/xalloc.h"
#include "hook.h"
#include "probe_util.h"

void probe_cgroup_cells(union cell *c, uint64_t id)
{
	char path[CGROUP_PATH_MAX], buf[CGROUP_PATH_MAX];

	cgroup_path(id, path, sizeof(path));
	cell_set_str(&c[0], path);
	cell_set_str(&c[1], cgroup_unit(path, buf, sizeof(buf)));
	cell_set_str(&c[2], cgroup_container(path, buf, sizeof(buf)));
}

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

void probe_cell_hist(union cell *c, const uint32_t *cur, const uint32_t *prev, uint64_t sum,
		     const struct probe_extremes *ex, uint64_t n)
{
	struct hbin bin[LH_NBUCKETS];
	uint32_t i, nb = 0, hi;
	uint64_t min, max;
	struct shist *s;
	bool top;

	_Static_assert(LH_NBUCKETS % 16 == 0, "buckets are scanned 16 at a time");
	/* Most buckets of a tick did not move: skip them 16 at a time, with a
	 * test the compiler vectorizes. */
	for (i = 0; i < LH_NBUCKETS; i += 16) {
		uint32_t moved = 0, j;

		for (j = 0; j < 16; j++)
			moved |= cur[i + j] ^ prev[i + j];
		if (!moved)
			continue;
		for (j = i; j < i + 16; j++)
			if (cur[j] != prev[j])
				bin[nb++] = (struct hbin){.c = (uint32_t)(cur[j] - prev[j]), .idx = j};
	}
	if (!nb) {
		cell_take_shist(c, shist_new());
		return;
	}
	hi = bin[nb - 1].idx;
	top = hi + 1 >= LH_NBUCKETS;
	min = lh_bucket_low(bin[0].idx);
	max = top ? lh_bucket_low(hi) : lh_bucket_low(hi + 1) - 1;
	if (ex && ex->has_min)
		min = ex->min_moved || min < ex->min ? ex->min : min;
	if (ex && ex->has_max)
		max = ex->max_moved || top || max > ex->max ? ex->max : max;
	if (min > max)
		min = max;
	s = shist_of(bin, nb, sum, min, max);
	if (n > 1) {
		for (i = 0; i < s->n; i++)
			s->bin[i].c *= n;
		s->count *= n;
		s->sum *= n;
	}
	cell_take_shist(c, s);
}

int probe_filter_leaf(const char *probe, const struct filter_entry *e, uint32_t i, char **cause)
{
	bool comm = e->term == FTERM_COMM, cg = e->term == FTERM_CGROUP;

	if (e->op < FOP_EQ || e->op > FOP_PREFIX || e->term <= FTERM_NONE || e->term >= FTERM_MAX) {
		*cause = xasprintf("%s: filter entry %u: unknown op %u or term %u",
				   probe, i, e->op, e->term);
		return -1;
	}
	if (cg && e->op != FOP_PREFIX && e->op != FOP_EQ && e->op != FOP_NE) {
		*cause = xasprintf("%s: filter entry %u: bad cgroup test", probe, i);
		return -1;
	}
	if ((comm && e->op != FOP_PREFIX && e->op != FOP_EQ && e->op != FOP_NE) ||
	    (!comm && !cg && e->op == FOP_PREFIX) || (comm && e->value >= FILTER_MAX_STRS)) {
		*cause = xasprintf("%s: filter entry %u: bad comm test", probe, i);
		return -1;
	}
	return 0;
}

int probe_filter_check(const char *probe, const struct filter_prog *f, probe_filter_leaf_fn *leaf,
		       char **cause)
{
	int depth = 0;
	uint32_t i;

	if (f->n > FILTER_MAX_ENTRIES) {
		*cause = xasprintf("%s: filter has %u entries, at most %d fit",
				   probe, f->n, FILTER_MAX_ENTRIES);
		return -1;
	}
	for (i = 0; i < f->n; i++) {
		const struct filter_entry *e = &f->e[i];

		if (e->op == FOP_AND || e->op == FOP_OR) {
			depth--;
		} else if (e->op == FOP_NOT) {
			if (depth < 1)
				depth = -1;
		} else {
			if (leaf(probe, e, i, cause))
				return -1;
			depth++;
		}
		if (depth < 1 || depth > 64) {
			*cause = xasprintf("%s: filter entry %u: stack %s", probe, i,
					   depth < 1 ? "underflow" : "deeper than 64");
			return -1;
		}
	}
	if (f->n && depth != 1) {
		*cause = xasprintf("%s: filter leaves %d values, not 1", probe, depth);
		return -1;
	}
	return 0;
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

void probe_health_init(struct probe_health *h, int fd, int ncpus, const enum probe_stat *to,
		       uint32_t n)
{
	memset(h, 0, sizeof(*h));
	h->fd = fd;
	h->ncpus = ncpus;
	h->n = n < PROBE_HEALTH_MAX ? n : PROBE_HEALTH_MAX;
	h->to = to;
	probe_percpu_sum(fd, ncpus, h->prev, h->n);
}

void probe_health_tick(struct probe_health *h, struct frame_stats *st)
{
	uint64_t cur[PROBE_HEALTH_MAX];
	uint32_t i;

	probe_percpu_sum(h->fd, h->ncpus, cur, h->n);
	for (i = 0; i < h->n; i++) {
		uint64_t d = delta(cur[i], h->prev[i]);

		h->delta[i] = d;
		h->prev[i] = cur[i];
		switch (h->to[i]) {
		case PSTAT_DROPPED: st->dropped += d; break;
		case PSTAT_LOST: st->lost += d; break;
		case PSTAT_EVICTED: st->evicted += d; break;
		case PSTAT_OVERFLOW: st->overflow += d; break;
		case PSTAT_NONE: break;
		}
	}
}

int probe_attach_skel(const char *probe, struct bpf_object_skeleton *s, char **cause)
{
	int err = bpf_object__attach_skeleton(s);

	if (!err)
		return 0;
	*cause = xasprintf("%s: attaching the BPF programs: %s", probe, strerror(-err));
	return -1;
}

uint32_t probe_size_option(const char *key, uint32_t min, uint32_t max, uint32_t def, bool pow2,
			   const char *unit)
{
	struct config *cfg = config_shared();
	const char *v = config_get(cfg, key);
	unsigned long long n;
	char *end;

	if (!v)
		return def;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v || *end || n < min || n > max) {
		char *what = xasprintf("not a count of %s from %u to %u; using the default %u",
				       unit, min, max, def);

		config_warn(cfg, key, what);
		free(what);
		return def;
	}
	if (pow2)
		while (n & (n - 1))
			n += n & -n;	/* up to the next power of two, at most max */
	return (uint32_t)n;
}

uint32_t probe_size_fit(uint32_t want, uint32_t min, size_t bytes_each)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	double budget = pages > 0 && page > 0 ? (double)pages * (double)page / 64 : 0;

	while (budget > 0 && want > min && (double)want * (double)bytes_each > budget)
		want /= 2;
	return want < min ? min : want;
}

void probe_capacity(struct hook_choice *c, const char *stage, uint32_t n,
		    const char *unit, double bytes_each, bool prealloc, const char *full_text)
{
	static char labels[PROBE_CAPACITY_SLOTS][48];
	static unsigned next;
	double mib = (double)n * bytes_each / (1 << 20);
	char *label = labels[next++ % PROBE_CAPACITY_SLOTS];

	snprintf(label, sizeof(labels[0]), "%u %s", n, unit);
	c->stage = stage;
	c->hook = label;
	c->first = true;
	if (prealloc)
		snprintf(c->why, sizeof(c->why), "%.1f MiB of kernel memory, taken at load; %s",
			 mib, full_text);
	else
		snprintf(c->why, sizeof(c->why), "kernel memory grows with them: %.1f MiB when "
			 "full; %s", mib, full_text);
}

uint64_t probe_sweep_hash(int fd, size_t key_size, size_t value_size, probe_stale_fn *stale,
			  void *arg)
{
	struct bpf_map_info info = {0};
	uint32_t len = sizeof(info), budget, i;
	char *keys, *key, *prev = NULL, *val = xcalloc(1, value_size);
	size_t n = 0;
	uint64_t gone = 0;

	if (bpf_obj_get_info_by_fd(fd, &info, &len) || !info.max_entries) {
		free(val);
		return 0;
	}
	keys = xcalloc((size_t)info.max_entries + 1, key_size);
	/* A key deleted under the walk restarts it: twice the entries at most. */
	budget = info.max_entries * 2;
	for (i = 0; i < budget && n < info.max_entries; i++) {
		key = keys + n * key_size;
		if (bpf_map_get_next_key(fd, prev, key))
			break;
		prev = key;
		if (!bpf_map_lookup_elem(fd, key, val) && stale(key, val, arg))
			n++;
		else {
			memcpy(keys + info.max_entries * key_size, key, key_size);
			prev = keys + info.max_entries * key_size;
		}
	}
	for (i = 0; i < n; i++) {
		key = keys + (size_t)i * key_size;
		if (!bpf_map_lookup_elem(fd, key, val) && stale(key, val, arg) &&
		    !bpf_map_delete_elem(fd, key))
			gone++;
	}
	free(keys);
	free(val);
	return gone;
}

int probe_wake_open(int ring_fd)
{
	int epfd = epoll_create1(EPOLL_CLOEXEC), err;

	if (epfd < 0)
		return -1;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, ring_fd,
		      &(struct epoll_event){.events = EPOLLIN | EPOLLET})) {
		err = errno;
		close(epfd);
		errno = err;
		return -1;
	}
	return epfd;
}

void probe_wake_take(int epfd)
{
	struct epoll_event ev;

	while (epoll_wait(epfd, &ev, 1, 0) > 0)
		;
}
