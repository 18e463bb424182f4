/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Small BPF helpers shared by probes: log-linear histogram updates. */
#ifndef LATOP_BITS_BPF_H
#define LATOP_BITS_BPF_H

#include "../core/lhist.h"

/*
 * Count v in a LH_NBUCKETS histogram of u32 buckets.  The empty asm hides the
 * range of idx from clang, so the bound check survives for the verifier.
 */
static __always_inline void lh_add(__u32 *hist, __u64 v)
{
	__u32 idx = lh_bucket(v);

	asm volatile("" : "+r"(idx));
	if (idx >= LH_NBUCKETS)
		return;
	hist[idx]++;
}

#endif
