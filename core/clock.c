/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Clock readings in ns. */
#include "clock.h"

uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t boot_offset_ns(void)
{
	struct timespec rt, mono;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	return (rt.tv_sec - mono.tv_sec) * 1000000000ULL + rt.tv_nsec - mono.tv_nsec;
}
