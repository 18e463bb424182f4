/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Log-linear bucket math, shared by the BPF programs and user space.
 *
 * Values below LH_SUB get one exact bucket each.  Above that, every power of
 * two [2^e, 2^(e+1)) is cut into LH_SUB equal sub-buckets, so a bucket is at
 * most 1/LH_SUB (6.25%) of its lower bound wide, and reporting a bucket by its
 * midpoint is off by at most 1/(2*LH_SUB) (3.125%) of the true value.
 * Values of 2^LH_MAX_EXP (~18 minutes in ns) and more land in the last bucket.
 *
 * Written branchless, without loops, so clang-14 compiles it for BPF.
 * Include <linux/types.h> (user space) or vmlinux.h (BPF) first.
 */
#ifndef LATOP_LHIST_H
#define LATOP_LHIST_H

#define LH_SUB_BITS 4
#define LH_SUB (1u << LH_SUB_BITS)
#define LH_MAX_EXP 40
#define LH_NBUCKETS (LH_SUB + (LH_MAX_EXP - LH_SUB_BITS) * LH_SUB)

/* Return floor(log2(v)) for v > 0, 0 for v == 0. */
static __always_inline __u32 lh_log2(__u64 v)
{
	__u32 r, shift;

	r = (v > 0xFFFFFFFFULL) << 5; v >>= r;
	shift = (v > 0xFFFF) << 4; v >>= shift; r |= shift;
	shift = (v > 0xFF) << 3; v >>= shift; r |= shift;
	shift = (v > 0xF) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

/* Return the bucket index of value v, in [0, LH_NBUCKETS). */
static __always_inline __u32 lh_bucket(__u64 v)
{
	__u32 e, idx;

	if (v < LH_SUB)
		return (__u32)v;
	e = lh_log2(v);
	if (e >= LH_MAX_EXP)
		return LH_NBUCKETS - 1;
	idx = LH_SUB + (e - LH_SUB_BITS) * LH_SUB +
	      (__u32)((v >> (e - LH_SUB_BITS)) & (LH_SUB - 1));
	return idx < LH_NBUCKETS ? idx : LH_NBUCKETS - 1;
}

/* Return the smallest value that falls in bucket idx. */
static __always_inline __u64 lh_bucket_low(__u32 idx)
{
	__u32 e;

	if (idx < LH_SUB)
		return idx;
	e = (idx - LH_SUB) / LH_SUB + LH_SUB_BITS;
	return ((__u64)LH_SUB + ((idx - LH_SUB) % LH_SUB)) << (e - LH_SUB_BITS);
}

#endif
