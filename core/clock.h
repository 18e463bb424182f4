/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Clock readings in ns, the ones every layer needs. */
#ifndef LATOP_CLOCK_H
#define LATOP_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Clock c now, in ns. */
uint64_t clock_ns(clockid_t c);
/* CLOCK_MONOTONIC now, in ns (bpf_ktime_get_ns's clock). */
uint64_t mono_ns(void);
/* CLOCK_REALTIME - CLOCK_MONOTONIC now, in ns: add it to a BPF timestamp to
 * get wall-clock time. */
uint64_t boot_offset_ns(void);

#endif
