/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Histograms: accuracy of percentiles, merge, scale, clip, encoding. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "core/hist.h"
#include "tap.h"

/* Return |a - b| / b. */
static double rel_err(uint64_t a, uint64_t b)
{
	return fabs((double)a - (double)b) / (double)b;
}

/* Check every bucket midpoint is within 1/32 of every value it stands for. */
static void test_error_bound(void)
{
	double worst = 0.0, worst_p = 0.0;
	uint64_t v, worst_v = 0;
	int single_ok = 1;

	for (v = 1; v <= 1000000000000ULL; v = v < 4096 ? v + 1 : v + v / 997 + 1) {
		struct hist h;
		double e = rel_err(hist_bucket_mid(lh_bucket(v)), v);

		if (e > worst) {
			worst = e;
			worst_v = v;
		}
		hist_init(&h);
		hist_add(&h, v);
		hist_add(&h, v);
		/* min/max unknown (bucket bounds): percentiles come from the midpoint */
		h.min = 0;
		h.max = UINT64_MAX;
		e = rel_err(hist_percentile(&h, 50), v);
		if (e > worst_p)
			worst_p = e;
		hist_init(&h);
		hist_add(&h, v);
		if (hist_percentile(&h, 50) != v || hist_percentile(&h, 99.99) != v)
			single_ok = 0;
	}
	printf("# worst midpoint relative error %.5f at %llu, percentile %.5f\n",
	       worst, (unsigned long long)worst_v, worst_p);
	ok(worst <= 1.0 / 32, "bucket midpoints within 1/32 of every value 1ns..1e12 (worst %.5f)", worst);
	ok(worst_p <= 1.0 / 32, "p50 without exact min/max within 1/32 (worst %.5f)", worst_p);
	ok(single_ok, "a one-value histogram reports that value exactly at every percentile");
}

/* Check values below 16 are exact and every bucket index is in range. */
static void test_small_and_range(void)
{
	uint64_t v;
	int exact = 1;

	for (v = 0; v < 32; v++)
		if (hist_bucket_mid(lh_bucket(v)) != v)
			exact = 0;
	ok(exact, "values 0..31 are counted exactly");
	ok(lh_bucket(UINT64_MAX) == LH_NBUCKETS - 1 && LH_NBUCKETS == 592,
	   "huge values land in the last of 592 buckets");
}

/* Check empty histograms answer zero and do not crash. */
static void test_empty(void)
{
	struct hist h;

	hist_init(&h);
	ok(hist_percentile(&h, 99) == 0 && hist_avg(&h) == 0.0 && hist_stddev(&h) == 0.0,
	   "an empty histogram reports 0 for p99, avg and stddev");
	ok(hist_cdf(&h, 100) == 0.0 && h.min == UINT64_MAX, "empty cdf is 0, min is UINT64_MAX");
	hist_clip(&h, ">", 5);
	ok(h.count == 0, "clipping an empty histogram leaves it empty");
}

/* Check percentiles of 1..100000 uniform. */
static void test_uniform(void)
{
	struct hist *h = hist_new();
	static const double qs[] = {1, 10, 50, 90, 99, 99.9, 99.99};
	double worst = 0.0;
	uint64_t v;
	size_t i;

	for (v = 1; v <= 100000; v++)
		hist_add(h, v);
	for (i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		uint64_t want = (uint64_t)ceil(qs[i] / 100 * 100000);
		double e = rel_err(hist_percentile(h, qs[i]), want);

		if (e > worst)
			worst = e;
	}
	ok(worst <= 1.0 / 32, "p1..p99.99 of uniform 1..100000 within 1/32 (worst %.5f)", worst);
	ok(hist_percentile(h, 100) == 100000 && hist_percentile(h, 0) == 1,
	   "p100 is the exact max, p0 the exact min");
	ok(h->count == 100000 && h->sum == 5000050000ULL && fabs(hist_avg(h) - 50000.5) < 1e-6,
	   "count, sum and avg are exact");
	ok(fabs(hist_stddev(h) - 28867.5) / 28867.5 < 0.02, "stddev %.1f within 2%% of 28867.5",
	   hist_stddev(h));
	ok(fabs(hist_cdf(h, 50000) - 0.5) < 0.02 && hist_cdf(h, 100000) == 1.0,
	   "cdf(50000) is about 0.5 (%.4f), cdf(max) is 1", hist_cdf(h, 50000));
	hist_free(h);
}

/* Check merging equals adding both sets. */
static void test_merge(void)
{
	struct hist a, b, both;
	uint64_t v;

	hist_init(&a);
	hist_init(&b);
	hist_init(&both);
	for (v = 1; v < 5000; v += 3) {
		hist_add(&a, v * 7);
		hist_add(&both, v * 7);
	}
	for (v = 2; v < 90000; v += 11) {
		hist_add_n(&b, v * v, 2);
		hist_add_n(&both, v * v, 2);
	}
	hist_merge(&a, &b);
	ok(!memcmp(&a, &both, sizeof(a)), "merge(a, b) equals one histogram of both inputs");
}

/* Check scaling multiplies counts and sum, not values. */
static void test_scale(void)
{
	struct hist h;
	uint64_t p99;
	uint64_t v;

	hist_init(&h);
	for (v = 1000; v < 2000; v++)
		hist_add(&h, v);
	p99 = hist_percentile(&h, 99);
	hist_scale(&h, 100);
	ok(h.count == 100000 && h.sum == 149950000ULL, "scale by 100 multiplies count and sum");
	ok(hist_percentile(&h, 99) == p99 && h.min == 1000 && h.max == 1999,
	   "scale keeps percentiles, min and max");
}

/* Check clipping keeps the right side of the bound. */
static void test_clip(void)
{
	struct hist h;
	uint64_t v, truth;

	hist_init(&h);
	for (v = 1; v <= 1000; v++)
		hist_add(&h, v * 1000);	/* 1us..1ms */
	hist_clip(&h, ">", 500000);
	ok(h.count >= 490 && h.count <= 510, "clip > 500us keeps about half (%llu)",
	   (unsigned long long)h.count);
	ok(h.max == 1000000 && h.min >= 470000 && h.min <= 530000,
	   "clip keeps the exact max and a min near the bound (%llu)", (unsigned long long)h.min);
	ok(hist_percentile(&h, 0) > 470000, "nothing below the bound survives");
	for (v = 1, truth = 0; v <= 1000; v++)
		truth += v * 1000 >= h.min ? v * 1000 : 0;
	ok(rel_err(h.sum, truth) < 1.0 / 32, "the kept sum %llu is within 1/32 of the true %llu",
	   (unsigned long long)h.sum, (unsigned long long)truth);

	hist_init(&h);
	for (v = 1; v <= 100; v++)
		hist_add(&h, v);
	hist_clip(&h, "<=", 10);
	ok(h.count == 10 && h.sum == 55 && h.min == 1 && h.max == 10,
	   "clip <= 10 on 1..100 keeps exactly 1..10");
	hist_clip(&h, "!=", 5);
	ok(h.count == 9 && h.sum == 50, "clip != 5 drops the single exact bucket");
	hist_clip(&h, "==", 7);
	ok(h.count == 1 && h.min == 7 && h.max == 7, "clip == 7 keeps only 7");
	hist_clip(&h, ">", 7);
	ok(h.count == 0 && hist_percentile(&h, 50) == 0, "clipping everything leaves an empty histogram");
}

/* Check encode/decode round trips and malformed input is refused. */
static void test_encode(void)
{
	struct hist h, d;
	uint8_t buf[16384], small[8];
	size_t n, need, i, used;
	int truncated_rejected = 1, garbage_ok = 1;
	uint64_t v;

	hist_init(&h);
	n = hist_encode(&h, buf, sizeof(buf));
	ok(n > 0 && hist_decode(&d, buf, n) == n && d.count == 0 && d.min == UINT64_MAX,
	   "an empty histogram round-trips (%zu bytes)", n);

	for (v = 1; v < 3000000000ULL; v = v * 3 + 1)
		hist_add_n(&h, v, v % 7 + 1);
	hist_add(&h, UINT64_MAX / 3);
	n = hist_encode(&h, buf, sizeof(buf));
	used = hist_decode(&d, buf, n);
	ok(used == n && !memcmp(&h, &d, sizeof(h)), "a sparse histogram round-trips exactly (%zu bytes)", n);
	need = hist_encode(&h, small, sizeof(small));
	ok(need == n, "encode into a small buffer returns the size needed");

	for (i = 0; i < n; i++)
		if (hist_decode(&d, buf, i) != 0)
			truncated_rejected = 0;
	ok(truncated_rejected, "every truncation of an encoding is rejected");

	srand(42);
	for (i = 0; i < 20000; i++) {
		size_t k, len = (size_t)rand() % 64;

		for (k = 0; k < len; k++)
			buf[k] = (uint8_t)rand();
		used = hist_decode(&d, buf, len);
		if (used > len || (used && d.count && d.min > d.max))
			garbage_ok = 0;
	}
	ok(garbage_ok, "random bytes decode to nothing or a consistent histogram");
	memset(buf, 0xff, 32);
	ok(hist_decode(&d, buf, 32) == 0, "an overlong varint is rejected");
	/* count 1, sum 0, min 0, max 0, 1 pair: gap 600 (past the last bucket) */
	{
		uint8_t bad[] = {1, 0, 0, 0, 1, 0xd8, 0x04, 1};

		ok(hist_decode(&d, bad, sizeof(bad)) == 0, "a bucket index past 591 is rejected");
	}
}

/* A histogram of a few hundred random values. */
static void v_fill(struct hist *h)
{
	int k, n = 1 + rand() % 300;

	hist_init(h);
	for (k = 0; k < n; k++)
		hist_add(h, (uint64_t)rand() % 1000000);
}

/* A tick's delta read while the kernel updates the counters: count, extremes
 * and buckets can disagree.  hist_settle makes it whole; encode writes only
 * what decode accepts. */
static void test_settle(void)
{
	struct hist h, w, d;
	uint8_t buf[16384];
	size_t n, i;
	int all_read = 1, whole_kept = 1;

	srand(3);
	v_fill(&h);
	w = h;
	hist_settle(&w);
	ok(!memcmp(&h, &w, sizeof(h)), "a whole histogram is left as it is");

	h.count++;		/* the count moved, its bucket not yet */
	w = h;
	hist_settle(&w);
	ok(w.count == h.count - 1 && w.min == h.min && w.max == h.max,
	   "count one ahead of the buckets becomes their total");

	hist_init(&h);		/* a bucket moved, count and extremes not yet */
	h.b[lh_bucket(1000)] = 1;
	w = h;
	hist_settle(&w);
	ok(w.count == 1 && w.min == lh_bucket_low(lh_bucket(1000)) && w.max >= 1000 &&
	   w.max < lh_bucket_low(lh_bucket(1000) + 1) && hist_percentile(&w, 50) >= w.min,
	   "a bucket without count or extremes gets them from its bounds (%llu..%llu)",
	   (unsigned long long)w.min, (unsigned long long)w.max);

	hist_init(&h);		/* count and sum moved, no bucket yet */
	h.count = 1;
	h.sum = 5000;
	h.min = h.max = 5000;
	n = hist_encode(&h, buf, sizeof(buf));
	ok(hist_decode(&d, buf, n) == n && d.count == 0 && d.sum == 0 && d.min == UINT64_MAX,
	   "a count without buckets encodes as an empty histogram");

	srand(7);
	for (i = 0; i < 5000; i++) {
		uint64_t lo, hi;

		v_fill(&h);
		switch (rand() % 4) {
		case 0: h.count += (uint64_t)(rand() % 3) - 1; break;
		case 1: h.min = rand() % 2 ? UINT64_MAX : (uint64_t)rand(); break;
		case 2: h.max = (uint64_t)rand() % 100; break;
		default: h.b[rand() % LH_NBUCKETS]++; break;
		}
		n = hist_encode(&h, buf, sizeof(buf));
		if (hist_decode(&d, buf, n) != n)
			all_read = 0;
		w = h;
		hist_settle(&w);
		for (lo = 0; lo < LH_NBUCKETS && !w.b[lo]; lo++)
			;
		for (hi = LH_NBUCKETS; hi > 0 && !w.b[hi - 1]; hi--)
			;
		if (memcmp(&d, &w, sizeof(w)) ||
		    (w.count && (w.min < lh_bucket_low((uint32_t)lo) || w.min > w.max ||
				 (hi < LH_NBUCKETS && w.max >= lh_bucket_low((uint32_t)hi)))))
			whole_kept = 0;
	}
	ok(all_read, "5000 torn histograms all encode to what decode accepts");
	ok(whole_kept, "... decoding to their settled form, extremes within the occupied buckets");
}

/* The sparse form holds, merges, reports and encodes exactly what the dense one does. */
static void test_sparse(void)
{
	static struct hist h, g, d, m;
	static uint8_t b1[16384], b2[16384];
	int same = 1, merged = 1, reported = 1, encoded = 1, decoded = 1, small = 1, i;
	struct shist *s, *t, *acc = NULL;
	size_t n1, n2, used;

	srand(11);
	hist_init(&m);
	for (i = 0; i < 2000; i++) {
		v_fill(&h);
		if (i % 3 == 0)		/* torn, as a producer may hand it over */
			h.count += 1;
		if (i % 5 == 0)
			h.b[rand() % LH_NBUCKETS] += 3;
		s = shist_pack(&h);
		shist_unpack(s, &g);
		if (memcmp(&g, &h, sizeof(h)))
			same = 0;
		if (shist_percentile(s, 50) != hist_percentile(&h, 50) ||
		    shist_percentile(s, 99.9) != hist_percentile(&h, 99.9) ||
		    shist_stddev(s) != hist_stddev(&h))
			reported = 0;
		n1 = hist_encode(&h, b1, sizeof(b1));
		n2 = shist_encode(s, b2, sizeof(b2));
		if (n1 != n2 || memcmp(b1, b2, n1) || shist_encode(s, b2, 4) != n1)
			encoded = 0;
		t = shist_decode(b2, n2, &used);
		if (!t || used != n2 || hist_decode(&d, b1, n1) != n1)
			decoded = 0;
		else if (shist_unpack(t, &g), memcmp(&g, &d, sizeof(d)))
			decoded = 0;
		hist_merge(&m, &h);
		acc = shist_merge(acc, s);
		shist_unpack(acc, &g);
		if (memcmp(&g, &m, sizeof(m)))
			merged = 0;
		if (shist_bytes(s) > 64 + 16 * (size_t)s->n)
			small = 0;
		shist_free(s);
		shist_free(t);
	}
	ok(same, "2000 histograms, torn ones too, pack and unpack to themselves");
	ok(reported, "... with the dense form's percentiles and stddev");
	ok(encoded, "... encoding to the dense form's bytes");
	ok(decoded, "... and decoding as the dense form does");
	ok(merged, "merging them sparse gives the dense merge");
	ok(small, "a sparse histogram holds 16 bytes a bucket in use (%zu for the merge of all, "
	   "%zu dense)", shist_bytes(acc), sizeof(struct hist));
	ok(!shist_decode(b1, 3, &used), "a truncated encoding is refused");
	shist_free(acc);
}

int main(void)
{
	test_error_bound();
	test_small_and_range();
	test_empty();
	test_uniform();
	test_merge();
	test_scale();
	test_clip();
	test_encode();
	test_settle();
	test_sparse();
	tap_done();
}
