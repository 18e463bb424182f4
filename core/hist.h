/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Log-linear histograms in user space (bucket math in lhist.h). */
#ifndef LATOP_HIST_H
#define LATOP_HIST_H

#include <stdint.h>
#include <stddef.h>
#include <linux/types.h>
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#include "lhist.h"

/*
 * count and sum are exact; min and max are exact when the producer knew them
 * (the kernel side tracks them), else bucket bounds.  Percentiles are bucket
 * midpoints clamped to [min, max]: relative error <= 1/(2*LH_SUB).
 */
struct hist {
	uint64_t count;
	uint64_t sum;
	uint64_t min;		/* UINT64_MAX when count == 0 */
	uint64_t max;
	uint64_t b[LH_NBUCKETS];
};

struct hist *hist_new(void);
void hist_free(struct hist *h);
void hist_init(struct hist *h);
struct hist *hist_dup(const struct hist *h);
void hist_add(struct hist *h, uint64_t v);		/* one value */
void hist_add_n(struct hist *h, uint64_t v, uint64_t n);	/* n times v */
void hist_merge(struct hist *dst, const struct hist *src);
void hist_scale(struct hist *h, uint64_t n);		/* counts (and sum) times n, for 1/N sampling */
/*
 * Make a histogram assembled from separately read counters whole: count
 * becomes the buckets' total, an empty one is reset, min and max move into
 * the occupied buckets' bounds.  A producer that reads count, extremes and
 * buckets while the kernel updates them (a tick's delta) calls it last.
 */
void hist_settle(struct hist *h);
/* Keep only values for which `v op bound` holds (op: "<", "<=", ">", ">=", "==", "!="),
 * at bucket granularity; count/sum/min/max are recomputed from what is kept. */
void hist_clip(struct hist *h, const char *op, uint64_t bound);
double hist_avg(const struct hist *h);
double hist_stddev(const struct hist *h);
/* q in [0, 100], e.g. 99.99; returns 0 for an empty histogram. */
uint64_t hist_percentile(const struct hist *h, double q);
/* Fraction of values <= v, in [0, 1] (for CDF drawing). */
double hist_cdf(const struct hist *h, uint64_t v);
/* Midpoint of bucket idx (what percentiles report). */
uint64_t hist_bucket_mid(uint32_t idx);

/*
 * A sparse histogram: the same content as a struct hist with only its
 * occupied buckets, in ascending order.  What frames and aggregates keep
 * (struct hist is 4.7 KiB whatever it holds; this is 40 bytes and 16 a
 * bucket); struct hist stays the form to build and compute in.
 */
struct hbin {
	uint64_t c;		/* values counted, > 0 */
	uint32_t idx;		/* bucket index, < LH_NBUCKETS */
	uint32_t pad;		/* zero */
};
struct shist {
	uint64_t count, sum, min, max;	/* as in struct hist */
	uint32_t n, cap;		/* bins used, bins allocated */
	struct hbin bin[];
};

/* Return an empty sparse histogram. */
struct shist *shist_new(void);
void shist_free(struct shist *s);
/* Return a copy of h with only its occupied buckets (every field exact). */
struct shist *shist_pack(const struct hist *h);
/*
 * Return the sparse histogram of the n bins (in bucket order, counts > 0):
 * its count is theirs, and sum and extremes are made whole as hist_settle
 * makes them (no bins: an empty histogram).
 */
struct shist *shist_of(const struct hbin *bin, uint32_t n, uint64_t sum, uint64_t min,
		       uint64_t max);
/* Make h the dense form of s. */
void shist_unpack(const struct shist *s, struct hist *h);
struct shist *shist_dup(const struct shist *s);
/* Return the bytes s holds (its allocation). */
size_t shist_bytes(const struct shist *s);
/* Return whether a and b hold the same histogram. */
int shist_equal(const struct shist *a, const struct shist *b);
/* Add every value of src to dst, which may move: use the result (dst NULL:
 * a new histogram).  Like hist_merge. */
struct shist *shist_merge(struct shist *dst, const struct shist *src);
/* Like hist_percentile and hist_stddev, with the same results. */
uint64_t shist_percentile(const struct shist *s, double q);
double shist_stddev(const struct shist *s);
/* Like hist_encode of the dense form: the same bytes. */
size_t shist_encode(const struct shist *s, uint8_t *buf, size_t cap);
/* Like hist_decode: return a new histogram and set *used to the bytes
 * consumed, or NULL on malformed input. */
struct shist *shist_decode(const uint8_t *buf, size_t len, size_t *used);

/* Serialize sparsely (only non-empty buckets) into buf; returns bytes used,
 * or the size needed if cap is too small (call again with a bigger buf). */
size_t hist_encode(const struct hist *h, uint8_t *buf, size_t cap);
/* Decode; returns bytes consumed or 0 on malformed input. */
size_t hist_decode(struct hist *h, const uint8_t *buf, size_t len);

#endif
