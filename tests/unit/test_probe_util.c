/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The probes' shared user-side pieces: the monotonic delta, a histogram's
 * tick, and the filter check. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tap.h"
#include "core/xalloc.h"
#include "probes/probe_util.h"

/* Return 1 when probe_filter_check rejects f with a cause equal to want. */
static int rejects(const struct filter_prog *f, const char *want)
{
	char *cause = NULL;
	int rc = probe_filter_check("block", f, probe_filter_leaf, &cause);
	int same = rc == -1 && cause && strcmp(cause, want) == 0;

	if (!same)
		printf("# rc %d cause \"%s\", want \"%s\"\n", rc, cause ? cause : "(none)", want);
	free(cause);
	return same;
}

/* A probe's own leaf: only pid tests, by any comparison; counts its calls. */
static int leaf_calls;
static int pid_only(const char *probe, const struct filter_entry *e, uint32_t i, char **cause)
{
	leaf_calls++;
	if (e->term == FTERM_PID && e->op >= FOP_EQ && e->op <= FOP_GE)
		return 0;
	*cause = xasprintf("%s: filter entry %u: only pid here", probe, i);
	return -1;
}

/* One tick through probe_cell_hist, unpacked into h for the checks. */
static void tick(union cell *c, struct hist *h, const uint32_t *cur, const uint32_t *prev,
		 uint64_t sum, const struct probe_extremes *ex)
{
	probe_cell_hist(c, cur, prev, sum, ex, 1);
	shist_unpack(c->h, h);
}

/*
 * One tick of a histogram from two monotonic bucket arrays: counts, and
 * extremes exact where they moved, else bucket bounds clamped to the
 * all-time ones.
 */
static void test_hist_delta(void)
{
	static uint32_t prev[LH_NBUCKETS], cur[LH_NBUCKETS];
	struct hist *h = hist_new();
	union cell c = {0};
	uint32_t b1 = lh_bucket(1000), b2 = lh_bucket(50000), top = LH_NBUCKETS - 1;

	prev[b1] = 5;
	cur[b1] = 8;
	cur[b2] = 2;
	tick(&c, h, cur, prev, 123, NULL);
	ok(h->count == 5 && h->sum == 123 && h->min == lh_bucket_low(b1) &&
	   h->max == lh_bucket_low(b2 + 1) - 1,
	   "buckets only: their count, the given sum, the moved buckets' bounds "
	   "(count %lu, min %lu, max %lu)", (unsigned long)h->count, (unsigned long)h->min,
	   (unsigned long)h->max);
	tick(&c, h, cur, prev, 123, &(struct probe_extremes){
		.has_min = true, .has_max = true, .min = 1003, .max = 50001,
		.min_moved = true, .max_moved = true});
	ok(h->min == 1003 && h->max == 50001, "extremes that moved this tick are exact (%lu, %lu)",
	   (unsigned long)h->min, (unsigned long)h->max);
	tick(&c, h, cur, prev, 123, &(struct probe_extremes){
		.has_min = true, .has_max = true, .min = 2, .max = 9000000});
	ok(h->min == lh_bucket_low(b1) && h->max == lh_bucket_low(b2 + 1) - 1,
	   "extremes that did not move leave the bucket bounds inside them");
	tick(&c, h, cur, prev, 123, &(struct probe_extremes){
		.has_min = true, .has_max = true, .min = lh_bucket_low(b1) + 1,
		.max = lh_bucket_low(b2) + 1});
	ok(h->min == lh_bucket_low(b1) + 1 && h->max == lh_bucket_low(b2) + 1,
	   "bucket bounds are clamped to the all-time extremes");
	tick(&c, h, cur, prev, 123, &(struct probe_extremes){
		.has_max = true, .max = lh_bucket_low(b1)});
	ok(h->min == lh_bucket_low(b1) && h->max == lh_bucket_low(b1),
	   "a max below the first bucket's low bound pulls min down to it");
	memset(cur, 0, sizeof(cur));
	memset(prev, 0, sizeof(prev));
	cur[top] = 1;
	tick(&c, h, cur, prev, 1, NULL);
	ok(h->max == lh_bucket_low(top), "the last bucket without a max: its low bound");
	tick(&c, h, cur, prev, 1, &(struct probe_extremes){
		.has_max = true, .max = lh_bucket_low(top) * 3});
	ok(h->max == lh_bucket_low(top) * 3, "the last bucket with an all-time max: that max");
	cur[top] = 0;
	tick(&c, h, cur, prev, 0, NULL);
	ok(h->count == 0 && h->sum == 0 && c.h->n == 0, "nothing moved: an empty tick");
	cur[top] = 1;
	probe_cell_hist(&c, cur, prev, 10, NULL, 4);
	ok(c.h->count == 4 && c.h->sum == 40 && c.h->n == 1 && c.h->bin[0].c == 4,
	   "1/4 sampling: counts and sum times 4");
	shist_free(c.h);
	hist_free(h);
}


/*
 * The sparse tick against the plain dense sum over random monotonic
 * buckets (some wrapping u32): the same buckets, count and sum, and the
 * extremes inside the first and last moved buckets' bounds.
 */
static void test_hist_random(void)
{
	static uint32_t prev[LH_NBUCKETS], cur[LH_NBUCKETS];
	union cell c = {0};
	int round, bad = 0;
	uint32_t i, j;

	srand(7);
	for (round = 0; round < 500; round++) {
		uint64_t total = 0, got = 0;
		int lo = -1, hi = -1;

		for (i = 0; i < LH_NBUCKETS; i++) {
			prev[i] = (uint32_t)rand() * 2654435761u;
			cur[i] = rand() % 8 ? prev[i] : prev[i] + (uint32_t)(rand() % 1000) + 1;
		}
		for (i = 0; i < LH_NBUCKETS; i++) {
			total += (uint32_t)(cur[i] - prev[i]);
			if (cur[i] != prev[i]) {
				lo = lo < 0 ? (int)i : lo;
				hi = (int)i;
			}
		}
		probe_cell_hist(&c, cur, prev, 77, NULL, 1);
		for (j = 0; j < c.h->n; j++) {
			i = c.h->bin[j].idx;
			got += c.h->bin[j].c;
			bad += c.h->bin[j].c != (uint32_t)(cur[i] - prev[i]) ||
			       (j && c.h->bin[j - 1].idx >= i);
		}
		bad += got != total || c.h->count != total;
		if (total)
			bad += c.h->sum != 77 || c.h->min != lh_bucket_low((uint32_t)lo) ||
			       c.h->min > c.h->max ||
			       (hi + 1 < (int)LH_NBUCKETS &&
				c.h->max != lh_bucket_low((uint32_t)hi + 1) - 1);
	}
	ok(bad == 0, "500 random ticks: the moved buckets exactly, in order, and their bounds "
	   "(%d wrong)", bad);
	shist_free(c.h);
}

/* Set counter i of the per-CPU array fd to v on CPU 0 and 1 on every other CPU. */
static void set_counter(int fd, int ncpus, uint32_t i, uint64_t v)
{
	uint64_t *vals = xcalloc((size_t)ncpus, sizeof(*vals));
	int c;

	vals[0] = v;
	for (c = 1; c < ncpus; c++)
		vals[c] = 1;
	bpf_map_update_elem(fd, &i, vals, BPF_ANY);
	free(vals);
}

/*
 * Health counters: a real per-CPU array map, its totals summed over CPUs,
 * each counter's tick delta added to the stat it belongs to, the counts
 * made before init left out.
 */
static void test_health(void)
{
	static const enum probe_stat to[4] = {PSTAT_DROPPED, PSTAT_LOST, PSTAT_DROPPED,
					      PSTAT_NONE};
	int ncpus = libbpf_num_possible_cpus();
	int fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "t_health", 4, 8, 4, NULL);
	struct probe_health h;
	struct frame_stats st = {0};
	uint32_t i;

	if (fd < 0 || ncpus < 1) {
		skip("health counters need a BPF map (root): %s", strerror(errno));
		return;
	}
	for (i = 0; i < 4; i++)
		set_counter(fd, ncpus, i, 100);
	probe_health_init(&h, fd, ncpus, to, 4);
	probe_health_tick(&h, &st);
	ok(st.dropped == 0 && st.lost == 0 && st.evicted == 0,
	   "counts from before init are not the first tick's");
	set_counter(fd, ncpus, 0, 105);
	set_counter(fd, ncpus, 1, 130);
	set_counter(fd, ncpus, 2, 107);
	set_counter(fd, ncpus, 3, 999);
	probe_health_tick(&h, &st);
	ok(st.dropped == 12 && st.lost == 30 && st.evicted == 0 && h.delta[3] == 899,
	   "each delta goes to its stat, summed where two share one (dropped %llu lost %llu)",
	   (unsigned long long)st.dropped, (unsigned long long)st.lost);
	memset(&st, 0, sizeof(st));
	probe_health_tick(&h, &st);
	ok(st.dropped == 0 && st.lost == 0, "a quiet tick adds nothing");
	close(fd);
}

int main(void)
{
	struct filter_prog f;
	char *cause = NULL;

	test_hist_delta();
	test_hist_random();
	test_health();

	ok(delta(10, 4) == 6, "delta of a growing total");
	ok(delta(3, 9) == 3, "delta after the key restarted is the new total");
	ok(delta(UINT64_MAX, 0) == UINT64_MAX, "delta of a full range");

	memset(&f, 0, sizeof(f));
	ok(probe_filter_check("block", &f, probe_filter_leaf, &cause) == 0 && !cause,
	   "an empty filter passes");

	f.n = 4;
	f.e[0] = (struct filter_entry){ FOP_EQ, FTERM_PID, 42 };
	f.e[1] = (struct filter_entry){ FOP_PREFIX, FTERM_COMM, 0 };
	f.e[2] = (struct filter_entry){ FOP_NOT, 0, 0 };
	f.e[3] = (struct filter_entry){ FOP_AND, 0, 0 };
	ok(probe_filter_check("syscalls", &f, probe_filter_leaf, &cause) == 0 && !cause,
	   "pid == 42 and not comm prefix passes");

	f.n = FILTER_MAX_ENTRIES + 1;
	{
		char want[80];

		snprintf(want, sizeof(want), "block: filter has %u entries, at most %d fit",
			 f.n, FILTER_MAX_ENTRIES);
		ok(rejects(&f, want), "too many entries named with the probe");
	}

	f.n = 1;
	f.e[0] = (struct filter_entry){ FOP_LT, FTERM_COMM, 0 };
	ok(rejects(&f, "block: filter entry 0: bad comm test"), "comm < is a bad comm test");
	f.e[0] = (struct filter_entry){ FOP_PREFIX, FTERM_PID, 1 };
	ok(rejects(&f, "block: filter entry 0: bad comm test"), "prefix on a number is refused");
	f.e[0] = (struct filter_entry){ FOP_EQ, FTERM_COMM, FILTER_MAX_STRS };
	ok(rejects(&f, "block: filter entry 0: bad comm test"), "comm string index out of range");
	f.e[0] = (struct filter_entry){ FOP_EQ, FTERM_MAX, 0 };
	{
		char want[80];

		snprintf(want, sizeof(want), "block: filter entry 0: unknown op %u or term %u",
			 FOP_EQ, FTERM_MAX);
		ok(rejects(&f, want), "unknown term");
	}
	f.e[0] = (struct filter_entry){ FOP_AND, 0, 0 };
	ok(rejects(&f, "block: filter entry 0: stack underflow"), "and with nothing stacked");
	f.e[0] = (struct filter_entry){ FOP_NOT, 0, 0 };
	ok(rejects(&f, "block: filter entry 0: stack underflow"), "not with nothing stacked");

	f.n = 2;
	f.e[0] = (struct filter_entry){ FOP_EQ, FTERM_PID, 1 };
	f.e[1] = (struct filter_entry){ FOP_EQ, FTERM_TID, 2 };
	ok(rejects(&f, "block: filter leaves 2 values, not 1"), "two tests without and");

	{
		uint32_t i;

		/* A full filter: pid tests joined by and, then negated. */
		f.n = FILTER_MAX_ENTRIES;
		f.e[0] = (struct filter_entry){ FOP_EQ, FTERM_PID, 0 };
		for (i = 1; i + 1 < f.n; i += 2) {
			f.e[i] = (struct filter_entry){ FOP_EQ, FTERM_PID, i };
			f.e[i + 1] = (struct filter_entry){ FOP_AND, 0, 0 };
		}
		f.e[f.n - 1] = (struct filter_entry){ FOP_NOT, 0, 0 };
		ok(probe_filter_check("block", &f, probe_filter_leaf, &cause) == 0 && !cause,
		   "a filter of %d entries fits", FILTER_MAX_ENTRIES);
	}
	f.n = 3;
	f.e[0] = (struct filter_entry){ FOP_GT, FTERM_PID, 1 };
	f.e[1] = (struct filter_entry){ FOP_LT, FTERM_PID, 9 };
	f.e[2] = (struct filter_entry){ FOP_AND, 0, 0 };
	leaf_calls = 0;
	ok(probe_filter_check("nvme", &f, pid_only, &cause) == 0 && !cause && leaf_calls == 2,
	   "a probe's own leaf sees each test once, not the and");
	f.e[1] = (struct filter_entry){ FOP_EQ, FTERM_UID, 0 };
	ok(probe_filter_check("nvme", &f, pid_only, &cause) == -1 && cause &&
	   strcmp(cause, "nvme: filter entry 1: only pid here") == 0,
	   "a probe's own leaf refuses with its own words");
	free(cause);
	cause = NULL;
	f.n = 1;
	f.e[0] = (struct filter_entry){ FOP_OR, 0, 0 };
	ok(probe_filter_check("nvme", &f, pid_only, &cause) == -1 && cause &&
	   strcmp(cause, "nvme: filter entry 0: stack underflow") == 0,
	   "the stack check stays with the shared walk");
	free(cause);
	tap_done();
}
