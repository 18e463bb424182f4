// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the floor programs share (bench/floor.bpf.c, bench/netfloor.bpf.c,
 * bench/pathsfloor.bpf.c): EMPTY(sec, name) is a program of that section
 * that does nothing, so that a floor measures only the hooks being enabled.
 * Include it once, from the floor's one .bpf.c.
 */
#ifndef LATOP_BENCH_FLOOR_BPF_H
#define LATOP_BENCH_FLOOR_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define EMPTY(sec, name)			\
	SEC(sec)				\
	int name(void *ctx)			\
	{					\
		return 0;			\
	}

#endif
