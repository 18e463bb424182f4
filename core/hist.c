/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Log-linear histograms: merge, percentiles, clipping and a sparse encoding. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "hist.h"
#include "varint.h"
#include "xalloc.h"

/* Worst case of hist_encode: header, pair count, one pair per bucket. */
#define HIST_ENCODE_MAX ((5 + 2 * LH_NBUCKETS) * VARINT_MAX_BYTES)

/* Allocate an empty histogram. */
struct hist *hist_new(void)
{
	struct hist *h = xmalloc(sizeof(*h));

	hist_init(h);
	return h;
}

/* Free a histogram (NULL is fine). */
void hist_free(struct hist *h)
{
	free(h);
}

/* Empty a histogram in place. */
void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

/* Copy a histogram. */
struct hist *hist_dup(const struct hist *h)
{
	struct hist *d = xmalloc(sizeof(*d));

	memcpy(d, h, sizeof(*d));
	return d;
}

/* Count one value. */
void hist_add(struct hist *h, uint64_t v)
{
	hist_add_n(h, v, 1);
}

/* Count value v n times. */
void hist_add_n(struct hist *h, uint64_t v, uint64_t n)
{
	if (!n)
		return;
	h->b[lh_bucket(v)] += n;
	h->count += n;
	h->sum += v * n;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

/* Add every value of src to dst. */
void hist_merge(struct hist *dst, const struct hist *src)
{
	size_t i;

	if (!src->count)
		return;
	for (i = 0; i < LH_NBUCKETS; i++)
		dst->b[i] += src->b[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

/* Multiply counts and sum by n (a 1/n sample stands for n values each). */
void hist_scale(struct hist *h, uint64_t n)
{
	size_t i;

	if (n == 1)
		return;
	if (!n) {
		hist_init(h);
		return;
	}
	for (i = 0; i < LH_NBUCKETS; i++)
		h->b[i] *= n;
	h->count *= n;
	h->sum *= n;
}

uint64_t hist_bucket_mid(uint32_t idx)
{
	uint64_t low, width;

	if (idx >= LH_NBUCKETS)
		idx = LH_NBUCKETS - 1;
	low = lh_bucket_low(idx);
	if (idx < LH_SUB)
		return low;
	/* The bucket at idx is 1/LH_SUB of the power of two it starts in. */
	width = (uint64_t)1 << (lh_log2(low) - LH_SUB_BITS);
	return low + width / 2;
}

/* Return the largest value bucket idx holds. */
static uint64_t hist_bucket_high(uint32_t idx)
{
	if (idx + 1 >= LH_NBUCKETS)
		return UINT64_MAX;
	return lh_bucket_low(idx + 1) - 1;
}

/* True when count is the buckets' total and the extremes fit them; *lo and
 * *hi get the first and last occupied buckets, *total the buckets' total. */
static bool hist_whole(const struct hist *h, uint32_t *lo, uint32_t *hi, uint64_t *total)
{
	uint32_t i;

	*lo = *hi = 0;
	*total = 0;
	for (i = 0; i < LH_NBUCKETS; i++) {
		if (!h->b[i])
			continue;
		if (!*total)
			*lo = i;
		*hi = i;
		*total += h->b[i];
	}
	if (*total != h->count)
		return false;
	if (!*total)
		return !h->sum && h->min == UINT64_MAX && !h->max;
	return h->min >= lh_bucket_low(*lo) && h->min <= h->max && h->max <= hist_bucket_high(*hi);
}

void hist_settle(struct hist *h)
{
	uint64_t low, high, total, t;
	uint32_t lo, hi;

	if (hist_whole(h, &lo, &hi, &total))
		return;
	if (!total) {
		hist_init(h);
		return;
	}
	h->count = total;
	low = lh_bucket_low(lo);
	high = hist_bucket_high(hi);
	h->min = h->min < low ? low : h->min > high ? high : h->min;
	h->max = h->max < low ? low : h->max > high ? high : h->max;
	if (h->min > h->max) {
		t = h->min;
		h->min = h->max;
		h->max = t;
	}
}

/* Bucket idx's midpoint, clamped to the extremes min and max. */
static uint64_t bucket_value(uint32_t idx, uint64_t min, uint64_t max)
{
	uint64_t m = hist_bucket_mid(idx);

	if (m < min)
		m = min;
	return m > max ? max : m;
}

/*
 * The rank of percentile q among count values whose extremes are min and
 * max: 0 when an extreme (or 0 when empty) answers it, put in *at.
 */
static uint64_t pct_rank(uint64_t count, uint64_t min, uint64_t max, double q, uint64_t *at)
{
	uint64_t rank;

	*at = !count ? 0 : !(q > 0.0) ? min : max;
	if (!count || !(q > 0.0) || q >= 100.0)
		return 0;
	rank = (uint64_t)ceil(q / 100.0 * (double)count);
	return rank < 1 ? 1 : rank > count ? count : rank;
}

/* Return what bucket idx reports: its midpoint within the known [min, max]. */
static uint64_t hist_value(const struct hist *h, uint32_t idx)
{
	return bucket_value(idx, h->min, h->max);
}

/* Return the mean, 0 when empty. */
double hist_avg(const struct hist *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0.0;
}

/* Return the standard deviation estimated from bucket midpoints. */
double hist_stddev(const struct hist *h)
{
	double avg, var = 0.0;
	uint32_t i;

	if (h->count < 2)
		return 0.0;
	avg = hist_avg(h);
	for (i = 0; i < LH_NBUCKETS; i++) {
		double d;

		if (!h->b[i])
			continue;
		d = (double)hist_value(h, i) - avg;
		var += (double)h->b[i] * d * d;
	}
	return sqrt(var / (double)h->count);
}

uint64_t hist_percentile(const struct hist *h, double q)
{
	uint64_t at, cum = 0, rank = pct_rank(h->count, h->min, h->max, q, &at);
	uint32_t i;

	if (!rank)
		return at;
	for (i = 0; i < LH_NBUCKETS; i++) {
		cum += h->b[i];
		if (cum >= rank)
			return hist_value(h, i);
	}
	return h->max;
}

double hist_cdf(const struct hist *h, uint64_t v)
{
	uint32_t i, vb;
	uint64_t cum = 0;

	if (!h->count || v < h->min)
		return 0.0;
	if (v >= h->max)
		return 1.0;
	vb = lh_bucket(v);
	for (i = 0; i < vb; i++)
		cum += h->b[i];
	if (v >= hist_value(h, vb))
		cum += h->b[vb];
	return (double)cum / (double)h->count;
}

/* Return whether `v op bound` holds; an unknown op keeps everything. */
static int hist_op_holds(uint64_t v, const char *op, uint64_t bound)
{
	if (!strcmp(op, "<"))
		return v < bound;
	if (!strcmp(op, "<="))
		return v <= bound;
	if (!strcmp(op, ">"))
		return v > bound;
	if (!strcmp(op, ">="))
		return v >= bound;
	if (!strcmp(op, "==") || !strcmp(op, "="))
		return v == bound;
	if (!strcmp(op, "!="))
		return v != bound;
	return 1;
}

void hist_clip(struct hist *h, const char *op, uint64_t bound)
{
	/*
	 * Buckets are kept or dropped whole: a bucket stays when its reported
	 * value satisfies `op bound`.
	 */
	uint64_t count = 0, sum = 0, min = UINT64_MAX, max = 0;
	uint32_t i, first = LH_NBUCKETS, last = 0;
	int clipped = 0;

	if (!h->count)
		return;
	for (i = 0; i < LH_NBUCKETS; i++) {
		uint64_t v;

		if (!h->b[i])
			continue;
		v = hist_value(h, i);
		if (!hist_op_holds(v, op, bound)) {
			h->b[i] = 0;
			clipped = 1;
			continue;
		}
		count += h->b[i];
		sum += v * h->b[i];
		if (first == LH_NBUCKETS)
			first = i;
		last = i;
	}
	if (!clipped)
		return;
	if (!count) {
		hist_init(h);
		return;
	}
	min = first == lh_bucket(h->min) ? h->min : lh_bucket_low(first);
	max = last == lh_bucket(h->max) ? h->max : hist_bucket_high(last);
	h->count = count;
	h->sum = sum;
	h->min = min;
	h->max = max;
}

/* Encode into a buffer known to be big enough; return the bytes used. */
static size_t hist_encode_full(const struct hist *h, uint8_t *out)
{
	uint32_t i, nnz = 0, prev = 0, lo, hi;
	uint64_t total;
	struct hist whole;
	size_t n = 0;

	/* Write only what hist_decode accepts, whoever assembled h. */
	if (!hist_whole(h, &lo, &hi, &total)) {
		whole = *h;
		hist_settle(&whole);
		h = &whole;
	}
	n += varint_put(out + n, h->count);
	n += varint_put(out + n, h->sum);
	n += varint_put(out + n, h->min);
	n += varint_put(out + n, h->max);
	for (i = 0; i < LH_NBUCKETS; i++)
		nnz += h->b[i] != 0;
	n += varint_put(out + n, nnz);
	for (i = 0; i < LH_NBUCKETS; i++) {
		if (!h->b[i])
			continue;
		n += varint_put(out + n, i - prev);
		n += varint_put(out + n, h->b[i]);
		prev = i + 1;
	}
	return n;
}

size_t hist_encode(const struct hist *h, uint8_t *buf, size_t cap)
{
	/* The encoding: count, sum, min, max, npairs, then (gap, count) pairs. */
	uint8_t tmp[HIST_ENCODE_MAX];
	size_t n;

	if (cap >= HIST_ENCODE_MAX)
		return hist_encode_full(h, buf);
	n = hist_encode_full(h, tmp);
	if (n <= cap)
		memcpy(buf, tmp, n);
	return n;
}

/*
 * Read an encoded histogram's header (count, sum, min, max, bins) from buf
 * into hdr; return the bytes it took, 0 when it is bad.
 */
static size_t decode_hdr(const uint8_t *buf, size_t len, uint64_t hdr[5])
{
	size_t n = 0, k, used;

	for (k = 0; k < 5; k++) {
		used = varint_get(buf + n, len - n, &hdr[k]);
		if (!used)
			return 0;
		n += used;
	}
	return hdr[4] <= LH_NBUCKETS ? n : 0;
}

/*
 * Read the hdr[4] bins that follow header hdr from buf, giving each to
 * put(ctx, bucket, count) in bucket order, the bytes they took in *nused;
 * false when they, or they and the header together, are bad (put may have
 * run).
 */
static bool decode_bins(const uint8_t *buf, size_t len, const uint64_t hdr[5],
			void (*put)(void *ctx, uint64_t idx, uint64_t c), void *ctx, size_t *nused)
{
	uint64_t total = 0, idx = 0, k, gap, c;
	size_t n = 0, used;

	for (k = 0; k < hdr[4]; k++) {
		used = varint_get(buf + n, len - n, &gap);
		if (!used)
			return false;
		n += used;
		used = varint_get(buf + n, len - n, &c);
		if (!used)
			return false;
		n += used;
		if (gap >= LH_NBUCKETS - idx || !c || c > UINT64_MAX - total)
			return false;
		idx += gap;
		put(ctx, idx++, c);
		total += c;
	}
	*nused = n;
	if (total != hdr[0])
		return false;
	if (total && hdr[2] > hdr[3])
		return false;
	return total || (!hdr[1] && hdr[2] == UINT64_MAX && !hdr[3]);
}

static void dense_put(void *ctx, uint64_t idx, uint64_t c)
{
	((struct hist *)ctx)->b[idx] = c;
}

size_t hist_decode(struct hist *h, const uint8_t *buf, size_t len)
{
	uint64_t hdr[5];
	size_t n = decode_hdr(buf, len, hdr), m;

	if (!n)
		return 0;
	hist_init(h);
	if (!decode_bins(buf + n, len - n, hdr, dense_put, h, &m)) {
		hist_init(h);
		return 0;
	}
	h->count = hdr[0];
	h->sum = hdr[1];
	h->min = hdr[2];
	h->max = hdr[3];
	return n + m;
}

/* Allocate a sparse histogram of cap bins, empty. */
static struct shist *shist_alloc(uint32_t cap)
{
	struct shist *s = xmalloc(sizeof(*s) + (size_t)cap * sizeof(s->bin[0]));

	s->count = s->sum = s->max = 0;
	s->min = UINT64_MAX;
	s->n = 0;
	s->cap = cap;
	return s;
}

struct shist *shist_new(void)
{
	return shist_alloc(0);
}

void shist_free(struct shist *s)
{
	free(s);
}

struct shist *shist_pack(const struct hist *h)
{
	struct shist *s;
	uint32_t i, n = 0;

	for (i = 0; i < LH_NBUCKETS; i++)
		n += h->b[i] != 0;
	s = shist_alloc(n);
	s->count = h->count;
	s->sum = h->sum;
	s->min = h->min;
	s->max = h->max;
	for (i = 0; i < LH_NBUCKETS; i++)
		if (h->b[i])
			s->bin[s->n++] = (struct hbin){.c = h->b[i], .idx = i};
	return s;
}

struct shist *shist_of(const struct hbin *bin, uint32_t n, uint64_t sum, uint64_t min,
		       uint64_t max)
{
	struct shist *s = shist_alloc(n);
	uint64_t low, high, t;
	uint32_t i;

	for (i = 0; i < n; i++)
		s->count += bin[i].c;
	if (!s->count)
		return s;
	memcpy(s->bin, bin, (size_t)n * sizeof(*bin));
	s->n = n;
	s->sum = sum;
	/* As hist_settle: the extremes inside the occupied buckets' bounds. */
	low = lh_bucket_low(bin[0].idx);
	high = hist_bucket_high(bin[n - 1].idx);
	s->min = min < low ? low : min > high ? high : min;
	s->max = max < low ? low : max > high ? high : max;
	if (s->min > s->max) {
		t = s->min;
		s->min = s->max;
		s->max = t;
	}
	return s;
}

void shist_unpack(const struct shist *s, struct hist *h)
{
	uint32_t i;

	hist_init(h);
	h->count = s->count;
	h->sum = s->sum;
	h->min = s->min;
	h->max = s->max;
	for (i = 0; i < s->n; i++)
		h->b[s->bin[i].idx] = s->bin[i].c;
}

struct shist *shist_dup(const struct shist *s)
{
	struct shist *d = shist_alloc(s->n);

	memcpy(d, s, sizeof(*s) + (size_t)s->n * sizeof(s->bin[0]));
	d->cap = s->n;
	return d;
}

size_t shist_bytes(const struct shist *s)
{
	return s ? sizeof(*s) + (size_t)s->cap * sizeof(s->bin[0]) : 0;
}

int shist_equal(const struct shist *a, const struct shist *b)
{
	uint32_t i;

	if (a->count != b->count || a->sum != b->sum || a->min != b->min || a->max != b->max ||
	    a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (a->bin[i].c != b->bin[i].c || a->bin[i].idx != b->bin[i].idx)
			return 0;
	return 1;
}

struct shist *shist_merge(struct shist *dst, const struct shist *src)
{
	uint32_t i, j, u = 0, k, cap;

	if (!dst)
		dst = shist_new();
	if (!src->count)
		return dst;
	/* The union of both bucket sets, then a merge from the top down in place. */
	for (i = j = 0; i < dst->n || j < src->n; u++) {
		if (j == src->n || (i < dst->n && dst->bin[i].idx < src->bin[j].idx))
			i++;
		else if (i == dst->n || src->bin[j].idx < dst->bin[i].idx)
			j++;
		else
			i++, j++;
	}
	if (u > dst->cap) {
		cap = dst->cap * 2 < LH_NBUCKETS ? dst->cap * 2 : LH_NBUCKETS;
		cap = cap > u ? cap : u;
		dst = xrealloc(dst, sizeof(*dst) + (size_t)cap * sizeof(dst->bin[0]));
		dst->cap = cap;
	}
	i = dst->n;
	j = src->n;
	k = u;
	while (j > 0) {
		if (i > 0 && dst->bin[i - 1].idx > src->bin[j - 1].idx) {
			dst->bin[--k] = dst->bin[--i];
		} else if (i > 0 && dst->bin[i - 1].idx == src->bin[j - 1].idx) {
			dst->bin[--k] = dst->bin[--i];
			dst->bin[k].c += src->bin[--j].c;
		} else {
			dst->bin[--k] = src->bin[--j];
		}
	}
	dst->n = u;
	/* A count that wrapped to 0 leaves its bucket empty, as in hist_merge. */
	for (i = k = 0; i < dst->n; i++)
		if (dst->bin[i].c)
			dst->bin[k++] = dst->bin[i];
	dst->n = k;
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	return dst;
}

/* Return what bin value idx reports in s: its midpoint within [min, max]. */
static uint64_t shist_value(const struct shist *s, uint32_t idx)
{
	return bucket_value(idx, s->min, s->max);
}

uint64_t shist_percentile(const struct shist *s, double q)
{
	uint64_t at, cum = 0, rank = pct_rank(s->count, s->min, s->max, q, &at);
	uint32_t i;

	if (!rank)
		return at;
	for (i = 0; i < s->n; i++) {
		cum += s->bin[i].c;
		if (cum >= rank)
			return shist_value(s, s->bin[i].idx);
	}
	return s->max;
}

double shist_stddev(const struct shist *s)
{
	double avg, var = 0.0;
	uint32_t i;

	if (s->count < 2)
		return 0.0;
	avg = (double)s->sum / (double)s->count;
	for (i = 0; i < s->n; i++) {
		double d = (double)shist_value(s, s->bin[i].idx) - avg;

		var += (double)s->bin[i].c * d * d;
	}
	return sqrt(var / (double)s->count);
}

/* Return whether s is whole as hist_whole has it (what decode accepts as is). */
static bool shist_whole(const struct shist *s)
{
	uint64_t total = 0;
	uint32_t i;

	for (i = 0; i < s->n; i++)
		total += s->bin[i].c;
	if (total != s->count)
		return false;
	if (!total)
		return !s->sum && s->min == UINT64_MAX && !s->max;
	return s->min >= lh_bucket_low(s->bin[0].idx) && s->min <= s->max &&
	       s->max <= hist_bucket_high(s->bin[s->n - 1].idx);
}

size_t shist_encode(const struct shist *s, uint8_t *buf, size_t cap)
{
	uint8_t tmp[HIST_ENCODE_MAX];
	uint32_t i, prev = 0;
	struct hist *h;
	size_t n = 0;
	bool zero = false;

	for (i = 0; i < s->n; i++)
		zero |= !s->bin[i].c;
	if (zero || !shist_whole(s)) {
		/* Rare (torn or wrapped): settle the dense form as hist_encode does. */
		h = hist_new();
		shist_unpack(s, h);
		n = hist_encode(h, buf, cap);
		hist_free(h);
		return n;
	}
	n += varint_put(tmp + n, s->count);
	n += varint_put(tmp + n, s->sum);
	n += varint_put(tmp + n, s->min);
	n += varint_put(tmp + n, s->max);
	n += varint_put(tmp + n, s->n);
	for (i = 0; i < s->n; i++) {
		n += varint_put(tmp + n, s->bin[i].idx - prev);
		n += varint_put(tmp + n, s->bin[i].c);
		prev = s->bin[i].idx + 1;
	}
	if (n <= cap)
		memcpy(buf, tmp, n);
	return n;
}

static void sparse_put(void *ctx, uint64_t idx, uint64_t c)
{
	struct shist *s = ctx;

	s->bin[s->n++] = (struct hbin){.c = c, .idx = (uint32_t)idx};
}

struct shist *shist_decode(const uint8_t *buf, size_t len, size_t *usedp)
{
	uint64_t hdr[5];
	size_t n = decode_hdr(buf, len, hdr), m;
	struct shist *s;

	if (!n)
		return NULL;
	s = shist_alloc((uint32_t)hdr[4]);
	if (!decode_bins(buf + n, len - n, hdr, sparse_put, s, &m)) {
		shist_free(s);
		return NULL;
	}
	s->count = hdr[0];
	s->sum = hdr[1];
	s->min = hdr[2];
	s->max = hdr[3];
	*usedp = n + m;
	return s;
}
