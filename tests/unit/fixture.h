/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A deterministic syscalls recording for query tests: 3 ticks of 1 s, four
 * processes, known latencies.  Every row's lat histogram holds `count`
 * values; time is their sum; oncpu is 30% of time (in "other"), the rest is
 * offcpu, charged to block, net, lock or sleep by syscall.
 */
#ifndef LATOP_TEST_FIXTURE_H
#define LATOP_TEST_FIXTURE_H

#include <string.h>
#include "core/table.h"
#include "probes/syscalls/syscalls_schema.h"

#define FIXTURE_T0 1700000000000000000ULL
#define FIXTURE_TICKS 3
#define FIXTURE_DT 1000000000ULL

struct fixture_call {
	unsigned pid, tid;
	const char *comm, *syscall;
	unsigned n;		/* calls per tick */
	uint64_t lat_ns;	/* base latency: call i takes lat_ns * (1 + i % 4) */
	int state;		/* where offcpu goes: SC_BLOCK, SC_NET, SC_LOCK, SC_SLEEP */
};

static const struct fixture_call fixture_calls[] = {
	{100, 100, "nginx", "read", 10, 2000, SC_NET},
	{100, 100, "nginx", "write", 4, 8000, SC_NET},
	{100, 101, "nginx", "epoll_wait", 6, 1000000, SC_SLEEP},
	{100, 101, "nginx", "read", 2, 3000, SC_NET},
	{200, 200, "memcached", "read", 20, 1000, SC_NET},
	{200, 201, "memcached", "futex", 8, 50000, SC_LOCK},
	{200, 200, "memcached", "sendto", 12, 4000, SC_NET},
	{300, 300, "postgres", "fsync", 2, 4000000, SC_BLOCK},
	{300, 300, "postgres", "pread64", 5, 100000, SC_BLOCK},
};

/* Add one row of call c for tick k (k scales the count: n + k), its
 * latencies divided by lat_div. */
static inline void fixture_row(struct frame *f, const struct fixture_call *c, unsigned k,
			       unsigned lat_div)
{
	union cell *r = frame_add_row(f);
	unsigned i, n = c->n + k;
	struct hist h;

	hist_init(&h);
	for (i = 0; i < n; i++)
		hist_add(&h, c->lat_ns / lat_div * (1 + i % 4));
	r[SC_PID].u = c->pid;
	r[SC_TID].u = c->tid;
	cell_set_str(&r[SC_COMM], c->comm);
	cell_set_str(&r[SC_SYSCALL], c->syscall);
	r[SC_COUNT].u = n;
	r[SC_ERRORS].u = !strcmp(c->syscall, "read") ? k : 0;
	cell_set_hist(&r[SC_LAT], &h);
	r[SC_TIME].u = h.sum;
	r[SC_ONCPU].u = h.sum * 3 / 10;
	r[SC_OFFCPU].u = h.sum - r[SC_ONCPU].u;
	r[SC_OTHER].u = r[SC_ONCPU].u;
	r[c->state].u = r[SC_OFFCPU].u;
	r[SC_FAULTS].u = n / 2;
	r[SC_CSWITCH].u = n / 3;
	r[SC_TASKCLOCK].u = r[SC_ONCPU].u;
	r[SC_CYCLES].u = r[SC_ONCPU].u * 3;
	r[SC_INSTRUCTIONS].u = r[SC_ONCPU].u * 2;
}

/* Build tick k of the fixture (postgres only appears from tick 1 on). */
static inline void fixture_tick(struct tick *t, unsigned k)
{
	uint64_t t_ns = FIXTURE_T0 + (k + 1) * FIXTURE_DT;
	struct frame *f = frame_new(&syscalls_schema, t_ns, FIXTURE_DT);
	size_t i;

	tick_init(t, t_ns);
	f->stats.events = 1000 + k;
	f->stats.lost = k;
	for (i = 0; i < sizeof(fixture_calls) / sizeof(fixture_calls[0]); i++)
		if (fixture_calls[i].pid != 300 || k > 0)
			fixture_row(f, &fixture_calls[i], k, 1);
	tick_add(t, f);
}

/*
 * Build tick k of the baseline fixture (BASELINE tests: a quieter machine):
 * the same calls but postgres's, nginx's twice and memcached's four times
 * as fast; recorded over FIXTURE_BASE_TICKS ticks.
 */
#define FIXTURE_BASE_TICKS 2
static inline void fixture_base_tick(struct tick *t, unsigned k)
{
	uint64_t t_ns = FIXTURE_T0 + (k + 1) * FIXTURE_DT;
	struct frame *f = frame_new(&syscalls_schema, t_ns, FIXTURE_DT);
	size_t i;

	tick_init(t, t_ns);
	for (i = 0; i < sizeof(fixture_calls) / sizeof(fixture_calls[0]); i++)
		if (fixture_calls[i].pid != 300)
			fixture_row(f, &fixture_calls[i], k, fixture_calls[i].pid == 100 ? 2 : 4);
	tick_add(t, f);
}

/*
 * A time series (GROUP BY time, SINCE/UNTIL tests): tick k of 1 s starts at
 * SERIES_T0 + k s (SERIES_T0 is 2026-11-25 10:00:00 UTC), for k from 0 to
 * SERIES_TICKS - 1 but 30 to 39 (a gap of 10 s); nginx makes k + 1 reads in
 * tick k (k errors), memcached 10 (no error).  The recording ends at
 * 10:00:55, so its last 10 s window holds 5 ticks.
 */
#define SERIES_T0 1795600800000000000ULL
#define SERIES_TICKS 55
static const struct fixture_call series_calls[] = {
	{100, 100, "nginx", "read", 1, 2000, SC_NET},
	{200, 200, "memcached", "read", 10, 1000, SC_NET},
};

/* Whether the series has tick k. */
static inline bool series_has(unsigned k)
{
	return k < SERIES_TICKS && (k < 30 || k >= 40);
}

/* Build tick k of the series (k with series_has). */
static inline void series_tick(struct tick *t, unsigned k)
{
	uint64_t t_ns = SERIES_T0 + (k + 1) * FIXTURE_DT;
	struct frame *f = frame_new(&syscalls_schema, t_ns, FIXTURE_DT);
	union cell *r;

	tick_init(t, t_ns);
	fixture_row(f, &series_calls[0], k, 1);
	fixture_row(f, &series_calls[1], 0, 1);
	r = frame_row(f, 1);
	r[SC_ERRORS].u = 0;
	tick_add(t, f);
}

#endif
